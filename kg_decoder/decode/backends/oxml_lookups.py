"""python-docx's and python-pptx's XPath look-ups, the same elements found for less.

Both libraries look every child up with ``element.xpath(expression)``, which makes lxml compile the
expression on every call: reading a run's text (``w:br | w:cr | ... | w:t | w:tab``) cost 25 µs, 8 times
the compiled expression's. And a DOCX body's paragraphs and tables are found with the union
``./w:p | ./w:tbl``, which libxml2 merges in time quadratic in the body's children: 5 s of an 872-page
document's 12 s partition, against 3 ms for its children of those two tags in document order.

:func:`install` replaces the look-up with one through a compiled expression (kept per expression, as
lxml evaluates it: the same nodes, strings and numbers) and the body's union with its children of
those tags, which are the nodes the union selects, in the order it gives them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

_OWN: dict[str, Callable] = {}  # what install() replaced, by "module.Class.attribute"


def install() -> None:
    """python-docx and python-pptx look up through compiled expressions from now on (once per process)."""
    if _OWN:
        return
    from docx.oxml.document import CT_Body
    from docx.oxml.ns import nsmap as docx_namespaces
    from docx.oxml.ns import qn
    from docx.oxml.xmlchemy import BaseOxmlElement as DocxElement
    from pptx.oxml.ns import _nsmap as pptx_namespaces
    from pptx.oxml.xmlchemy import BaseOxmlElement as PptxElement

    _OWN.update({"docx.BaseOxmlElement.xpath": DocxElement.xpath, "pptx.BaseOxmlElement.xpath": PptxElement.xpath,
                 "docx.CT_Body.inner_content_elements": CT_Body.inner_content_elements})
    DocxElement.xpath = compiled_lookup(docx_namespaces)
    PptxElement.xpath = compiled_lookup(pptx_namespaces)
    body_content = (qn("w:p"), qn("w:tbl"))
    CT_Body.inner_content_elements = property(lambda body: list(body.iterchildren(*body_content)),
                                              doc=CT_Body.inner_content_elements.__doc__)


def uninstall() -> None:
    """The libraries' own look-ups back (to compare the two)."""
    if not _OWN:
        return
    from docx.oxml.document import CT_Body
    from docx.oxml.xmlchemy import BaseOxmlElement as DocxElement
    from pptx.oxml.xmlchemy import BaseOxmlElement as PptxElement

    DocxElement.xpath = _OWN.pop("docx.BaseOxmlElement.xpath")
    PptxElement.xpath = _OWN.pop("pptx.BaseOxmlElement.xpath")
    CT_Body.inner_content_elements = _OWN.pop("docx.CT_Body.inner_content_elements")


def compiled_lookup(namespaces: dict[str, str]) -> Callable[[Any, str], Any]:
    """An element's ``xpath(expression)`` with ``namespaces``, each expression compiled once. Kept per
    expression up to a bound: a few are built from values (a list level, a comment's id)."""
    from lxml import etree

    @lru_cache(maxsize=1024)
    def compiled(expression: str) -> "etree.XPath":
        return etree.XPath(expression, namespaces=namespaces)

    def xpath(self, xpath_str: str) -> Any:
        return compiled(xpath_str)(self)

    return xpath


__all__ = ["compiled_lookup", "install", "uninstall"]
