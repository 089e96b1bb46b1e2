#!/usr/bin/env bash
# Installs every external test peer (pinned versions) into target/peers, the cache the tests
# look in. Each scripts/peers/*.sh installs one peer and is a no-op when it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
peers_dir="${BRIDGE_PEERS_DIR:-$PWD/target/peers}"
mkdir -p "$peers_dir"
for installer in scripts/peers/*.sh; do
    bash "$installer" "$peers_dir"
done
