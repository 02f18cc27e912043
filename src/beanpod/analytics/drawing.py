"""The report's charts drawn in a child process started with the JVM.

matplotlib's drawing is ~2.4 s of Python at 10k events. In a thread of the driver it took
the GIL from the thread steering the JVM's table writes (every Py4J call waited for it);
in a child it has its own interpreter and core, and it imports matplotlib while the JVM
starts. The child reads the pickled :class:`~beanpod.analytics.report.ReportData` on its
stdin and writes the page (UTF-8) on its stdout.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from beanpod.analytics.report_rows import ReportData


class DrawingFailed(RuntimeError):
    """The drawing process exited with an error (the last line of its stderr)."""


class Drawer:
    """One drawing process: started at once, given its data once, then done."""

    def __init__(self) -> None:
        # The child finds beanpod where this process did (spark-submit ships it in a zip).
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self._waiter = ThreadPoolExecutor(1, thread_name_prefix="beanpod-drawing")

    def draw(self, data: ReportData) -> Future[str]:
        """The page of ``data``, drawn by the child while the caller goes on."""
        return self._waiter.submit(self._exchange, pickle.dumps(data))

    def close(self) -> None:
        """End the child if it still runs (a run that failed before drawing)."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._waiter.shutdown(wait=False)

    def _exchange(self, given: bytes) -> str:
        page, errors = self._proc.communicate(given)
        if self._proc.returncode != 0:
            lines = errors.decode("utf-8", "replace").strip().splitlines() or ["no error"]
            raise DrawingFailed(f"drawing the report failed: {lines[-1]}")
        return page.decode("utf-8")


def main() -> None:
    from beanpod.analytics import report  # matplotlib's import: before the data comes

    data = pickle.load(sys.stdin.buffer)
    sys.stdout.buffer.write(report.render_html(data).encode("utf-8"))


if __name__ == "__main__":
    main()
