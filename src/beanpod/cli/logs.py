"""Log set-up for `beanpod serve`: stderr, text or JSON lines, one level step per -V."""

from __future__ import annotations

import logging
import sys
import time

TEXT_FORMAT = "%(asctime)s beanpod %(levelname)s %(message)s"
FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (ISO 8601, UTC, ms), level, logger, msg[, exc]."""

    def __init__(self) -> None:
        super().__init__()
        import json  # here: text logs (the default) never load it before the first reply

        self._dumps = json.dumps

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": _iso_utc(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return self._dumps(line, ensure_ascii=False)


def _iso_utc(created: float) -> str:
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{whole}.{int(created * 1000) % 1000:03d}Z"


def setup_logging(verbose: int, log_format: str) -> None:
    """No -V: beanpod's INFO and up (start-up, shutdown, warnings). Each -V goes one step
    further: -V adds beanpod's DEBUG lines (connections opening and closing, WAL
    detail), -VV also every library's DEBUG lines (asyncio, aiohttp)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose >= 2 else logging.INFO)
    logging.getLogger("beanpod").setLevel(logging.DEBUG if verbose >= 1 else logging.INFO)
