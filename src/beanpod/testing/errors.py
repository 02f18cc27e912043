"""What the harness raises when it is used wrongly: each names the mistake and the fix."""

from __future__ import annotations


class HarnessError(Exception):
    """Base class of the harness's own errors."""


class ServerStopped(HarnessError):
    """The server was used after it stopped (a fixture kept past its test, say)."""


class RealClockError(HarnessError):
    """advance() on a server that runs on the real clock."""


class UnknownTube(HarnessError):
    """An assertion named a tube no client has used, watched or put to since the reset."""


class NotSupported(HarnessError):
    """A beanpod-only feature asked of a real beanstalkd (BEANPOD_TEST_TARGET=beanstalkd)."""
