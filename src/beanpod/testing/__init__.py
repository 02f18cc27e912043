"""beanpod.testing: a real beanpod inside your tests.

    from beanpod.testing import BeanpodServer

    with BeanpodServer() as server:           # memory-only, virtual clock, free port
        client = greenstalk.Client(server.address)
        ...
        server.clock.advance(60)              # delays, TTRs, pauses fall due now

With pytest the `beanpod_server` fixture does this for you (plugin beanpod.testing.plugin,
registered by `pip install beanpod`). Guide: docs/testing.md.

Names are imported on first use, so loading the pytest plugin costs a suite that never
asks for a server nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beanpod.testing.clock import REAL, VIRTUAL, TestClock
    from beanpod.testing.errors import (
        HarnessError,
        NotSupported,
        RealClockError,
        ServerStopped,
        UnknownTube,
    )
    from beanpod.testing.server import BeanpodServer
    from beanpod.testing.target import BeanstalkdServer, start_target
    from beanpod.testing.transcript import Transcript
    from beanpod.testing.views import SeenJob

_HOMES = {
    "REAL": "clock", "VIRTUAL": "clock", "TestClock": "clock", "HarnessError": "errors",
    "NotSupported": "errors", "RealClockError": "errors", "ServerStopped": "errors",
    "UnknownTube": "errors", "BeanpodServer": "server", "BeanstalkdServer": "target",
    "start_target": "target", "Transcript": "transcript", "SeenJob": "views",
}  # fmt: skip

__all__ = [
    "REAL",
    "VIRTUAL",
    "BeanpodServer",
    "BeanstalkdServer",
    "HarnessError",
    "NotSupported",
    "RealClockError",
    "SeenJob",
    "ServerStopped",
    "TestClock",
    "Transcript",
    "UnknownTube",
    "start_target",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'beanpod.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(f"beanpod.testing.{home}"), name)
