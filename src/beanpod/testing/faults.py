"""Faults a test asks for: a command's next replies replaced by an error word, and a
delay added before each request is handled."""

from __future__ import annotations

import re
from collections import defaultdict, deque

from beanpod.protocols.beanstalkd import wire

# The beanstalkd command names a test may fail (`put`, `reserve-with-timeout`, ...).
COMMAND_NAMES = frozenset(
    value.decode().strip()
    for name, value in vars(wire).items()
    if name.isupper() and isinstance(value, bytes) and value[:1].islower()
)
WORD = re.compile(r"[A-Z][A-Z_]*( [0-9]+)*")


class Faults:
    def __init__(self) -> None:
        self.latency_s = 0.0
        self._pending: defaultdict[str, deque[bytes]] = defaultdict(deque)

    def fail_next(self, command: str, word: str, times: int = 1) -> None:
        if command not in COMMAND_NAMES:
            known = ", ".join(sorted(COMMAND_NAMES))
            raise ValueError(f"unknown beanstalkd command {command!r} (known: {known})")
        if not WORD.fullmatch(word):
            raise ValueError(f"{word!r} is not a protocol reply word such as OUT_OF_MEMORY")
        self._pending[command].extend([word.encode() + wire.CRLF] * times)

    def take(self, command: str) -> bytes | None:
        """The reply that replaces this run of `command`, if a failure is pending."""
        pending = self._pending.get(command)
        return pending.popleft() if pending else None

    def clear(self) -> None:
        self.latency_s = 0.0
        self._pending.clear()
