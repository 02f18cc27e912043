"""The fsync thread: runs each submitted job once, reports its outcome, stops cleanly."""

from __future__ import annotations

import threading

from beanpod.storage.syncer import SyncThread


class Job:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error
        self.thread: str | None = None

    def run(self) -> None:
        self.thread = threading.current_thread().name
        if self.error is not None:
            raise self.error


def run_one(syncer: SyncThread, job: Job) -> BaseException | None:
    outcome: list[BaseException | None] = []
    done = threading.Event()

    def report(exc: BaseException | None) -> None:
        outcome.append(exc)
        done.set()

    syncer.submit(job, report)
    assert done.wait(30)
    return outcome[0]


def test_jobs_run_on_the_thread_one_after_another() -> None:
    syncer = SyncThread(name="test-wal")
    try:
        jobs = [Job() for _ in range(3)]
        for job in jobs:
            assert run_one(syncer, job) is None
            assert not syncer.busy  # free again before `done` is called
        assert [job.thread for job in jobs] == ["test-wal"] * 3
    finally:
        syncer.stop()


def test_a_failing_job_is_reported_and_the_thread_keeps_working() -> None:
    syncer = SyncThread()
    try:
        error = OSError(5, "injected")
        assert run_one(syncer, Job(error)) is error
        assert run_one(syncer, Job()) is None
    finally:
        syncer.stop()


def test_stop_ends_the_thread() -> None:
    syncer = SyncThread(name="test-stop")
    run_one(syncer, Job())
    syncer.stop()
    assert "test-stop" not in [t.name for t in threading.enumerate()]
    syncer.stop()  # idempotent
