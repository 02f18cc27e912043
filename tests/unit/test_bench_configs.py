"""bench.process_instructions --configs: beanpod counted lean and with its default listeners."""

from __future__ import annotations

import argparse
import sys

import pytest
from bench import process_instructions as pi


def _args(configs: str, servers: str = "beanpod,beanstalkd") -> argparse.Namespace:
    return argparse.Namespace(
        configs=configs, servers=servers, beanstalkd="beanstalkd", src=pi.REPO / "src",
        beanpod_cmd=f"{sys.executable} -m beanpod serve", wal=False,
    )  # fmt: skip


def test_both_configurations_are_counted_beside_beanstalkd() -> None:
    assert pi._runs(_args("lean,default")) == ["beanpod:lean", "beanpod:default", "beanstalkd"]
    assert pi._runs(_args("lean")) == ["beanpod:lean", "beanstalkd"]


def test_default_runs_its_own_listeners_on_free_ports_and_lean_turns_them_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BEANPOD_HTTP", "off")  # the caller's environment does not leak in
    argv, env = pi._server("beanpod:default", _args("default"))
    assert argv[-4:] == ["--workq-port", "0", "--http", "127.0.0.1:0"]
    assert "BEANPOD_HTTP" not in env
    argv, env = pi._server("beanpod:lean", _args("lean"))
    assert argv[-2:] == ["--workq-port", "off"] and env["BEANPOD_HTTP"] == "off"


def test_an_unknown_configuration_is_named() -> None:
    with pytest.raises(SystemExit, match="--configs: unknown fast"):
        pi._runs(_args("lean,fast"))
