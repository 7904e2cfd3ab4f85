"""``/search``: a quote found in every document through the text index, each place with the text around
it and, where the page can be drawn, the page's thumbnail with the hit's box."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from kg_decoder.serve import trace_drawing

from .context import settings
from .api import search_request

search = Blueprint("search", __name__)


@search.get("/search")
def search_page():
    found = search_request(request.args, boxes=True) if request.args.get("q", "").strip() else None
    store = settings().store
    # Only the thumbnails' drawings are read here, in the server: no hit's text (a section may be a book).
    drawings = [trace_drawing(store, hit.source) if hit.source else None for hit in found.hits] if found else []
    return render_template("search.html", found=found, drawings=drawings, q=request.args.get("q", ""))
