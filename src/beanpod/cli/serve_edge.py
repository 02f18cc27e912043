"""`beanpod serve` flags for the server's edge (docs/security.md): memory and connection
limits, timeouts, the allow-list, TLS, unix-socket permissions and the audit log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from beanpod.server.edge.exposure import split_host_port
from beanpod.server.edge.gate import parse_networks
from beanpod.server.edge.settings import DEFAULT_REQUEST_TIMEOUT_S, EdgeSettings, TlsSettings
from beanpod.server.edge.sizes import parse_memory

F = TypeVar("F", bound=Callable[..., Any])
EDGE_FLAGS = (
    "max_memory", "max_jobs_per_tube", "max_connections", "request_timeout", "idle_timeout",
    "allow", "insecure_public", "tls_listen", "tls_workq_listen", "tls_cert", "tls_key",
    "tls_client_ca", "tls_client_auth", "http_tls", "unix_mode", "unix_group", "audit_log",
)  # fmt: skip


def _memory(ctx: click.Context, param: click.Parameter, value: object) -> int | None:
    if value is None:
        return None
    try:
        return parse_memory(str(value))  # a config file may give a number
    except ValueError as exc:
        raise click.BadParameter(f"{exc} (give bytes, e.g. 512M, or N%)") from None


def _cidrs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    try:
        parse_networks(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def _address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            split_host_port(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def _mode(ctx: click.Context, param: click.Parameter, value: object) -> str | None:
    """Kept as octal text (so --print-config shows 0660); a config file may give 660."""
    if value is None:
        return None
    try:
        int(str(value), 8)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an octal mode such as 0660") from None
    return str(value)


OPTIONS = [
    click.option("--max-memory", callback=_memory, help="Refuse puts (OUT_OF_MEMORY) once jobs "
                 "and buffers account for this many bytes (512M, 2G) or N% of RAM. [default: off]"),
    click.option("--max-jobs-per-tube", type=click.IntRange(1), help="Refuse puts into a tube "
                 "holding this many jobs (OUT_OF_MEMORY). [default: off]"),
    click.option("--max-connections", type=click.IntRange(1), help="Close connections past "
                 "this many at once. [default: RLIMIT_NOFILE minus 64]"),
    click.option("--request-timeout", type=click.FloatRange(0), default=DEFAULT_REQUEST_TIMEOUT_S,
                 show_default=True, help="Close a connection whose started command is not "
                 "complete after S seconds (0: never)."),
    click.option("--idle-timeout", type=click.FloatRange(0), default=0.0, show_default=True,
                 help="Close connections silent for S seconds, except those waiting in a "
                 "reserve (0: never, as beanstalkd)."),
    click.option("--allow", multiple=True, callback=_cidrs, help="Accept connections only "
                 "from this CIDR (repeatable); others are closed before any byte is read."),
    click.option("--insecure-public", is_flag=True, help="Allow a plain-TCP listener on a "
                 "non-loopback address without --allow."),
    click.option("--tls-listen", callback=_address, help="ADDR:PORT of a TLS listener for the "
                 "beanstalkd protocol (needs --tls-cert and --tls-key)."),
    click.option("--tls-workq-listen", callback=_address, help="ADDR:PORT of a TLS listener "
                 "for the Workq protocol."),
    click.option("--http-tls", is_flag=True, help="Serve the HTTP listener (--http) over TLS "
                 "with --tls-cert/--tls-key (and --tls-client-ca)."),
    click.option("--tls-cert", type=click.Path(dir_okay=False), help="PEM certificate chain."),
    click.option("--tls-key", type=click.Path(dir_okay=False), help="PEM private key."),
    click.option("--tls-client-ca", type=click.Path(dir_okay=False), help="PEM CA bundle that "
                 "client certificates must chain to."),
    click.option("--tls-client-auth", type=click.Choice(["none", "optional", "required"]),
                 default=None, help="Client certificates. [default: required with "
                 "--tls-client-ca, else none]"),
    click.option("--unix-mode", callback=_mode, help="Mode of the unix socket (-l unix:PATH), "
                 "e.g. 0660."),
    click.option("--unix-group", help="Group (name or gid) of the unix socket."),
    click.option("--audit-log", type=click.Path(dir_okay=False), help="Append admin actions "
                 "and refused connections to this file, one JSON object per line."),
]  # fmt: skip


def edge_options(command: F) -> F:
    for option in reversed(OPTIONS):
        command = option(command)
    return command


def edge_settings(values: dict[str, Any]) -> EdgeSettings:
    """The settings from the edge flags' values (popped from `values`)."""
    v = {name: values.pop(name) for name in EDGE_FLAGS}
    return EdgeSettings(
        max_memory=v["max_memory"], max_jobs_per_tube=v["max_jobs_per_tube"],
        max_connections=v["max_connections"], request_timeout_s=v["request_timeout"],
        idle_timeout_s=v["idle_timeout"], allow=tuple(v["allow"]),
        insecure_public=v["insecure_public"], tls=_tls(v),
        unix_mode=None if v["unix_mode"] is None else int(v["unix_mode"], 8),
        unix_group=v["unix_group"], audit_log=v["audit_log"],
    )  # fmt: skip


def _tls(v: dict[str, Any]) -> TlsSettings | None:
    listeners = [name for name in ("tls_listen", "tls_workq_listen", "http_tls") if v[name]]
    if not listeners and not v["tls_cert"]:
        return None
    if not (listeners and v["tls_cert"] and v["tls_key"]):
        raise click.UsageError(
            "TLS needs --tls-cert and --tls-key with --tls-listen, --tls-workq-listen or --http-tls"
        )
    auth = v["tls_client_auth"] or ("required" if v["tls_client_ca"] else "none")
    if auth != "none" and not v["tls_client_ca"]:
        raise click.UsageError(f"--tls-client-auth {auth} needs --tls-client-ca")
    return TlsSettings(v["tls_listen"], v["tls_cert"], v["tls_key"], v["tls_client_ca"], auth,
                       v["tls_workq_listen"], v["http_tls"])  # fmt: skip
