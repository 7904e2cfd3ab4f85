"""A form that writes with the token is taken from this server's own pages only (issue 59, item 7):
the Host a request names is the attacker's to choose (DNS rebinding makes the browser call the page
same-origin), so an Origin counts as this server's only when it names one of the server's names."""

from __future__ import annotations

import pytest

import kg_decoder
from kg_decoder.cli import load_web_app

TOKEN = "form-origin-token"
EX = "http://example.org/form/"


@pytest.fixture(scope="module")
def store():
    with kg_decoder.open_store(None) as store:
        yield store


def form_post(app, n: int, host: str, headers: dict) -> int:
    update = f"INSERT DATA {{ <{EX}s{n}> <{EX}p> {n} }}"
    return app.test_client().post("/sparql", data={"update": update, "token": TOKEN},
                                  headers={"Host": host, **headers}).status_code


@pytest.mark.parametrize("host, origin, site", [
    ("evil.example:8000", "http://evil.example:8000", None),            # a name that resolves to the server
    ("evil.example:8000", "http://evil.example:8000", "same-origin"),   # as the browser then says
    ("127.0.0.1:8000", "http://evil.example:8000", None),
    ("127.0.0.1:8000", "null", None),
    ("127.0.0.1:8000", None, "cross-site"),
    ("127.0.0.1:8000", "http://127.0.0.1:8000", "same-site"),
])
def test_a_form_from_another_site_is_refused(store, host, origin, site):
    app = load_web_app().create_app(store, write_token=TOKEN, isolate=False)
    headers = {k: v for k, v in (("Origin", origin), ("Sec-Fetch-Site", site)) if v is not None}
    assert form_post(app, 1, host, headers) == 403


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "192.0.2.7:8000",
                                  "kg.internal:8000"])
def test_a_form_from_the_servers_own_pages_passes(store, host):
    app = load_web_app().create_app(store, write_token=TOKEN, isolate=False, listen_host="kg.internal")
    assert form_post(app, 2, host, {"Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}) == 204
    assert form_post(app, 3, host, {}) == 204  # no browser's headers: a program, which holds the token


def test_behind_a_proxy_the_trusted_host_names_the_server(store):
    app = load_web_app().create_app(store, write_token=TOKEN, isolate=False, trusted_hosts=["kg.example.org"])
    assert form_post(app, 4, "kg.example.org", {"Origin": "https://kg.example.org"}) == 204
    assert form_post(app, 5, "kg.example.org", {"Origin": "https://evil.example"}) == 403
