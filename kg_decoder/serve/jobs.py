"""Uploads decoding in the background: each a job with its last progress report, for polling."""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from ..model import JsonResult, Progress
from ..model.results import Status
from ..model.errors import KgDecoderError

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
    message: str = "waiting to decode"
    result: Optional[dict] = None
    error: Optional[dict] = field(default=None)


class Jobs:
    """The last ``keep`` jobs, each run on a thread of its own."""

    def __init__(self, keep: int = 1000) -> None:
        self._states: dict[str, JobState] = {}
        self._lock = threading.Lock()
        self._keep = keep

    def start(self, work: Callable[[Callable[[Progress], None]], dict]) -> str:
        """Run ``work(progress)`` in the background; its JSON result or typed error ends the job."""
        job = uuid.uuid4().hex
        self._update(job)

        def progress(report: Progress) -> None:
            self._update(job, status=JobStatus.RUNNING, stage=report.stage, current=report.current,
                         total=report.total, message=report.message)

        def run() -> None:
            try:
                result = work(progress)
            except KgDecoderError as error:
                self._update(job, status=JobStatus.FAILED, error=error.to_json())
            except Exception:  # a bug must still end the job, not leave it running for ever
                _log.exception("upload job %s failed", job)
                self._update(job, status=JobStatus.FAILED,
                             error={"error": "internal-error", "message": "the upload failed inside the server"})
            else:
                self._update(job, status=JobStatus.DONE, result=result)

        threading.Thread(target=run, name=f"upload-{job[:8]}", daemon=True).start()
        return job

    def get(self, job: str) -> Optional[JobState]:
        with self._lock:
            state = self._states.get(job)
            return replace(state) if state is not None else None

    def _update(self, job: str, **fields) -> None:
        with self._lock:
            self._states[job] = replace(self._states.get(job) or JobState(job), **fields)
            while len(self._states) > self._keep:
                self._states.pop(next(iter(self._states)))
