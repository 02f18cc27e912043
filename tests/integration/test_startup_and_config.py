"""`beanpod serve` start-up as a real process: each failure names what failed and exits
with its documented status; settings from flags, BEANPOD_* variables and a TOML file;
log formats and levels; an event log that fails while running is counted, told once."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "beanpod", "serve", *args], capture_output=True,
                          text=True, timeout=30, env={**os.environ, **(env or {})})  # fmt: skip


def busy_port() -> tuple[socket.socket, int]:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder, holder.getsockname()[1]


def test_unusable_wal_directory_is_named_with_exit_4(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = serve("-p", "0", "-b", str(tmp_path / "file" / "wal"))
    assert out.returncode == 4
    assert f"cannot use the WAL directory {tmp_path / 'file' / 'wal'}: " in out.stderr
    assert "cannot listen" not in out.stderr


def test_unusable_event_log_directory_refuses_to_start_with_exit_5(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = serve("-p", "0", "--events", str(tmp_path / "file" / "events"))
    assert out.returncode == 5
    assert f"cannot use the event-log directory {tmp_path / 'file' / 'events'}: " in out.stderr


def test_busy_ports_name_their_listener_with_exit_3() -> None:
    holder, port = busy_port()
    try:
        out = serve("-p", str(port))
        assert out.returncode == 3
        assert f"cannot listen on 127.0.0.1:{port} (beanstalkd): " in out.stderr
        out = serve("-p", "0", "--workq-port", str(port))
        assert out.returncode == 3
        assert f"cannot listen on 127.0.0.1:{port} (Workq): " in out.stderr
    finally:
        holder.close()


def test_flags_win_over_environment_over_config_file(tmp_path: Path) -> None:
    config = tmp_path / "beanpod.toml"
    config.write_text('port = 12345\nbinlog-dir = "/srv/wal"\nfsync-ms = 5\nsegment-size = 8192\n')
    out = serve("--config", str(config), "-f", "7", "--print-config",
                env={"BEANPOD_PORT": "2222", "BEANPOD_SEGMENT_SIZE": "9000"})  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "port = 2222  # environment (BEANPOD_PORT)" in lines
    assert 'binlog-dir = "/srv/wal"  # config file' in lines
    assert "fsync-ms = 7  # flag" in lines
    assert "segment-size = 9000  # environment (BEANPOD_SEGMENT_SIZE)" in lines
    assert "max-job-size = 65535  # default" in lines


def test_config_file_errors_are_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 'blue'\n")
    out = serve("--config", str(bad))
    assert out.returncode == 2 and "unknown setting 'colour'" in out.stderr
    bad.write_text("port = [\n")
    out = serve("--config", str(bad))
    assert out.returncode == 2 and "is not valid TOML" in out.stderr


def test_json_log_lines_and_one_level_per_v() -> None:
    server = SubprocessServer(["--log-format", "json", "-V"]).start()
    try:
        client = RawClient(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        assert client.cmd(b"use x\r\n") == b"USING x\r\n"
        client.close()
        deadline = time.monotonic() + 5
        while not any("closed" in line for line in server.log) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        server.stop()
    records = [json.loads(line) for line in server.log]
    assert {"ts", "level", "logger", "msg"} <= set(records[0])
    assert any(r["msg"].startswith("beanpod ") and "listening on" in r["msg"] for r in records)
    assert any(r["level"] == "debug" and r["msg"].endswith(" open") for r in records)
    quiet = SubprocessServer().start()
    quiet.stop()
    assert not any(" DEBUG " in line for line in quiet.log)


def test_failing_event_log_is_counted_and_told_once(tmp_path: Path) -> None:
    events = tmp_path / "events"
    server = SubprocessServer(["--events", str(events)]).start()
    try:
        shutil.rmtree(events)
        events.write_text("")  # the directory is gone: every write now fails
        client = RawClient(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        for _ in range(5):  # five loop turns, five failed flushes
            assert client.cmd(b"put 0 0 60 1\r\nx\r\n").startswith(b"INSERTED")
        stats = client.cmd(b"stats\r\n")
        client.close()
    finally:
        server.stop()
    dropped = int(stats.split(b"events-dropped: ")[1].split(b"\n")[0])
    assert dropped >= 4  # the last put's event may still be buffered
    assert sum("cannot write the event log" in line for line in server.log) == 1
