"""python-docx's and python-pptx's XPath look-ups, the same elements found for less.

Pinned: no range of kg-decoder's own; unstructured 0.27 (``unstructured[all-docs]>=0.27,<0.28``)
brings python-docx and python-pptx (written against python-docx 1.2.0 and python-pptx 1.0.2), and
``lxml>=5``. ``UPSTREAM`` records what the patch was written against, and
``tests/unit/test_patches.py`` says which one an upgrade changed.

Both libraries look every child up with ``element.xpath(expression)``, which makes lxml compile the
expression on every call: reading a run's text (``w:br | w:cr | ... | w:t | w:tab``) cost 25 µs, 8 times
the compiled expression's. And a DOCX body's paragraphs and tables are found with the union
``./w:p | ./w:tbl``, which libxml2 merges in time quadratic in the body's children: 5 s of an 872-page
document's 12 s partition, against 3 ms for its children of those two tags in document order.

:func:`install_compiled_lookups` replaces the look-up with one through a compiled expression (kept per expression, as
lxml evaluates it: the same nodes, strings and numbers) and the body's union with its children of
those tags, which are the nodes the union selects, in the order it gives them.
"""

from __future__ import annotations

from functools import lru_cache
from threading import Lock
from typing import Any, Callable

from . import Upstream, remember

_OWN: dict[str, Callable] = {}  # what install_compiled_lookups() replaced, by "module.Class.attribute"
_LOCK = Lock()


# -- Look-ups through compiled expressions --------------------------------------------------------------
# Replaces ``docx.oxml.xmlchemy.BaseOxmlElement.xpath`` and ``pptx.oxml.xmlchemy.BaseOxmlElement.xpath``
# (``super().xpath(expression, namespaces=...)``: lxml compiles the expression on every call) and the
# ``docx.oxml.document.CT_Body.inner_content_elements`` property (``self.xpath("./w:p | ./w:tbl")``,
# quadratic in libxml2). python-pptx's namespace map is its private ``pptx.oxml.ns._nsmap``.

def install_compiled_lookups() -> None:
    """python-docx and python-pptx look up through compiled expressions from now on (once per process)."""
    with _LOCK:
        if _OWN:
            return
        from docx.oxml import ns as docx_ns
        from docx.oxml.document import CT_Body
        from docx.oxml.xmlchemy import BaseOxmlElement as DocxElement
        from pptx.oxml import ns as pptx_ns
        from pptx.oxml.xmlchemy import BaseOxmlElement as PptxElement

        _OWN.update({"docx.BaseOxmlElement.xpath": DocxElement.xpath,
                     "docx.CT_Body.inner_content_elements": CT_Body.inner_content_elements})
        remember("docx.oxml.xmlchemy:BaseOxmlElement.xpath", DocxElement.xpath)
        remember("docx.oxml.document:CT_Body.inner_content_elements", CT_Body.inner_content_elements)
        DocxElement.xpath = compiled_lookup(docx_ns.nsmap, DocxElement.xpath)
        body_content = (docx_ns.qn("w:p"), docx_ns.qn("w:tbl"))
        CT_Body.inner_content_elements = property(lambda body: list(body.iterchildren(*body_content)),
                                                  doc=CT_Body.inner_content_elements.__doc__)
        # python-pptx's namespaces are a private name of its own: a release without it keeps its look-up.
        if isinstance(getattr(pptx_ns, "_nsmap", None), dict):
            _OWN["pptx.BaseOxmlElement.xpath"] = PptxElement.xpath
            remember("pptx.oxml.xmlchemy:BaseOxmlElement.xpath", PptxElement.xpath)
            PptxElement.xpath = compiled_lookup(pptx_ns._nsmap, PptxElement.xpath)


def uninstall_compiled_lookups() -> None:
    """The libraries' own look-ups back (to compare the two)."""
    with _LOCK:
        from docx.oxml.document import CT_Body
        from docx.oxml.xmlchemy import BaseOxmlElement as DocxElement
        from pptx.oxml.xmlchemy import BaseOxmlElement as PptxElement

        if "docx.BaseOxmlElement.xpath" in _OWN:
            DocxElement.xpath = _OWN.pop("docx.BaseOxmlElement.xpath")
            CT_Body.inner_content_elements = _OWN.pop("docx.CT_Body.inner_content_elements")
        if "pptx.BaseOxmlElement.xpath" in _OWN:
            PptxElement.xpath = _OWN.pop("pptx.BaseOxmlElement.xpath")


def compiled_lookup(namespaces: dict[str, str], own: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """An element's ``xpath(expression)`` with ``namespaces``, each expression compiled once. Kept per
    expression up to a bound: a few are built from values (a list level, a comment's id). An expression
    that does not compile goes to the library's ``own`` look-up, which raises lxml's error as it did (a
    style id with a quote in it makes one)."""
    from lxml import etree

    @lru_cache(maxsize=1024)
    def compiled(expression: str) -> "etree.XPath":
        return etree.XPath(expression, namespaces=namespaces)

    def xpath(self, xpath_str: str) -> Any:
        try:
            evaluate = compiled(xpath_str)
        except etree.XPathSyntaxError:
            return own(self, xpath_str)
        return evaluate(self)

    return xpath


# What each patch was written against (``python -m kg_decoder.patches`` prints them as they are now).
UPSTREAM = (
    Upstream("install_compiled_lookups", "docx.oxml.xmlchemy:BaseOxmlElement.xpath",
             "(self, xpath_str: 'str') -> 'Any'",
             "d60c91fc41e05f6c269dc063ca74df9b0c32626bdd1e64be286d256670da7b94"),
    Upstream("install_compiled_lookups", "docx.oxml.document:CT_Body.inner_content_elements",
             "(self) -> 'List[CT_P | CT_Tbl]'",
             "3a8bb4c9a281816a9669be0a88903179e97bb56a204d3f001928789eb300e29f"),
    Upstream("install_compiled_lookups", "docx.oxml.ns:nsmap",
             '',
             "b295d0ef24038879f0f2de0ab4cba704728e91ab6e38d9d2789ba21d34c6fcb9"),
    Upstream("install_compiled_lookups", "pptx.oxml.xmlchemy:BaseOxmlElement.xpath",
             "(self, xpath_str: 'str') -> 'Any'",
             "75557aab832299352c7e5622f031ff32e0f9a7230e8a0578cbfbd6b96084bf38"),
    Upstream("install_compiled_lookups", "pptx.oxml.ns:_nsmap",
             '',
             "1de2fb88ee20fe28dfa28d9098e6e99798799a113d3efe3ab6949043383e7e79"),
)

__all__ = ["UPSTREAM", "compiled_lookup", "install_compiled_lookups", "uninstall_compiled_lookups"]
