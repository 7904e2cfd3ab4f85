"""A polite breadth-first web crawler whose pages become documents with their provenance.

Within the start URL's host only: URLs normalised so each page is fetched once,
robots.txt honoured (Crawl-delay included, capped), one request at a time at the
configured rate, retries with exponential backoff on 429 and 5xx, a size and a
time limit per page, redirects followed within the host (a loop is an error).
HTML pages are decoded with their character set (HTTP header, then meta tag, then
detection) and their links followed; other supported documents (PDF, DOCX...) are
decoded as such. Each page's document records its URL, fetch time, HTTP status,
ETag/Last-Modified and the page that linked to it; a second crawl asks with
If-None-Match/If-Modified-Since and skips what did not change.

HTTP is spoken with the standard library's http.client: reading with ``read1``
returns as bytes arrive, so the per-page time limit also stops a server that
trickles its answer.
"""

from __future__ import annotations

import http.client
import re
import socket
import ssl
import time
import urllib.robotparser
from collections import deque
from dataclasses import dataclass, fields, replace
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Callable, Optional, Union
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit, urlunsplit

from ..versions import decode
from ..graph.run_mapping import WebFetch, fetch_quads
from ..graph.rows import WebFetchState
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import (CrawledPage, CrawlOptions, CrawlResult, CrawlStatus, DecodeOptions, ProgressCallback,
                     options_from, report)
from ..model.errors import DecodeError, DecodeTimeout, DocumentTooLarge, FetchFailed, InvalidOption, KgDecoderError

# Query parameters that only track the visitor: dropped, so a page is one URL.
TRACKING_PARAMETERS = re.compile(r"^(utm_.*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|mc_cid|mc_eid|igshid|"
                                 r"_ga|_gl|_hsenc|_hsmsi|mkt_tok|ref_src)$", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_REDIRECTS = {301, 302, 303, 307, 308}
# Content types never worth downloading: nothing here decodes them.
_SKIPPED_TYPES = ("video/", "audio/", "font/")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_DECODE_TYPES = ("text/", "application/xhtml+xml", "application/xml", "application/json")


# ---------------------------------------------------------------- URLs


def normalize_url(url: str, base: Optional[str] = None) -> Optional[str]:
    """The one spelling of a URL: resolved, lower-case scheme and host, no default port, no
    fragment, no tracking parameters, query keys sorted, percent-encoding made uniform.
    None for what is not an http(s) URL.

    >>> normalize_url("HTTP://Example.COM:80/a/../b/?utm_source=x&b=2&a=1#top")
    'http://example.com/b/?a=1&b=2'
    >>> normalize_url("page%7e1.html?fbclid=abc", "https://example.com:443/dir/")
    'https://example.com/dir/page~1.html'
    >>> normalize_url("mailto:someone@example.com") is None
    True
    """
    try:
        absolute = urljoin(base, url.strip()) if base else url.strip()
        parts = urlsplit(absolute)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower().rstrip(".")
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = _clean_path(parts.path or "/")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not TRACKING_PARAMETERS.match(k)]
    query_text = urlencode(sorted(query), quote_via=quote, safe="-._~!$'()*,:@/?")
    return urlunsplit((scheme, netloc, path, query_text, ""))


def _clean_path(path: str) -> str:
    segments = []
    for segment in path.split("/"):
        if segment == "..":
            if len(segments) > 1:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    path = "/".join(segments)
    if not path.startswith("/"):
        path = "/" + path
    if path.endswith(("/..", "/.")):
        path = path.rsplit("/", 1)[0] + "/"
    # decode what need not be encoded, encode what must be: one spelling
    return quote(unquote(path), safe="/-._~!$&'()*+,;=:@%")


def _host(url: str) -> str:
    return urlsplit(url).netloc


# ---------------------------------------------------------------- HTTP


@dataclass
class Fetched:
    url: str  # after redirects
    status: int
    headers: dict[str, str]
    body: bytes


class Fetcher:
    """One request at a time to one host, at the crawl's rate, with retries and limits."""

    def __init__(self, options: CrawlOptions, sleep: Callable[[float], None] = time.sleep) -> None:
        self.options = options
        self.interval = options.delay_seconds
        self._sleep = sleep
        self._last_request: Optional[float] = None
        self.request_times: list[float] = []

    def _wait_turn(self) -> None:
        if self._last_request is not None:
            pause = self._last_request + self.interval - time.monotonic()
            if pause > 0:
                self._sleep(pause)
        self._last_request = time.monotonic()
        self.request_times.append(self._last_request)

    def get(self, url: str, headers: Optional[dict[str, str]] = None) -> Fetched:
        """One URL (no redirects followed), retried on 429/5xx and network errors; any final status."""
        options = self.options
        for attempt in range(options.retries + 1):
            self._wait_turn()
            try:
                fetched = self._request(url, headers or {})
            except (OSError, http.client.HTTPException) as exc:  # no connection, a broken answer: try again
                if attempt == options.retries:
                    raise FetchFailed(f"{url}: {type(exc).__name__}: {exc}") from None
                self._sleep(self._backoff(attempt, None))
                continue
            retryable = fetched.status == 429 or fetched.status >= 500
            if retryable and attempt < options.retries:
                self._sleep(self._backoff(attempt, fetched.headers.get("retry-after")))
                continue
            return fetched
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, retry_after: Optional[str]) -> float:
        wait = self.options.backoff_seconds * (2 ** attempt)
        if retry_after:
            wait = max(wait, _retry_after_seconds(retry_after))
        return min(wait, self.options.max_backoff)

    def _request(self, url: str, headers: dict[str, str]) -> Fetched:
        options = self.options
        deadline = time.monotonic() + options.page_timeout
        parts = urlsplit(url)
        connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        extra = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
        connection = connection_class(parts.hostname, parts.port, timeout=options.page_timeout, **extra)
        target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
        try:
            connection.request("GET", target, headers={"User-Agent": options.agent, "Accept-Encoding": "identity",
                                                       "Accept": "*/*", **headers})
            sock = connection.sock  # the connection lets go of it when the answer says "Connection: close"
            response = connection.getresponse()
            found = {k.lower(): v for k, v in response.getheaders()}
            declared = found.get("content-length", "")
            if declared.isdigit() and int(declared) > options.max_page_bytes:
                raise DocumentTooLarge(f"{url}: {declared} bytes, over the page limit of {options.max_page_bytes}")
            if response.status < 300 and found.get("content-type", "").lower().startswith(_SKIPPED_TYPES):
                return Fetched(url, response.status, found, b"")
            body = bytearray()
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise DecodeTimeout(f"{url}: the page took longer than {options.page_timeout:g} s to arrive")
                sock.settimeout(remaining)
                try:
                    piece = response.read1(65536)
                except socket.timeout:
                    raise DecodeTimeout(f"{url}: the page took longer than {options.page_timeout:g} s "
                                        "to arrive") from None
                if not piece:
                    break
                body += piece
                if len(body) > options.max_page_bytes:
                    raise DocumentTooLarge(f"{url}: more than {options.max_page_bytes} bytes, the page limit")
            return Fetched(url, response.status, found, bytes(body))
        except socket.timeout:
            raise DecodeTimeout(f"{url}: no answer within {options.page_timeout:g} s") from None
        finally:
            connection.close()


def _retry_after_seconds(value: str) -> float:
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


# ---------------------------------------------------------------- robots.txt


class RobotsRules:
    """robots.txt of the start host (RFC 9309): missing (4xx) allows all, unreachable (5xx) allows nothing."""

    def __init__(self, parser: Optional[urllib.robotparser.RobotFileParser], allow_all: bool, agent: str):
        self._parser = parser
        self._allow_all = allow_all
        self._agent = agent

    @classmethod
    def fetch(cls, fetcher: Fetcher, start_url: str) -> "RobotsRules":
        parts = urlsplit(start_url)
        robots_url = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
        agent = fetcher.options.agent.split("/")[0]
        try:
            fetched = fetcher.get(robots_url)
        except DecodeError:
            return cls(None, False, agent)
        for _ in range(5):  # robots.txt may redirect, within the host
            location = fetched.headers.get("location")
            if fetched.status not in _REDIRECTS or not location:
                break
            target = normalize_url(location, robots_url)
            if target is None or _host(target) != parts.netloc:
                return cls(None, True, agent)
            fetched = fetcher.get(target)
        if 400 <= fetched.status < 500:
            return cls(None, True, agent)
        if fetched.status >= 300:
            return cls(None, False, agent)
        parser = urllib.robotparser.RobotFileParser()
        parser.parse(fetched.body.decode("utf-8", "replace").splitlines())
        return cls(parser, False, agent)

    def allowed(self, url: str) -> bool:
        if self._parser is None:
            return self._allow_all
        return self._parser.can_fetch(self._agent, url)

    def crawl_delay(self) -> Optional[float]:
        if self._parser is None:
            return None
        delay = self._parser.crawl_delay(self._agent)
        return float(delay) if delay is not None else None


# ---------------------------------------------------------------- HTML


def html_charset(content_type: str, body: bytes) -> str:
    """The character set of an HTML page: the HTTP header's, else the meta tag's, else detected.

    >>> html_charset("text/html; charset=ISO-8859-1", b"<html>")
    'iso-8859-1'
    >>> html_charset("text/html", b'<html><head><meta charset="windows-1252"></head>')
    'windows-1252'
    """
    import codecs

    for candidate in (_header_charset(content_type), _meta_charset(body[:4096])):
        try:
            if candidate and codecs.lookup(candidate):
                return candidate
        except LookupError:
            continue
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    try:
        body.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(body).best()
    return best.encoding if best is not None else "utf-8"


def _header_charset(content_type: str) -> Optional[str]:
    match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", content_type or "", re.IGNORECASE)
    return match.group(1).lower() if match else None


def _meta_charset(head: bytes) -> Optional[str]:
    text = head.decode("ascii", "replace")
    match = re.search(r"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", text, re.IGNORECASE)
    return match.group(1).lower() if match else None


def page_links(html: str, page_url: str) -> list[str]:
    """The normalised URLs a page links to (a, area, frame, iframe), honouring <base> and nofollow."""
    import lxml.html

    try:
        tree = lxml.html.document_fromstring(html)
    except Exception:  # lxml gives up on empty or binary pages: no links
        return []
    robots = " ".join(tree.xpath("//meta[translate(@name,'ROBTS','robts')='robots']/@content")).lower()
    if "nofollow" in robots or "none" in robots:
        return []
    base = page_url
    for href in tree.xpath("//base/@href")[:1]:
        base = normalize_url(href, page_url) or page_url
    links = []
    for node in tree.xpath("//a[@href] | //area[@href] | //frame[@src] | //iframe[@src]"):
        if "nofollow" in (node.get("rel") or "").lower():
            continue
        target = normalize_url(node.get("href") or node.get("src") or "", base)
        if target is not None:
            links.append(target)
    return list(dict.fromkeys(links))


# ---------------------------------------------------------------- the crawl


@with_store(read_only=False, create=True)
def crawl(
    start_url: str,
    *,
    store: Union[KgStore, StorePath],
    options: Optional[CrawlOptions] = None,
    decode_options: Optional[DecodeOptions] = None,
    progress: Optional[ProgressCallback] = None,
    **option_values,
) -> CrawlResult:
    """Crawl from ``start_url`` within its host, decoding each page into ``store``.

    ``options`` (a :class:`CrawlOptions`) sets the crawl's limits and ``decode_options`` how
    pages are decoded; keywords may give fields of either (``max_pages=10``,
    ``section_strategy="heading"``). Each page is written in a transaction of its own. A page
    that cannot be fetched or decoded is reported in the result (with its typed error) and the
    crawl goes on.

    >>> crawl("mailto:someone@example.org", store=None)
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidOption: not an http(s) URL: 'mailto:someone@example.org'
    """
    crawl_names = {f.name for f in fields(CrawlOptions)}
    options = options_from(CrawlOptions, options, {k: v for k, v in option_values.items() if k in crawl_names})
    decode_settings = options_from(DecodeOptions, decode_options,
                                   {k: v for k, v in option_values.items() if k not in crawl_names})
    start = normalize_url(start_url) if isinstance(start_url, str) else None
    if start is None:
        raise InvalidOption(f"not an http(s) URL: {str(start_url)[:200]!r}")
    host = _host(start)
    fetcher = Fetcher(options)
    robots = RobotsRules.fetch(fetcher, start)
    crawl_delay = robots.crawl_delay()
    if crawl_delay is not None:
        fetcher.interval = max(options.delay_seconds, min(crawl_delay, options.max_crawl_delay))
    result = CrawlResult(start_url=start)
    frontier: deque[CrawledPage] = deque([CrawledPage(url=start, depth=0, linked_from=None)])
    seen = {start}
    documents: dict[str, str] = {}  # URL -> document IRI, for the pages linked from it
    while frontier and len(result.fetched) < options.max_pages:
        page = frontier.popleft()
        result.pages.append(page)
        if not robots.allowed(page.url):
            page.status = CrawlStatus.DISALLOWED
            continue
        report(progress, "crawl", len(result.fetched) - 1, options.max_pages, page.url)
        links = _visit(page, fetcher, robots, host, store, documents, decode_settings)
        for link in links:
            if _host(link) == host and link not in seen:
                seen.add(link)
                frontier.append(CrawledPage(url=link, depth=page.depth + 1, linked_from=page.url))
    report(progress, "crawl", len(result.fetched), len(result.fetched), f"{len(result.fetched)} pages")
    return result


def _visit(page: CrawledPage, fetcher: Fetcher, robots: RobotsRules, host: str, store: KgStore,
           documents: dict[str, str], decode_options: DecodeOptions) -> list[str]:
    """Fetch and decode one page; its links (normalised), or none when it failed."""
    try:
        fetched, earlier = _fetch_following_redirects(page.url, fetcher, robots, host, store)
        page.http_status = fetched.status
        linked_from = documents.get(page.linked_from) if page.linked_from else None
        not_modified = fetched.status == 304 and earlier is not None
        if not_modified:
            data = store.content(earlier.document)
            content_type = _stored_content_type(store, earlier.document)
        else:
            if fetched.status >= 300:
                raise FetchFailed(f"{fetched.url}: HTTP {fetched.status}")
            data, content_type = fetched.body, fetched.headers.get("content-type", "")
            if content_type.lower().startswith(_SKIPPED_TYPES):
                raise FetchFailed(f"{fetched.url}: {content_type.split(';')[0]} is not a document kg-decoder decodes")
        media_type = content_type.split(";")[0].strip().lower()
        is_html = media_type in _HTML_TYPES or data.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
        charset = html_charset(content_type, data) if is_html or media_type.startswith(_TEXT_DECODE_TYPES) else None
        if not_modified:
            page.status, page.document = CrawlStatus.NOT_MODIFIED, earlier.document
            _record_revalidation(store, fetched, earlier, linked_from)
        else:
            decoded = decode(data, store=store, options=_page_options(media_type, charset, decode_options),
                             file_name=_file_name(fetched.url), record_failure=True,
                             fetched=_web_fetch(fetched, linked_from))
            page.status, page.document = CrawlStatus(decoded.status.value), decoded.document
            page.problems = decoded.problems
        documents[page.url] = page.document
        if fetched.url != page.url:
            documents[fetched.url] = page.document
    except DecodeError as error:
        page.status, page.error = CrawlStatus.FAILED, error
        return []
    return page_links(data.decode(charset, "replace"), fetched.url) if is_html else []


def _fetch_following_redirects(url: str, fetcher: Fetcher, robots: RobotsRules, host: str,
                               store: KgStore) -> tuple[Fetched, Optional[WebFetchState]]:
    chain = [url]
    while True:
        earlier = _earlier_fetch(store, chain[-1])
        validators = {}
        if earlier is not None and earlier.etag:
            validators["If-None-Match"] = earlier.etag
        if earlier is not None and earlier.last_modified:
            validators["If-Modified-Since"] = earlier.last_modified
        fetched = fetcher.get(chain[-1], validators)
        location = fetched.headers.get("location")
        if fetched.status not in _REDIRECTS or not location:
            return fetched, earlier
        target = normalize_url(location, chain[-1])
        if target is None or _host(target) != host:
            raise FetchFailed(f"{chain[-1]}: redirects off the crawled host, to {location}")
        if target in chain:
            raise FetchFailed(f"redirect loop: {' -> '.join(chain + [target])}")
        if len(chain) > fetcher.options.max_redirects:
            raise FetchFailed(f"{url}: more than {fetcher.options.max_redirects} redirects")
        if not robots.allowed(target):
            raise FetchFailed(f"{chain[-1]}: redirects to {target}, which robots.txt disallows")
        chain.append(target)


def _earlier_fetch(store: KgStore, url: str) -> Optional[WebFetchState]:
    try:
        return store.web_fetch_state(url)
    except KgDecoderError:  # not an IRI the store accepts: never stored either
        return None


def _stored_content_type(store: KgStore, document: str) -> str:
    info = store.document_info(document)
    return info.mime_type if info else ""


def _record_revalidation(store: KgStore, fetched: Fetched, earlier: WebFetchState,
                         linked_from: Optional[str]) -> None:
    """A 304: the stored document stands; its fetch time and status are the new ones."""
    fetch = _web_fetch(fetched, linked_from, earlier)
    store.write_origin(earlier.document, fetch_quads(earlier.document, fetch), new_fetch=True)


def _web_fetch(fetched: Fetched, linked_from: Optional[str], earlier: Optional[WebFetchState] = None) -> WebFetch:
    return WebFetch(url=fetched.url, fetched=datetime.now(timezone.utc), status=fetched.status,
                    etag=fetched.headers.get("etag") or (earlier.etag if earlier else None),
                    last_modified=fetched.headers.get("last-modified") or (earlier.last_modified if earlier else None),
                    linked_from=linked_from)


def _page_options(media_type: str, charset: Optional[str], options: DecodeOptions) -> DecodeOptions:
    """HTML is decoded as HTML, text in the character set found for it; other types let the bytes decide."""
    changes = {}
    if media_type in _HTML_TYPES and options.mime_type is None:
        changes["mime_type"] = "text/html"
    if charset is not None and media_type.startswith(_TEXT_DECODE_TYPES) and options.encoding is None:
        changes["encoding"] = charset
    return replace(options, **changes)


def _file_name(url: str) -> Optional[str]:
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    return name or None


__all__ = ["CrawlOptions", "CrawlResult", "CrawledPage", "crawl", "html_charset", "normalize_url", "page_links"]
