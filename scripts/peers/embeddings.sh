#!/usr/bin/env bash
# The optional word-embedding model of openclaw-memory (potion-base-2M, from a crates.io
# package, digests pinned): the relevance test measures the search with it as well as without.
set -euo pipefail
exec "$(dirname "$0")/../fetch-embeddings.sh" "$1/potion-base-2M"
