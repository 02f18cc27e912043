"""Read `beanpod serve`'s listen address from argv before click and the server load, so
the port can be opened at once (server/early_listen.py). Only plain invocations qualify:
anything this small parser is unsure of (--config, help, an unknown flag, a host name)
leaves the listener to the server, as before."""

from __future__ import annotations

import os
import socket

# serve's flags that take a value, and those that take none; any other flag: no guess.
VALUED = frozenset(
    ("-l", "--listen", "-p", "--port", "-z", "--max-job-size", "-b", "--binlog-dir", "-f",
     "--fsync-ms", "-s", "--segment-size", "--workq-port", "--events", "--clock", "--log-format")
)  # fmt: skip
BARE = frozenset(("-V", "--verbose", "-c", "-n", "--no-uvloop", "-F", "--no-fsync"))
LISTEN, PORT = ("-l", "--listen"), ("-p", "--port")


def listen_now(argv: list[str]) -> None:
    """When this process is `beanpod serve ...`: open its beanstalkd port now."""
    program = argv[0].replace(os.sep, "/").split("/")
    if program[-1] != "beanpod" and program[-2:] != ["beanpod", "__main__.py"]:
        return
    target = listen_target(argv[1:])
    if target is not None:
        from beanpod.server.early_listen import listen_early

        listen_early(*target)


def listen_target(argv: list[str]) -> tuple[str, int] | None:
    """(host, port) that `beanpod serve ARGS` will listen on, or None when unsure."""
    if argv[:1] != ["serve"]:
        return None
    values = _values(argv[1:])
    if values is None:
        return None
    host = values.get("--listen", os.environ.get("BEANPOD_LISTEN", "127.0.0.1"))
    port = values.get("--port", os.environ.get("BEANPOD_PORT", "11300"))
    if not port.isdigit() or int(port) > 65535:
        return None
    if not (_is_ip(host) or (host.startswith("unix:") and len(host) > 5)):
        return None
    if host.startswith("unix:") and any(k.startswith("BEANPOD_UNIX_") for k in os.environ):
        return None  # its mode and group are set by the server, before anyone may connect
    return host, int(port)


def _values(args: list[str]) -> dict[str, str] | None:
    """The listen and port values among ARGS; None on anything unexpected."""
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        flag, equals, inline = args[i].partition("=")
        if flag in BARE or (flag[:2] == "-V" and set(flag[1:]) == {"V"}):
            i += 1
            continue
        if flag not in VALUED and flag[:2] in (*LISTEN, *PORT) and len(flag) > 2:
            flag, equals, inline = flag[:2], "=", args[i][2:]  # -p11300
        if flag not in VALUED:
            return None
        if not equals:
            i += 1
            if i == len(args):
                return None
            inline = args[i]
        _keep(found, flag, inline)
        i += 1
    return found


def _keep(found: dict[str, str], flag: str, value: str) -> None:
    if flag in LISTEN:
        found["--listen"] = value
    elif flag in PORT:
        found["--port"] = value


def _is_ip(host: str) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        socket.inet_pton(family, host)
    except OSError:
        return False
    return True
