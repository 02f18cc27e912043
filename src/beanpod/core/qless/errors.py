"""qless refusals: `QlessError("Complete(): Job x is not currently running: waiting")`.

Messages keep qless-core's wording, because qless clients match phrases of it
("does not exist", "not currently running", "another worker", a state name).
"""

from __future__ import annotations


class QlessError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def missing(fn: str, jid: str) -> QlessError:
    return QlessError(f"{fn}(): Job {jid} does not exist")


def not_running(fn: str, jid: str, state: str) -> QlessError:
    return QlessError(f"{fn}(): Job {jid} is not currently running: {state}")
