"""`--workq-port PORT|off` as `beanpod serve` reads it, for click and for the early start
(cli/early.py) alike: 0 is any free port (as `-p 0`), `off` disables the listener (as
`--http off`); unset, it is 9922, or a free port with `-p 0`."""

from __future__ import annotations

from beanpod.protocols.workq.wire import DEFAULT_PORT
from beanpod.web.address import OFF_WORDS


def parse_workq_port(text: str) -> int | None:
    """A port, or None for off; ValueError with the reason otherwise."""
    word = text.strip().lower()
    if word in OFF_WORDS:
        return None
    if not word.isdigit() or int(word) > 65535:
        raise ValueError(f"{text!r} is not a port (0-65535; 0: any free port) or off")
    return int(word)


def default_workq_port(beanstalkd_port: int) -> int:
    """Unset: 9922, or a free port when -p 0 (scripts and tests asking for free ports)."""
    return 0 if beanstalkd_port == 0 else DEFAULT_PORT
