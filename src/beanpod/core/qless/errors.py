"""qless refusals: `QlessError("Complete(): Job x is not currently running: waiting")`.

Messages keep qless-core's wording, because qless clients match phrases of it
("does not exist", "not currently running", "another worker", a state name).
"""

from __future__ import annotations

from beanpod.core.qless.names import BEANSTALKD_JID


class QlessError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def missing(fn: str, jid: str) -> QlessError:
    return QlessError(f"{fn}(): Job {jid} does not exist")


def not_running(fn: str, jid: str, state: str) -> QlessError:
    return QlessError(f"{fn}(): Job {jid} is not currently running: {state}")


def check_new_jid(fn: str, jid: str) -> None:
    """A put or recur may not name a job put by beanstalkd (`beanstalkd:<id>`, names.py):
    another dialect's job is never replaced."""
    if jid.startswith(BEANSTALKD_JID):
        raise QlessError(
            f"{fn}(): jid {jid} is reserved: jids starting with beanstalkd: name jobs put by"
            " beanstalkd, which a qless put never replaces; choose another jid"
        )


def foreign(fn: str, jid: str) -> QlessError:
    """A qless change named a beanstalkd-put job that no qless pop has handed out."""
    return QlessError(
        f"{fn}(): Job {jid} was put by beanstalkd and not popped by qless; qless leaves it alone"
    )
