"""Sources and their versions: ``/api/versions``, ``/api/diff`` (JSON) and ``/versions`` and
``/diff`` (pages: a source's versions with dates and counts; two versions side by side)."""

from __future__ import annotations

from flask import Blueprint, jsonify, render_template, request

import kg_decoder
from kg_decoder import RequestError

from .context import settings

versions = Blueprint("versions", __name__)


def _argument(name: str) -> str:
    value = request.args.get(name, "")
    if not value or len(value) > 4096:
        raise RequestError(f"give ?{name}= (at most 4096 characters)", code="missing-argument")
    return value


@versions.get("/api/versions")
def versions_json():
    found = kg_decoder.source_versions(_argument("source"), store=settings().store, read_files=False)
    return jsonify(versions=[v.to_json() for v in found])


@versions.get("/api/diff")
def diff_json():
    return jsonify(settings().read("diff", _argument("old"), _argument("new")).to_json())


@versions.get("/versions")
def versions_page():
    source = _argument("source")
    return render_template("versions.html", source=source,
                           versions=kg_decoder.source_versions(source, store=settings().store,
                                                                read_files=False))


@versions.get("/diff")
def diff_page():
    return render_template("diff.html", view=settings().read("diff_page", _argument("old"), _argument("new")))
