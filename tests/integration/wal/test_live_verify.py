"""A healthy live log verifies clean, and kill -9 of an idle restarted server raises no
torn-tail alarm (its preallocated spare segment holds no records yet, only zeros); real
damage is still reported. Real processes, real kill -9."""

from __future__ import annotations

import socket
from pathlib import Path

from click.testing import CliRunner

from beanpod.cli import main
from tests.support.servers import SubprocessServer


def serve(wal: Path) -> SubprocessServer:
    return SubprocessServer(["-b", str(wal), "--workq-port", "off"]).start()


def put(server: SubprocessServer, count: int) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"put 0 0 60 5\r\nhello\r\n" * count)
        data = b""
        while data.count(b"\r\n") < count:
            data += sock.recv(65536)
        assert data.count(b"INSERTED") == count


def stats(server: SubprocessServer) -> dict[str, str]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"stats\r\n")
        head = b""
        while b"\r\n" not in head:
            head += sock.recv(65536)
        size = int(head.split(b"\r\n")[0].split()[1])
        data = head
        while len(data) < len(head.split(b"\r\n")[0]) + 2 + size + 2:
            data += sock.recv(65536)
    lines = data.decode().split("\r\n", 1)[1].splitlines()[1:]
    return dict(line.split(": ", 1) for line in lines if ": " in line)


def verify(wal: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["wal", "verify", str(wal)])
    return result.exit_code, result.output


def test_idle_restarted_server_verifies_clean_and_survives_kill_9(tmp_path: Path) -> None:
    wal = tmp_path / "wal"
    first = serve(wal)
    put(first, 20)
    first.kill()
    idle = serve(wal)  # restarted, never written to: its spare segment is all zeros
    try:
        code, output = verify(wal)  # while it runs
        assert code == 0, output
        assert "torn" not in output and "CORRUPT" not in output and "wrong magic" not in output
        assert "20 jobs" in output
    finally:
        idle.kill()
    assert not [line for line in idle.log if "WARNING" in line or "torn" in line], idle.log
    third = serve(wal)
    try:
        assert stats(third)["current-jobs-ready"] == "20"
        assert not [line for line in third.log if "torn" in line or "WARNING" in line], third.log
    finally:
        third.kill()
    code, output = verify(wal)
    assert code == 0 and "torn" not in output, output


def test_real_damage_is_still_reported(tmp_path: Path) -> None:
    wal = tmp_path / "wal"
    server = serve(wal)
    put(server, 5)
    put(server, 5)
    server.stop()
    segment = min(wal.glob("*.wal"))
    data = bytearray(segment.read_bytes())
    data[data.index(b"hello") + 1] ^= 0xFF  # a record in the middle fails its checksum
    segment.write_bytes(bytes(data))
    code, output = verify(wal)
    assert code == 1 and "CORRUPT" in output and "checksum" in output, output
