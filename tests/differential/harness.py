"""Run sessions against servers, normalise the replies and compare transcripts."""

from __future__ import annotations

import hashlib
import re
import select
import socket
import threading
import time
from dataclasses import dataclass, field

from tests.differential.model import (
    Close,
    Closed,
    HalfClose,
    NoReply,
    Read,
    Send,
    Session,
    Sleep,
    Step,
)
from tests.differential.servers import HOST, Server, ServerPool

MAX_LINE = 64 * 1024
BODY_PREFIXES = (b"OK ", b"RESERVED ", b"FOUND ")
#: ``stats`` keys whose values legitimately differ between servers.
NORMALISED_STATS_KEYS = frozenset(
    {
        b"pid",
        b"version",
        b"rusage-utime",
        b"rusage-stime",
        b"uptime",
        b"id",
        b"hostname",
        b"os",
        b"platform",
    }
)
PRELUDE = b"use {t}\r\nwatch {t}\r\nignore default\r\n"
_PLACEHOLDER = re.compile(rb"\{(t|j)(\d*)\}")
_ID_REPLY = re.compile(rb"^(INSERTED|BURIED|RESERVED|FOUND) (\d+)(?=[ \r])")


@dataclass
class Entry:
    """What one step sent and what came back."""

    desc: str
    replies: list[bytes] = field(default_factory=list)


Transcript = list[Entry]


def _short(data: bytes, limit: int = 160) -> str:
    text = repr(data)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(data)} bytes)"


def tube_base(session_id: str) -> str:
    return "x" + hashlib.sha1(session_id.encode()).hexdigest()[:12]


class Conn:
    """A client connection with a small reply framer."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=5.0)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes, chunk: int | None, pause: float) -> str | None:
        try:
            if chunk is None:
                self.sock.sendall(data)
            else:
                for i in range(0, len(data), chunk):
                    self.sock.sendall(data[i : i + chunk])
                    time.sleep(pause)
        except OSError as exc:
            return f"<send failed: {type(exc).__name__}>"
        return None

    def _fill(self, deadline: float) -> bool:
        """Read more bytes; False on timeout or EOF."""
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([self.sock], [], [], remaining)
        if not ready:
            return False
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, ConnectionAbortedError):
            data = b""
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def read_reply(self, timeout: float) -> bytes:
        """One complete reply, or a ``<...>`` marker describing what went wrong."""
        deadline = time.monotonic() + timeout
        while b"\r\n" not in self.buf:
            if len(self.buf) > MAX_LINE:
                return self._fail(b"<line too long>")
            if not self._fill(deadline):
                return self._fail(b"<eof>" if self.eof else b"<timeout>")
        end = self.buf.index(b"\r\n") + 2
        line = self.buf[:end]
        total = end
        if line.startswith(BODY_PREFIXES):
            try:
                total = end + int(line.split()[-1]) + 2
            except ValueError:
                total = end
        while len(self.buf) < total:
            if not self._fill(deadline):
                return self._fail(b"<eof>" if self.eof else b"<timeout>")
        reply, self.buf = self.buf[:total], self.buf[total:]
        if total > end and not reply.endswith(b"\r\n"):
            return b"<bad framing>" + reply
        return reply

    def _fail(self, marker: bytes) -> bytes:
        partial, self.buf = self.buf, b""
        return marker + (b" partial=" + repr(partial).encode() if partial else b"")

    def expect_silence(self, ms: int) -> list[bytes]:
        deadline = time.monotonic() + ms / 1000
        while self._fill(deadline):
            pass
        if self.buf or self.eof:
            got, self.buf = self.buf, b""
            return [b"<unexpected> " + repr(got).encode() + (b" <eof>" if self.eof else b"")]
        return []

    def expect_closed(self, timeout: float) -> list[bytes]:
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            pass
        extra = [b"<data> " + repr(self.buf).encode()] if self.buf else []
        self.buf = b""
        return [*extra, b"<closed>" if self.eof else b"<still open>"]


class Runner:
    """Runs one session on one server and records its transcript."""

    def __init__(self, session: Session, server: Server) -> None:
        self.session = session
        self.server = server
        self.base = tube_base(session.id)
        self.conns: dict[str, Conn] = {}
        self.job_ids: list[bytes] = []
        self.transcript: Transcript = []

    def expand(self, data: bytes) -> bytes:
        def sub(m: re.Match[bytes]) -> bytes:
            kind, num = m.group(1), m.group(2)
            if kind == b"t":
                return (self.base + (f"_{int(num)}" if num else "")).encode()
            index = int(num) - 1
            if not num or index >= len(self.job_ids):
                return b"<no-job-" + num + b">"
            return self.job_ids[index]

        return _PLACEHOLDER.sub(sub, data)

    def _record_ids(self, replies: list[bytes]) -> None:
        for reply in replies:
            m = re.match(rb"^(?:INSERTED|BURIED) (\d+)\r\n$", reply)
            if m:
                self.job_ids.append(m.group(1))

    def conn(self, name: str) -> Conn:
        c = self.conns.get(name)
        if c is None:
            c = self.conns[name] = Conn(self.server.port)
            if not self.session.fresh:
                err = c.send(self.expand(PRELUDE), None, 0)
                replies = [err.encode()] if err else [c.read_reply(5.0) for _ in range(3)]
                self.transcript.append(Entry(f"[{name}] prelude (use/watch {{t}})", replies))
        return c

    def step(self, step: Step) -> None:
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
            self.transcript.append(Entry(f"sleep {step.seconds}s"))
            return
        conn = self.conn(step.conn)
        if isinstance(step, Send):
            data = self.expand(step.data)
            split = f" in chunks of {step.chunk}" if step.chunk else ""
            entry = Entry(f"[{step.conn}] send{split} {_short(step.data)}")
            err = conn.send(data, step.chunk, step.pause)
            if err:
                entry.replies.append(err.encode())
            entry.replies += self._read(conn, step.replies, step.timeout)
        elif isinstance(step, Read):
            entry = Entry(f"[{step.conn}] read {step.replies}")
            entry.replies += self._read(conn, step.replies, step.timeout)
        elif isinstance(step, NoReply):
            entry = Entry(f"[{step.conn}] expect no reply for {step.ms} ms")
            entry.replies += conn.expect_silence(step.ms)
        elif isinstance(step, HalfClose):
            conn.sock.shutdown(socket.SHUT_WR)
            time.sleep(step.settle)
            entry = Entry(f"[{step.conn}] half-close")
        elif isinstance(step, Close):
            conn.close()
            del self.conns[step.conn]
            time.sleep(step.settle)
            entry = Entry(f"[{step.conn}] close")
        else:
            assert isinstance(step, Closed)
            entry = Entry(f"[{step.conn}] expect server to close")
            entry.replies += conn.expect_closed(step.timeout)
        self._record_ids(entry.replies)
        self.transcript.append(entry)

    def _read(self, conn: Conn, n: int, timeout: float) -> list[bytes]:
        out: list[bytes] = []
        for _ in range(n):
            reply = conn.read_reply(timeout)
            out.append(reply)
            if reply.startswith(b"<"):
                break
        return out

    def run(self) -> Transcript:
        try:
            for step in self.session.steps:
                self.step(step)
        except Exception as exc:  # recorded so the other side's transcript is still shown
            self.transcript.append(Entry(f"harness error: {type(exc).__name__}: {exc}"))
        finally:
            for c in self.conns.values():
                c.close()
            self.conns.clear()
        if not self.session.fresh:
            self.transcript = [
                Entry(e.desc, [normalise_ids(r, self.job_ids) for r in e.replies])
                for e in self.transcript
            ]
        self.transcript = [
            Entry(e.desc, [normalise_stats(r) for r in e.replies]) for e in self.transcript
        ]
        return self.transcript


def _rebuild_ok(body: bytes) -> bytes:
    return b"OK %d\r\n%s\r\n" % (len(body), body)


def _split_ok(reply: bytes) -> bytes | None:
    if not reply.startswith(b"OK "):
        return None
    _, _, rest = reply.partition(b"\r\n")
    return rest[:-2]


def normalise_ids(reply: bytes, job_ids: list[bytes]) -> bytes:
    """Replace server job ids by ``#<ordinal>`` of this session's puts."""

    def ordinal(job_id: bytes) -> bytes:
        try:
            return b"#%d" % (job_ids.index(job_id) + 1)
        except ValueError:
            return b"#unknown-" + job_id

    m = _ID_REPLY.match(reply)
    if m:
        return reply[: m.start(2)] + ordinal(m.group(2)) + reply[m.end(2) :]
    body = _split_ok(reply)
    if body is not None and body.startswith(b"---\nid: "):
        line_end = body.index(b"\n", 8)
        return _rebuild_ok(b"---\nid: " + ordinal(body[8:line_end]) + body[line_end:])
    return reply


def normalise_stats(
    reply: bytes, keys: frozenset[bytes] = NORMALISED_STATS_KEYS, mark: bytes = b"<normalised>"
) -> bytes:
    """Blank the values of the server-specific ``stats`` keys, recompute ``OK <n>``."""
    body = _split_ok(reply)
    if body is None or b"\npid: " not in body:
        return reply
    lines = body.split(b"\n")
    for i, line in enumerate(lines):
        key, sep, _ = line.partition(b": ")
        if sep and key in keys:
            lines[i] = key + b": " + mark
    return _rebuild_ok(b"\n".join(lines))


def run_session(
    session: Session, pool: ServerPool, kind: str, role: str = "candidate"
) -> Transcript:
    """Run ``session`` against a server of ``kind`` (shared or fresh, per the session)."""
    if session.fresh:
        server = pool.fresh(kind, session.max_job_size)
        try:
            return Runner(session, server).run()
        finally:
            pool.release(server)
    return Runner(session, pool.shared(role, kind, session.max_job_size)).run()


def run_pair(
    session: Session, pool: ServerPool, reference: str, candidate: str
) -> tuple[Transcript, Transcript]:
    """Run the session on both servers concurrently (halves the time of slow sessions)."""
    results: dict[str, Transcript] = {}
    errors: list[BaseException] = []

    def work(role: str, kind: str) -> None:
        try:
            results[role] = run_session(session, pool, kind, role)
        except BaseException as exc:  # server start failures are re-raised below
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=("reference", reference)),
        threading.Thread(target=work, args=("candidate", candidate)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results["reference"], results["candidate"]


def format_diff(
    session: Session, ref_name: str, ref: Transcript, cand_name: str, cand: Transcript
) -> str:
    """Both transcripts, step by step, with differing steps marked."""
    width = max(len(ref_name), len(cand_name)) + 1
    out = [f"session {session.id!r} differs (fresh={session.fresh}, -z {session.max_job_size})"]
    if session.doc:
        out.append(f"  ({session.doc})")
    for i in range(max(len(ref), len(cand))):
        r = ref[i] if i < len(ref) else Entry("<missing>")
        c = cand[i] if i < len(cand) else Entry("<missing>")
        mark = "   " if r == c else ">>>"
        out.append(f"{mark} step {i}: {r.desc}")
        if r.desc != c.desc:
            out.append(f"        {cand_name} step: {c.desc}")
        out.append(f"        {ref_name + ':':<{width}} {r.replies!r}")
        out.append(f"        {cand_name + ':':<{width}} {c.replies!r}")
    return "\n".join(out)


def first_difference(ref: Transcript, cand: Transcript) -> tuple[str, bytes, bytes] | None:
    """(step description, reference bytes, candidate bytes) of the first differing step."""
    for i in range(max(len(ref), len(cand))):
        r = ref[i] if i < len(ref) else Entry("<missing>")
        c = cand[i] if i < len(cand) else Entry("<missing>")
        if r != c:
            return r.desc, b"".join(r.replies), b"".join(c.replies)
    return None
