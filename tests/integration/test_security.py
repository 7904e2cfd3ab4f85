"""SERVICE is refused wherever a user's query runs: a loopback listener counts the requests
Oxigraph would send, through a live server, the CLI and the Python API."""

from __future__ import annotations

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

import kg_decoder
from kg_decoder.cli import load_web_app
from kg_decoder.graph.sparql_guard import service_calls

TOKEN = "security-token"
EX = "http://example.org/"


class Listener:
    """An HTTP endpoint on loopback that counts requests and answers each with an error page holding
    a secret, which Oxigraph copies into its error message."""

    SECRET = "SECRET-REMOTE-BODY-7731"

    def __init__(self) -> None:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                listener.requests += 1
                body = f"internal admin page: {listener.SECRET}".encode()
                self.send_response(500)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.requests = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture(scope="module")
def listener():
    endpoint = Listener()
    yield endpoint
    endpoint.close()


def service_queries(url: str) -> dict[str, str]:
    """SERVICE in every position Oxigraph reads it, including the forms its parser accepts glued."""
    pattern = "{ ?a ?b ?c }"
    return {
        "plain": f"SELECT * WHERE {{ SERVICE <{url}> {pattern} }}",
        "lower case": f"select * where {{ service <{url}> {pattern} }}",
        "silent": f"SELECT * WHERE {{ SERVICE SILENT <{url}> {pattern} }}",
        "nested": f"SELECT * WHERE {{ ?s ?p ?o {{ {{ SERVICE <{url}> {pattern} }} }} }}",
        "subquery": f"SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {pattern} }} }} }}",
        "optional": f"SELECT * WHERE {{ ?s ?p ?o OPTIONAL {{ SERVICE <{url}> {pattern} }} }}",
        "union": f"SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {pattern} }} }}",
        "minus": f"SELECT * WHERE {{ ?s ?p ?o MINUS {{ SERVICE <{url}> {{ ?s ?b ?c }} }} }}",
        "exists": f"SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {pattern} }} }}",
        "graph": f"SELECT * WHERE {{ GRAPH ?g {{ SERVICE <{url}> {pattern} }} }}",
        "ask": f"ASK {{ SERVICE <{url}> {pattern} }}",
        "construct": f"CONSTRUCT {{ ?a ?b ?c }} WHERE {{ SERVICE <{url}> {pattern} }}",
        "describe": f"DESCRIBE ?a WHERE {{ SERVICE <{url}> {pattern} }}",
        "variable endpoint": f"SELECT * WHERE {{ VALUES ?e {{ <{url}> }} SERVICE ?e {pattern} }}",
        "prefixed endpoint": f"PREFIX r: <{url}> SELECT * WHERE {{ SERVICE r: {pattern} }}",
        "relative endpoint": f"BASE <{url}> SELECT * WHERE {{ SERVICE <> {pattern} }}",
        "glued to true": f"SELECT * WHERE {{ ?s ?p trueSERVICE <{url}> {pattern} }}",
        "glued to SILENT": f"SELECT * WHERE {{ SERVICESILENT <{url}> {pattern} }}",
        "glued to an IRI": f"SELECT * WHERE {{ ?s ?p <{EX}o>SERVICE<{url}>{pattern} }}",
        "glued to a number": f"SELECT * WHERE {{ ?s ?p 1SERVICE<{url}>{pattern} }}",
        "after a comment": f"SELECT * WHERE {{ ?s ?p ?o #x\nSERVICE <{url}> {pattern} }}",
        "less-than read as an IRI": (f"SELECT * WHERE {{ ?s ?p ?o FILTER(?o<1)SERVICE?e#>\n{pattern} "
                                     f"VALUES ?e {{ <{url}> }} }}"),
        "unicode escape": f"SELECT * WHERE {{ \\u0053ERVICE <{url}> {pattern} }}",
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store whose default graph matches the patterns around the SERVICE calls."""
    store = kg_decoder.open_store(tmp_path_factory.mktemp("security") / "store")
    store.sparql_update(f"INSERT DATA {{ <{EX}s> <{EX}p> true, 1, <{EX}o>, 0 . GRAPH <{EX}g> {{ <{EX}s> <{EX}p> 2 }} }}")
    return store


@pytest.fixture(scope="module")
def live(store):
    from waitress.server import create_server

    app = load_web_app().create_app(store, write_token=TOKEN)
    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    threading.Thread(target=server.run, daemon=True).start()
    yield f"http://127.0.0.1:{server.effective_port}"
    server.close()


def test_the_listener_sees_what_oxigraph_sends_when_nothing_stops_it(store, listener):
    """The threat is real: the raw Oxigraph store calls the URL and hands on the remote body."""
    before = listener.requests
    with pytest.raises(Exception) as raised:
        list(store.graph.oxigraph.query(service_queries(listener.url)["plain"]))
    assert listener.requests == before + 1 and Listener.SECRET in str(raised.value)


@pytest.mark.parametrize("case", sorted(service_queries("http://x/")))
def test_service_is_refused_by_the_live_endpoint_and_no_request_leaves(case, live, listener):
    query = service_queries(listener.url)[case]
    before = listener.requests
    for response in (requests.get(live + "/sparql", params={"query": query}, timeout=30),
                     requests.post(live + "/sparql", data=query.encode(), timeout=30,
                                   headers={"Content-Type": "application/sparql-query"})):
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "service-not-allowed"
    assert listener.requests == before


@pytest.mark.parametrize("case", ["plain", "glued to true", "less-than read as an IRI"])
def test_service_in_an_update_is_refused_even_with_the_token(case, live, listener):
    where = service_queries(listener.url)[case].split("WHERE", 1)[1]
    before = listener.requests
    for update in (f"INSERT {{ <{EX}x> <{EX}y> ?c }} WHERE {where}", f"DELETE {{ ?a ?b ?c }} WHERE {where}"):
        response = requests.post(live + "/sparql", data={"update": update}, timeout=30,
                                 headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 400 and response.json()["error"] == "service-not-allowed", response.text
    assert listener.requests == before


def test_the_word_service_in_strings_iris_variables_and_comments_is_no_call(live):
    query = (f"PREFIX svc: <{EX}service#> SELECT ?service WHERE {{ # a SERVICE comment\n"
             f"  ?service <{EX}service> ?o . OPTIONAL {{ ?service svc:SERVICE 'SERVICE <http://x/> {{ }}' }}\n"
             f"  FILTER(?o != \"\"\"SERVICE\"\"\" && ?service != <http://service.example/>) }}")
    assert service_calls(query) == []
    response = requests.get(live + "/sparql", params={"query": query}, timeout=30)
    assert response.status_code == 200, response.text


def test_an_allowed_endpoint_is_called_and_its_answer_never_reaches_the_client(store, listener):
    from waitress.server import create_server

    app = load_web_app().create_app(store, allow_service=(listener.url,))
    server = create_server(app, host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=server.run, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.effective_port}"
        before = listener.requests
        allowed = requests.get(base + "/sparql", params={"query": service_queries(listener.url)["plain"]}, timeout=30)
        assert listener.requests == before + 1
        assert allowed.status_code == 400 and allowed.json()["error"] == "query-error"
        assert Listener.SECRET not in allowed.text
        other = service_queries("http://127.0.0.1:9/other")["plain"]
        refused = requests.get(base + "/sparql", params={"query": other}, timeout=30)
        assert refused.status_code == 400 and refused.json()["error"] == "service-not-allowed"
        variable = requests.get(base + "/sparql", timeout=30,
                                params={"query": service_queries(listener.url)["variable endpoint"]})
        assert variable.json()["error"] == "service-not-allowed"
        assert listener.requests == before + 1
    finally:
        server.close()


def test_the_cli_and_the_python_api_refuse_service_too(store, listener, tmp_path):
    query = service_queries(listener.url)["subquery"]
    before = listener.requests
    with pytest.raises(kg_decoder.ServiceNotAllowed):
        store.select_rows(query)
    with pytest.raises(kg_decoder.ServiceNotAllowed):
        store.sparql_update(f"INSERT {{ ?a ?b ?c }} WHERE {{ SERVICE <{listener.url}> {{ ?a ?b ?c }} }}")
    cli_store = kg_decoder.open_store(tmp_path / "cli-store")
    cli_store.close()
    (tmp_path / "remote.rq").write_text(query, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "kg_decoder.cli", "query", str(tmp_path / "remote.rq"),
                           "--store", str(tmp_path / "cli-store")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "SERVICE" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert listener.requests == before


def test_a_guard_that_reads_every_way_the_parser_might(listener, store):
    """Random glue around SERVICE, sometimes hidden in a string, comment, IRI or name: whatever the
    guard lets through, Oxigraph sends no request for."""
    import random

    rng = random.Random(7)
    glue = ["", " ", "\n", "#c\n", ".", "}", "{", ")", "'x'", '"""x"""', "1", "true", "<http://e/>", "?v",
            "<", "FILTER(?o<1)", "#>", ">", "ex:", "'''a''''", "_:b", "@en", "'", "\\u0053", "/", "|", "^", "!",
            "=", "*", "+", ",", ";", "(", "&&", "~", "[", "[]", "-", "a-", "_", "%", "FILTER(?o<?x&&'>)'='>')",
            "~", "~ex:r", "{|", "|}", "<<( ?s ?p ?o )>>", "@en--ltr"]
    hiding = [("", ""), ("'", "'"), ("#", "\n"), ("<http://e/", ">"), ('"""', '"""'), ("?", ""), ("ex:", ""),
              ("$", ""), ("_:", "")]
    before, evaluated = listener.requests, 0
    for _ in range(1500):
        opening, closing = rng.choice(hiding)
        body = ("".join(rng.choice(glue) for _ in range(rng.randint(0, 4))) + opening + "SERVICE" + closing
                + rng.choice(["", " ", "#>\n"]) + f"<{listener.url}>" + "{ ?a ?b ?c }")
        query = f"PREFIX ex: <{EX}> SELECT * WHERE {{ ?s ?p ?o {body} }}"
        if service_calls(query):
            continue
        evaluated += 1
        try:
            list(store.graph.oxigraph.query(query))
        except Exception:
            pass
    assert listener.requests == before
    assert evaluated > 100  # the guard let plenty of queries with a hidden SERVICE through
