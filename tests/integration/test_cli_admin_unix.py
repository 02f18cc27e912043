"""`-H unix:PATH`: every admin command reaches a `beanpod serve -l unix:PATH` (the CLI and
the server each a process)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from beanpod.cli.admin_errors import EXIT_NOT_FOUND, EXIT_UNREACHABLE


def cli(*args: str, stdin: str = "", code: int = 0) -> str:
    proc = subprocess.run([sys.executable, "-m", "beanpod", *args], input=stdin, text=True,
                          capture_output=True, timeout=60)  # fmt: skip
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout + proc.stderr


@pytest.fixture
def sock(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "beanpod.sock"
    argv = ["serve", "-l", f"unix:{path}", "--workq-port", "0", "--http", "off"]
    proc = subprocess.Popen([sys.executable, "-m", "beanpod", *argv], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not path.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "no socket"
            time.sleep(0.05)
        yield f"unix:{path}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_every_admin_command_over_a_unix_socket(sock: str) -> None:
    at = ("-H", sock)
    assert cli("put", "mail", "-", *at, stdin="hello") == "inserted 1\n"
    assert cli("put", "mail", "--lines", "--delay", "60", *at, stdin="a\nb\n") == (
        "inserted 2\ninserted 3\n"
    )
    assert "current-jobs-ready: 1 " in " ".join(cli("stats", "mail", *at).split())
    assert cli("tubes", *at).split()[-7:] == ["1", "0", "2", "0", "0", "0", "0"]
    assert cli("peek", "1", *at).endswith("body (5 bytes):\nhello\n")
    assert json.loads(cli("peek", "--delayed", "mail", "--json", *at))["id"] == 2
    assert cli("kick", "mail", "1", *at) == "kicked 1\n"
    assert cli("pause", "mail", "30", *at) == "paused mail for 30 s\n"
    assert cli("delete", "2", *at) == "deleted 1\n"
    frame = json.loads(cli("top", "-n", "1", "--json", *at))
    assert [t["tube"] for t in frame["tubes"]] == ["default", "mail"]
    assert cli("drain", "mail", *at) == "drained 2\n"
    assert cli("stats", "nope", *at, code=EXIT_NOT_FOUND) == "Error: no tube 'nope'\n"
    assert "current-connections: 1 " in " ".join(cli("stats", *at).split())  # only this one


def test_a_missing_socket_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "absent.sock"
    out = cli("stats", "-H", f"unix:{path}", code=EXIT_UNREACHABLE)
    assert out == (f"Error: cannot connect to unix:{path}: no such socket; is the server "
                   f"running with -l unix:{path}? (-H unix:PATH names the socket)\n")  # fmt: skip
