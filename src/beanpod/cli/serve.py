"""`beanpod serve`: start the server."""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from beanpod import __version__, build
from beanpod.cli.logs import FORMATS, setup_logging
from beanpod.cli.ports import default_workq_port, parse_workq_port
from beanpod.cli.serve_cluster import check_cluster, cluster_options
from beanpod.cli.serve_config import bind_environment, describe, load_config_file
from beanpod.cli.serve_edge import edge_options, edge_settings
from beanpod.protocols.beanstalkd.wire import MAX_JOB_SIZE_CAP
from beanpod.server.clock import make_clock
from beanpod.server.config import DEFAULT_ADDRESS, DEFAULT_PORT, ServerConfig
from beanpod.server.startup import EXIT_DAMAGED_WAL, EXIT_WAL_LOCKED, StartupError
from beanpod.web.address import DEFAULT_HTTP, parse_http_address

CONTEXT = {"help_option_names": ["-h", "--help"]}
SOFT = "default (off, with a warning, if the port is in use)"


def _warn_removed(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        click.echo(
            f"beanpod: -{param.opts[0][-1]} flag was removed. binlog is always compacted.", err=True
        )
    return value


@click.command(context_settings=CONTEXT)
@click.option(
    "-l",
    "--listen",
    "address",
    default=DEFAULT_ADDRESS,
    show_default=True,
    help="Address to listen on, or unix:/path for a UNIX socket.",
)
@click.option(
    "-p",
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port for the beanstalkd protocol (0 picks a free port).",
)
@click.option(
    "-z",
    "--max-job-size",
    default=65535,
    show_default=True,
    type=click.IntRange(0, MAX_JOB_SIZE_CAP),
    help="Largest job body in bytes.",
)
@click.option("-V", "--verbose", count=True, help="More log output (repeatable).")
@click.option(
    "-c",
    "compact",
    is_flag=True,
    callback=_warn_removed,
    expose_value=False,
    help="Accepted for beanstalkd compatibility; does nothing.",
)
@click.option(
    "-n",
    "no_compact",
    is_flag=True,
    callback=_warn_removed,
    expose_value=False,
    help="Accepted for beanstalkd compatibility; does nothing.",
)
@click.option("--no-uvloop", is_flag=True, help="Use the standard asyncio event loop.")
@click.option(
    "-b",
    "--binlog-dir",
    type=click.Path(file_okay=False),
    help="Keep a write-ahead log in this directory (default: in memory only).",
)
@click.option(
    "-f",
    "--fsync-ms",
    default=50,
    show_default=True,
    type=click.IntRange(0),
    help="fsync the log at most every MS milliseconds; 0 fsyncs before replying.",
)
@click.option("-F", "--no-fsync", is_flag=True, help="Never fsync the log (leave it to the OS).")
@click.option(
    "-s",
    "--segment-size",
    default=10485760,
    show_default=True,
    type=click.IntRange(4096),
    help="Bytes per log segment file.",
)
@click.option(
    "--checkpoint-floor",
    default=134217728,
    show_default=True,
    type=click.IntRange(0),
    metavar="BYTES",
    help="Write a checkpoint (snapshot) while serving once the log written since the last "
    "one exceeds BYTES and half the live bytes (or 1/64 of them after 2 s without writes), "
    "so a crash restart replays little: a separate idle-priority process builds it from "
    "the log (~3 s of CPU and about the jobs' memory per 1M jobs). 0: off, a snapshot only "
    "at clean shutdown.",
)
@click.option(
    "--workq-port",
    default=None,
    metavar="PORT|off",
    callback=lambda _ctx, _param, value: check_workq_port(value),
    help="TCP port for the Workq protocol, same address as -l; 0 picks a free port, off "
    "disables it. [default: 9922 (off, with a warning, if in use), or a free port when -p 0]",
)
@click.option(
    "--redis-port",
    default=None,
    type=click.IntRange(0, 65535),
    help="TCP port for the Redis-protocol door that qless's own clients (qless-py, the "
    "Ruby gem) use unchanged (docs/qless.md); 0 picks a free port. [default: off]",
)
@click.option(
    "--redis-listen",
    default=None,
    help="Address of the Redis-protocol door. [default: -l's address; 127.0.0.1 with unix:]",
)
@click.option(
    "--redis-password-file",
    type=click.Path(dir_okay=False),
    help="File holding the password the Redis-protocol door asks with AUTH.",
)
@click.option(
    "--redis-allow-flush",
    is_flag=True,
    help="Let the Redis-protocol door's FLUSHDB forget every qless job (test suites such as "
    "qless-py's; always allowed with --clock manual).",
)
@click.option(
    "--events",
    "events_dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Append the job event log (docs/eventlog.md) under this directory.",
)
@click.option(
    "--clock",
    default="real",
    show_default=True,
    callback=lambda _ctx, _param, value: check_clock(value),
    help="real, manual or manual:SECONDS (a start time): a manual clock stands still until "
    "a qless request's `now` moves it (for tests).",
)
@click.option(
    "--http",
    "http",
    default=DEFAULT_HTTP,
    show_default=True,
    help="HTTP listener for /metrics, /healthz, /readyz, the API and dashboard "
    "(ADDR:PORT, or off); the default gives way, with a warning, when its port is in use.",
)
@click.option(
    "--http-token",
    "http_token",
    type=click.Path(dir_okay=False),
    help="File holding the HTTP access token; every HTTP request but the /healthz and "
    "/readyz probes (which then tell only up/ready) must carry it "
    "(required with a non-loopback --http).",
)
@click.option(
    "--metrics-max-tubes",
    default=500,
    show_default=True,
    type=click.IntRange(0),
    help='Tubes /metrics exports by name; the rest add up under tube="_other".',
)
@click.option(
    "--analytics",
    "analytics_dir",
    type=click.Path(file_okay=False),
    help="The OUT directory of `beanpod analyze`: the dashboard's analytics page shows it.",
)
@click.option(
    "--log-format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Log lines as text or as one JSON object per line.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    is_eager=True,
    expose_value=False,
    callback=load_config_file,
    help="A TOML file of settings (keys: the long flag names). Flags win over BEANPOD_* "
    "environment variables, which win over the file.",
)
@click.option(
    "--check-moves",
    is_flag=True,
    help="Check every job state change against the state table (debugging; slower).",
)
@click.option("--print-config", is_flag=True, help="Print the merged settings and exit.")
@edge_options
@cluster_options
@click.version_option(
    f"{__version__} ({build.kind()} build)", "-v", "--version", prog_name="beanpod"
)
def serve(
    address: str, port: int, max_job_size: int, verbose: int, no_uvloop: bool,
    workq_port: int | None, redis_port: int | None, redis_listen: str | None,
    redis_password_file: str | None, redis_allow_flush: bool, binlog_dir: str | None,
    fsync_ms: int, no_fsync: bool,
    segment_size: int, checkpoint_floor: int, events_dir: str | None, clock: str, http: str,
    http_token: str | None, metrics_max_tubes: int, analytics_dir: str | None, log_format: str,
    check_moves: bool, print_config: bool, cluster: str | None, node_id: str | None,
    checkpoint_batches: int, trim_every: float, defrag_every: float, **edge: object,
) -> None:  # fmt: skip
    """Start the server (in memory) on 127.0.0.1:11300 (beanstalkd) and :9922 (Workq)."""
    ctx = click.get_current_context()
    defaults = _default_ports(ctx)
    if print_config:
        click.echo(describe(ctx, _default_notes(defaults, port)))
        return
    check_cluster(ctx, cluster, node_id, address, port)
    setup_logging(verbose, log_format)
    from beanpod.server.app import serve as run_server

    config = ServerConfig(
        address=address, port=port, max_job_size=max_job_size, verbose=verbose,
        use_uvloop=not no_uvloop,
        workq_port=_workq_port(workq_port, "Workq" in defaults, port),
        default_ports=defaults,
        binlog_dir=binlog_dir, fsync_ms=fsync_ms, no_fsync=no_fsync, segment_size=segment_size,
        checkpoint_floor=checkpoint_floor,
        events_dir=events_dir, clock=clock, http=_http_address(http), http_token_file=http_token,
        metrics_max_tubes=metrics_max_tubes, analytics_dir=analytics_dir,
        check_moves=check_moves, edge=edge_settings(edge), redis_port=redis_port,
        redis_address=redis_listen, redis_password=_password(redis_password_file),
        redis_allow_flush=redis_allow_flush, cluster=cluster, node_id=node_id,
        checkpoint_batches=checkpoint_batches, trim_every=trim_every, defrag_every=defrag_every,
    )  # fmt: skip
    try:
        run_server(config)
    except StartupError as exc:
        _fail(exc, exc.exit_code)
    except KeyboardInterrupt:  # pragma: no cover - SIGINT is handled by the server
        pass
    except Exception as exc:
        code = _wal_exit_code(exc)
        if code is None:
            raise
        _fail(exc, code)


def _fail(exc: Exception, exit_code: int) -> None:
    click.echo(f"beanpod: {exc}", err=True)
    sys.exit(exit_code)


def _wal_exit_code(exc: Exception) -> int | None:
    """The exit status of a WAL failure, or None. The WAL's modules are imported only
    here: an in-memory server never loads them."""
    from beanpod.durability.restore import RestoreError
    from beanpod.storage.recovery import CorruptLog
    from beanpod.storage.segments import WalLocked

    if isinstance(exc, WalLocked):
        return EXIT_WAL_LOCKED
    if isinstance(exc, CorruptLog | RestoreError):
        return EXIT_DAMAGED_WAL
    return None


bind_environment(serve)


def check_clock(kind: str) -> str:
    """--clock: refuse an unknown clock as a usage error (exit 2)."""
    try:
        make_clock(kind)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return kind


def check_workq_port(value: object) -> int | None:
    """--workq-port: a port, or None for off (or unset: see `_workq_port`); anything else
    is a usage error. Parsed here once: the server's config takes the port as it is."""
    if value is None:
        return None
    try:
        return parse_workq_port(str(value))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _workq_port(given: int | None, unset: bool, beanstalkd_port: int) -> int | None:
    """The Workq port to serve (None: off): as given, or unset, its default."""
    return default_workq_port(beanstalkd_port) if unset else given


def _default_ports(ctx: click.Context) -> frozenset[str]:
    """The extra listeners nobody named (flag, environment, config file): their default
    port gives way when taken (server/ports.py)."""
    named = {"Workq": "workq_port", "HTTP": "http"}
    return frozenset(
        role
        for role, name in named.items()
        if ctx.get_parameter_source(name) is ParameterSource.DEFAULT
    )


def _default_notes(defaults: frozenset[str], port: int) -> dict[str, tuple[object, str]]:
    """--print-config: what the soft defaults stand for."""
    notes: dict[str, tuple[object, str]] = {}
    if "Workq" in defaults:
        free = port == 0
        notes["workq-port"] = (
            default_workq_port(port),
            "default (-p 0: a free port)" if free else SOFT,
        )
    if "HTTP" in defaults:
        notes["http"] = (DEFAULT_HTTP, SOFT)
    return notes


def _password(path: str | None) -> str | None:
    """--redis-password-file: its first line."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            return file.readline().rstrip("\r\n")
    except OSError as exc:
        raise click.BadParameter(str(exc), param_hint="'--redis-password-file'") from None


def _http_address(text: str) -> tuple[str, int] | None:
    try:
        return parse_http_address(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--http'") from None
