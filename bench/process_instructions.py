"""User-space instructions per depth-1 request of the whole server process, over a real
socket, counted by cachegrind, for beanpod and beanstalkd 1.12 in the same run.

Each server runs under `valgrind --tool=cachegrind` twice: once answering N requests,
once 2N, each sent by one connection that waits for every reply (as greenstalk and
most beanstalkd clients do). The difference of the two totals divided by N is the cost
of one request, start-up and shutdown excluded. `put` is one put; `prd` is one
put+reserve+delete (`reserve-with-timeout 0`), counted as one request of three commands.
The in-process `bench.instructions` stays for finer work on the engine.

    python -m bench.process_instructions [--work put,prd] [--requests 4000]
        [--servers beanpod,beanstalkd] [--beanpod-cmd 'python -m beanpod serve'] [--wal]
        [--src OTHER_CHECKOUT/src] [--configs lean,default]

beanpod runs as `<this python> -m beanpod serve` with PYTHONPATH=<repo>/src, so the build
in src/ is measured (compiled modules where they were built in place, see
docs/performance.md); BEANPOD_PURE=1 in the environment measures the pure-Python modules
of the same tree. `--configs` picks beanpod's listeners: `lean` (the default) runs it with
`--workq-port off` and BEANPOD_HTTP=off, beanstalkd alone; `default` with its own
listeners on, as `beanpod serve` starts without flags (Workq and HTTP, on free ports:
`--workq-port 0 --http 127.0.0.1:0`); `--configs lean,default` counts both in one run.
Needs valgrind; each run takes ~10-60 s.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.servers import workq_off

REPO = Path(__file__).resolve().parent.parent
BODY = b"x" * 100
PUT = b"put 1024 0 60 100\r\n" + BODY + b"\r\n"
START_TIMEOUT = 60.0  # valgrind starts a Python server slowly


def _read_reply(sock: socket.socket, buf: bytearray, body: bool) -> bytes:
    """One reply line (and its body when `body`), from `buf` refilled by `sock`."""
    while True:
        end = buf.find(b"\r\n")
        if end >= 0:
            line = bytes(buf[:end])
            need = end + 2
            if body and line.startswith(b"RESERVED "):
                need += int(line.rsplit(b" ", 1)[1]) + 2
            if len(buf) >= need:
                del buf[:need]
                return line
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("the server closed the connection")
        buf += chunk


def _expect(line: bytes, prefix: bytes) -> None:
    if not line.startswith(prefix):
        raise SystemExit(f"expected {prefix!r}, got {line[:80]!r}")


def _drive(port: int, work: str, requests: int) -> None:
    """Send `requests` depth-1 requests of kind `work` on one connection."""
    buf = bytearray()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(requests):
            sock.sendall(PUT)
            _expect(_read_reply(sock, buf, False), b"INSERTED ")
            if work == "put":
                continue
            sock.sendall(b"reserve-with-timeout 0\r\n")
            line = _read_reply(sock, buf, True)
            _expect(line, b"RESERVED ")
            sock.sendall(b"delete " + line.split()[1] + b"\r\n")
            _expect(_read_reply(sock, buf, False), b"DELETED")


def _wait_ready(proc: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with status {proc.returncode} at start")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(b"list-tubes\r\n")
                if sock.recv(4096).startswith(b"OK "):
                    return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"server not ready after {START_TIMEOUT} s")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _count(argv: list[str], env: dict[str, str], work: str, requests: int) -> int:
    """Instructions of one server run answering `requests` requests; `{wal}` in `argv`
    becomes a fresh WAL directory of this run."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-pi-"))
    out = tmp / "cachegrind.out"
    port = _free_port()
    (tmp / "wal").mkdir()
    argv = [str(tmp / "wal") if arg == "{wal}" else arg for arg in argv]
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
           *argv, "-l", "127.0.0.1", "-p", str(port)]  # fmt: skip
    log = open(tmp / "server.log", "w+b")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_ready(proc, port)
        _drive(port, work, requests)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        log.seek(0)
        text = log.read().decode(errors="replace")
        log.close()
    match = re.search(r"I\s+refs:\s+([\d,]+)", text)
    if match is None:
        raise SystemExit(f"no instruction count from cachegrind:\n{text[-2000:]}")
    shutil.rmtree(tmp, ignore_errors=True)
    return int(match[1].replace(",", ""))


def _server(name: str, args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of server `name` (beanstalkd or beanpod:CONFIG)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    if name == "beanstalkd":
        return [args.beanstalkd, *(["-b", "{wal}"] if args.wal else [])], env
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(args.src), env.get("PYTHONPATH")) if p)
    wal = ["-b", "{wal}"] if args.wal else []
    if name == "beanpod:default":  # its own listeners on, each on a free port
        env.pop("BEANPOD_HTTP", None)
        listeners = ["--workq-port", "0", "--http", "127.0.0.1:0"]
    else:
        env["BEANPOD_HTTP"] = "off"
        listeners = ["--workq-port", workq_off(sys.executable, {"PYTHONPATH": env["PYTHONPATH"]})]
    return [*shlex.split(args.beanpod_cmd), *listeners, *wal], env


def _runs(args: argparse.Namespace) -> list[str]:
    """The servers to count: beanpod once per configuration, as `beanpod:CONFIG`."""
    configs = args.configs.split(",")
    unknown = sorted(set(configs) - {"lean", "default"})
    if unknown:
        raise SystemExit(f"--configs: unknown {', '.join(unknown)} (known: lean, default)")
    out: list[str] = []
    for name in args.servers.split(","):
        out += [f"beanpod:{c}" for c in configs] if name == "beanpod" else [name]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="put,prd")
    parser.add_argument("--requests", type=int, default=4000, help="N (runs N and 2N)")
    parser.add_argument("--servers", default="beanpod,beanstalkd")
    parser.add_argument("--beanstalkd", default="beanstalkd")
    parser.add_argument("--src", type=Path, default=REPO / "src")
    parser.add_argument("--beanpod-cmd", default=f"{sys.executable} -m beanpod serve")
    parser.add_argument("--wal", action="store_true", help="keep a WAL (-b, fresh per run)")
    parser.add_argument("--configs", default="lean", help="beanpod's listeners: lean, default")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed: apt-get install -y valgrind")
    n = args.requests
    for name in _runs(args):
        argv, env = _server(name, args)
        for work in args.work.split(","):
            per = (_count(argv, env, work, 2 * n) - _count(argv, env, work, n)) / n
            print(f"{name:15s} {work:4s} {per:9,.0f} instructions per request", flush=True)


if __name__ == "__main__":
    main()
