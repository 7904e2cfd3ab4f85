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
document at a time; the readings of one page are put in place for unstructured when the page is
typed, and taken away when the next page's are taken and when the partition ends (those of the texts
read last are kept apart, see below).

The process and the worker share a page's reading: it is cut in shares (the first about half of its
letters, each next half of the rest, :func:`shares`), each claimed by whichever of the two takes its
token first from a pipe both read (a byte read from a pipe goes to one reader). The process claims as
it reads; the worker claims what is left when it wants the page's readings, instead of waiting. A
short document's last page has no next page for pdfminer to read meanwhile: on the corpus's two
layout-parser papers the worker waited 160 ms a decode for such pages, of about 600.

Before the first page's texts the process has nothing to read: the worker hands it other work of the
document meanwhile (:func:`aside`: a call whose value it takes later: the lines of a PDF's pages
with turned text, and of page 1 for its title). A page is sent only once the call is answered, so the
process never keeps a page waiting behind a call; until then pages are read here.

The process that types keeps the readings of the texts read last (``KEPT_LETTERS``, a worker from
document to document), and a text found there is not read again: a running title, a disclaimer, a
document decoded again. unstructured's own caches answer such a text without asking when it is among
its last 128 texts, so raw unstructured reads it once too; beyond those, this keeps more.
"""

from __future__ import annotations

import os
import pickle
import re
import select
import signal
import subprocess
import sys
import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Iterator, NamedTuple, Optional

from ...patches.unstructured import install_text_lookup, spacy_pipeline, texts_to_type
from ..child_python import python_command

BATCH = 64  # spaCy's batch: little faster beyond (2 517 texts: 16 → 6.9 s, 64 → 5.9 s, 256 → 6.1 s)
SHARE_LETTERS = 200  # a share's fewest letters: a batch of short texts costs spaCy up to twice a page's per text
PROCESS_VARIABLE = "KG_DECODER_TEXT_READING"  # "process": read by the process from the first page; "here": never
PROCESS_AFTER_PAGES = 20
REPLY_SECONDS = 60.0  # a page's reading not back by then: the process is stopped, the page read here
# Readings kept for texts read again (a running title, boilerplate, a document decoded again): about 40
# pages of prose; 7 MB of readings of paragraphs, up to 14 MB of table cells' (measured with
# tracemalloc). unstructured's own caches keep its last 128 texts' readings.
KEPT_LETTERS = 200_000

_read: dict[str, Any] = {}  # text → its reading (spaCy's Doc, or a Reading), for the page being typed
_reader: Optional["ReadingProcess"] = None
_reader_failed = False
_pages_typed = 0
_pages_read_aside = 0  # pages of whose texts the reading process read a share
_shares_read_here = 0  # shares of pages sent to the reading process that this process claimed
_calls_answered = 0  # calls run aside whose value came back
_kept: "OrderedDict[str, Reading]" = OrderedDict()  # text → its reading, the last read or found last
_kept_letters = 0
_texts_found_kept = 0  # texts of pages typed whose reading was kept, so not read again


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
    """A page's texts, read here (``readings``) or being read by the process (``readings`` None) in
    the shares that start at ``starts`` (the last: where the texts end); and those of its texts whose
    readings were kept (``kept``: text, reading), not read again."""
    texts: list[str]
    readings: Optional[list]
    starts: tuple[int, ...] = ()
    kept: tuple = ()


def install() -> None:
    """unstructured's tokenizer takes a text's reading from the page's batch when there is one."""
    install_text_lookup(_read.get)


@contextmanager
def batches() -> Iterator[None]:
    """Within: pages' texts read ahead by ``read_ahead``, each page's in place as it is typed; after:
    none in place (the kept ones stay kept)."""
    install()
    try:
        yield
    finally:
        _read.clear()


def read_ahead(layout: Any) -> Pending:
    """Start reading in one batch the texts of this pdfminer page (an ``LTPage``) that unstructured's
    ``fast`` will type with spaCy: sent to the reading process when it is ready, else read here.
    :func:`take` puts the readings in place for unstructured; one page at a time is sent."""
    try:
        texts = texts_to_type(layout)
    except Exception:  # noqa: BLE001 — foreseeing is a saving only: every text is then read alone
        texts = []
    return read_texts_ahead(texts)


def read_texts_ahead(texts: list[str]) -> Pending:
    """Start reading a page's ``texts`` in one batch (see :func:`read_ahead`), less those whose readings
    are kept: sent to the reading process when it is ready and has answered every call, else read here."""
    global _pages_typed, _texts_found_kept
    _pages_typed += 1
    kept = tuple((text, _kept[text]) for text in texts if text in _kept)
    if kept:
        _texts_found_kept += len(kept)
        texts = [text for text in texts if text not in _kept]
    reader = _reading_process()
    if texts and reader is not None:
        try:
            if reader.ready() and reader.answered():
                starts = shares(texts)
                reader.send(texts, starts)
                return Pending(texts, None, starts, kept)
        except Exception:  # noqa: BLE001 — the process is gone: this page and the next are read here
            _stop_process()
        except BaseException:  # interrupted part way through the request: the process would read it wrong
            _stop_process()
            raise
    return Pending(texts, _read_here(texts), kept=kept)


def take(pending: Pending) -> None:
    """The page's readings in place of the last page's, for unstructured to find as it types the page."""
    readings = pending.readings
    if readings is None:
        readings = _received(pending)
    _read.clear()
    _read.update(pending.kept)
    _read.update((text, reading) for text, reading in zip(pending.texts, readings) if reading is not None)
    _keep(pending, readings)


def _keep(pending: Pending, readings: list) -> None:
    """The page's readings kept for its texts read again, the least recently used dropped beyond
    ``KEPT_LETTERS``: each as a :class:`Reading` (a spaCy ``Doc`` holds its tokens' tensor too), its tags
    shared, and only where its sentences hold the text's letters (a reading is never kept for another
    text, whatever went wrong in the pipes)."""
    global _kept_letters
    for text, _ in pending.kept:
        if text in _kept:
            _kept.move_to_end(text)
    for text, reading in zip(pending.texts, readings):
        if reading is None or text in _kept or len(text) > KEPT_LETTERS:
            continue
        sentences = [Sentence(sent.text) for sent in reading.sents]
        if "".join(text.split()) != "".join("".join(sentence.text for sentence in sentences).split()):
            continue
        _kept[text] = Reading([Token(token.text, sys.intern(token.tag_)) for token in reading], sentences)
        _kept_letters += len(text)
    while _kept_letters > KEPT_LETTERS:
        text, _ = _kept.popitem(last=False)
        _kept_letters -= len(text)


def forget_kept() -> None:
    """No reading kept: every text is read anew (a task, for tests and tools)."""
    global _kept_letters
    _kept.clear()
    _kept_letters = 0


def drop(pending: Optional[Pending]) -> None:
    """A page whose reading is no longer wanted (the partition stopped): its shares left are claimed
    and its reply taken, both dropped, so the next page's are the next ones."""
    if pending is not None and pending.readings is None and _reader is not None:
        _received(pending, wanted=False)


class Aside:
    """A call run by the reading process while this one goes on (:func:`aside`)."""

    def __init__(self, reader: "ReadingProcess") -> None:
        self._reader, self._call = reader, reader.calls

    def result(self) -> Any:
        """The call's value, once back; raises when it is not (the call failed, the process is gone or
        has not finished it: the caller then does the work itself, the process's answer dropped when
        it comes)."""
        global _calls_answered
        reader = self._reader
        if reader is not _reader or reader.calls != self._call:
            raise RuntimeError("the reading process that ran the call is gone, or ran another since")
        try:
            answered = reader.answered()
        except BaseException:  # it died, or this process was interrupted part way through the answer
            _stop_process()
            raise
        if not answered or reader.answer is None:
            raise RuntimeError("the reading process has not answered the call")
        done, value = reader.answer
        reader.answer = None
        if not done:
            raise RuntimeError(f"the call failed in the reading process: {value}")
        _calls_answered += 1
        return value


def aside(function: Any, *args: Any) -> Optional[Aside]:
    """``function(*args)`` run by the reading process, when there is one ready and no call of its is
    unanswered (None: there is none, the caller does the work when it needs it). Not called while a page
    is in flight (between :func:`read_ahead` and :func:`take`): its reply would be taken for the
    answer. ``function`` is a module's function; it, its arguments and its value are pickled. Pages are
    read here until the process has answered."""
    reader = _reading_process()
    if reader is None:
        return None
    try:
        if not (reader.ready() and reader.answered()):
            return None
        reader.call(function, args)
    except Exception:  # noqa: BLE001 — the process is gone: the work is done here
        _stop_process()
        return None
    except BaseException:  # interrupted part way through the request: the process would read it wrong
        _stop_process()
        raise
    return Aside(reader)


def shares(texts: list[str]) -> tuple[int, ...]:
    """Where each share of a page's texts starts, then where the texts end: the first share as close to
    half the page's letters as its texts allow, each next as close to half of the rest (so whichever of
    the reading process and the worker claims the last ones, they end about together), none of fewer
    than ``SHARE_LETTERS`` letters (a page of fewer: one share). A long text takes a share alone rather
    than overfill one.

    >>> shares(["a" * 100, "b" * 300, "c" * 1500, "d" * 100, "e" * 150])
    (0, 2, 3, 5)
    """
    starts, start, left = [0], 0, sum(map(len, texts))
    while start < len(texts):
        end, taken = start, 0
        while end < len(texts) and taken < left / 2:
            more = len(texts[end])
            if taken >= SHARE_LETTERS and taken + more - left / 2 > left / 2 - taken:
                break  # the next text would overfill the share more than it lacks
            taken += more
            end += 1
        while end < len(texts) and taken < SHARE_LETTERS:
            taken += len(texts[end])
            end += 1
        if left - taken < SHARE_LETTERS:
            end, taken = len(texts), left
        starts.append(end)
        start, left = end, left - taken
    return tuple(starts)


def _received(pending: Pending, wanted: bool = True) -> list:
    """The page's readings, one a text (None: not read): the shares the process has not claimed read
    here, the process's from its reply. ``wanted`` False: claimed and not read, nothing read here."""
    global _pages_read_aside, _shares_read_here
    texts, starts = pending.texts, pending.starts
    readings: list = [None] * len(texts)
    try:
        while (share := _reader.claim()) is not None:
            if not 0 <= share < len(starts) - 1:
                raise ValueError(f"a share {share} of {len(starts) - 1} claimed")
            _shares_read_here += 1
            if wanted:
                begin, end = starts[share], starts[share + 1]
                readings[begin:end] = _read_here(texts[begin:end]) or [None] * (end - begin)
        replies = _reader.receive()
        for share, share_readings in replies:
            begin = starts[share]
            if not 0 <= share < len(starts) - 1 or len(share_readings) != starts[share + 1] - begin:
                raise ValueError(f"a reply of {len(share_readings)} readings for share {share} of {len(starts) - 1}")
            readings[begin:begin + len(share_readings)] = [
                Reading([Token(*token) for token in tokens], [Sentence(text) for text in sentences])
                for tokens, sentences in share_readings]
    except Exception:  # noqa: BLE001 — the process failed: this page and the next are read here
        _stop_process()
        return _read_here(texts) if wanted else []
    except BaseException:  # the worker interrupted meanwhile: nothing of this page is awaited again
        _stop_process()
        raise
    _pages_read_aside += bool(replies)
    return readings


def reading_state() -> dict:
    """This process's reading process (a task, for tests and tools): its pid (None: none), whether it
    was forked from this process and is ready, whether one failed, how many pages sent to it it read a
    share of, how many shares of those pages this process claimed (to read them, or to drop them), and
    how many calls run aside answered, how many texts of pages typed had their readings kept."""
    try:
        ready = _reader is not None and _reader.ready()
    except Exception:  # noqa: BLE001 — it died: the next page finds out and reads here
        ready = False
    return {"pid": _reader.pid if _reader is not None else None, "forked": isinstance(_reader, ForkedReadingProcess),
            "ready": ready, "failed": _reader_failed, "pages_read_aside": _pages_read_aside,
            "shares_read_here": _shares_read_here, "calls_answered": _calls_answered,
            "texts_found_kept": _texts_found_kept}


def _read_here(texts: list[str]) -> list:
    if not texts:
        return []
    try:
        return list(spacy_pipeline().pipe(texts, batch_size=BATCH))
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
    from ..processes import cpu_share

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
    """spaCy's pipeline in a process of its own, reading a page's texts at a time: a request is the
    pickled texts with where their shares start on its input, each share's token (its number, a byte)
    on the claims pipe before it; the reply the pickled list of the shares it claimed, each with its
    texts' (tokens with tags, sentences), on its output, after a first "ready" once the model is loaded.
    A call (:meth:`call`) is a request of its own, answered (done, value or why not) before the next
    request is read. It ends when its input closes (the worker ended)."""

    def __init__(self) -> None:
        self._claims, self._tokens = _claims_pipe()
        code = f"from kg_decoder.decode.pdf.text_types import serve; serve({self._claims})"  # its modules alone
        try:
            if min(self._claims, self._tokens) <= 2:  # a standard stream closed here: the child's would be a pipe
                raise OSError("a standard stream of this process is closed")
            self._child = subprocess.Popen(python_command(code), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.DEVNULL, pass_fds=(self._claims,),
                                           env={**os.environ, "OMP_NUM_THREADS": "1"})
        except BaseException:
            _close_all(self._claims, self._tokens)
            raise
        self._requests, self._replies = self._child.stdin, self._child.stdout
        self._ready = False
        self._calling = False
        self.calls = 0  # calls sent
        self.answer: Optional[tuple] = None  # the last call's (done, value or why not), once read

    def ready(self) -> bool:
        """Whether the model is loaded (without waiting)."""
        if not self._ready and select.select([self._replies], [], [], 0)[0]:
            self._ready = pickle.load(self._replies) == "ready"
        return self._ready

    def answered(self) -> bool:
        """Whether no call sent is left unanswered (without waiting); its answer is then in ``answer``.
        Raises once a call has gone unanswered for ``REPLY_SECONDS`` (the process is to be stopped)."""
        if self._calling:
            if select.select([self._replies], [], [], 0)[0]:
                self.answer = pickle.load(self._replies)
                self._calling = False
            elif time.monotonic() - self._called_at > REPLY_SECONDS:
                raise TimeoutError("the reading process did not answer a call")
        return not self._calling

    def call(self, function: Any, args: tuple) -> None:
        """Run ``function(*args)`` there; see :meth:`answered`. Nothing else is sent until it answers."""
        self.answer, self._calling, self._called_at = None, True, time.monotonic()
        self.calls += 1
        payload = pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)
        pickle.dump(_Call(payload), self._requests, protocol=pickle.HIGHEST_PROTOCOL)
        self._requests.flush()

    def send(self, texts: list[str], starts: tuple[int, ...]) -> None:
        os.write(self._tokens, bytes(range(len(starts) - 1)))  # before the request: the process finds them
        pickle.dump((texts, starts), self._requests, protocol=pickle.HIGHEST_PROTOCOL)
        self._requests.flush()

    def claim(self) -> Optional[int]:
        """The next share of the page sent last that the process has not claimed (None: none is left)."""
        return _claimed(self._claims)

    def receive(self) -> list:
        if not select.select([self._replies], [], [], REPLY_SECONDS)[0]:
            raise TimeoutError("the reading process did not answer")
        return pickle.load(self._replies)

    def stop(self) -> None:
        self._child.kill()
        self._child.wait()
        _close_all(self._requests, self._replies, self._claims, self._tokens)

    @property
    def pid(self) -> int:
        return self._child.pid


class ForkedReadingProcess(ReadingProcess):
    """:class:`ReadingProcess` forked from this process, whose spaCy model is loaded: its requests and
    replies on two pipes, its claims on a third; it keeps no other file of this process open (the
    worker's connection to its caller above all, whose end must tell the caller the worker is gone)
    and dies with this process."""

    def __init__(self) -> None:
        nlp = spacy_pipeline()
        ends: list[int] = []
        try:
            ends += os.pipe()
            ends += os.pipe()
            ends += _claims_pipe()
            requests_in, requests_out, replies_in, replies_out, claims, tokens = ends
            if min(ends) <= 2:  # a standard stream closed here: the child's would be a pipe
                raise OSError("a standard stream of this process is closed")
            for stream in (sys.stdout, sys.stderr):  # nothing of this process's waits in the child's buffers
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            pid = os.fork()
        except BaseException:
            _close_all(*ends)
            raise
        if pid == 0:  # the reading process: it never returns into the worker's code
            try:
                _answer_alone(nlp, requests_in, replies_out, claims)
            finally:
                os._exit(0)
        os.close(requests_in)
        os.close(replies_out)
        self._pid, self._claims, self._tokens = pid, claims, tokens
        self._requests, self._replies = os.fdopen(requests_out, "wb"), os.fdopen(replies_in, "rb")
        self._ready = False
        self._calling = False
        self.calls = 0
        self.answer = None

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
        _close_all(self._requests, self._replies, self._claims, self._tokens)

    @property
    def pid(self) -> Optional[int]:
        return self._pid


def _answer_alone(nlp: Any, requests: int, replies: int, claims: int) -> None:
    """The forked reading process: every file but its three pipe ends and stderr closed, output to stderr."""
    from ..processes import die_with_parent

    die_with_parent()
    after = 2
    for kept in sorted({requests, replies, claims}):
        os.closerange(after + 1, kept)
        after = kept
    os.closerange(after + 1, os.sysconf("SC_OPEN_MAX"))
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the replies
    _answer(nlp, os.fdopen(requests, "rb"), os.fdopen(replies, "wb"), claims)


def serve(claims: int) -> None:
    """The reading process's loop, started anew (see :class:`ReadingProcess`); ``claims``: the claims
    pipe's end it reads."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the replies
    sys.modules.setdefault("torch", None)  # as in a worker: thinc goes on without it
    from .. import offline

    offline.prepare()
    _answer(spacy_pipeline(), sys.stdin.buffer, replies, claims)


class _Call(NamedTuple):
    """A request to run a function (:meth:`ReadingProcess.call`): it and its arguments, pickled apart
    so that one the process cannot unpickle fails the call, not the process."""
    payload: bytes


def _answer(nlp: Any, requests: Any, replies: Any, claims: int) -> None:
    """"ready", then for each page the readings of the shares it claimed, for each call its answer,
    until the requests end."""
    pickle.dump("ready", replies)
    replies.flush()
    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        if isinstance(request, _Call):
            replies.write(_called(request))
            replies.flush()
            continue
        texts, starts = request
        read = []
        while (share := _claimed(claims)) is not None:
            read.append((share, [([(token.text, token.tag_) for token in doc], [sent.text for sent in doc.sents])
                                 for doc in nlp.pipe(texts[starts[share]:starts[share + 1]], batch_size=BATCH)]))
        pickle.dump(read, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def _called(call: _Call) -> bytes:
    """A call's answer, pickled: (True, its value), or (False, why not)."""
    try:
        function, args = pickle.loads(call.payload)
        return pickle.dumps((True, function(*args)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 — the caller does the work itself
        return pickle.dumps((False, f"{type(exc).__name__}: {exc}"), protocol=pickle.HIGHEST_PROTOCOL)


def _claims_pipe() -> tuple[int, int]:
    """The pipe of a page's shares' tokens: its end both processes claim from (not blocking: an empty
    pipe is no share left), and the worker's end that writes them."""
    claims, tokens = os.pipe()
    try:
        os.set_blocking(claims, False)
    except BaseException:
        _close_all(claims, tokens)
        raise
    return claims, tokens


def _claimed(claims: int) -> Optional[int]:
    """The share whose token this process took from the claims pipe (None: none is left)."""
    try:
        token = os.read(claims, 1)
    except BlockingIOError:
        return None
    return token[0] if token else None


def _close_all(*ends: Any) -> None:
    """Pipe ends closed (file objects or descriptors), none raising: a request left in the buffer of a
    pipe whose reader died is dropped."""
    for end in ends:
        try:
            end.close() if hasattr(end, "close") else os.close(end)
        except OSError:
            pass
