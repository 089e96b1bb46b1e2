#!/usr/bin/env bash
# The official MCP Python SDK in its own virtualenv: tests use it as an independent MCP client.
set -euo pipefail
dir="$1/python"
pin="mcp==2.3.0"
if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.pin" 2>/dev/null)" = "$pin" ]; then
    exit 0
fi
echo "peers: installing $pin into $dir" >&2
rm -rf "$dir"
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "$pin"
echo "$pin" > "$dir/.pin"
