"""Start-up failures that name their cause: which step failed, on what, why, and the
documented exit status `beanpod serve` leaves with (README, "Exit status")."""

from __future__ import annotations

import os

EXIT_DAMAGED_WAL = 1  # the write-ahead log is damaged (names file and offset)
EXIT_USAGE = 2  # a bad flag, environment variable or config file value
EXIT_LISTENER = 3  # a listener could not open (names which one and its address)
EXIT_WAL_DIR = 4  # the WAL directory cannot be created, read or written
EXIT_EVENTS_DIR = 5  # the event-log directory cannot be created or written
EXIT_WAL_LOCKED = 10  # another server holds the WAL directory (beanstalkd's status)


class StartupError(Exception):
    """`what` could not be used: `cause`. `exit_code` is the process's exit status."""

    def __init__(self, what: str, cause: str, exit_code: int) -> None:
        super().__init__(f"{what}: {cause}")
        self.exit_code = exit_code


def cause(exc: OSError) -> str:
    """An OSError's own words, without the path it repeats."""
    return exc.strerror or str(exc)


# The flag that moves each listener, named in its error so the fix is one line away.
LISTENER_FLAGS = {
    "beanstalkd": "-l ADDR / -p PORT",
    "Workq": "--workq-port PORT (or off)",
    "HTTP": "--http ADDR:PORT (or off)",
    "Redis": "--redis-listen ADDR / --redis-port PORT",
    "beanstalkd over TLS": "--tls-listen ADDR:PORT",
    "Workq over TLS": "--tls-workq-listen ADDR:PORT",
}


def listener_error(role: str, address: str, exc: OSError) -> StartupError:
    """`cannot listen on ADDR (role): why; choose another with FLAG`."""
    fix = f"; choose another with {LISTENER_FLAGS[role]}"
    return StartupError(f"cannot listen on {address} ({role})", cause(exc) + fix, EXIT_LISTENER)


def check_writable_dir(path: str, role: str, exit_code: int) -> None:
    """Create `path` if needed and prove a file can be written in it, so a directory that
    cannot be used fails start-up instead of failing later, quietly."""
    from pathlib import Path  # here: an in-memory server answers before loading it

    directory = Path(path)
    probe = directory / f".beanpod-probe-{os.getpid()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise StartupError(f"cannot use the {role} {path}", cause(exc), exit_code) from exc
