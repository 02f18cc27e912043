"""The pytest plugin (entry point `pytest11`): fixtures `beanpod_server`,
`beanpod_fresh_server` and `beanpod_server_factory`, and the `beanpod` marker.

- `beanpod_server`: one server for the whole session (per xdist worker), reset before
  each test. `@pytest.mark.beanpod(clock="real", wal=True, unix=True, workq=True,
  max_job_size=N)` gives that test its own server with those options instead
  (`wal=True`: a WAL in the test's tmp_path).
- `beanpod_fresh_server`: a server of the test's own (function scope), marker options
  applied.
- `beanpod_server_factory(**options)`: as many servers as a test wants, each stopped at
  the end of the test.
BEANPOD_TEST_TARGET=beanstalkd runs the same tests against a real beanstalkd.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import pytest

if TYPE_CHECKING:  # the server modules load when a test first asks for a server
    from beanpod.testing.server import BeanpodServer
    from beanpod.testing.target import BeanstalkdServer

Server = Union["BeanpodServer", "BeanstalkdServer"]


def start_target(**options: Any) -> Server:
    from beanpod.testing.target import start_target as start

    return start(**options)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "beanpod(**options): give this test its own beanpod_server (clock='real', "
        "wal=True, unix=True, workq=True, max_job_size=N)",
    )


@pytest.fixture(scope="session")
def beanpod_session_server() -> Iterator[Server]:
    """The session's shared server (use `beanpod_server`, which resets it)."""
    server = start_target()
    yield server
    server.stop()


@pytest.fixture
def beanpod_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    """A beanpod server (the session's, reset before this test; with a `beanpod(...)`
    marker, one of the test's own). Connect to `.address` or `.socket()`."""
    marker = request.node.get_closest_marker("beanpod")
    if marker is not None and marker.kwargs:
        server = start_target(**_options(marker.kwargs, tmp_path))
        yield server
        server.stop()
        return
    shared: Server = request.getfixturevalue("beanpod_session_server")
    shared.reset()
    yield shared


@pytest.fixture
def beanpod_fresh_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    """A server of this test's own (function scope), with the `beanpod(...)` marker's
    options if any; stopped when the test ends."""
    marker = request.node.get_closest_marker("beanpod")
    server = start_target(**_options(marker.kwargs if marker else {}, tmp_path))
    yield server
    server.stop()


@pytest.fixture
def beanpod_server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """make(**options) -> a started server; every one is stopped when the test ends."""
    started: list[Server] = []

    def make(**options: Any) -> Server:
        server = start_target(**_options(options, tmp_path / f"server{len(started)}"))
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def _options(options: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """wal=True means a WAL directory in the test's tmp_path."""
    if options.get("wal") is True:
        return {**options, "wal": tmp_path / "wal"}
    return dict(options)
