"""Assertions over what the server holds, with messages that show what was there."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from beanpod.testing.errors import UnknownTube
from beanpod.testing.views import SeenJob

SHOWN = 10  # jobs listed in a failure message


class Assertions:
    """Mixed into the servers; they supply the lookups below."""

    def jobs(self, tube: str | None = None, state: str | None = None) -> list[SeenJob]:
        raise NotImplementedError

    def tubes(self) -> list[str]:
        raise NotImplementedError

    def _inserted(self) -> list[tuple[str, int, bytes]]:
        raise NotImplementedError

    def _tube_known(self, name: str) -> bool:
        raise NotImplementedError

    @contextmanager
    def assert_jobs_put(self, n: int, tube: str | None = None) -> Iterator[None]:
        """Exactly n jobs were put by clients (to `tube`, or to any) inside the block."""
        start = len(self._inserted())
        yield
        if tube is not None:
            self._check_tube(tube)
        put = self._inserted()[start:]
        matching = [entry for entry in put if tube is None or entry[0] == tube]
        if len(matching) != n:
            where = "" if tube is None else f" to tube {tube!r}"
            raise AssertionError(
                f"expected {n} job(s) put{where}, {len(matching)} were; "
                f"puts in the block: {_puts(put)}"
            )

    def assert_tube_empty(self, tube: str) -> None:
        """No job of `tube` is ready, delayed, reserved or buried."""
        self._check_tube(tube)
        jobs = self.jobs(tube=tube)
        if jobs:
            raise AssertionError(f"tube {tube!r} is not empty: {_listing(jobs)}")

    def assert_no_buried(self, tube: str | None = None) -> None:
        """No buried job (in `tube`, or in any tube)."""
        if tube is not None:
            self._check_tube(tube)
        buried = self.jobs(tube=tube, state="buried")
        if buried:
            where = "" if tube is None else f" in tube {tube!r}"
            raise AssertionError(f"{len(buried)} buried job(s){where}: {_listing(buried)}")

    def _check_tube(self, tube: str) -> None:
        if not self._tube_known(tube):
            raise UnknownTube(
                f"no client has used, watched or put to a tube named {tube!r} since the "
                "reset (a typo?); tubes now: " + ", ".join(repr(t) for t in self.tubes())
            )


def _listing(jobs: list[SeenJob]) -> str:
    shown = ", ".join(
        f"#{job.id} {job.state} in {job.tube!r} {job.body[:40]!r}" for job in jobs[:SHOWN]
    )
    return shown + (f" and {len(jobs) - SHOWN} more" if len(jobs) > SHOWN else "")


def _puts(put: list[tuple[str, int, bytes]]) -> str:
    if not put:
        return "none"
    shown = ", ".join(f"#{job_id} to {tube!r} {body[:40]!r}" for tube, job_id, body in put[:SHOWN])
    return shown + (f" and {len(put) - SHOWN} more" if len(put) > SHOWN else "")
