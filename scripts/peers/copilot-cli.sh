#!/usr/bin/env bash
# The real GitHub Copilot CLI, pinned: ACP end-to-end tests drive it with a scripted model server
# behind its BYOK variables, so it needs no account and no network beyond this install.
set -euo pipefail
dir="$1/copilot"
pin="@github/copilot@1.0.102"
if [ -x "$dir/node_modules/@github/copilot-linux-x64/copilot" ] && [ "$(cat "$dir/.pin" 2>/dev/null)" = "$pin" ]; then
    exit 0
fi
echo "peers: installing $pin into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
# A private prefix with its own package.json keeps the install out of any global or parent tree.
echo '{"private": true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$pin" >&2
echo "$pin" > "$dir/.pin"
