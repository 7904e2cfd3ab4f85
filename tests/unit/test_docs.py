"""The documentation's promises that a test can keep: every relative link in README.md, docs/ and the
root's Markdown files points at a file that exists (and at a heading there, for a link with an anchor),
and README.md shows the test command that .ci/run runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([*REPO.glob("*.md"), *(REPO / "docs").glob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def test_there_are_pages_to_check():
    assert REPO / "README.md" in PAGES and len([p for p in PAGES if p.parent.name == "docs"]) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_readme_shows_the_test_command_ci_runs():
    """.ci/run runs "the README's test command": the command it runs is a line of a shell block there."""
    command = re.search(r"^exec (.+)$", (REPO / ".ci" / "run").read_text(), re.M).group(1).strip()
    blocks = re.findall(r"^```sh\n(.*?)^```", (REPO / "README.md").read_text(encoding="utf-8"), re.S | re.M)
    assert any(command in block.splitlines() for block in blocks), (
        f"README.md must show the test command .ci/run runs ({command!r}) in a ```sh block")


def test_the_readme_stays_short():
    """What it is, install, an example each, links: the rest belongs in docs/."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 200, f"README.md has {lines} lines: move detail into docs/ and link it"
