"""What `beanpod serve` has imported at the two moments its start-up time is made of
(docs/performance.md, "Start-up"): when its early listeners accept, and when the
beanstalkd listener serves, so the first reply can go out. bench/startup_probe.py runs the
real CLI with every listener on (Workq and HTTP too, on free ports) and notes
`sys.modules` at each moment."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import startup_probe

SRC = Path(__file__).resolve().parents[2] / "src"

# Not before the listeners accept: the interpreter's own start and the argv guess only.
NOT_LISTENING = ("typing", "click", "asyncio", "uvloop", "ssl", "logging", "dataclasses",
                 "pathlib", "importlib.util", "re", "json")  # fmt: skip
# Not before beanstalkd answers: what only later steps, or other options, need.
NOT_SERVING = (
    "aiohttp", "ctypes", "tomllib", "pathlib", "json", "grp", "ipaddress",
    "beanpod.web.context", "beanpod.web.listener", "beanpod.server.web_facts",
    "beanpod.server.memory_trim", "beanpod.server.extensions", "beanpod.core.qless",
    "beanpod.core.workq", "beanpod.storage", "beanpod.events", "beanpod.durability.wal",
)  # fmt: skip


@pytest.fixture(scope="module")
def loaded() -> dict[str, object]:
    return startup_probe.loaded(SRC, "serving")


def loaded_of(modules: object, names: tuple[str, ...]) -> list[str]:
    """The modules among `modules` that are one of `names` or inside one of them."""
    assert isinstance(modules, list)
    return [m for m in modules if m in names or m.startswith(tuple(n + "." for n in names))]


def test_the_listeners_accept_before_the_heavy_imports(loaded: dict[str, object]) -> None:
    assert "beanpod.server.early_listen" in loaded["listening"]  # type: ignore[operator]
    assert loaded_of(loaded["listening"], NOT_LISTENING) == []


def test_the_collector_waits_until_the_server_serves(loaded: dict[str, object]) -> None:
    """Off from exec (server/gc_policy.py): the imports' allocations are not walked by
    the default thresholds' ~45 collections before the first reply."""
    assert loaded["collecting"] is False


def test_beanstalkd_answers_before_the_later_imports(loaded: dict[str, object]) -> None:
    assert "beanpod.server.beanstalkd_session" in loaded["serving"]  # type: ignore[operator]
    assert loaded_of(loaded["serving"], NOT_SERVING) == []
