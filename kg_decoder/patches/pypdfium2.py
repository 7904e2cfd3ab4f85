"""pypdfium2's internals kg-decoder replaces: a page handing every step the same text page.

Pinned: ``pypdfium2>=4.30`` (pyproject.toml), no upper bound; written against 5.15.2. ``UPSTREAM``
records what the patch was written against, and ``tests/unit/test_patches.py`` says when a new
release changes it.
"""

from __future__ import annotations

from typing import Any

from . import Upstream


# -- One text page a page ----------------------------------------------------------------------------------
# Wraps ``pypdfium2.PdfPage.get_textpage`` on one page object (an attribute of the instance, not of the
# class): PDFium builds a text page in about 1 ms, and four steps of a PDF's decode each built their
# own (decode/pdf/backend.py, ``LoadedPages``). The first call builds it; every later call on that
# page gets the same one, which the page owns: a step must not close it.

def sharing_its_text_page(page: Any) -> Any:
    """A pypdfium2 page whose ``get_textpage`` gives the same text page every time."""
    build = page.get_textpage
    shared: list = []

    def get_textpage():
        if not shared:
            shared.append(build())
        return shared[0]

    page.get_textpage = get_textpage
    return page


# What each patch was written against (``python -m kg_decoder.patches`` prints them as they are now).
UPSTREAM = (
    Upstream("sharing_its_text_page", "pypdfium2:PdfPage.get_textpage",
             '(self)',
             "9a58483fbc13a5ff515ef0dd81dc4a70bed62909f000fac53613aefe531d2fc0"),
)

__all__ = ["UPSTREAM", "sharing_its_text_page"]
