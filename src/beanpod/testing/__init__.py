"""beanpod.testing: a real beanpod inside your tests.

    from beanpod.testing import BeanpodServer

    with BeanpodServer() as server:           # memory-only, virtual clock, free port
        client = greenstalk.Client(server.address)
        ...
        server.clock.advance(60)              # delays, TTRs, pauses fall due now

With pytest the `beanpod_server` fixture does this for you (plugin beanpod.testing.plugin,
registered by `pip install beanpod`). Guide: docs/testing.md.
"""

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
