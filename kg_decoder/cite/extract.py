"""The extract step: an extractor run over every chunk of a store (or of chosen documents), its facts
grounded and stored in bulk, resumable.

The extractor is a Python callable ``function(text, chunk_iri)`` that returns triples with their
quotes, or a command that reads chunks as JSON lines on stdin and writes triples as JSON lines on
stdout (:class:`CommandExtractor`: one process kept for the run, bounded in time and output a chunk).
Every triple goes through the bulk path of :mod:`kg_decoder.cite.fact_lines` tied to the chunk it came
from, so each gets its grounding verdict. Each batch of chunks is one transaction whose
``tg:FactExtraction`` run records the extractor's name and version and ``prov:used`` every chunk it
read, those that gave no fact too: a run of the same name and version skips them, so an interrupted
run continues where its last batch ended. A chunk the extractor fails on is reported with its typed
error (:class:`ExtractorFailed` and its kinds), not recorded, and tried again by the next run.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from ..graph.opening import with_store
from ..graph.run_mapping import GroundedFactsRecord, grounded_fact_quads
from ..graph.store import KgStore, StorePath
from ..model import ExtractFailure, ExtractResult, FactLineOutcome, Grounding, ProgressCallback, report, \
    software_versions
from ..model.errors import (ExtractorFailed, ExtractorOutputTooLarge, ExtractorTimeout, ExtractorUnavailable,
                            InvalidOption, KgDecoderError)
from .documents import document_named
from .fact_lines import FactLoader, ground_lines
from .grounding import FUZZY_AT_LEAST

BATCH_CHUNKS = 64  # chunks a transaction: what an interrupted run does again at most
CHUNK_SECONDS = 60.0  # a command's time for one chunk
MAX_OUTPUT = 4_000_000  # bytes a command may write for one chunk
MAX_TRIPLES = 10_000  # triples an extractor may give for one chunk
UNVERSIONED = "unversioned"

# Extractors kg-decoder ships, by the short name --with takes.
SHIPPED = {"spacy": "kg_decoder.cite.spacy_entities:extract"}

Extractor = Callable[[str, str], Iterable[Any]]


@with_store(read_only=False)
def extract(extractor: Union[str, Extractor, None] = None, *, store: Union[KgStore, StorePath],
            command: Union[str, Sequence[str], None] = None, documents: Optional[Sequence[str]] = None,
            name: Optional[str] = None, version: Optional[str] = None, batch_chunks: int = BATCH_CHUNKS,
            chunk_seconds: float = CHUNK_SECONDS, max_output: int = MAX_OUTPUT, at_least: float = FUZZY_AT_LEAST,
            progress: Optional[ProgressCallback] = None) -> ExtractResult:
    """Run ``extractor`` (a callable ``f(text, chunk_iri)`` returning triples with quotes, or its
    ``"MODULE:FUNCTION"``, or ``"spacy"``: the shipped one) or ``command`` (JSON lines in and out) over
    every chunk of ``documents`` (IRIs or names; default: every document of the store), and store the
    facts, each grounded in its chunk. A triple is a dict as a line of ``facts add FILE.jsonl`` (``s``,
    ``p``, ``o``, ``quote``...; its chunk is the one it came from) or ``(s, p, o)`` / ``(s, p, o,
    quote)``. ``name`` and ``version`` (default: the callable's ``extractor_name`` and
    ``extractor_version``, else its module's and package's; the command line, unversioned) go on the
    runs; chunks a run of the same name and version read are skipped. Each batch of ``batch_chunks``
    chunks is one transaction. ``progress`` hears ("extract", chunks done, chunks).

    >>> import kg_decoder
    >>> def capitals(text, chunk):
    ...     return [("http://ex.org/Paris", "http://ex.org/capitalOf", "France", "Paris is the capital of France")]
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Paris is the capital of France. It is large.", store=store)
    ...     _ = kg_decoder.chunk_document(decoded.document, store=store)
    ...     first = extract(capitals, store=store, version="1")
    ...     again = extract(capitals, store=store, version="1")
    >>> (first.extracted, first.counts["exact"], again.skipped, again.extracted)
    (1, 1, 1, 0)
    """
    if (extractor is None) == (command is None):
        raise InvalidOption("give an extractor (a callable or MODULE:FUNCTION) or a command, one of them")
    if not isinstance(batch_chunks, int) or isinstance(batch_chunks, bool) or batch_chunks < 1:
        raise InvalidOption("batch_chunks must be a whole number of chunks, at least 1")
    if command is not None:
        runner: Any = CommandExtractor(command, chunk_seconds=chunk_seconds, max_output=max_output)
        name, version = name or runner.name, version or UNVERSIONED
    else:
        function, default_name, default_version = load_extractor(extractor)
        runner = _CallableExtractor(function)
        name, version = name or default_name, version or default_version
    chosen = [document_named(d, store) for d in documents] if documents else sorted(
        {summary.document for summary in store.document_summaries()})
    chunks = [(document, row) for document in chosen for row in store.document_chunks(document)]
    done = store.extracted_chunks(name, version)
    todo = [(document, row) for document, row in chunks if row.chunk not in done]
    loader = FactLoader(store, read_files=False, at_least=at_least)
    counts = {str(g): 0 for g in Grounding}
    failed: list[ExtractFailure] = []
    refused: list[FactLineOutcome] = []
    batches = extracted = line = 0
    versions = software_versions()
    report(progress, "extract", 0, len(todo), f"{len(todo)} chunks ({len(chunks) - len(todo)} skipped)")
    try:
        for first in range(0, len(todo), batch_chunks):
            started = datetime.now(timezone.utc)
            items, used, owner = _extracted_lines(store, runner, todo[first:first + batch_chunks], line, failed)
            line += len(items)
            outcomes, groups = ground_lines(loader, items)
            for outcome in outcomes:
                if outcome.grounding is None:
                    outcome.chunk = owner[outcome.line]
                    refused.append(outcome)
                else:
                    counts[str(outcome.grounding)] += 1
            if used:
                record = GroundedFactsRecord(groups=list(groups.values()), extractor=name, started=started,
                                             ended=datetime.now(timezone.utc), versions=versions,
                                             extractor_version=version, used=used)
                store.write_quads(grounded_fact_quads(record))
                batches += 1
                extracted += len(used)
            finished = min(first + batch_chunks, len(todo))
            report(progress, "extract", finished, len(todo), f"{finished} of {len(todo)} chunks")
    finally:
        runner.close()
    return ExtractResult(extractor=name, version=version, chunks=len(chunks), skipped=len(chunks) - len(todo),
                         extracted=extracted, failed=failed, counts=counts, refused=refused, batches=batches)


def _extracted_lines(store: KgStore, runner: Any, batch: list, line: int,
                     failed: list[ExtractFailure]) -> tuple[list, list[str], dict[int, str]]:
    """What the extractor made of a batch of chunks: its triples as numbered fact lines (after ``line``),
    the chunks it read, and the chunk each line came from; a chunk it failed on goes to ``failed``."""
    items, used, owner = [], [], {}
    for document, row in batch:
        text = store.text(row.sha256, row.chunk)
        try:
            triples = runner({"chunk": row.chunk, "document": document, "index": row.chunk_index, "text": text})
        except ExtractorFailed as exc:
            failed.append(ExtractFailure(row.chunk, exc.code, exc.message))
            continue
        used.append(row.chunk)
        for triple in triples:
            line += 1
            owner[line] = row.chunk
            items.append((line, _fact_line(triple, row.chunk)))
    return items, used, owner


def load_extractor(spec: Union[str, Extractor]) -> tuple[Extractor, str, str]:
    """The callable ``spec`` names (``MODULE:FUNCTION``, or a shipped extractor's short name), with its
    name and version: its ``extractor_name`` and ``extractor_version`` where it states them, else
    ``MODULE:FUNCTION`` and the version of the module (``__version__``) or of its distribution.

    >>> load_extractor("kg_decoder.cite.extract:nothing")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.ExtractorUnavailable: kg_decoder.cite.extract has no nothing
    """
    if isinstance(spec, str):
        module_name, colon, attribute = SHIPPED.get(spec, spec).partition(":")
        if not colon or not module_name or not attribute:
            raise ExtractorUnavailable(f"name the extractor as MODULE:FUNCTION, not {spec!r:.200}")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ExtractorUnavailable(f"cannot import {module_name}: {exc}") from None
        function = module
        for part in attribute.split("."):
            function = getattr(function, part, None)
            if function is None:
                raise ExtractorUnavailable(f"{module_name} has no {attribute}")
    else:
        function = spec
    if not callable(function):
        raise ExtractorUnavailable(f"the extractor {spec!r:.200} is not callable")
    module_name = getattr(function, "__module__", None) or type(function).__module__
    qualified = getattr(function, "__qualname__", None) or type(function).__qualname__
    name = getattr(function, "extractor_name", None) or f"{module_name}:{qualified}"
    version = getattr(function, "extractor_version", None) or _module_version(module_name)
    return function, str(name), str(version)


def _module_version(module_name: str) -> str:
    module = importlib.import_module(module_name) if module_name else None
    given = getattr(module, "__version__", None)
    if given:
        return str(given)
    top = module_name.split(".")[0]
    try:
        return importlib.metadata.version(importlib.metadata.packages_distributions().get(top, [top])[0])
    except (importlib.metadata.PackageNotFoundError, IndexError):
        return UNVERSIONED


def _fact_line(triple: Any, chunk: str) -> Any:
    """A triple as a fact line tied to ``chunk`` (what cannot be one: a refusal's reason)."""
    if isinstance(triple, dict):
        named = triple.get("chunk")
        if named is not None and named != chunk:
            return _Refused(f"names another chunk than the one it was extracted from: {named!r:.80}")
        return {**triple, "chunk": chunk}
    if isinstance(triple, (tuple, list)) and len(triple) in (3, 4):
        line = {"s": triple[0], "p": triple[1], "o": triple[2], "chunk": chunk}
        if len(triple) == 4 and triple[3] is not None:
            line["quote"] = triple[3]
        return line
    return _Refused(f"a triple is a dict or (s, p, o[, quote]), not {type(triple).__name__}")


class _Refused(str):
    """Why what an extractor gave is not a triple (FactLoader refuses a line given as text)."""


class _CallableExtractor:
    """A Python callable: its exceptions become ExtractorFailed for the chunk."""

    def __init__(self, function: Extractor) -> None:
        self.function = function

    def __call__(self, record: dict) -> list:
        try:
            found = self.function(record["text"], record["chunk"])
            triples = [] if found is None else list(found)
        except KgDecoderError as exc:
            raise ExtractorFailed(f"{exc.code}: {exc.message}") from None
        except Exception as exc:  # noqa: BLE001 - the extractor is the user's code: any failure is its chunk's
            raise ExtractorFailed(f"{type(exc).__name__}: {exc}"[:500]) from None
        if len(triples) > MAX_TRIPLES:
            raise ExtractorOutputTooLarge(f"{len(triples)} triples for one chunk, more than {MAX_TRIPLES}")
        return triples

    def close(self) -> None:
        pass


class CommandExtractor:
    """A command that extracts triples, kept running for a run: for each chunk it reads one JSON line
    (``chunk``, ``document``, ``index``, ``text``) on stdin and answers JSON lines on stdout, one per
    triple, then ``{"done": true}`` (or ``{"error": "why"}``: that chunk failed). A chunk that takes
    longer than ``chunk_seconds``, an answer longer than ``max_output`` bytes, a line that is not a JSON
    object or an exit before ``done`` stop the process (its whole group) and fail that chunk with a typed
    error naming the end of its stderr; the next chunk starts it again."""

    def __init__(self, command: Union[str, Sequence[str]], *, chunk_seconds: float = CHUNK_SECONDS,
                 max_output: int = MAX_OUTPUT, env: Optional[dict] = None) -> None:
        arguments = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not arguments:
            raise ExtractorUnavailable("the extractor's command is empty")
        if not chunk_seconds > 0 or not isinstance(max_output, int) or max_output < 1:
            raise InvalidOption("a command's time a chunk and output limit must be positive")
        self.arguments = arguments
        self.name = shlex.join(arguments)
        self.chunk_seconds = float(chunk_seconds)
        self.max_output = max_output
        self.env = env
        self.process: Optional[subprocess.Popen] = None
        self._stderr = tempfile.TemporaryFile(mode="a+b")  # O_APPEND: truncated between chunks
        self.started = 0

    def _start(self) -> subprocess.Popen:
        try:
            self.process = subprocess.Popen(self.arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self._stderr, env=self.env, start_new_session=True)
        except OSError as exc:
            raise ExtractorUnavailable(f"cannot start {self.name:.200}: {exc.strerror or exc}") from None
        self.started += 1
        os.set_blocking(self.process.stdin.fileno(), False)
        os.set_blocking(self.process.stdout.fileno(), False)
        return self.process

    def __call__(self, record: dict) -> list:
        process = self.process if self.process is not None and self.process.poll() is None else self._start()
        self._stderr.seek(0)
        self._stderr.truncate()
        payload = memoryview((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        deadline = time.monotonic() + self.chunk_seconds
        pending = b""
        read = 0
        triples: list = []
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            selector.register(process.stdin, selectors.EVENT_WRITE)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._stop()
                    raise ExtractorTimeout(f"no answer within {self.chunk_seconds:g} s{self._tail()}")
                for key, _ in selector.select(left):
                    if key.fileobj is process.stdin:
                        try:
                            payload = payload[os.write(process.stdin.fileno(), payload):]
                        except BrokenPipeError:
                            payload = payload[:0]
                        if not payload:
                            selector.unregister(process.stdin)
                        continue
                    data = os.read(process.stdout.fileno(), 65536)
                    if not data:
                        self._stop()
                        raise ExtractorFailed(f"the command ended (exit {process.returncode}) before it said done"
                                              f"{self._tail()}")
                    read += len(data)
                    if read > self.max_output:
                        self._stop()
                        raise ExtractorOutputTooLarge(f"more than {self.max_output} bytes for one chunk")
                    lines = (pending + data).split(b"\n")
                    pending = lines.pop()
                    for raw in lines:
                        if not raw.strip():
                            continue
                        answer = self._answer(raw)
                        if answer.get("done") is True:
                            return triples
                        if "error" in answer and not {"s", "p", "o"} & answer.keys():
                            raise ExtractorFailed(f"the command said: {str(answer['error'])[:300]}")
                        triples.append(answer)
                        if len(triples) > MAX_TRIPLES:
                            self._stop()
                            raise ExtractorOutputTooLarge(f"more than {MAX_TRIPLES} triples for one chunk")

    def _answer(self, raw: bytes) -> dict:
        try:
            answer = json.loads(raw)
        except (ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict):
            self._stop()
            raise ExtractorFailed(f"the command wrote a line that is not a JSON object: {raw[:80]!r}")
        return answer

    def _tail(self) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 300))
        tail = self._stderr.read().decode("utf-8", "replace").strip()
        return f"; stderr: ...{tail[-300:]}" if tail else ""

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> None:
        """Close the command's stdin (it ends as its input ends), kill it if it has not in 5 s."""
        process = self.process
        if process is not None and process.poll() is None:
            try:
                process.stdin.close()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._stop()
        self._stderr.close()

    def __enter__(self) -> "CommandExtractor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["BATCH_CHUNKS", "CHUNK_SECONDS", "CommandExtractor", "MAX_OUTPUT", "SHIPPED", "extract",
           "load_extractor"]
