"""The YAML that beanstalkd 1.12 prints for stats, stats-job, stats-tube and list-tubes.

`---\n`, then `key: value\n` lines (or `- item\n` list lines). Values are bare, as in
1.12, except `version`, which 1.12 quotes, and strings YAML would misread (an `os`
value starting with `#`, for example), which we quote where 1.12 prints them broken.
"""

from __future__ import annotations

from collections.abc import Iterable

_YAML_INDICATORS = frozenset("#&*!|>'\"%@`{}[],?:-")


def scalar(value: str) -> bytes:
    """A YAML plain scalar when it reads back unchanged, else a double-quoted one."""
    misread = (
        not value
        or value[0] in _YAML_INDICATORS
        or value != value.strip()
        or ": " in value
        or " #" in value
    )
    if misread:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'.encode()
    return value.encode()


def mapping(pairs: Iterable[tuple[bytes, bytes | int | str]]) -> bytes:
    parts = [b"---\n"]
    for key, value in pairs:
        if isinstance(value, int):
            parts.append(b"%s: %d\n" % (key, value))
        elif isinstance(value, str):
            parts.append(key + b": " + value.encode() + b"\n")
        else:
            parts.append(key + b": " + value + b"\n")
    return b"".join(parts)


def sequence(items: Iterable[bytes]) -> bytes:
    return b"---\n" + b"".join(b"- " + item + b"\n" for item in items)
