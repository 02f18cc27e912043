"""Servers for qless-core's suite: a fresh beanpod per test, one Redis for the control;
xfail (strict) for the tests docs/qless.md lists as deliberate differences."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.differential.qless_core.beanpod_server import HOST, ServerSupply
from tests.differential.qless_core.suite import LISTED, NOT_APPLICABLE, suite_dir, table

REDIS_SERVER = shutil.which("redis-server")


def _control_missing() -> str | None:
    """Why the Redis control cannot run, or None."""
    suite = suite_dir()
    if REDIS_SERVER is None:
        return "redis-server is not installed (apt-get install redis-server): no control run"
    if suite is None or not (suite.parent / "qless.lua").is_file():
        return "qless.lua is missing beside QLESS_CORE_DIR (built by qless-core's Makefile)"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    listed, not_applicable = table(LISTED), table(NOT_APPLICABLE)
    missing = _control_missing()
    for item in items:
        case = getattr(item, "cls", None)
        core_file = getattr(case, "qless_core_file", None)
        if case is None or core_file is None:
            continue
        on_redis = case.__name__.startswith("Redis")
        name = f"{core_file}::{case.__name__.removeprefix('Redis' if on_redis else 'Beanpod')}"
        name += f"::{item.name}"
        if name in not_applicable:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {not_applicable[name]}"))
        elif on_redis and missing:
            item.add_marker(pytest.mark.skip(reason=missing))
        elif not on_redis and name in listed:
            item.add_marker(pytest.mark.xfail(strict=True, reason=listed[name]))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _redis() -> Iterator[str | None]:
    """A throwaway redis-server; yields its URL (None when the control cannot run)."""
    if _control_missing() is not None or REDIS_SERVER is None:
        yield None
        return
    port = _free_port()
    proc = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((HOST, port), 0.2):
                break
            time.sleep(0.01)
        yield f"redis://{HOST}:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session", autouse=True)
def qless_core_servers(monkeypatch_session: pytest.MonkeyPatch) -> Iterator[None]:
    from tests.differential.qless_core import shim  # needs redis-py: only when it runs

    suite = suite_dir()
    shim.core_dir = None if suite is None else suite.parent
    shim.supply = ServerSupply()
    try:
        with _redis() as url:
            if url is not None:
                monkeypatch_session.setenv("REDIS_URL", url)
            yield
    finally:
        shim.supply.close()
        shim.supply = None


@pytest.fixture(scope="session")
def monkeypatch_session() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp
