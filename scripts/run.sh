#!/usr/bin/env bash
# The main job: set up, then decode and chunk the real-world corpus into the embedded store ./kg-store,
# print the summary table and what to do next. Two corpus files are refused as inputs with typed errors
# (password.pdf is encrypted, empty.txt is empty), as they should be; the job exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
CORPUS="${1:-../shared/corpus}"
exec .venv/bin/kg-decoder decode "$CORPUS" --store ./kg-store --chunk
