"""`beanpod serve` opens its port before the heavy imports: the argv guess and the
hand-over of the early socket."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from beanpod.cli.early import listen_target
from beanpod.server import early_listen


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["serve"], ("127.0.0.1", 11300)),
        (["serve", "-l", "127.0.0.1", "-p", "4000"], ("127.0.0.1", 4000)),
        (["serve", "--listen=::1", "--port=0"], ("::1", 0)),
        (["serve", "-l", "unix:/tmp/b.sock"], ("unix:/tmp/b.sock", 11300)),
        (["serve", "-p4001", "-VV", "-F", "-b", "/tmp/b", "--clock=manual"], ("127.0.0.1", 4001)),
    ],
)
def test_plain_invocations_are_understood(
    argv: list[str], expected: tuple[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BEANPOD_LISTEN", raising=False)
    monkeypatch.delenv("BEANPOD_PORT", raising=False)
    assert listen_target(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["stats"],
        ["serve", "--config", "x.toml"],
        ["serve", "-h"],
        ["serve", "--print-config"],
        ["serve", "-l", "localhost"],
        ["serve", "-l", "unix:"],
        ["serve", "-p", "70000"],
        ["serve", "-p"],
        ["serve", "--bogus"],
    ],
)
def test_anything_unsure_leaves_the_listener_to_the_server(argv: list[str]) -> None:
    assert listen_target(argv) is None


def test_environment_supplies_the_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEANPOD_LISTEN", "127.0.0.2")
    monkeypatch.setenv("BEANPOD_PORT", "4002")
    assert listen_target(["serve"]) == ("127.0.0.2", 4002)
    assert listen_target(["serve", "-p", "4003"]) == ("127.0.0.2", 4003)


def test_the_server_claims_its_socket_and_others_are_closed() -> None:
    early_listen.listen_early("127.0.0.1", 0)
    early_listen.listen_early("127.0.0.2", 0)
    claimed = early_listen.claim("127.0.0.1", 0)
    assert claimed is not None
    with claimed, socket.create_connection(claimed.getsockname()[:2]):
        pass  # the kernel accepts before anyone calls accept()
    assert early_listen.claim("127.0.0.2", 0) is None  # closed by the first claim


def test_a_unix_socket_replaces_a_stale_one(tmp_path: Path) -> None:
    path = str(tmp_path / "b.sock")
    for _ in range(2):  # the second finds the first's file
        early_listen.listen_early("unix:" + path, 11300)
        claimed = early_listen.claim("unix:" + path, 11300)
        assert claimed is not None
        with claimed, socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
