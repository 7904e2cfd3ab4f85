"""unstructured's text types at the cost of one spaCy batch per page, read beside pdfminer.

unstructured types each text it reads (narrative text, title...) by running spaCy's pipeline
(tagger and parser) on that text alone, one call per text: on born-digital PDFs, about a fifth of
partitioning. spaCy reads a batch of texts in about 0.4 of the time it takes to read them one by
one, with the same tokens, tags and sentences (2 517 of 2 517 texts of the corpus and ICDAR PDFs).

So, as pdfminer hands over a page, the texts unstructured will type on it are read in one batch
(:func:`read_ahead`), and unstructured's tokenizer finds each there instead of running the pipeline
(``install``). A text not foreseen is read alone, as before: the types stay unstructured's own,
whatever this module foresees or misses.

The batch is read by a process of its own (:class:`ReadingProcess`: the same model, the same
pipeline) while pdfminer reads the next page, where the worker has a second CPU: spaCy in a thread
was slower than in turn (it holds the interpreter), in a process pdfminer's and spaCy's reading of
the 127 corpus and ICDAR pages took 8.4–10.5 s against 11.7–13.8 s. unstructured reads only each
token's text and tag and each sentence's text of a reading, so those come back (:class:`Reading`).
A decoding worker forks that process as soon as it is warm (:func:`fork_reading_process`): the model
is loaded already and what the warm-up made is shared, so the process costs no start of its own and
reads from the first page of the first document. Elsewhere (a decode in this process) it is started
anew once ``PROCESS_AFTER_PAGES`` pages are typed (it costs about 1.5 CPU-seconds and 160 MB). Until
it is ready, and if it fails, pages are read here, to the same readings. Decoding workers read one
document at a time; the readings of one page are dropped when the next page's are taken, and when
the partition ends.
"""

from __future__ import annotations

import os
import pickle
import re
import select
import signal
import subprocess
import sys
from contextlib import contextmanager
from typing import Any, Iterator, NamedTuple, Optional

from .child_python import python_command

BATCH = 64  # spaCy's batch: little faster beyond (2 517 texts: 16 → 6.9 s, 64 → 5.9 s, 256 → 6.1 s)
PROCESS_VARIABLE = "KG_DECODER_TEXT_READING"  # "process": read by the process from the first page; "here": never
PROCESS_AFTER_PAGES = 20
REPLY_SECONDS = 60.0  # a page's reading not back by then: the process is stopped, the page read here

_read: dict[str, Any] = {}  # text → its reading (spaCy's Doc, or a Reading), for the page being typed
_installed = False
_reader: Optional["ReadingProcess"] = None
_reader_failed = False
_pages_typed = 0
_pages_read_aside = 0  # pages whose texts the reading process read


class Token(NamedTuple):
    text: str
    tag_: str


class Sentence(NamedTuple):
    text: str


class Reading:
    """What unstructured's tokenizer takes from spaCy's ``Doc`` of a text (``word_tokenize``,
    ``pos_tag``, ``sent_tokenize``): its tokens with their tags, and its sentences."""

    __slots__ = ("tokens", "sents")

    def __init__(self, tokens: list[Token], sentences: list[Sentence]) -> None:
        self.tokens, self.sents = tokens, sentences

    def __iter__(self):
        return iter(self.tokens)


class Pending(NamedTuple):
    """A page's texts, read here (``readings``) or being read by the process (``readings`` None)."""
    texts: list[str]
    readings: Optional[list]


def install() -> None:
    """unstructured's tokenizer takes a text's reading from the page's batch when there is one."""
    global _installed
    if _installed:
        return
    import unstructured.nlp.tokenize as tokenize

    run_alone = tokenize._process

    def from_batch_or_alone(text):
        doc = _read.get(text)
        return doc if doc is not None else run_alone(text)

    tokenize._process = from_batch_or_alone
    _installed = True


@contextmanager
def batches() -> Iterator[None]:
    """Within: pages' texts read ahead by ``read_ahead``; after: none kept."""
    install()
    try:
        yield
    finally:
        _read.clear()


def read_ahead(layout: Any) -> Pending:
    """Start reading in one batch the texts of this pdfminer page (an ``LTPage``) that unstructured's
    ``fast`` will type with spaCy: sent to the reading process when it is ready, else read here.
    :func:`take` puts the readings in place for unstructured; one page at a time is sent."""
    global _pages_typed
    try:
        texts = _texts_to_type(layout)
    except Exception:  # noqa: BLE001 — foreseeing is a saving only: every text is then read alone
        texts = []
    _pages_typed += 1
    reader = _reading_process()
    if texts and reader is not None:
        try:
            if reader.ready():
                reader.send(texts)
                return Pending(texts, None)
        except Exception:  # noqa: BLE001 — the process is gone: this page and the next are read here
            _stop_process()
    return Pending(texts, _read_here(texts))


def take(pending: Pending) -> None:
    """The page's readings in place of the last page's, for unstructured to find as it types the page."""
    readings = pending.readings
    if readings is None:
        readings = _received(pending.texts)
    _read.clear()
    _read.update(zip(pending.texts, readings))


def drop(pending: Optional[Pending]) -> None:
    """A page whose reading is no longer wanted (the partition stopped): its reply is taken and dropped,
    so the next page's is the next one the process sends."""
    if pending is not None and pending.readings is None and _reader is not None:
        _received([])  # nothing to read here should the reply not come


def _received(texts: list[str]) -> list:
    global _pages_read_aside
    try:
        replies = _reader.receive()
    except Exception:  # noqa: BLE001 — the process failed: this page and the next are read here
        _stop_process()
        return _read_here(texts)
    except BaseException:  # the worker interrupted while waiting: the reply is not awaited again
        _stop_process()
        raise
    _pages_read_aside += bool(texts)
    return [Reading([Token(*token) for token in tokens], [Sentence(text) for text in sentences])
            for tokens, sentences in replies]


def reading_state() -> dict:
    """This process's reading process (a task, for tests and tools): its pid (None: none), whether it
    was forked from this process and is ready, whether one failed, and how many pages' texts one read."""
    try:
        ready = _reader is not None and _reader.ready()
    except Exception:  # noqa: BLE001 — it died: the next page finds out and reads here
        ready = False
    return {"pid": _reader.pid if _reader is not None else None, "forked": isinstance(_reader, ForkedReadingProcess),
            "ready": ready, "failed": _reader_failed, "pages_read_aside": _pages_read_aside}


def _read_here(texts: list[str]) -> list:
    if not texts:
        return []
    try:
        import unstructured.nlp.tokenize as tokenize

        return list(tokenize._get_nlp().pipe(texts, batch_size=BATCH))
    except Exception:  # noqa: BLE001 — each text is then read alone
        return []


def _reading_process() -> Optional["ReadingProcess"]:
    """The reading process, started when this worker has a second CPU and has typed enough pages."""
    global _reader
    if _reader is not None or _reader_failed:
        return _reader
    wanted = os.environ.get(PROCESS_VARIABLE, "")
    if wanted == "here" or (wanted != "process" and (_pages_typed < PROCESS_AFTER_PAGES or not _spare_cpu())):
        return None
    try:
        _reader = ReadingProcess()
    except Exception:  # noqa: BLE001 — no process: pages are read here
        _stop_process()
    return _reader


def _spare_cpu() -> bool:
    from ..worker import cpu_share

    return cpu_share() >= 2


def _stop_process() -> None:
    global _reader, _reader_failed
    if _reader is not None:
        _reader.stop()
    _reader, _reader_failed = None, True


def fork_reading_process() -> None:
    """The reading process of a decoding worker with a second CPU, forked once its warm-up has loaded
    the model and frozen what it made (one thread runs then): it shares all that with the worker, so it
    is ready at once. Not where reading is kept here, nor where this process cannot fork: a process is
    then started after ``PROCESS_AFTER_PAGES`` pages, as elsewhere."""
    global _reader
    if _reader is not None or os.environ.get(PROCESS_VARIABLE) == "here" or not _spare_cpu() or not hasattr(os, "fork"):
        return
    try:
        _reader = ForkedReadingProcess()
    except Exception:  # noqa: BLE001 — no fork: pages are read here until a process is started
        _reader = None


class ReadingProcess:
    """spaCy's pipeline in a process of its own, reading a batch of texts at a time: a request is the
    pickled list of texts on its input, the reply the pickled list of (tokens with tags, sentences) on
    its output, after a first "ready" once the model is loaded. It ends when its input closes (the
    worker ended)."""

    def __init__(self) -> None:
        code = "from kg_decoder.decode.backends.text_types import serve; serve()"  # its modules alone
        self._child = subprocess.Popen(python_command(code), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
        self._requests, self._replies = self._child.stdin, self._child.stdout
        self._ready = False

    def ready(self) -> bool:
        """Whether the model is loaded (without waiting)."""
        if not self._ready and select.select([self._replies], [], [], 0)[0]:
            self._ready = pickle.load(self._replies) == "ready"
        return self._ready

    def send(self, texts: list[str]) -> None:
        pickle.dump(texts, self._requests, protocol=pickle.HIGHEST_PROTOCOL)
        self._requests.flush()

    def receive(self) -> list:
        if not select.select([self._replies], [], [], REPLY_SECONDS)[0]:
            raise TimeoutError("the reading process did not answer")
        return pickle.load(self._replies)

    def stop(self) -> None:
        self._child.kill()
        self._child.wait()

    @property
    def pid(self) -> int:
        return self._child.pid


class ForkedReadingProcess(ReadingProcess):
    """:class:`ReadingProcess` forked from this process, whose spaCy model is loaded: its requests and
    replies on two pipes; it keeps no other file of this process open (the worker's connection to its
    caller above all, whose end must tell the caller the worker is gone) and dies with this process."""

    def __init__(self) -> None:
        import unstructured.nlp.tokenize as tokenize

        nlp = tokenize._get_nlp()
        requests_in, requests_out = os.pipe()
        replies_in, replies_out = os.pipe()
        try:
            if min(requests_in, replies_out) <= 2:  # a standard stream closed here: the child's would be a pipe
                raise OSError("a standard stream of this process is closed")
            for stream in (sys.stdout, sys.stderr):  # nothing of this process's waits in the child's buffers
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            pid = os.fork()
        except BaseException:
            for end in (requests_in, requests_out, replies_in, replies_out):
                os.close(end)
            raise
        if pid == 0:  # the reading process: it never returns into the worker's code
            try:
                _answer_alone(nlp, requests_in, replies_out)
            finally:
                os._exit(0)
        os.close(requests_in)
        os.close(replies_out)
        self._pid = pid
        self._requests, self._replies = os.fdopen(requests_out, "wb"), os.fdopen(replies_in, "rb")
        self._ready = False

    def stop(self) -> None:
        """Killed and reaped once (its pid may be another process's after), its pipes closed: a request
        left in the buffer of a pipe whose reader died is dropped, not raised."""
        pid, self._pid = self._pid, None
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        for end in (self._requests, self._replies):
            try:
                end.close()
            except OSError:
                pass

    @property
    def pid(self) -> Optional[int]:
        return self._pid


def _answer_alone(nlp: Any, requests: int, replies: int) -> None:
    """The forked reading process: every file but its two pipes and stderr closed, output to stderr."""
    from ..worker import die_with_parent

    die_with_parent()
    kept = sorted({requests, replies})
    os.closerange(3, kept[0])
    os.closerange(kept[0] + 1, kept[1])
    os.closerange(kept[1] + 1, os.sysconf("SC_OPEN_MAX"))
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the replies
    _answer(nlp, os.fdopen(requests, "rb"), os.fdopen(replies, "wb"))


def serve() -> None:
    """The reading process's loop, started anew (see :class:`ReadingProcess`)."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the replies
    sys.modules.setdefault("torch", None)  # as in a worker: thinc goes on without it
    from .. import offline

    offline.prepare()
    import unstructured.nlp.tokenize as tokenize

    _answer(tokenize._get_nlp(), sys.stdin.buffer, replies)


def _answer(nlp: Any, requests: Any, replies: Any) -> None:
    """"ready", then each request's readings, until the requests end."""
    pickle.dump("ready", replies)
    replies.flush()
    while True:
        try:
            texts = pickle.load(requests)
        except EOFError:
            return
        readings = [([(token.text, token.tag_) for token in doc], [sent.text for sent in doc.sents])
                    for doc in nlp.pipe(texts, batch_size=BATCH)]
        pickle.dump(readings, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def _texts_to_type(layout: Any) -> list[str]:
    """The texts of the page that reach spaCy in unstructured's ``element_from_text``, built as
    ``unstructured.partition.pdf._pdfminer_page_elements`` builds them (its own helpers): every
    text box's text, whitespace cleaned, less those typed before spaCy is asked (header or footer
    by position, bullet, e-mail address, US city and zip code, numbered list, a number)."""
    import unstructured.nlp.tokenize as tokenize
    import unstructured.partition.pdf as pdf
    import unstructured.partition.text as text_module
    from unstructured.documents.coordinates import PixelSpace

    nlp = tokenize._get_nlp()
    longest = min(tokenize.MAX_CACHEABLE_CHARS, nlp.max_length)
    system = PixelSpace(width=layout.width, height=layout.height)
    texts: dict[str, None] = {}
    for obj in layout:
        x1, y1, x2, y2 = pdf.rect_to_bbox(obj.bbox, layout.height)
        points = ((x1, y1), (x1, y2), (x2, y2), (x2, y1))
        if text_module._is_in_header_position(points, system) or text_module._is_in_footer_position(points, system):
            continue
        if hasattr(obj, "get_text"):
            snippets = [pdf.get_text_with_deduplication(obj, pdf.env_config.PDF_CHAR_DUPLICATE_THRESHOLD)]
        else:
            snippets = re.split(pdf.PARAGRAPH_PATTERN, pdf._extract_text(obj))
        for snippet in snippets:
            text, _ = pdf.clean_extra_whitespace_with_index_run(snippet)
            if text.strip() and len(text) <= longest and _reaches_spacy(text, text_module):
                texts[text] = None
    return list(texts)


def _reaches_spacy(text: str, text_module: Any) -> bool:
    return not (text_module.is_bulleted_text(text) or text_module.is_email_address(text)
                or text_module.is_us_city_state_zip(text) or text_module.is_possible_numbered_list(text)
                or text.isnumeric())
