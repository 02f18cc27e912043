"""`beanpod serve` opens its ports before the heavy imports: the argv guess and the
hand-over of the early sockets."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from beanpod.cli import serve as serve_module
from beanpod.cli.early import listen_targets
from beanpod.server import app as app_module
from beanpod.server import early_listen
from beanpod.server.config import ServerConfig
from beanpod.server.ports import wanted


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
    for name in ("LISTEN", "PORT", "WORKQ_PORT", "HTTP"):
        monkeypatch.delenv("BEANPOD_" + name, raising=False)
    assert listen_targets(argv)["beanstalkd"] == expected


@pytest.mark.parametrize(
    ("argv", "workq", "http"),
    [
        (["serve"], ("127.0.0.1", 9922), ("127.0.0.1", 11380)),
        (["serve", "-p", "0"], ("127.0.0.1", 0), ("127.0.0.1", 11380)),
        (["serve", "--workq-port", "0", "--http", "off"], ("127.0.0.1", 0), None),
        (["serve", "--workq-port=OFF", "--http=[::1]:9000"], None, ("::1", 9000)),
        (["serve", "-l", "unix:/b", "--http", "localhost:1"], ("unix:/b.workq", 9922), None),
    ],
)  # fmt: skip
def test_the_workq_and_http_ports_are_opened_alongside(
    argv: list[str], workq: tuple[str, int] | None, http: tuple[str, int] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for name in ("LISTEN", "PORT", "WORKQ_PORT", "HTTP"):
        monkeypatch.delenv("BEANPOD_" + name, raising=False)
    targets = listen_targets(argv)
    assert targets.get("Workq") == workq and targets.get("HTTP") == http


@pytest.mark.parametrize(
    "args",
    [[], ["-p", "0"], ["-p", "4000", "--workq-port", "4001"],
     ["--workq-port", "0", "--http", "off"], ["--workq-port=OFF", "--http=[::1]:9000"],
     ["-l", "unix:/tmp/b.sock", "--http", "localhost:1"]],
)  # fmt: skip
def test_the_early_start_opens_what_the_server_wants(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The argv guess and click's reading of the same flags give the same listeners."""
    for name in ("LISTEN", "PORT", "WORKQ_PORT", "HTTP"):
        monkeypatch.delenv("BEANPOD_" + name, raising=False)
    configs: list[ServerConfig] = []
    monkeypatch.setattr(app_module, "serve", configs.append)  # the config, not a server
    monkeypatch.setattr(serve_module, "setup_logging", lambda *_: None)
    serve_module.serve.main(args, standalone_mode=False)
    server = {r: w for r, w in wanted(configs[0]).items() if early_listen.bindable(w[0])}
    assert listen_targets(["serve", *args]) == server


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
        ["serve", "--workq-port", "seven"],
        ["serve", "--http", "nowhere"],
    ],
)
def test_anything_unsure_leaves_the_listener_to_the_server(argv: list[str]) -> None:
    assert listen_targets(argv).get("Workq") is None
    assert "HTTP" not in listen_targets(argv)
    if "--workq-port" not in argv and "--http" not in argv:
        assert listen_targets(argv) == {}


def test_environment_supplies_the_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEANPOD_LISTEN", "127.0.0.2")
    monkeypatch.setenv("BEANPOD_PORT", "4002")
    monkeypatch.setenv("BEANPOD_WORKQ_PORT", "4004")
    monkeypatch.setenv("BEANPOD_HTTP", "127.0.0.3:4005")
    assert listen_targets(["serve"]) == {"beanstalkd": ("127.0.0.2", 4002),
                                         "Workq": ("127.0.0.2", 4004),
                                         "HTTP": ("127.0.0.3", 4005)}  # fmt: skip
    assert listen_targets(["serve", "-p", "4003"])["beanstalkd"] == ("127.0.0.2", 4003)


def test_the_server_claims_its_sockets_and_others_are_closed() -> None:
    early_listen.bind_early("beanstalkd", "127.0.0.1", 0)
    early_listen.bind_early("Workq", "127.0.0.1", 0)
    early_listen.bind_early("HTTP", "127.0.0.2", 0)
    early_listen.listen_all()
    claimed = early_listen.claim({"beanstalkd": ("127.0.0.1", 0), "Workq": ("127.0.0.1", 0),
                                  "HTTP": ("127.0.0.2", 80)})  # fmt: skip
    assert set(claimed) == {"beanstalkd", "Workq"}  # HTTP's address differs: closed
    for sock in claimed.values():
        with sock, socket.create_connection(sock.getsockname()[:2]):
            pass  # the kernel accepts before anyone calls accept()
    assert early_listen.claim({"HTTP": ("127.0.0.2", 0)}) == {}


def test_a_unix_socket_replaces_a_stale_one(tmp_path: Path) -> None:
    path = str(tmp_path / "b.sock")
    for _ in range(2):  # the second finds the first's file
        early_listen.bind_early("beanstalkd", "unix:" + path, 11300)
        early_listen.listen_all()
        claimed = early_listen.claim({"beanstalkd": ("unix:" + path, 11300)})["beanstalkd"]
        with claimed, socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
