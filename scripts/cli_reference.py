"""Write docs/cli.md, the command line's reference, from the argparse parser itself
(``kg_decoder.cli.arguments.build_parser``): every command's usage and every argument with its
choices, default and help. tests/unit/test_cli_reference.py fails when the file is stale.

    .venv/bin/python scripts/cli_reference.py           # rewrite docs/cli.md
    .venv/bin/python scripts/cli_reference.py --check   # exit 1 when docs/cli.md is stale
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "cli.md"
COMMAND = ".venv/bin/python scripts/cli_reference.py"
WIDTH = 100  # the usage lines' width, whatever the terminal's

HEADER = f"""# Command line reference

<!-- Generated from kg_decoder/cli/arguments.py by `{COMMAND}`: do not edit by hand. -->

Every command of `kg-decoder`, as its parser defines it: usage, then each argument with its
choices, default and help. How the commands are used together (what `--store` and `DOCUMENT`
accept, read-only access to a store a server holds, the printed table, JSON lines) is in
[commands.md](commands.md). `kg-decoder COMMAND --help` prints the same.
"""


@contextlib.contextmanager
def _without_settings() -> Iterator[None]:
    """The parser built as on a machine with no ``KG_DECODER_*`` variables: some defaults are read
    from the environment (a store, a library, a write token), and none of those belongs in the file."""
    saved = {name: value for name, value in os.environ.items() if name.startswith("KG_DECODER_")}
    for name in saved:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(saved)


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each sub-command, in the order they were added, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _cell(text: str) -> str:
    """Help text as Markdown shows it: on one line, with no tag, emphasis or column made of it."""
    text = " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("*", "\\*").replace("|", "\\|")


def _argument(action: argparse.Action) -> tuple[str, str, str]:
    """(the argument as written, its default, its help) for one row of a command's table."""
    takes_value = action.nargs != 0
    if action.choices is not None:
        value = "|".join(map(str, action.choices))
    else:
        value = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    if action.nargs in ("+", "*"):
        value = f"{value}..."
    elif action.nargs == "?":
        value = f"[{value}]"
    names = ", ".join(action.option_strings)
    names = f"{names} {value}" if names and takes_value else names or value
    shown = ""
    if action.option_strings and takes_value and action.default not in (None, [], "", argparse.SUPPRESS):
        shown = f"`{action.default}`"
    notes = [" (required)" if action.option_strings and action.required else "",
             " (repeatable)" if isinstance(action, argparse._AppendAction) else ""]
    text = (action.help or "") % {"default": action.default} if action.help else ""
    return f"`{_cell(names)}`", shown, _cell(text + "".join(notes))


def _usage(parser: argparse.ArgumentParser) -> str:
    parser.formatter_class = functools.partial(argparse.HelpFormatter, width=WIDTH)
    return parser.format_usage().rstrip()


def _command(title: str, summary: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = [f"{'#' * level} {title}", ""]
    if summary:
        lines += [_cell(summary[0].upper() + summary[1:]) + ".", ""]
    lines += ["```", _usage(parser), "```", ""]
    rows = [_argument(action) for action in parser._actions
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))]
    if rows:
        lines += ["| argument | default | what |", "|---|---|---|"]
        lines += [f"| {names} | {default} | {text} |" for names, default, text in rows]
        lines.append("")
    for name, help_text, sub in _subcommands(parser):
        lines += _command(f"{title} {name}", help_text, sub, level + 1)
    return lines


def reference() -> str:
    """docs/cli.md as the parser of this tree makes it."""
    from kg_decoder.cli.arguments import build_parser

    with _without_settings():
        parser = build_parser()
    lines = [HEADER]
    names = [name for name, _, _ in _subcommands(parser)]
    lines += ["Commands: " + ", ".join(f"[{name}](#kg-decoder-{name})" for name in names) + ".", ""]
    lines += ["```", _usage(parser), "```", ""]
    for name, help_text, sub in _subcommands(parser):
        lines += _command(f"kg-decoder {name}", help_text, sub, 2)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description="Write docs/cli.md from the command line's parser.")
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is stale, write nothing")
    args = parser.parse_args()
    text = reference()
    if args.check:
        stale = not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != text
        print(f"{TARGET.relative_to(ROOT)} is {'stale: run ' + COMMAND if stale else 'up to date'}")
        return 1 if stale else 0
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
