#!/usr/bin/env bash
# Set up, check the import contracts, then run the whole test suite (slow end-to-end tests included)
# with an Oxigraph server on a free loopback port for the tests of the remote store (stopped after).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The stages import downwards only (the contracts in pyproject.toml).
.venv/bin/lint-imports --no-cache

server_dir="$(mktemp -d)"
port="$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
.venv/bin/oxigraph serve --location "$server_dir" --bind "127.0.0.1:$port" >"$server_dir.log" 2>&1 &
server_pid=$!
# The server's own exit status (143 after the kill) must not become this script's: under set -e a
# failing command in the trap would replace the tests' status.
stop_server() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    rm -rf "$server_dir" "$server_dir.log"
}
trap stop_server EXIT
.venv/bin/python - "$port" <<'WAIT'
import sys, time, urllib.request
for _ in range(300):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/query?query=ASK%7B%7D", timeout=1).read()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the Oxigraph server did not start")
WAIT
export KG_DECODER_TEST_SPARQL_SERVER="http://127.0.0.1:$port"
# One pytest worker per CPU, each test file kept on one worker (its module fixtures made once): on
# a 2-core machine the suite takes two thirds of its time in one process (12 against 18 minutes).
# KG_DECODER_TEST_WORKERS=0 runs it in this process.
.venv/bin/python -m pytest -n "${KG_DECODER_TEST_WORKERS:-auto}" --dist loadfile "$@"
