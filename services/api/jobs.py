"""Background jobs (sync, import): one worker thread per API process, state kept in the catalog store.

A job's record is written when it is queued, when it starts and when it ends, so ``GET /jobs/{id}``
answers from any process. Each job names its owner (the process's pid, host and start time). A job
left queued or running by a process that ended is reported interrupted: when an API process starts,
and when the job is read. Jobs of API processes that still run (other workers on the same data
folder) are theirs, never interrupted. Jobs of all processes run one at a time: each holds the data
folder's writer lock.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime

from pydantic import BaseModel

from services.access.keys import Principal
from services.root.container import Container
from tool_selector.catalog import admin
from tool_selector.catalog.admin import JobProgress, JobRecord
from tool_selector.core.errors import NotFoundError, ToolSelectorError
from tool_selector.core.processes import current_process

logger = logging.getLogger(__name__)
PROGRESS_STORED_EVERY_S = 0.5


def error_json(exc: BaseException) -> dict[str, object]:
    """An error as a job stores it; ``type`` names the class in tool_selector/core/errors.py."""
    if isinstance(exc, ToolSelectorError):
        return {"type": type(exc).__name__, "message": exc.message, "hint": exc.hint, "details": exc.details}
    return {"type": "InternalError", "message": f"{type(exc).__name__}: {exc}", "hint": "Tell the operator."}


class JobRunner:
    def __init__(self, container: Container) -> None:
        self.container = container
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="job")
        self._futures: dict[str, Future[None]] = {}
        # how far each running job of this process is: kept in memory (a sync writes in long transactions
        # of its own, so a progress row could not be written until they end); GET shows it
        self._progress: dict[str, JobProgress] = {}
        self._progress_lock = threading.Lock()
        admin.interrupt_orphaned_jobs(container.store)

    def reporter(self, job_id: str) -> Callable[[str, int, int], None]:
        """A progress callback (phase, done, total) for one job of this process: kept in memory for this
        process's answers, and stored (at most every PROGRESS_STORED_EVERY_S, and at each new phase)
        for the other API processes on the data folder."""
        stored_at, stored_phase = 0.0, ""

        def report(phase: str, done: int, total: int) -> None:
            nonlocal stored_at, stored_phase
            progress = JobProgress(phase=phase, done=done, total=total)
            with self._progress_lock:
                self._progress[job_id] = progress
            now = time.monotonic()
            if phase != stored_phase or now - stored_at >= PROGRESS_STORED_EVERY_S:
                stored_at, stored_phase = now, phase
                admin.record_progress(self.container.settings.db_path, job_id, progress)

        return report

    def with_progress(self, job: JobRecord) -> JobRecord:
        with self._progress_lock:
            progress = self._progress.get(job.id)
        if progress is None or job.state != "running":
            return job
        return job.model_copy(update={"progress": progress})

    def submit(
        self, kind: str, actor: str, work: Callable[[Callable[[str, int, int], None]], BaseModel]
    ) -> JobRecord:
        """Queue ``work``, called with a progress callback (phase, done, total) for this job."""
        job = JobRecord(
            id=secrets.token_hex(8),
            kind=kind,
            state="queued",
            created_at=datetime.now(UTC),
            created_by=actor,
            owner=current_process(),
        )
        admin.put_job(self.container.store, job)
        # the worker changes its own copy: the record returned stays the one stored (queued)
        future = self._pool.submit(self._run, job.model_copy(), work)
        self._futures[job.id] = future
        future.add_done_callback(lambda _: self._futures.pop(job.id, None))
        return job

    def _run(self, job: JobRecord, work: Callable[[Callable[[str, int, int], None]], BaseModel]) -> None:
        store = self.container.store
        job.state, job.started_at = "running", datetime.now(UTC)
        admin.put_job(store, job)
        try:
            result = work(self.reporter(job.id))
        except BaseException as exc:  # a job must always end with a state
            if not isinstance(exc, ToolSelectorError):
                logger.exception("job %s (%s) failed", job.id, job.kind)
            job.state, job.error = "failed", error_json(exc)
            if isinstance(exc, ToolSelectorError) and "problems" in exc.details:
                job.result = {"counts": {"errors": len(exc.details["problems"])}}
        else:
            job.state, job.result = "succeeded", result.model_dump(mode="json")
        job.finished_at = datetime.now(UTC)
        admin.put_job(store, job)
        with self._progress_lock:
            self._progress.pop(job.id, None)

    def get(self, job_id: str) -> JobRecord:
        job = admin.get_job(self.container.store, job_id)
        if admin.orphaned(job):  # its process ended (another worker, or before a restart)
            admin.interrupt_orphaned_jobs(self.container.store, job_id)
            job = admin.get_job(self.container.store, job_id)
        return self.with_progress(job)

    def get_for(self, job_id: str, who: Principal) -> JobRecord:
        """``get`` for a caller. A key with the ``read`` scope sees every job; one without it (an
        import-only key) sees only the jobs it started, and any other id is refused alike (403), whether
        a job has it or not: the answer tells nothing of other keys' jobs."""
        if "read" not in who.scopes:
            try:
                owner: str | None = admin.get_job(self.container.store, job_id).created_by
            except NotFoundError:
                owner = None
            if owner != who.actor:
                who.require("read")
        return self.get(job_id)

    def wait(self, job_id: str, timeout: float | None = None) -> JobRecord:
        """Block until a job of this process ends (for the CLI and tests)."""
        future = self._futures.get(job_id)
        if future is not None:
            future.result(timeout=timeout)
        return self.get(job_id)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
