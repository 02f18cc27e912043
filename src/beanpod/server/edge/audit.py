"""--audit-log FILE: admin actions and refused connections, one JSON object per line.

`record(action, **fields)` is the one entry point; the HTTP admin API calls it for its
own actions (`app.audit.record("http-kick", tube=..., peer=...)`). Lines are flushed at
once (an audit trail that dies with the process is not one) but never fsynced."""

from __future__ import annotations

import logging
import time
from typing import IO, Any

log = logging.getLogger("beanpod.audit")


class AuditLog:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._file: IO[str] | None = None
        if path is not None:
            import json  # here: without --audit-log the first reply does not wait for it

            self._dumps = json.dumps
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held open
        self.failed = 0  # lines that could not be written

    @property
    def enabled(self) -> bool:
        return self._file is not None

    def record(self, action: str, **fields: Any) -> None:
        if self._file is None:
            return
        line = {"ts": round(time.time(), 3), "action": action, **fields}
        try:
            self._file.write(self._dumps(line, default=str) + "\n")
            self._file.flush()
        except OSError as exc:
            self.failed += 1
            log.error("cannot write the audit log %s: %s", self.path, exc)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
