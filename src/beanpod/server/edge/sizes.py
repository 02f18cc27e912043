"""--max-memory values: a byte count (with an optional K/M/G suffix) or N% of RAM."""

from __future__ import annotations

import os

SUFFIXES = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def parse_memory(text: str) -> int:
    """`1073741824`, `512M`, `2g` or `50%` (of physical memory) -> bytes; ValueError if
    it is none of these or not positive."""
    value = text.strip().lower().removesuffix("b")
    if value.endswith("%"):
        percent = float(value[:-1])
        if not 0 < percent <= 100:
            raise ValueError(f"{text!r}: a percentage must be in (0, 100]")
        return int(physical_memory() * percent / 100)
    scale = SUFFIXES.get(value[-1:], 1)
    number = int(value[:-1] if scale != 1 else value)
    if number <= 0:
        raise ValueError(f"{text!r}: must be positive")
    return number * scale
