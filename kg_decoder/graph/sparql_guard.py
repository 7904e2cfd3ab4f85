"""A user's SPARQL checked before Oxigraph parses it: no shape that crashes the parser, no SERVICE
and no LOAD unless its endpoint is allowed on purpose.

Oxigraph's parser and evaluator recurse once per nesting level and once per element of a flat
chain: 4000 nested ``{`` (or 8000 ``(``) overflow the thread's stack and kill the whole process
with a segmentation fault, and so do about 8000 elements of a flat operator chain (``1+1+...``,
``||``, ``UNION``, ``OPTIONAL {}``, ``MINUS {}``, select expressions) or 4000 chained ``BIND``s
(pyoxigraph 0.5.13; tests/e2e/test_sparql_limits.py finds the thresholds again on every run).
:func:`check_shape` bounds the length, the bracket nesting, runs of unary operators and the
number of chain elements far below that.

Oxigraph evaluates ``SERVICE <url>`` (and an update's ``LOAD <url>``) by sending an HTTP request
from this process, and puts the remote answer into its error messages: on a public endpoint any
client could make the server call any host it reaches (cloud metadata, internal pages) and read
the answer. pyoxigraph has no switch for it and shows no parsed query, so the text is checked
before it runs, with a lexer built to miss nothing:

- Oxigraph's parser is a PEG that matches keywords as prefixes: ``trueSERVICE<u>{}`` is
  ``true`` followed by ``SERVICE``, ``SERVICESILENT`` is ``SERVICE SILENT``, ``SERVICE:x``
  takes the prefixed name ``:x``. So every bare word (and the prefix of a prefixed name)
  that *contains* "service" counts as the keyword (in an update, "load" too) where what comes
  before it in the word may be read as whole tokens (keywords, function names, numbers:
  ``trueSERVICE``, ``1LOAD``); ``download`` is a name the parser cannot split. Variables, blank
  node labels and the local part of a prefixed name are read greedily by the parser and are not
  keywords.
- What comes right before the keyword must end a token (``}``, ``.``, ``)``, a letter...):
  after ``/``, ``-`` or ``=`` it cannot be the keyword, so IRIs with "service" in their path
  pass.
- ``<`` is an IRI or the less-than operator, and the parser picks by context:
  ``FILTER(?o<1)SERVICE?ep#>`` is a comparison, a SERVICE call and a comment. The lexer
  follows both readings wherever ``<`` can start an IRI.
- Strings and comments are skipped; ``\\u`` escapes are expanded and the text checked again.

The result can only err towards refusal: a prefix named ``service:`` is refused too. An allowed
endpoint is compared as a parsed URL (scheme, host, port, and a path with its dot segments
resolved), never as a string prefix: ``/allowed/../x`` and ``/allowedX`` are not under
``/allowed``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Iterable, Optional
from urllib.parse import unquote, urlsplit

from ..model.errors import LoadNotAllowed, QueryError, QueryTooComplex, ServiceNotAllowed

_IRI = re.compile(r'<([^<>"{}|^`\\\x00-\x20]*)>')
_STRING = {"'''": re.compile(r"'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''", re.S),
           '"""': re.compile(r'"""(?:(?:"|"")?(?:[^"\\]|\\.))*"""', re.S),
           "'": re.compile(r"'(?:[^'\\\n\r]|\\.)*'"),
           '"': re.compile(r'"(?:[^"\\\n\r]|\\.)*"')}
# A run the parser reads as one name: a keyword, a prefixed name, a function name, a number.
_WORD = re.compile(r"(?:[^\W]|[\-.·\u0300-\u036F\u203F\u2040:%]|\\.)+")
_VARIABLE = re.compile(r"[?$][^\W]*|_:(?:[^\W]|[\-.·\u0300-\u036F\u203F\u2040])*")
_SERVICE = re.compile("service", re.IGNORECASE)
_SERVICE_OR_LOAD = re.compile("service|load", re.IGNORECASE)
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_GAP = re.compile(r"(?:\s+|#[^\n\r]*)*")
_LINE_END = re.compile(r"[\n\r]")
# What may come right before a SERVICE keyword: the end of a group, triple, call, blank node, IRI,
# literal, keyword, number or RDF 1.2 reifier (``}SERVICE``, ``?o;SERVICE``, ``trueSERVICE``,
# ``?o ~SERVICE``). After anything else (``/``, ``-``, ``=``, ``,``...) the parser cannot read
# SERVICE as the keyword, so ``<http://example.org/service>`` read as code is no call.
_ENDS_A_TOKEN = set("{}.)];>~\"'")
# What the parser may read as a whole token right before a keyword inside one word (``trueSERVICE``,
# ``1LOAD``, ``SILENTLOAD``): SPARQL 1.1's keywords and built-in function names, and numbers. Any other
# run of letters before it (``download``) is a name the parser cannot split, so the keyword is not one.
_TOKENS = frozenset("""
a abs add all as asc ask avg base bind bnode bound by ceil clear coalesce concat construct contains copy
count create datatype day default delete describe desc distinct drop encode_for_uri exists false filter
floor from graph group group_concat having hours if in insert into iri isblank isiri isliteral isnumeric
isuri lang langmatches lcase limit load max md5 min minus minutes month move named not now offset
optional order prefix rand reduced regex replace round sameterm sample seconds select separator service
sha1 sha256 sha384 sha512 silent str strafter strbefore strdt strends strlang strlen strstarts struuid
substr sum timezone to true tz ucase undef union uri using uuid values where with year""".split())
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?", re.IGNORECASE)


MAX_QUERY_CHARACTERS = 1_000_000
MAX_NESTING = 200  # the parser overflows an 8 MB stack past about 2000 nested groups
# Brackets opened, operator characters and the keywords that add to a group, counted over the whole
# query (VALUES and inline data left out): a chain of N elements counts at least N. Oxigraph's
# process dies at about 8000 (4000 survive); a real query counts a few hundred at most.
MAX_CHAIN_ELEMENTS = 1000
_BRACKET = re.compile(r"<<|>>|[{(\[\]\)}]")
_OPENING = {"{", "(", "[", "<<"}
_UNARY_RUN = re.compile(r"(?:[!\-+^]\s*){%d,}" % (MAX_NESTING + 1))
_CHAIN_TOKEN = re.compile(r"""(?P<space>\s+)|(?P<comment>\#[^\n\r]*)|(?P<quote>['"])
    |(?P<iri><[^<>"{}|^`\\\x00-\x20]*>)|(?P<variable>[?$][^\W]*)|(?P<word>[^\W\d][^\W]*)
    |(?P<operator>[-+*/|^!=<>&])|(?P<open>[{(\[])|(?P<close>[})\]])|(?P<other>.)""", re.X | re.S)
_CHAINING_WORDS = {"union", "optional", "minus", "bind", "filter", "graph", "service", "values", "exists", "as"}
_IRI_OPERATORS = "+*|^!=&"
_IRI_SEPARATORS_ALLOWED = 16  # the "/" and "-" of a real IRI; past that they may be a chain read as code


def check_shape(query: str) -> None:
    """Raise QueryTooComplex for a query too long, too deeply nested or chaining too many elements
    for the parser to take safely.

    Brackets are counted everywhere, strings and IRIs included: the count can only be too high,
    and a real query is nowhere near the limit.

    >>> check_shape("SELECT * WHERE { " + "{" * 300 + " }")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.QueryTooComplex: the query nests brackets more than 200 deep
    >>> check_shape("ASK { FILTER(" + "1+" * 5000 + "1) }")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.QueryTooComplex: the query chains 5003 operators, groups and pattern keywords, over the limit of 1000 (a long list fits in VALUES or IN)
    """
    if not isinstance(query, str):
        raise QueryError("a query is text")
    if len(query) > MAX_QUERY_CHARACTERS:
        raise QueryTooComplex(f"the query has {len(query)} characters, over the limit of {MAX_QUERY_CHARACTERS}")
    depth = deepest = 0
    for bracket in _BRACKET.findall(query):
        if bracket in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    if deepest > MAX_NESTING:
        raise QueryTooComplex(f"the query nests brackets more than {MAX_NESTING} deep")
    if _UNARY_RUN.search(query):
        raise QueryTooComplex(f"the query chains more than {MAX_NESTING} unary operators")
    elements = chain_elements(query)
    if elements > MAX_CHAIN_ELEMENTS:
        raise QueryTooComplex(f"the query chains {elements} operators, groups and pattern keywords, over the limit "
                              f"of {MAX_CHAIN_ELEMENTS} (a long list fits in VALUES or IN)")


def chain_elements(query: str) -> int:
    """How many elements the query's chains could have: opening brackets, operator characters and the
    keywords that add to a group (UNION, OPTIONAL, BIND...), outside strings and comments. The
    bodies of VALUES and of INSERT/DELETE DATA (flat lists in Oxigraph) are left out. Inside an IRI,
    which the parser may read as ``<`` and code, the operators past a real IRI's share count too.

    >>> chain_elements("SELECT * { ?s ?p 'a+b' OPTIONAL { ?s <http://e/x-y> ?o } FILTER(?o > 1) }")
    7
    >>> chain_elements("SELECT * { VALUES ?x { -1 -2 -3 } }")
    3
    """
    count, position, length = 0, 0, len(query)
    flat_next = False  # a VALUES or DATA keyword was read: its next group is a flat list
    flat_depth = 0  # inside such a list: how many of its groups are open
    while position < length:
        token = _CHAIN_TOKEN.match(query, position)
        kind, text = token.lastgroup, token.group()
        position = token.end()
        if kind == "quote":
            opener = text * 3 if query.startswith(text * 3, token.start()) else text
            string = _STRING[opener].match(query, token.start())
            position = string.end() if string else token.start() + len(opener)
        elif kind == "iri":
            if not flat_depth:
                separators = text.count("/") + text.count("-")
                count += sum(map(text.count, _IRI_OPERATORS)) + max(0, separators - _IRI_SEPARATORS_ALLOWED)
        elif text == "{" and (flat_next or flat_depth):
            flat_depth += 1
            flat_next = False
        elif text == "}" and flat_depth:
            flat_depth -= 1
        elif flat_depth or kind in ("space", "comment", "variable", "close", "other"):
            continue
        elif kind == "word":
            word = text.lower()
            flat_next = flat_next or word in ("values", "data")
            count += word in _CHAINING_WORDS
        else:
            count += 1  # an operator character or an opening bracket
    return count


@dataclass(frozen=True)
class ServiceCall:
    """A place where the text may call a remote endpoint: the endpoint IRI if it is written out, and
    the keyword (``service``, or in an update ``load``)."""

    position: int
    endpoint: Optional[str]
    keyword: str = "service"


def service_calls(query: str, update: bool = False) -> list[ServiceCall]:
    """Every place in ``query`` that Oxigraph could read as a SERVICE call (in an ``update``, a LOAD
    too), in any reading.

    >>> service_calls("SELECT * { ?s ?p 'SERVICE <http://a/>' } # SERVICE")
    []
    >>> [c.endpoint for c in service_calls("SELECT * { SERVICE SILENT <http://a/> { ?s ?p ?o } }")]
    ['http://a/']
    >>> [c.endpoint for c in service_calls("SELECT * { ?o ?p ?q FILTER(?o<1)SERVICE?ep#>\\n{ } }")]
    [None]
    >>> [(c.keyword, c.endpoint) for c in service_calls("LOAD SILENT <http://a/x.ttl> INTO GRAPH <g>", update=True)]
    [('load', 'http://a/x.ttl')]
    """
    keywords = _SERVICE_OR_LOAD if update else _SERVICE
    calls = {call.position: call for call in _scan(query, keywords)}
    unescaped = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), query)
    if unescaped != query:
        calls.update({-1 - call.position: call for call in _scan(unescaped, keywords)})
    return sorted(calls.values(), key=lambda call: abs(call.position))


def check_services(query: str, allowed: Iterable[str] = (), allowed_loads: Iterable[str] = (),
                   update: bool = False) -> list[ServiceCall]:
    """Check a query's (an ``update``'s) shape, then raise ServiceNotAllowed (LoadNotAllowed) unless
    every SERVICE call (LOAD) names an endpoint under one of ``allowed`` (``allowed_loads``).

    The allowed entries are URLs (``https://host/sparql``), compared by :func:`endpoint_allowed`;
    an endpoint given by a variable, a prefixed name or a relative IRI is never allowed.

    >>> check_services("SELECT * { ?s ?p ?o }")
    []
    >>> check_services("SELECT * { SERVICE <http://169.254.169.254/> { ?s ?p ?o } }")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.ServiceNotAllowed: SERVICE <http://169.254.169.254/> is not allowed on this server
    >>> len(check_services("SELECT * { SERVICE <https://db.example/sparql> { } }", ["https://db.example/"]))
    1
    >>> [c.endpoint for c in check_services("LOAD <http://h/data/download.ttl> INTO GRAPH <http://h/load>",
    ...                                      allowed_loads=["http://h/data"], update=True)]
    ['http://h/data/download.ttl']
    >>> check_services("LOAD <http://internal/admin>", update=True)
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.LoadNotAllowed: LOAD <http://internal/admin> is not allowed on this server
    """
    check_shape(query)
    calls = service_calls(query, update)
    for call in calls:
        loads = call.keyword == "load"
        keyword, error = ("LOAD", LoadNotAllowed) if loads else ("SERVICE", ServiceNotAllowed)
        endpoints = [entry for entry in (allowed_loads if loads else allowed) if entry]
        if call.endpoint is None:
            raise error(f"{keyword} is not allowed on this server" if not endpoints else
                        f"{keyword} is allowed only with an endpoint written as a full IRI <...>")
        if not endpoint_allowed(call.endpoint, endpoints):
            raise error(f"{keyword} <{call.endpoint[:200]}> is not allowed on this server")
    return calls


def endpoint_allowed(endpoint: str, allowed: Iterable[str]) -> bool:
    """Whether ``endpoint`` is one of the ``allowed`` URLs or under one: same scheme, host and port
    (the scheme's default when none is written), and a path equal to the allowed path or below it
    once dot segments are resolved. User names, backslashes and encoded slashes are never allowed.

    >>> endpoint_allowed("https://db.example:443/sparql/a/../b?x=1", ["https://DB.example/sparql"])
    True
    >>> [endpoint_allowed(e, ["http://h/allowed"]) for e in ("http://h/allowed/../x", "http://h/allowedX",
    ...                                                          "http://h/allowed/%2e%2e/x", "http://h:81/allowed",
    ...                                                          "http://h@evil/allowed", "http://h/allowed/q",
    ...                                                          "http://h/allowed/..;/x", "http://h/allowed;x/q")]
    [False, False, False, False, False, True, False, True]
    """
    wanted = _url_parts(endpoint)
    if wanted is None:
        return False
    for entry in allowed:
        parts = _url_parts(entry)
        if parts is None or parts[:3] != wanted[:3]:
            continue
        base, path = parts[3], wanted[3]
        if path == base or path.startswith(base if base.endswith("/") else base + "/"):
            return True
    return False


def allowed_endpoints(entries: Iterable[str]) -> tuple[str, ...]:
    """The entries of an allow-list (``--allow-service``, ``--allow-load``), each checked to be an
    http(s) URL without user name, query or fragment; ValueError names one that is not.

    >>> allowed_endpoints(["https://db.example/sparql"])
    ('https://db.example/sparql',)
    """
    checked = []
    for entry in entries:
        if not isinstance(entry, str) or _url_parts(entry) is None or urlsplit(entry).query or "#" in entry:
            raise ValueError(f"not an endpoint to allow (an http or https URL without user, query or fragment): "
                             f"{str(entry)[:200]}")
        checked.append(entry)
    return tuple(checked)


_UNRESERVED_ESCAPE = re.compile(r"%(?:2[dDeE]|3\d|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])")


def _url_parts(url: str) -> Optional[tuple[str, str, int, str]]:
    """(scheme, host, port, normalised path) of an http(s) URL, or None for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except (ValueError, TypeError, AttributeError):
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc or "\\" in url:
        return None
    path = _UNRESERVED_ESCAPE.sub(lambda m: unquote(m.group()), parts.path)  # %2e is a dot to the server
    if "%2f" in path.lower() or "%5c" in path.lower():
        return None
    # A segment's parameters (``..;x``) are dropped by servers that route by path (``/a/..;/b`` is /b)
    path = "/".join(segment.split(";", 1)[0] for segment in path.split("/"))
    normal = "/" + posixpath.normpath("/" + path).lstrip("/") if path.strip("/") else "/"
    if path.endswith("/") and not normal.endswith("/"):
        normal += "/"
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80), normal


def _scan(text: str, keywords: re.Pattern) -> list[ServiceCall]:
    """The SERVICE (LOAD) calls in every reading of ``text`` (each ``<`` an IRI or an operator)."""
    found: dict[int, ServiceCall] = {}
    pending, seen = [0], set()
    while pending:
        position = pending.pop()
        while position < len(text) and position not in seen:
            seen.add(position)
            position = _step(text, position, pending, found, keywords)
    return list(found.values())


def _step(text: str, position: int, pending: list[int], found: dict[int, ServiceCall], keywords: re.Pattern) -> int:
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
    for match in keywords.finditer(keyword_part):
        start = position + match.start()
        before = text[start - 1] if start > 0 else " "
        if before.isspace() or before in _ENDS_A_TOKEN or (before.isascii() and before.isalnum() and (
                match.start() == 0 or _read_as_tokens(keyword_part[:match.start()]))):
            keyword = match.group().lower()
            found.setdefault(start, ServiceCall(start, _endpoint(text, word, keyword), keyword))
    return word.end()


def _read_as_tokens(run: str) -> bool:
    """Whether the parser may read ``run`` as whole tokens one after the other (keywords, function
    names, numbers), so that a keyword right after it is read as one.

    >>> [_read_as_tokens(run) for run in ("true", "1", "SILENT", "trueSilent", "down", "1e5", "ab")]
    [True, True, True, True, False, True, False]
    """
    run = run.lower()
    ends = [False] * (len(run) + 1)
    ends[0] = True
    for start in range(len(run)):
        if not ends[start]:
            continue
        number = _NUMBER.match(run, start)
        if number and number.end() > start:
            ends[number.end()] = True
        for end in range(start + 1, len(run) + 1):
            if run[start:end] in _TOKENS:
                ends[end] = True
    return ends[-1]


def _endpoint(text: str, word: re.Match, keyword: str) -> Optional[str]:
    """The IRI after ``SERVICE [SILENT]`` (``LOAD [SILENT]``) when the word is exactly that keyword;
    else None (refused)."""
    if word.group().strip(".").lower() != keyword:
        return None
    position = _GAP.match(text, word.end()).end()
    after = _WORD.match(text, position)
    if after is not None and after.group().lower() == "silent":
        position = _GAP.match(text, after.end()).end()
    iri = _IRI.match(text, position)
    if iri is None or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", iri.group(1)):
        return None
    return iri.group(1)
