"""The HTML pages: home, SPARQL editor, documents, a document, the trace view, page pictures, the
coverage dashboard and the audit rows behind its charts."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from flask import Blueprint, Response, render_template, request

from kg_decoder.serve import (bounded_page_image, bounded_rendered_page_image, document_iri, query_examples,
                              trace_view, verdict_chain_views)

from .context import settings
from .api import trace_request, whole_number

pages = Blueprint("pages", __name__)


@pages.get("/")
def home():
    return render_template("home.html", overview=settings().read("store_overview"))


@pages.get("/favicon.ico")
def favicon():  # pages name none (base.html); a browser still asks, on a picture or JSON it shows
    return Response(status=204)


@pages.get("/query")
def query_page():
    examples, audits = query_examples()
    queries = {q.name: q.text for q in examples + audits}
    chosen = request.args.get("name", "")
    given = request.args.get("query")  # a query opened at /sparql, or an IRI of a result followed: run at once
    return render_template("query.html", examples=examples, audits=audits, queries=queries,
                           editor=given if given else queries.get(chosen, examples[0].text),
                           chosen=chosen if chosen in queries and not given else "", run=bool(given))


@pages.get("/documents")
def documents_page():
    wanted = request.args.get("format") or None
    listed = settings().read("documents_page", wanted, whole_number(request.args, "offset", 0))
    return render_template("documents.html", listed=listed, format=wanted)


@pages.get("/dashboard")
def dashboard_page():
    return render_template("dashboard.html", charts=settings().read("dashboard"))


@pages.get("/dashboard/rows/<name>")
def audit_rows_page(name: str):
    audit = settings().read("audit_page", name)
    return render_template("rows.html", name=name, rows=audit.rows, total=audit.total, held=audit.held, quote=quote)


@pages.get("/documents/<path:identifier>")
def document_page(identifier: str):
    config = settings()
    page = config.read("document_page", document_iri(config.store, identifier))
    return render_template("document.html", doc=page.document, quote=quote, chunks=page.chunks, facts=page.facts,
                           sources=page.sources)


@pages.get("/pages/<path:identifier>/image.png")
def page_image(identifier: str):
    iri = identifier if identifier.startswith("urn:") else f"urn:page:{identifier}"
    config = settings()
    png = bounded_page_image(config.store, iri, config.bounds, config.workers, config.client(), config.cancelled())
    return Response(png, content_type="image/png")


@pages.get("/renderings/<path:identifier>/<int:number>.png")
def rendering_image(identifier: str, number: int):
    config = settings()
    document = document_iri(config.store, identifier)
    png = bounded_rendered_page_image(config.store, document, number, config.bounds, config.workers, config.client(),
                                      config.cancelled())
    return Response(png, content_type="image/png")


TRACE_PAGE_PLACES = 10  # a quote's places on one trace page; the next ones a link away
_MOST_PLACES = 99  # one fewer than a trace's page may hold (100): one more is asked for


@pages.get("/trace")
def trace_page():
    store = settings().store
    paging = None
    if request.args.get("quote") and not request.args.get("s") and not request.args.get("segment"):
        # A quote's places a page at a time, one more asked for to know whether there are more.
        limit = whole_number(request.args, "limit", TRACE_PAGE_PLACES) or TRACE_PAGE_PLACES
        offset = whole_number(request.args, "offset", 0)
        limit = min(limit, _MOST_PLACES)
        sources = trace_request({**request.args.to_dict(), "limit": str(limit + 1)})
        paging = {"offset": offset, "limit": limit, "more": len(sources) > limit,
                  "next": _trace_url(offset + limit, limit), "previous": _trace_url(max(0, offset - limit), limit)}
        sources = sources[:limit]
    else:
        sources = trace_request(request.args) if request.args else []
    texts: dict = {}
    return render_template("trace.html", sources=[trace_view(store, s, texts) for s in sources], args=request.args,
                           quote=quote, chains=[verdict_chain_views(store, s) for s in sources], paging=paging)


def _trace_url(offset: int, limit: int) -> str:
    args = {**request.args.to_dict(), "offset": str(offset)}
    if limit != TRACE_PAGE_PLACES:
        args["limit"] = str(limit)
    return "/trace?" + urlencode(args)
