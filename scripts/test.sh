#!/usr/bin/env bash
# Set up, check the import contracts, then run the whole test suite (slow end-to-end tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The stages import downwards only (the contracts in pyproject.toml).
.venv/bin/lint-imports --no-cache
exec .venv/bin/python -m pytest "$@"
