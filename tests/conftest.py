from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
CORPUS = REPO.parent / "shared" / "corpus"
sys.path.insert(0, str(TESTS))

import fixtures  # noqa: E402

import kg_decoder  # noqa: E402


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    assert CORPUS.is_dir(), f"the shared corpus is missing at {CORPUS}"
    return CORPUS


@pytest.fixture(scope="session")
def generated(tmp_path_factory) -> dict[str, fixtures.Fixture]:
    return {f.name: f for f in fixtures.make_all(tmp_path_factory.mktemp("generated"))}


@pytest.fixture(scope="session")
def generated_store(generated, tmp_path_factory):
    """Every generated fixture decoded (default options) into one store: (store, results by name)."""
    store = kg_decoder.open_store(tmp_path_factory.mktemp("generated-store"))
    results = {name: kg_decoder.decode(f.path, store=store, **f.options) for name, f in generated.items()}
    return store, results


@pytest.fixture
def store(tmp_path):
    return kg_decoder.open_store(tmp_path / "store")
