"""Read `beanpod serve`'s listen addresses (beanstalkd, Workq, HTTP) from argv before click
and the server load, so every port can be opened at once (server/early_listen.py). Only
plain invocations qualify: anything this small parser is unsure of (--config, help, an
unknown flag, a host name) leaves that listener, or all of them, to the server, which
binds them together a little later."""

from __future__ import annotations

import os

from beanpod.server.early_listen import bind_early, bindable, hold_drain_signal, listen_all, wanted
from beanpod.server.gc_policy import hold_until_serving

# serve's flags that take a value, and those that take none; any other flag: no guess.
VALUED = frozenset(
    ("-l", "--listen", "-p", "--port", "-z", "--max-job-size", "-b", "--binlog-dir", "-f",
     "--fsync-ms", "-s", "--segment-size", "--workq-port", "--events", "--clock", "--log-format",
     "--http", "--http-token", "--metrics-max-tubes", "--analytics", "--checkpoint-floor")
)  # fmt: skip
BARE = frozenset(("-V", "--verbose", "-c", "-n", "--no-uvloop", "-F", "--no-fsync"))
LISTEN, PORT = ("-l", "--listen"), ("-p", "--port")
KEPT = {"-l": "--listen", "--listen": "--listen", "-p": "--port", "--port": "--port",
        "--workq-port": "--workq-port", "--http": "--http"}  # fmt: skip


def listen_now(argv: list[str]) -> None:
    """When this process is `beanpod serve ...`: open its ports now. beanstalkd's is bound
    first; all of them accept from one moment (`listen_all`). Then SIGUSR1 is held (its
    `signal` import would delay the first accept by ~0.5 ms)."""
    program = argv[0].replace(os.sep, "/").split("/")
    if program[-1] != "beanpod" and program[-2:] != ["beanpod", "__main__.py"]:
        return
    if argv[1:2] == ["serve"]:
        hold_until_serving()
    targets = listen_targets(argv[1:])
    for role, (address, port) in targets.items():
        bind_early(role, address, port)
    if targets:
        listen_all()
    if argv[1:2] == ["serve"]:
        hold_drain_signal()


def listen_targets(argv: list[str]) -> dict[str, tuple[str, int]]:
    """(address, port) of each listener `beanpod serve ARGS` will open, by role; the
    beanstalkd one or none at all (when unsure)."""
    target = beanstalkd_target(argv)
    if target is None:
        return {}
    found = wanted(*target, *_extras(argv[1:], target[1]))
    return {role: where for role, where in found.items() if bindable(where[0])}


def beanstalkd_target(argv: list[str]) -> tuple[str, int] | None:
    """(address, port) of `beanpod serve ARGS`'s beanstalkd listener; None when unsure."""
    values = _values(argv[1:]) if argv[:1] == ["serve"] else None
    if values is None:
        return None
    host = _setting(values, "--listen", "127.0.0.1")
    port = _setting(values, "--port", "11300")
    if not port.isdigit() or int(port) > 65535 or not bindable(host):
        return None
    if host.startswith("unix:") and any(k.startswith("BEANPOD_UNIX_") for k in os.environ):
        return None  # its mode and group are set by the server, before anyone may connect
    return host, int(port)


def _setting(values: dict[str, str], flag: str, default: str) -> str:
    given = _given(values, flag)
    return default if given is None else given


def _given(values: dict[str, str], flag: str) -> str | None:
    """The flag's value, else its BEANPOD_* variable; None when neither is set."""
    return values.get(flag, os.environ.get("BEANPOD_" + flag[2:].upper().replace("-", "_")))


def _extras(args: list[str], port: int) -> tuple[int | None, tuple[str, int] | None]:
    """The Workq port and HTTP address of serve ARGS (already understood), as serve reads
    them (cli/ports.py, web/address.py); None: off, or given wrong (serve refuses it)."""
    from beanpod.cli.ports import default_workq_port, parse_workq_port
    from beanpod.web.address import DEFAULT_HTTP, parse_http_address

    values = _values(args) or {}
    workq = _given(values, "--workq-port")
    try:
        return (
            default_workq_port(port) if workq is None else parse_workq_port(workq),
            parse_http_address(_setting(values, "--http", DEFAULT_HTTP)),
        )
    except ValueError:
        return None, None  # serve refuses it (exit 2)


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
    if flag in KEPT:
        found[KEPT[flag]] = value
