"""docs/cli.md is the command line's parser written out: a changed argument without the file
written again fails here."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def generator():
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_the_parser_written_out():
    reference = generator()
    written = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == reference.reference(), (
        f"docs/cli.md is stale: run `{reference.COMMAND}` and commit docs/cli.md")


def test_every_command_and_option_is_in_the_reference():
    from kg_decoder.cli.arguments import build_parser

    reference = generator().reference()
    for name, _, parser in generator()._subcommands(build_parser()):
        assert f"## kg-decoder {name}\n" in reference, name
        for action in parser._actions:
            for option in action.option_strings:
                assert f"`{option}" in reference or option in ("-h", "--help"), (name, option)


def test_the_reference_does_not_depend_on_the_environment(monkeypatch):
    """Defaults read from KG_DECODER_* variables (a store, a write token) never reach the file."""
    reference = generator()
    monkeypatch.setenv("KG_DECODER_STORE", "/somewhere/else")
    monkeypatch.setenv("KG_DECODER_WRITE_TOKEN", "a-secret-token")
    text = reference.reference()
    assert "/somewhere/else" not in text and "a-secret-token" not in text
    assert os.environ["KG_DECODER_WRITE_TOKEN"] == "a-secret-token"  # put back as it was
