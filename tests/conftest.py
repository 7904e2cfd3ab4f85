"""Shared fixtures: the shared corpus, generated documents of every format (decoded once into a
store no test changes), fresh stores, the command line as a user runs it, and a live server."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
CORPUS = REPO.parent / "shared" / "corpus"
WILD = REPO.parent / "shared" / "wild"  # files nobody here wrote (pdf.js's and Apache POI's test corpora)
sys.path.insert(0, str(TESTS / "support"))

# Remote stores' local caches in a folder of this run (inherited by the processes tests start),
# never in the user's own cache.
os.environ["KG_DECODER_CACHE"] = tempfile.mkdtemp(prefix="kg-decoder-test-cache-")
atexit.register(shutil.rmtree, os.environ["KG_DECODER_CACHE"], True)

import fixtures  # noqa: E402

import kg_decoder  # noqa: E402
from servers import oxigraph_server  # noqa: E402


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    assert CORPUS.is_dir(), f"the shared corpus is missing at {CORPUS}"
    return CORPUS


@pytest.fixture(scope="session")
def wild_dir() -> Path:
    assert WILD.is_dir(), f"the shared wild files are missing at {WILD}"
    return WILD


@pytest.fixture(scope="session")
def corpus_store(corpus_dir, tmp_path_factory):
    """Every corpus file decoded (default options) into one store: (store, results by name, the typed
    errors of the files refused by name). Tests may add chunks; other tests seed their own stores
    with its parse cache and renderings (``seed_caches``) so as not to partition the corpus again."""
    store = kg_decoder.open_store(tmp_path_factory.mktemp("corpus-store"))
    results, errors = {}, {}
    for path in sorted(corpus_dir.iterdir()):
        try:
            results[path.name] = kg_decoder.decode(path, store=store)
        except kg_decoder.DecodeError as exc:
            errors[path.name] = exc
    return store, results, errors


def seed_caches(store_folder: Path, from_store) -> None:
    """``store_folder`` (not yet a store) starts with the parse cache and renderings of ``from_store``:
    its decodes of the same files and options partition nothing again."""
    store_folder.mkdir(parents=True, exist_ok=True)
    for folder in ("partition-cache", "renders"):
        if (from_store.path / folder).is_dir():
            shutil.copytree(from_store.path / folder, store_folder / folder)


@pytest.fixture
def corpus_cached_store(corpus_store, tmp_path):
    """A fresh store of its own that partitions no corpus file again (the session corpus store's parse
    cache and renderings): for tests of what is made of a corpus file, not of its parsing."""
    seed_caches(tmp_path / "store", corpus_store[0])
    with kg_decoder.open_store(tmp_path / "store") as opened:
        yield opened


@pytest.fixture(scope="session")
def generated(tmp_path_factory) -> dict[str, fixtures.Fixture]:
    return {f.name: f for f in fixtures.make_all(tmp_path_factory.mktemp("generated"))}


@pytest.fixture(scope="session")
def generated_store(generated, tmp_path_factory):
    """Every generated fixture decoded (default options) into one store: (store, results by name).

    Shared by the whole run, so no test may change it: tests that write use a store of their own.
    """
    store = kg_decoder.open_store(tmp_path_factory.mktemp("generated-store"))
    results = {name: kg_decoder.decode(f.path, store=store, **f.options) for name, f in generated.items()}
    return store, results


@pytest.fixture(scope="session")
def chunked_generated_store(generated, generated_store, tmp_path_factory):
    """The generated fixtures decoded again into a store of their own (from the parse cache the
    shared store filled) and chunked: for the tests that chunk and need every format."""
    import shutil

    folder = tmp_path_factory.mktemp("chunked-store")
    shutil.copytree(generated_store[0].path / "partition-cache", folder / "partition-cache")
    store = kg_decoder.open_store(folder)
    results = {name: kg_decoder.decode(f.path, store=store, **f.options) for name, f in generated.items()}
    for result in results.values():
        kg_decoder.chunk_document(result.document, store=store, chunk_size=32, min_chunk_tokens=4)
    return store, results


@pytest.fixture
def store(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as opened:
        yield opened


def run_cli(*args, cwd=None, timeout=600, env=None) -> subprocess.CompletedProcess:
    """``kg-decoder ARGS`` in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "kg_decoder.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env)


@pytest.fixture(scope="session")
def cli():
    return run_cli


def serve_app(app, threads: int = 4):
    """The Flask app under waitress on a free loopback port, in a thread: (base URL, server); waitress's
    own errors in JSON, as ``kg-decoder serve`` has them."""
    from waitress.server import create_server

    from kg_decoder.patches.waitress import install_json_errors

    server = create_server(app, host="127.0.0.1", port=0, threads=threads,
                           max_request_body_size=app.config["MAX_CONTENT_LENGTH"] + 1)
    install_json_errors(server)
    threading.Thread(target=server.run, daemon=True).start()
    return f"http://127.0.0.1:{server.effective_port}", server


def serve_process(store, *arguments: str):
    """``kg-decoder serve`` over ``store`` in a process of its own, up: (base URL, process)."""
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "kg_decoder.cli", "serve", "--store", str(store), "--port",
                                str(port), *arguments], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(base + "/api/openapi.json", timeout=5).read()
            return base, process
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"kg-decoder serve did not come up on {base}")


@pytest.fixture(scope="session")
def web_app():
    from kg_decoder.cli import load_web_app

    return load_web_app()


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    """The Oxigraph server scripts/test.sh started, else one of the module's own. Tests empty the
    server (CLEAR ALL), so under pytest-xdist only the first worker uses the shared one."""
    shared = os.environ.get("KG_DECODER_TEST_SPARQL_SERVER")
    if shared and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        yield shared
        return
    with oxigraph_server(tmp_path_factory.mktemp("oxigraph")) as server:
        yield server.url
