#!/usr/bin/env bash
# The real GitHub Copilot CLI, pinned: ACP end-to-end tests drive it with a scripted model server
# behind its BYOK variables, so it needs no account and no network beyond this install.
set -euo pipefail
dir="$1/copilot"
pin="@github/copilot@1.0.102"
case "$(uname -m)" in aarch64|arm64) arch=arm64 ;; *) arch=x64 ;; esac
# npm installs the platform's native executable as an optional dependency; tests launch it
# directly (no Node needed at run time).
if [ -x "$dir/node_modules/@github/copilot-linux-$arch/copilot" ] && [ "$(cat "$dir/.pin" 2>/dev/null)" = "$pin" ]; then
    exit 0
fi
echo "peers: installing $pin into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
# A private prefix with its own package.json keeps the install out of any global or parent tree.
echo '{"private": true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$pin" >&2
echo "$pin" > "$dir/.pin"
