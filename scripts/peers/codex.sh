#!/usr/bin/env bash
# The real Codex CLI (npm `@openai/codex`), pinned: registration tests check that `codex mcp
# list` shows the servers `copilot-bridge register codex` wrote. It needs no account for that.
# Tests launch the platform's native executable directly.
set -euo pipefail
dir="$1/codex"
pin="@openai/codex@0.171.0"
case "$(uname -m)" in aarch64|arm64) arch=arm64 triple=aarch64-unknown-linux-musl ;; *) arch=x64 triple=x86_64-unknown-linux-musl ;; esac
if [ -x "$dir/node_modules/@openai/codex-linux-$arch/vendor/$triple/bin/codex" ] && [ "$(cat "$dir/.pin" 2>/dev/null)" = "$pin" ]; then
    exit 0
fi
echo "peers: installing $pin into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
echo '{"private": true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$pin" >&2
echo "$pin" > "$dir/.pin"
