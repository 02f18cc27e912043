"""``python -m bench.soak --minutes 30``: a soak run of beanpod under `-b` with mixed
load (producers; consumers that reserve, release, bury, kick and delete) and a kill -9
and restart every --kill-every seconds; it ends by counting the acknowledged jobs lost
(acknowledged put, never acknowledged delete, now missing or changed) and the deleted
jobs that came back. Both must be 0; the exit status is 1 otherwise.

Not for CI (it runs for minutes); see docs/security.md for a recorded run."""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

HOST = "127.0.0.1"


@dataclass
class Ledger:
    """What the server acknowledged, shared by the load threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    # Bodies are kept as 8-byte digests: a 30-minute run acknowledges millions of jobs.
    bodies: dict[int, bytes] = field(default_factory=dict)  # acknowledged puts, live
    # Acknowledged deletes by (id, body): a delete can be acknowledged before its put's
    # reply reaches the producer, and ids of deleted jobs may be used again after a restart.
    deleted: set[tuple[int, bytes]] = field(default_factory=set)
    # Deletes sent but not answered (the server was killed): they may or may not have
    # happened before the kill, so their jobs are neither lost nor kept.
    in_doubt: set[tuple[int, bytes]] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1


def digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=8).digest()


class Conn:
    """A blocking beanstalkd connection that says when the server went away."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=10)
        self.buf = b""

    def call(self, data: bytes) -> bytes:
        self.sock.sendall(data)
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        if line.startswith((b"RESERVED", b"FOUND")):
            size = int(line.split()[2]) + 2
            while len(self.buf) < size:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise ConnectionError("closed")
                self.buf += chunk
            body, self.buf = self.buf[: size - 2], self.buf[size:]
            return line + b"\n" + body
        return line

    def close(self) -> None:
        self.sock.close()


class Server:
    def __init__(self, port: int, wal: str) -> None:
        self.port, self.wal = port, wal
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "beanpod", "serve", "-l", HOST, "-p", str(self.port),
               "--workq-port", "off", "-b", self.wal]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("the server did not come back within 60 s")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _retrying(port: int, stop: threading.Event, work: Callable[[Conn], None]) -> None:
    """Run `work(conn)` until stopped, reconnecting whenever the server went away."""
    while not stop.is_set():
        try:
            conn = Conn(port)
        except OSError:
            time.sleep(0.05)
            continue
        try:
            while not stop.is_set():
                work(conn)
        except (OSError, ConnectionError):
            pass  # killed: what was in flight is unknown, not acknowledged
        finally:
            conn.close()


def producer(port: int, ledger: Ledger, stop: threading.Event, seed: int) -> None:
    r = random.Random(seed)

    def put(conn: Conn) -> None:
        body = b"%d-%s" % (seed, r.randbytes(r.choice([8, 100, 2000])).hex().encode())
        reply = conn.call(b"put %d 0 60 %d\r\n%s\r\n" % (r.randint(0, 9), len(body), body))
        if reply.startswith(b"INSERTED"):
            with ledger.lock:
                ledger.bodies[int(reply.split()[1])] = digest(body)
            ledger.count("put")
        time.sleep(0.001)

    _retrying(port, stop, put)


def consumer(port: int, ledger: Ledger, stop: threading.Event, seed: int) -> None:
    r = random.Random(seed)

    def work(conn: Conn) -> None:
        reply = conn.call(b"reserve-with-timeout 1\r\n")
        if not reply.startswith(b"RESERVED"):
            conn.call(b"kick 100\r\n")
            return
        head, raw = reply.split(b"\n", 1)
        job_id, body = int(head.split()[1]), digest(raw)
        with ledger.lock:
            expected = ledger.bodies.get(job_id)
        if expected is not None and expected != body:
            ledger.count("changed")
        move = r.random()
        if move < 0.1:
            conn.call(b"release %d 5 0\r\n" % job_id)
        elif move < 0.15:
            conn.call(b"bury %d 0\r\n" % job_id)
        elif _delete(conn, ledger, job_id, body):
            with ledger.lock:
                if ledger.bodies.get(job_id) == body:
                    del ledger.bodies[job_id]
                ledger.deleted.add((job_id, body))
            ledger.count("delete")

    _retrying(port, stop, work)


def _delete(conn: Conn, ledger: Ledger, job_id: int, body: bytes) -> bool:
    try:
        return conn.call(b"delete %d\r\n" % job_id) == b"DELETED"
    except (OSError, ConnectionError):
        with ledger.lock:
            ledger.in_doubt.add((job_id, body))
        raise


def verify(port: int, ledger: Ledger) -> tuple[int, int]:
    """(lost, resurrected): acknowledged jobs missing or changed; deleted ones back."""
    conn = Conn(port)
    lost = resurrected = 0
    for job_id, body in ledger.bodies.items():
        if (job_id, body) in ledger.deleted or (job_id, body) in ledger.in_doubt:
            continue
        reply = conn.call(b"peek %d\r\n" % job_id)
        if not reply.startswith(b"FOUND") or digest(reply.split(b"\n", 1)[1]) != body:
            lost += 1
            if lost <= 5:
                print(f"  lost job {job_id}: {reply[:60]!r}, expected {body[:30]!r}")
    for job_id, body in ledger.deleted:
        reply = conn.call(b"peek %d\r\n" % job_id)
        if reply.startswith(b"FOUND") and digest(reply.split(b"\n", 1)[1]) == body:
            resurrected += 1
    conn.close()
    return lost, resurrected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--kill-every", type=float, default=20.0, help="seconds between kill -9")
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--consumers", type=int, default=2)
    args = parser.parse_args()
    wal = tempfile.mkdtemp(prefix="beanpod-soak-")
    server, ledger, stop = Server(_free_port(), wal), Ledger(), threading.Event()
    server.start()
    threads = [threading.Thread(target=producer, args=(server.port, ledger, stop, i))
               for i in range(args.producers)]  # fmt: skip
    threads += [threading.Thread(target=consumer, args=(server.port, ledger, stop, 100 + i))
                for i in range(args.consumers)]  # fmt: skip
    for thread in threads:
        thread.start()
    began, kills = time.monotonic(), 0
    try:
        while time.monotonic() - began < args.minutes * 60:
            time.sleep(min(args.kill_every, max(0.0, began + args.minutes * 60 - time.monotonic())))
            server.kill()
            kills += 1
            server.start()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    server.kill()  # one last crash before counting
    server.start()
    lost, resurrected = verify(server.port, ledger)
    server.stop()
    c = ledger.counts
    print(f"soak: {args.minutes:g} min, {kills} kill -9 + restarts under -b {wal}")
    live = len(ledger.bodies) - len(ledger.deleted & ledger.bodies.items())
    print(
        f"  acknowledged puts {c.get('put', 0)}, deletes {c.get('delete', 0)}, "
        f"live at the end {live}, bodies changed {c.get('changed', 0)}"
    )
    print(
        f"  jobs lost: {lost}   deleted jobs back: {resurrected}   "
        f"deletes in doubt at a kill (not counted either way): {len(ledger.in_doubt)}"
    )
    ok = lost == 0 and resurrected == 0 and not c.get("changed")
    if ok:
        shutil.rmtree(wal, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
