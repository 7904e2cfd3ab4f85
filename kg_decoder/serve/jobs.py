"""Work in the background (async uploads, large fact posts): each a job with its last progress report,
for polling; a bounded queue, run in order, whose request bodies wait on disk."""

from __future__ import annotations

import logging
import queue
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from ..model import JsonResult, Progress
from ..model.results import Status
from ..model.errors import KgDecoderError, ServerBusy

_log = logging.getLogger(__name__)


class JobStatus(Status):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass
class JobState(JsonResult):
    job: str
    status: JobStatus = JobStatus.QUEUED
    stage: str = "queued"
    current: int = 0
    total: int = 1
    message: str = "waiting for the jobs before it"
    result: Optional[dict] = None
    error: Optional[dict] = field(default=None)


class Jobs:
    """Background work (async uploads and fact posts), run one after another on a thread of their own,
    at most ``queued`` waiting or running: past that, :meth:`start` is ServerBusy (503, Retry-After).
    A job's request body is kept on disk in ``spool`` (files :meth:`spool` names) until the job ends,
    never in memory while it waits; the folder is emptied when a Jobs is made (a server's start). The
    states of the last ``keep`` jobs are kept for polling."""

    def __init__(self, keep: int = 1000, queued: int = 8, spool: Optional[Path] = None) -> None:
        self._states: dict[str, JobState] = {}
        self._lock = threading.Lock()
        self._keep = keep
        self._queue: queue.Queue = queue.Queue()
        self._bound = max(1, queued)
        self._pending = 0  # queued or running
        self._runner: Optional[threading.Thread] = None
        self._made_spool = spool is None
        self.spool_folder = Path(spool) if spool is not None else Path(tempfile.mkdtemp(prefix="kg-decoder-spool-"))
        if spool is not None:
            shutil.rmtree(self.spool_folder, ignore_errors=True)  # what a stopped server left
        self.spool_folder.mkdir(parents=True, exist_ok=True)

    @property
    def queued(self) -> int:
        """Jobs waiting or running."""
        return self._pending

    def spool(self, write: Callable[[Path], None]) -> Path:
        """A new file of the spool, written by ``write(path)`` (a request body saved as it streams);
        ServerBusy first, without writing, when the queue is full already."""
        with self._lock:
            if self._pending >= self._bound:
                raise ServerBusy(f"{self._pending} jobs are queued or running already; try again later")
        path = self.spool_folder / uuid.uuid4().hex
        try:
            write(path)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path

    def start(self, work: Callable[[Callable[[Progress], None]], dict], files: tuple[Path, ...] = ()) -> str:
        """Queue ``work(progress)``; its JSON result or typed error ends the job, and ``files`` (of the
        spool) are removed then. ServerBusy (the files removed) when the queue is full."""
        job = uuid.uuid4().hex
        with self._lock:
            if self._pending >= self._bound:
                for path in files:
                    path.unlink(missing_ok=True)
                raise ServerBusy(f"{self._pending} jobs are queued or running already; try again later")
            self._pending += 1
        self._update(job)
        self._queue.put((job, work, files))
        with self._lock:
            if self._runner is None or not self._runner.is_alive():
                self._runner = threading.Thread(target=self._run_all, name="kg-decoder-jobs", daemon=True)
                self._runner.start()
        return job

    def _run_all(self) -> None:
        while True:
            job, work, files = self._queue.get()
            try:
                self._run(job, work)
            finally:
                for path in files:
                    path.unlink(missing_ok=True)
                with self._lock:
                    self._pending -= 1
                self._queue.task_done()

    def _run(self, job: str, work: Callable[[Callable[[Progress], None]], dict]) -> None:
        def progress(report: Progress) -> None:
            self._update(job, status=JobStatus.RUNNING, stage=report.stage, current=report.current,
                         total=report.total, message=report.message)

        self._update(job, status=JobStatus.RUNNING, stage="started", message="started")
        try:
            result = work(progress)
        except KgDecoderError as error:
            self._update(job, status=JobStatus.FAILED, error=error.to_json())
        except Exception:  # a bug must still end the job, not leave it running for ever
            _log.exception("job %s failed", job)
            self._update(job, status=JobStatus.FAILED,
                         error={"error": "internal-error", "message": "the job failed inside the server"})
        else:
            self._update(job, status=JobStatus.DONE, result=result)

    def wait(self) -> None:
        """Until every queued job has ended (for tests and a clean stop)."""
        self._queue.join()

    def close(self) -> None:
        """The spool removed when this Jobs made it (a temporary folder)."""
        if self._made_spool:
            shutil.rmtree(self.spool_folder, ignore_errors=True)

    def get(self, job: str) -> Optional[JobState]:
        with self._lock:
            state = self._states.get(job)
            return replace(state) if state is not None else None

    def _update(self, job: str, **fields) -> None:
        with self._lock:
            self._states[job] = replace(self._states.get(job) or JobState(job), **fields)
            while len(self._states) > self._keep:
                self._states.pop(next(iter(self._states)))
