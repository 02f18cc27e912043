"""Every failure of an admin command as one line on stderr and its own exit status.

greenstalk raises OSError subclasses for the socket, a BeanstalkdError subclass per error
reply, UnknownResponseError for a reply it does not know, and AssertionError or ValueError
from its parsers for a reply cut short; each becomes one of the exceptions below, whose
text click prints as `Error: ...` (never a traceback)."""

from __future__ import annotations

import socket
from types import TracebackType

import click
import greenstalk

EXIT_NOT_FOUND = 1  # a job or tube the server does not have
EXIT_UNREACHABLE = 2  # no server at the address, or it closed the connection
EXIT_TIMEOUT = 3  # the server took longer than --timeout to connect or answer
EXIT_BAD_NAME = 4  # a tube name beanstalkd does not allow
EXIT_TOO_BIG = 5  # JOB_TOO_BIG: the body is over the server's max-job-size
EXIT_DRAINING = 6  # DRAINING: the server got SIGUSR1 and refuses new jobs
EXIT_NO_MEMORY = 7  # OUT_OF_MEMORY, or BURIED for a put: the server has no room
EXIT_PROTOCOL = 8  # a reply the client cannot use: INTERNAL_ERROR, BAD_FORMAT, garbage

NAME_RULE = "1-200 bytes of letters, digits and -+/;.$_(), not starting with -"
REPLY_NAMES = {cls: name.decode() for name, cls in greenstalk.ERROR_RESPONSES.items()}


def _status(name: str, exit_code: int) -> type[click.ClickException]:
    """A ClickException class with its own exit status (a class variable since click 8.5)."""
    return type(name, (click.ClickException,), {"exit_code": exit_code})


NotFound = _status("NotFound", EXIT_NOT_FOUND)
Unreachable = _status("Unreachable", EXIT_UNREACHABLE)
TimedOut = _status("TimedOut", EXIT_TIMEOUT)
BadName = _status("BadName", EXIT_BAD_NAME)
TooBig = _status("TooBig", EXIT_TOO_BIG)
Draining = _status("Draining", EXIT_DRAINING)
NoMemory = _status("NoMemory", EXIT_NO_MEMORY)
BadReply = _status("BadReply", EXIT_PROTOCOL)


def bad_name(name: str) -> click.ClickException:
    return BadName(f"tube name {name!r} is not allowed: a name is {NAME_RULE}")


def connect_failed(exc: OSError, where: str, timeout: float) -> click.ClickException:
    """Why the socket could not be opened, with the flag that changes the address."""
    if isinstance(exc, TimeoutError):
        return TimedOut(f"no answer from {where} within {timeout:g} s (--timeout)")
    hint = "-H unix:PATH names the socket" if where.startswith("unix:") else (
        "-H HOST -p PORT name the server, -H unix:PATH a unix socket")  # fmt: skip
    if isinstance(exc, socket.gaierror):
        why = f"unknown host ({exc.strerror})"
    elif isinstance(exc, FileNotFoundError):
        why = "no such socket; is the server running with -l " + where + "?"
    else:
        why = f"{(exc.strerror or str(exc)).lower()}; is the server running there?"
    return Unreachable(f"cannot connect to {where}: {why} ({hint})")


def session_failed(exc: BaseException, where: str, timeout: float) -> click.ClickException | None:
    """The one-line error for a failure while talking to the server; None if the failure
    is not the connection's (a bug of the caller, to surface as it is)."""
    if isinstance(exc, greenstalk.BeanstalkdError):
        return refused(exc, where)
    if isinstance(exc, TimeoutError):
        return TimedOut(f"the server at {where} did not answer within {timeout:g} s (--timeout)")
    if isinstance(exc, ConnectionError):
        detail = f" ({exc.strerror.lower()})" if exc.strerror else ""
        return Unreachable(f"the server at {where} closed the connection{detail}")
    if isinstance(exc, greenstalk.UnknownResponseError):
        reply = " ".join(v.decode("ascii", "replace") for v in (exc.status, *exc.values))
        return BadReply(f"the server at {where} sent {reply[:60]!r}, not a beanstalkd reply")
    if isinstance(exc, AssertionError | ValueError) and _raised_in_greenstalk(exc.__traceback__):
        return BadReply(f"the server at {where} sent a malformed or truncated reply")
    return None


def refused(exc: greenstalk.BeanstalkdError, where: str) -> click.ClickException:
    """An error reply, worded for the admin commands (put words JOB_TOO_BIG itself)."""
    if isinstance(exc, greenstalk.DrainingError):
        return Draining(
            "the server is draining (it got SIGUSR1): it refuses new jobs until it restarts"
        )
    if isinstance(exc, greenstalk.OutOfMemoryError):
        return NoMemory(
            "the server has no room for the job (OUT_OF_MEMORY): delete or drain "
            "jobs, or raise its --max-memory / --max-jobs-per-tube"
        )
    if isinstance(exc, greenstalk.BuriedError):
        return NoMemory(
            f"the server buried job {exc.id}: out of memory for its ready queue; "
            "kick it when there is room (beanpod kick TUBE)"
        )
    if isinstance(exc, greenstalk.JobTooBigError):
        return TooBig("the job is over the server's max-job-size (serve -z)")
    if isinstance(exc, greenstalk.NotFoundError):
        return NotFound("the server answered NOT_FOUND")
    name = REPLY_NAMES.get(type(exc), type(exc).__name__)
    if isinstance(exc, greenstalk.InternalError):
        return BadReply(f"the server at {where} failed (INTERNAL_ERROR); its log says why")
    return BadReply(f"the server at {where} answered {name}; is it a beanstalkd 1.12 server?")


def _raised_in_greenstalk(tb: TracebackType | None) -> bool:
    """Whether the innermost frame is greenstalk's (its parsers assert on a bad reply)."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__") == "greenstalk"
