"""A checkpoint encoded and written by a forked child, so that the node's event loop pays
for the fork only (its page tables: a few ms for a few hundred MB) instead of the
encoding (90-140 ms per 100,000 jobs on the loop; docs/cluster.md).

The child sees the parent's memory as it was at the fork (copy-on-write): an immutable
copy of the engine taken at once, which the loop goes on changing in the parent. A
thread could not encode the live engine (the loop mutates it meanwhile), and the
encoding's C-level passes would hold the GIL for their whole length anyway.

The seq the checkpoint covers comes later, through a pipe: a leader's is known once the
batch ending at the fork has committed. The child encodes meanwhile, waits for it
(EOF instead: no checkpoint, it exits), writes DIR/snapshot as before (temporary file,
fsync, rename) and reports the size. It gives up before the rename when the process
that forked it is gone (killed, or re-executed after stepping down: the pipes close
with it), as the single node's snapshot builder does.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import select
import signal
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from beanpod.durability.cluster import checkpoint

NICENESS = 19  # the child runs on what the node leaves idle


class Forked:
    """The parent's side of one child writing a checkpoint."""

    def __init__(self, pid: int, seq_fd: int, result_fd: int) -> None:
        self.pid = pid
        self.seq_fd: int | None = seq_fd
        self.result_fd = result_fd

    def covers(self, seq: int) -> None:
        """The state at the fork is the log up to `seq`: write it."""
        self._send(b"%d\n" % seq)

    def abandon(self) -> None:
        """No checkpoint of this state (its batch failed): the child exits."""
        self._send(b"")

    def _send(self, data: bytes) -> None:
        if self.seq_fd is not None:
            with contextlib.suppress(OSError):  # (a child already dead: result() tells)
                os.write(self.seq_fd, data)
            os.close(self.seq_fd)
            self.seq_fd = None

    def end(self) -> None:
        """Kill the child and reap it now (blocking; a killed child exits at once): before
        the node re-executes itself, whose new image would never reap it."""
        self._kill()
        with contextlib.suppress(ChildProcessError):  # (reaped already by result())
            os.waitpid(self.pid, 0)

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    async def result(self) -> int:
        """The checkpoint's size once written (0: abandoned); OSError if it failed."""
        self.abandon()  # (no-op once covered) so the child never waits for a seq forever
        try:
            report, status = await asyncio.to_thread(_reap, self.pid, self.result_fd)
        except asyncio.CancelledError:  # the node stops: its exit must not wait for the
            self._kill()  # child's encoding (the reaping thread ends with it)
            raise
        if report.startswith(b"ok "):
            return int(report[3:])
        if report == b"abandoned" and status == 0:
            return 0
        why = report.decode(errors="replace") or f"exit status {status}"
        raise OSError(f"checkpoint process failed: {why}")


def fork(encode: Callable[[], list[bytes]], directory: Path) -> Forked:
    """Fork a child that encodes the state as it is now and writes it to `directory`."""
    seq_r, seq_w = os.pipe()  # (close-on-exec: a parent's re-exec closes them)
    result_r, result_w = os.pipe()
    with warnings.catch_warnings():  # the child runs no other thread's code (see _child)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        _child(encode, directory, seq_r, result_w)
    os.close(seq_r)
    os.close(result_w)
    return Forked(pid, seq_w, result_r)


def _reap(pid: int, fd: int) -> tuple[bytes, int]:
    """(what the child reported, its exit status): blocks, so it runs in a thread."""
    report = b""
    try:
        while chunk := os.read(fd, 4096):
            report += chunk
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return report.strip(), os.waitstatus_to_exitcode(status)


def _child(encode: Callable[[], list[bytes]], directory: Path, seq_fd: int,
           result_fd: int) -> NoReturn:  # fmt: skip
    """Only this thread exists here: no lock another thread held at the fork is taken
    (no logging, no imports, no event loop); it ends with os._exit."""
    code = 1
    try:
        _detach(seq_fd, result_fd)
        payload = encode()
        seq = _read_seq(seq_fd)
        if seq is None:
            os.write(result_fd, b"abandoned")
        elif not _parent_there(result_fd):  # (re-exec'd while this encoded: its new image
            os.write(result_fd, b"parent gone")  # may be writing a checkpoint of its own)
        else:
            size = checkpoint.write(directory, seq, payload, lambda: _parent_there(result_fd))
            os.write(result_fd, b"ok %d" % size if size else b"parent gone")
        code = 0
    except BaseException as exc:  # reported, never raised into the parent's code
        with contextlib.suppress(BaseException):
            os.write(result_fd, f"{type(exc).__name__}: {exc}".encode()[:500])
    finally:
        os._exit(code)


def _detach(*keep: int) -> None:
    """No garbage collection (its passes would write to every object's header, copying
    the parent's pages, and could finalize an inherited socket onto a descriptor number
    reused for the file), signals back to their defaults (the parent's handlers write to
    its loop), every inherited descriptor but the two pipes closed, and the lowest CPU
    priority."""
    gc.disable()
    signal.set_wakeup_fd(-1)
    for signum in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError, TypeError):
            if callable(signal.getsignal(signum)):
                signal.signal(signum, signal.SIG_DFL)
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))
    with contextlib.suppress(OSError):
        os.nice(NICENESS)


def _read_seq(fd: int) -> int | None:
    data = b""
    while chunk := os.read(fd, 64):
        data += chunk
    return int(data) if data.strip() else None


def _parent_there(result_fd: int) -> bool:
    """The parent still holds the result pipe's other end (closed if it died or exec'd)."""
    poller = select.poll()
    poller.register(result_fd, select.POLLOUT)
    return not any(event & select.POLLERR for _, event in poller.poll(0))
