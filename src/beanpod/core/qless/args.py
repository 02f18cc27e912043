"""Reading a qless call's positional arguments, with qless-core's error wording
(`Put(): Arg "delay" not a number: x`)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from beanpod.core.qless.errors import QlessError

if TYPE_CHECKING:
    from beanpod.core.conn import Conn


class Args:
    """A cursor over `args` for function `fn` (capitalized in messages), and the
    connection the call came from (`caller`: the events name it; None for the admin API
    and in-process callers)."""

    def __init__(self, fn: str, args: list[Any], caller: Conn | None = None) -> None:
        self.fn = fn
        self.items = args
        self.pos = 0
        self.caller = caller

    def _error(self, name: str, problem: str, value: Any = None) -> QlessError:
        shown = "" if value is None else f": {value!r}"
        return QlessError(f'{self.fn}(): Arg "{name}" {problem}{shown}')

    def more(self) -> bool:
        return self.pos < len(self.items)

    def next(self, name: str) -> Any:
        if not self.more():
            raise self._error(name, "missing")
        value = self.items[self.pos]
        self.pos += 1
        return value

    def text(self, name: str) -> str:
        """A non-empty string; a number stands for its decimal text, as every argument
        reaches qless-core's Lua as text (jid 0 is "0")."""
        value = self.next(name)
        if _textual(value):
            value = _as_text(value)
        if not isinstance(value, str) or not value:
            raise self._error(name, "must be a non-empty string", value)
        return value

    def opt_text(self, name: str) -> str | None:
        return self.text(name) if self.more() else None

    def number(self, name: str) -> float:
        return self.to_number(name, self.next(name))

    def to_number(self, name: str, value: Any) -> float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise self._error(name, "not a number", value) from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._error(name, "not a number", value)
        if not math.isfinite(value):  # Infinity, NaN, 1e400: no time, count or priority
            raise self._error(name, "not a number", value)
        return float(value)

    def integer(self, name: str, default: int | None = None) -> int:
        if default is not None and not self.more():
            return default
        return int(self.number(name))

    def ms(self, name: str, default: float | None = None) -> int:
        """A duration or time in seconds, as engine milliseconds."""
        if default is not None and not self.more():
            return int(default * 1000)
        return round(self.number(name) * 1000)

    def json_text(self, name: str) -> str:
        """qless data: JSON text (a string holding JSON), or any JSON value."""
        return self.to_json_text(name, self.next(name))

    def to_json_text(self, name: str, value: Any) -> str:
        if isinstance(value, str):
            try:
                json.loads(value)
            except (ValueError, RecursionError):  # nested too deeply is no JSON either
                raise self._error(name, "not JSON", value) from None
            return value
        return json.dumps(value, separators=(",", ":"))

    def to_list(self, name: str, value: Any) -> list[str]:
        """A JSON array of strings, given as a list or as JSON text."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):  # nested too deeply is no JSON either
                raise self._error(name, "not JSON", value) from None
        if not isinstance(value, list) or not all(_textual(v) for v in value):
            raise self._error(name, "not a JSON array of strings", value)
        return [v if isinstance(v, str) else _as_text(v) for v in value]

    def strings(self) -> list[str]:
        """Every remaining argument, as strings."""
        rest = [str(v) for v in self.items[self.pos :]]
        self.pos = len(self.items)
        return rest

    def pairs(self) -> dict[str, Any]:
        """Remaining `key, value` pairs (an odd count is an error)."""
        rest = self.items[self.pos :]
        self.pos = len(self.items)
        if len(rest) % 2:
            raise QlessError(f"{self.fn}(): Odd number of optional arguments: {len(rest)}")
        return {str(rest[i]): rest[i + 1] for i in range(0, len(rest), 2)}


def _textual(value: Any) -> bool:
    """A string, or a number standing for its text (qless-core's arguments are text)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int) and not isinstance(value, bool)


def _as_text(value: str | float) -> str:
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) else repr(value)
