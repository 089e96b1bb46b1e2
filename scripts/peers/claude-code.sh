#!/usr/bin/env bash
# The real Claude Code CLI (npm `@anthropic-ai/claude-code`), pinned: registration tests check
# that `claude mcp list` connects to the servers `copilot-bridge register claude-code` wrote. It
# needs no account for that. Tests launch the platform's native executable directly.
set -euo pipefail
dir="$1/claude-code"
pin="@anthropic-ai/claude-code@2.1.332"
case "$(uname -m)" in aarch64|arm64) arch=arm64 ;; *) arch=x64 ;; esac
if [ -x "$dir/node_modules/@anthropic-ai/claude-code-linux-$arch/claude" ] && [ "$(cat "$dir/.pin" 2>/dev/null)" = "$pin" ]; then
    exit 0
fi
echo "peers: installing $pin into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
# A private prefix with its own package.json keeps the install out of any global or parent tree.
echo '{"private": true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$pin" >&2
echo "$pin" > "$dir/.pin"
