"""pdfplumber's internals kg-decoder fills: a page's objects made from the layout pdfminer already read.

Pinned: ``pdfplumber>=0.11,<0.12`` (pyproject.toml); written against 0.11.11. ``UPSTREAM`` records
what the patch was written against, and ``tests/unit/test_patches.py`` says when an upgrade changes it.
"""

from __future__ import annotations

from typing import Any

from . import Upstream


# -- A page's objects from pdfminer's layout -----------------------------------------------------------
# Fills ``pdfplumber.page.Page._objects``, the cache the ``Page.objects`` property returns when it is
# set (else pdfplumber interprets the page again with pdfminer: ``Page.layout``, then
# ``parse_objects``). The table finder's page was already read by pdfminer for unstructured's ``fast``
# (decode/tables/page_marks.py): walked as ``Page.iter_layout_objects`` walks a page read without
# layout analysis, in the drawing order ``patches.pdfminer.install_drawing_order`` keeps, its
# characters become the few fields pdfplumber's word extraction reads, computed as
# ``Page.process_object`` computes them (its general conversion of every attribute cost more than the
# words); drawings go through pdfplumber's own ``process_object``. ``Page.close`` (``flush_cache``)
# drops the cache again.

def set_objects_from_layout(plumber_page: Any, layout: Any) -> None:
    """Give ``plumber_page`` (a pdfplumber ``Page``) the objects of ``layout``, the same page laid out
    by pdfminer after ``install_drawing_order``, as pdfplumber would read them itself."""
    from pdfminer.layout import LTChar, LTContainer

    height = plumber_page.height
    left, top_edge = plumber_page.mediabox[:2]
    objects: dict[str, list] = {"char": []}

    def drawn(items) -> None:  # as pdfplumber walks a page read without layout analysis
        for item in items:
            if isinstance(item, LTContainer):
                drawn(item._objs)
            elif isinstance(item, LTChar):
                top = (height - item.y1) + top_edge
                objects["char"].append({
                    "text": item.get_text(), "x0": item.x0 + left if left != 0 else item.x0,
                    "x1": item.x1 + left if left != 0 else item.x1, "top": top,
                    "bottom": (height - item.y0) + top_edge, "doctop": plumber_page.initial_doctop + top,
                    "upright": item.upright, "size": item.size})
            else:
                converted = plumber_page.process_object(item)
                if converted["object_type"] != "anno":
                    objects.setdefault(converted["object_type"], []).append(converted)

    drawn(layout.stream_order)  # pdfplumber's own reading: no layout analysis, objects as drawn
    plumber_page._objects = objects


# What each patch was written against (``python -m kg_decoder.patches`` prints them as they are now).
UPSTREAM = (
    Upstream("set_objects_from_layout", "pdfplumber.page:Page.objects",
             '(self) -> Dict[str, List[Dict[str, Any]]]',
             "66559d7d1e6b25a57d147ae540fe6771c068a84361650b527627ef35b6cc89c0"),
    Upstream("set_objects_from_layout", "pdfplumber.page:Page.parse_objects",
             '(self) -> Dict[str, List[Dict[str, Any]]]',
             "4580fff6e3456eba15aa4972d041a3c3ee45a01718d6e8e237b73f54dc87d4d8"),
    Upstream("set_objects_from_layout", "pdfplumber.page:Page.iter_layout_objects",
             '(self, layout_objects: List[pdfminer.layout.LTComponent]) -> Generator[Dict[str, Any], NoneType, NoneType]',
             "13f61502dc9bc3eab4e71bfbdc8717ac63035bd8cebff5d0ab7773b32a04122d"),
    Upstream("set_objects_from_layout", "pdfplumber.page:Page.process_object",
             '(self, obj: pdfminer.layout.LTItem) -> Dict[str, Any]',
             "2c1945c25dc4d6b4668d3de3d14b3d44dfafd4bc66f9089634df39cf0fc8b46b"),
    Upstream("set_objects_from_layout", "pdfplumber.container:Container.flush_cache",
             '(self, properties: Optional[List[str]] = None) -> None',
             "bc04370065653a65f0769705db5b4bfbe07dcfe887efcc54793445bd3cdb646a"),
    Upstream("set_objects_from_layout", "pdfplumber.container:Container.cached_properties",
             '',
             "bac51f63f31f6fee5533929d3b9dc1c70db8c00133bf5ce6afb152f8c22ce09e"),
)

__all__ = ["UPSTREAM", "set_objects_from_layout"]
