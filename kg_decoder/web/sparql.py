"""``/sparql``: the SPARQL 1.1 Protocol — queries by GET, form POST or direct POST; updates with the token."""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Blueprint, Response, redirect, request

from kg_decoder import RequestError
from kg_decoder.serve import run_query, run_update

from .context import settings, prefers_html

sparql = Blueprint("sparql", __name__)
_TRUE = ("1", "true", "yes")


@sparql.route("/sparql", methods=["GET", "POST"])
def endpoint():
    config = settings()
    content_type = (request.content_type or "").split(";")[0].strip().lower()
    query = update = None
    if request.method == "GET":
        query = request.args.get("query")
    elif content_type == "application/sparql-query":
        query = _body_text()
    elif content_type == "application/sparql-update":
        update = _body_text()
    elif content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        query, update = request.form.get("query"), request.form.get("update")
    else:
        raise RequestError(f"send a query as application/sparql-query, an update as application/sparql-update, or "
                           f"either as a form, not {content_type[:100] or 'no content type'}",
                           code="unsupported-media-type", http_status=415)
    if update is not None:
        config.require_token()
        with config.writing():
            run_update(config.store, update, allow_service=config.allow_service, allow_load=config.allow_load,
                       timeout=config.query_timeout, workers=config.workers)
        return Response(status=204)
    if request.method == "GET" and prefers_html():  # a person at the endpoint: to the editor, which runs it
        return redirect("/query" + (f"?{urlencode({'query': query})}" if query else ""), code=303)
    if not query:
        raise RequestError("give a query (query=... or a application/sparql-query body)", code="missing-query")
    values = request.values
    answer = run_query(config.store, query, accept=request.headers.get("Accept", ""), format=values.get("format"),
                       default_graph=values.getlist("default-graph-uri"),
                       named_graphs=values.getlist("named-graph-uri"),
                       union=values.get("union", "").lower() in _TRUE, timeout=config.query_timeout,
                       row_cap=config.row_cap, allow_service=config.allow_service, workers=config.workers,
                       client=config.client(), cancelled=config.cancelled())
    return Response(answer.body, content_type=answer.content_type + "; charset=utf-8")


def _body_text() -> str:
    try:
        return request.get_data().decode(request.mimetype_params.get("charset") or "utf-8")
    except (UnicodeDecodeError, LookupError):
        raise RequestError("the request body is not text in its declared character set (UTF-8 by default)",
                           code="bad-encoding") from None
