"""qless configuration: defaults merged with overrides (`config.get/set/unset`)."""

from __future__ import annotations

import math
from typing import Any

# What `config.get` lists (qless-core's defaults table).
DEFAULTS: dict[str, Any] = {
    "application": "qless",
    "grace-period": 10,
    "heartbeat": 60,
    "histogram-history": 7,
    "jobs-history": 604800,
    "jobs-history-count": 50000,
    "stats-history": 30,
}

# Read with these fallbacks but not listed (qless-core reads them with a default).
FALLBACKS: dict[str, Any] = {"max-job-history": 100, "max-worker-age": 86400}


class Config:
    """Arbitrary keys are allowed; unset restores the default (or nothing)."""

    def __init__(self) -> None:
        self.overrides: dict[str, Any] = {}

    def all(self) -> dict[str, Any]:
        return {**DEFAULTS, **self.overrides}

    def get(self, key: str) -> Any:
        if key in self.overrides:
            return self.overrides[key]
        return DEFAULTS.get(key)

    def set(self, key: str, value: Any) -> None:
        self.overrides[key] = value

    def unset(self, key: str) -> None:
        self.overrides.pop(key, None)

    def number(self, key: str, fallback: float = 0) -> float:
        """A numeric setting; `fallback` when unset or not a number."""
        value = self.get(key)
        if value is None:
            value = FALLBACKS.get(key, fallback)
        try:
            number = float(value)
        except (TypeError, ValueError):
            return fallback
        return number if math.isfinite(number) else fallback  # `Infinity`, `NaN`, 1e400

    def heartbeat_ms(self, queue: str) -> int:
        """The lock length for `queue`: `<queue>-heartbeat`, else `heartbeat`."""
        seconds = self.number("heartbeat", 60)
        if self.get(f"{queue}-heartbeat") is not None:
            seconds = self.number(f"{queue}-heartbeat", seconds)
        return int(seconds * 1000)
