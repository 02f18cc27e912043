"""An installed beanpod serves a real beanstalkd client: run by scripts/wheels with the
Python of a fresh venv holding a wheel (greenstalk comes with beanpod), as

    python scripts/wheel_smoke.py /path/to/venv/bin/beanpod

It starts `beanpod serve` on free loopback ports (Workq and HTTP on), checks that the log
names the compiled build, puts, reserves and deletes a job with greenstalk, asks the HTTP
listener's /healthz, and stops the server with SIGTERM (exit status 0 expected)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request

import greenstalk

TIMEOUT_S = 60  # a cold start of a fresh venv on a busy machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_http(server: subprocess.Popen[str]) -> tuple[str, str]:
    """(the first log line, the HTTP listener's URL) once the server says it listens."""
    assert server.stderr is not None
    first = ""
    for line in server.stderr:
        first = first or line.strip()
        found = re.search(r"listening on (http://\S+) \(HTTP\)", line)
        if found:
            return first, found.group(1)
    raise SystemExit(f"wheel smoke: the server stopped before listening; it said {first!r}")


def check(beanpod: str) -> None:
    port = free_port()
    argv = [beanpod, "serve", "-l", "127.0.0.1", "-p", str(port), "--workq-port", "0",
            "--http", "127.0.0.1:0"]  # fmt: skip
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(TIMEOUT_S, server.kill)
    watchdog.start()
    try:
        first, url = wait_for_http(server)
        if "(compiled build)" not in first:
            raise SystemExit(f"wheel smoke: not the compiled build: {first!r}")
        where = ("127.0.0.1", port)
        with greenstalk.Client(where, encoding=None, use="wheel", watch="wheel") as client:
            job_id = client.put(b"from a wheel")
            job = client.reserve(timeout=5)
            if (job.id, job.body) != (job_id, b"from a wheel"):
                raise SystemExit(f"wheel smoke: reserved {job.id} {job.body!r}")
            client.delete(job)
            if client.stats_tube("wheel")["total-jobs"] != 1:
                raise SystemExit("wheel smoke: stats-tube does not count the job")
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as reply:
            if reply.status != 200:
                raise SystemExit(f"wheel smoke: /healthz answered {reply.status}")
        server.send_signal(signal.SIGTERM)
        if server.wait(TIMEOUT_S) != 0:
            raise SystemExit(f"wheel smoke: exit status {server.returncode} after SIGTERM")
    finally:
        watchdog.cancel()
        if server.poll() is None:
            server.kill()
            server.wait()
    print(f"    put/reserve/delete over {port}, /healthz 200, SIGTERM exit 0: {first}")


if __name__ == "__main__":
    check(sys.argv[1])
