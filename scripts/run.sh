#!/usr/bin/env bash
# The main job: set up, then decode and chunk the real-world corpus into the embedded store ./kg-store
# and print the summary table. Two corpus files fail on purpose with typed errors
# (password.pdf is encrypted, empty.txt is empty); the exit code is then 1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
CORPUS="${1:-../shared/corpus}"
exec .venv/bin/kg-decoder decode "$CORPUS" --store ./kg-store --chunk
