"""A user's SPARQL checked before Oxigraph parses it: no SERVICE unless its endpoint is allowed on
purpose, and no shape that crashes the parser.

Oxigraph's parser recurses once per nesting level: 4000 nested ``{`` (or 8000 ``(``) overflow the
thread's stack and kill the whole process with a segmentation fault. :func:`check_shape` bounds
the nesting of brackets and the runs of unary operators far below that, and the length.

Oxigraph evaluates ``SERVICE <url>`` by sending an HTTP request from this process and puts
the remote answer into its error messages: on a public endpoint any client could make the
server call any host it reaches (cloud metadata, internal pages) and read the answer.
pyoxigraph has no switch for it and shows no parsed query, so the query text is checked
before it runs, with a lexer built to miss nothing:

- Oxigraph's parser is a PEG that matches keywords as prefixes: ``trueSERVICE<u>{}`` is
  ``true`` followed by ``SERVICE``, ``SERVICESILENT`` is ``SERVICE SILENT``, ``SERVICE:x``
  takes the prefixed name ``:x``. So every bare word (and the prefix of a prefixed name)
  that *contains* "service" counts as the keyword. Variables, blank node labels and the
  local part of a prefixed name are read greedily by the parser and are not keywords.
- What comes right before the keyword must end a token (``}``, ``.``, ``)``, a letter...):
  after ``/``, ``-`` or ``=`` it cannot be the keyword, so IRIs with "service" in their path
  pass.
- ``<`` is an IRI or the less-than operator, and the parser picks by context:
  ``FILTER(?o<1)SERVICE?ep#>`` is a comparison, a SERVICE call and a comment. The lexer
  follows both readings wherever ``<`` can start an IRI.
- Strings and comments are skipped; ``\\u`` escapes are expanded and the text checked again.

The result can only err towards refusal: a prefix named ``service:`` is refused too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from ..model.errors import QueryError, ServiceNotAllowed

_IRI = re.compile(r'<([^<>"{}|^`\\\x00-\x20]*)>')
_STRING = {"'''": re.compile(r"'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''", re.S),
           '"""': re.compile(r'"""(?:(?:"|"")?(?:[^"\\]|\\.))*"""', re.S),
           "'": re.compile(r"'(?:[^'\\\n\r]|\\.)*'"),
           '"': re.compile(r'"(?:[^"\\\n\r]|\\.)*"')}
# A run the parser reads as one name: a keyword, a prefixed name, a function name, a number.
_WORD = re.compile(r"(?:[^\W]|[\-.·\u0300-\u036F\u203F\u2040:%]|\\.)+")
_VARIABLE = re.compile(r"[?$][^\W]*|_:(?:[^\W]|[\-.·\u0300-\u036F\u203F\u2040])*")
_SERVICE = re.compile("service", re.IGNORECASE)
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_GAP = re.compile(r"(?:\s+|#[^\n\r]*)*")
_LINE_END = re.compile(r"[\n\r]")
# What may come right before a SERVICE keyword: the end of a group, triple, call, blank node, IRI,
# literal, keyword, number or RDF 1.2 reifier (``}SERVICE``, ``?o;SERVICE``, ``trueSERVICE``,
# ``?o ~SERVICE``). After anything else (``/``, ``-``, ``=``, ``,``...) the parser cannot read
# SERVICE as the keyword, so ``<http://example.org/service>`` read as code is no call.
_ENDS_A_TOKEN = set("{}.)];>~\"'")


MAX_QUERY_CHARACTERS = 1_000_000
MAX_NESTING = 200  # the parser overflows an 8 MB stack past about 2000 nested groups
_BRACKET = re.compile(r"<<|>>|[{(\[\]\)}]")
_OPENING = {"{", "(", "[", "<<"}
_UNARY_RUN = re.compile(r"(?:[!\-+^]\s*){%d,}" % (MAX_NESTING + 1))


def check_shape(query: str) -> None:
    """Raise QueryError for a query too long or too deeply nested for the parser to take safely.

    Brackets are counted everywhere, strings and IRIs included: the count can only be too high,
    and a real query is nowhere near the limit.

    >>> check_shape("SELECT * WHERE { " + "{" * 300 + " }")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.QueryError: the query nests brackets more than 200 deep
    """
    if not isinstance(query, str):
        raise QueryError("a query is text")
    if len(query) > MAX_QUERY_CHARACTERS:
        raise QueryError(f"the query has {len(query)} characters, over the limit of {MAX_QUERY_CHARACTERS}")
    depth = deepest = 0
    for bracket in _BRACKET.findall(query):
        if bracket in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    if deepest > MAX_NESTING:
        raise QueryError(f"the query nests brackets more than {MAX_NESTING} deep")
    if _UNARY_RUN.search(query):
        raise QueryError(f"the query chains more than {MAX_NESTING} unary operators")


@dataclass(frozen=True)
class ServiceCall:
    """A place where the query may call a remote endpoint: the endpoint IRI if it is written out."""

    position: int
    endpoint: Optional[str]


def service_calls(query: str) -> list[ServiceCall]:
    """Every place in ``query`` that Oxigraph could read as a SERVICE call, in any reading.

    >>> service_calls("SELECT * { ?s ?p 'SERVICE <http://a/>' } # SERVICE")
    []
    >>> [c.endpoint for c in service_calls("SELECT * { SERVICE SILENT <http://a/> { ?s ?p ?o } }")]
    ['http://a/']
    >>> [c.endpoint for c in service_calls("SELECT * { ?o ?p ?q FILTER(?o<1)SERVICE?ep#>\\n{ } }")]
    [None]
    """
    calls = {call.position: call for call in _scan(query)}
    unescaped = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), query)
    if unescaped != query:
        calls.update({-1 - call.position: call for call in _scan(unescaped)})
    return sorted(calls.values(), key=lambda call: abs(call.position))


def check_services(query: str, allowed: Iterable[str] = ()) -> list[ServiceCall]:
    """Raise ServiceNotAllowed unless every SERVICE call of ``query`` names an allowed endpoint.

    ``allowed`` holds endpoint prefixes (``https://host/sparql``); an endpoint given by a
    variable, a prefixed name or a relative IRI is never allowed.

    >>> check_services("SELECT * { ?s ?p ?o }")
    []
    >>> check_services("SELECT * { SERVICE <http://169.254.169.254/> { ?s ?p ?o } }")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.ServiceNotAllowed: SERVICE <http://169.254.169.254/> is not allowed on this server
    >>> len(check_services("SELECT * { SERVICE <https://db.example/sparql> { } }", ["https://db.example/"]))
    1
    """
    check_shape(query)
    prefixes = [prefix for prefix in allowed if prefix]
    calls = service_calls(query)
    for call in calls:
        if call.endpoint is None:
            raise ServiceNotAllowed("SERVICE is not allowed on this server" if not prefixes else
                                    "SERVICE is allowed only with an endpoint written as a full IRI <...>")
        if not any(call.endpoint.startswith(prefix) for prefix in prefixes):
            raise ServiceNotAllowed(f"SERVICE <{call.endpoint}> is not allowed on this server")
    return calls


def _scan(text: str) -> list[ServiceCall]:
    """The SERVICE calls in every reading of ``text`` (each ``<`` an IRI or an operator)."""
    found: dict[int, ServiceCall] = {}
    pending, seen = [0], set()
    while pending:
        position = pending.pop()
        while position < len(text) and position not in seen:
            seen.add(position)
            position = _step(text, position, pending, found)
    return list(found.values())


def _step(text: str, position: int, pending: list[int], found: dict[int, ServiceCall]) -> int:
    """Read one token of code at ``position``; the position after it (other readings go to ``pending``)."""
    char = text[position]
    if char.isspace():
        return position + 1
    if char == "#":
        end = _LINE_END.search(text, position)
        return end.start() if end else len(text)
    if char in "'\"":
        opener = char * 3 if text.startswith(char * 3, position) else char
        string = _STRING[opener].match(text, position)
        if string is None:  # unterminated: the query does not parse; read on after the quote
            return position + len(opener)
        if len(opener) == 3:
            pending.append(position + 2)  # or an empty string '' and then a quote
        end = string.end()
        while len(opener) == 3 and end < len(text) and text[end] == char:
            end += 1  # a long string may end anywhere in a run of quotes: follow each
            pending.append(end)
        return string.end()
    if char == "<":
        iri = _IRI.match(text, position)
        if iri:
            pending.append(position + 1)  # the other reading: less-than, code after it
            return iri.end()
        return position + 1
    if char in "?$" or text.startswith("_:", position):
        variable = _VARIABLE.match(text, position)
        return max(variable.end(), position + 1)
    word = _WORD.match(text, position)
    if word is None:
        return position + 1
    keyword_part = word.group().split(":", 1)[0]
    for match in _SERVICE.finditer(keyword_part):
        start = position + match.start()
        before = text[start - 1] if start > 0 else " "
        if before.isspace() or before in _ENDS_A_TOKEN or (before.isascii() and before.isalnum()):
            found.setdefault(start, ServiceCall(start, _endpoint(text, word)))
    return word.end()


def _endpoint(text: str, word: re.Match) -> Optional[str]:
    """The IRI after ``SERVICE [SILENT]`` when the word is exactly SERVICE; else None (refused)."""
    if word.group().strip(".").lower() != "service":
        return None
    position = _GAP.match(text, word.end()).end()
    after = _WORD.match(text, position)
    if after is not None and after.group().lower() == "silent":
        position = _GAP.match(text, after.end()).end()
    iri = _IRI.match(text, position)
    if iri is None or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", iri.group(1)):
        return None
    return iri.group(1)
