"""Admin commands over the beanstalkd protocol: stats, tubes, peek, put, kick, delete,
pause, drain. They work against beanpod and against any beanstalkd 1.12."""

from __future__ import annotations

import json
import sys
from typing import IO, Any

import click
import greenstalk
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from beanpod.cli.admin_conn import (
    Server,
    body_text,
    connect,
    emit_json,
    emit_mapping,
    server_options,
    tube_name,
)
from beanpod.cli.admin_errors import EXIT_NOT_FOUND, NotFound, TooBig

ALL = 2**32 - 1  # kick's bound when no N is given: everything
U32 = click.IntRange(0, 2**32 - 1)  # priorities and seconds: beanstalkd's unsigned 32 bits
JOB_ID = click.IntRange(0, 2**64 - 1)
TUBE_COLUMNS = ("ready", "reserved", "delayed", "buried", "urgent", "waiting", "pause")


@click.command()
@click.argument("tube", required=False, callback=tube_name)
@server_options
def stats(tube: str | None, server: Server, as_json: bool) -> None:
    """Server statistics, or one TUBE's (stats / stats-tube)."""
    with connect(server) as client:
        values = dict(client.stats() if tube is None else _stats_tube(client, tube))
    emit_json(values) if as_json else emit_mapping(values)


def _stats_tube(client: greenstalk.Client[bytes], tube: str) -> Any:
    try:
        return client.stats_tube(tube)
    except greenstalk.NotFoundError:
        raise NotFound(f"no tube {tube!r}") from None


@click.command()
@server_options
def tubes(server: Server, as_json: bool) -> None:
    """Every tube with its jobs by state (list-tubes, then stats-tube each)."""
    with connect(server) as client:
        rows = [_tube_row(client, name) for name in client.tubes()]
    if as_json:
        emit_json(rows)
        return
    table = Table("tube", *TUBE_COLUMNS, box=None, header_style="bold")
    for row in rows:
        table.add_row(row["tube"], *(str(row[column]) for column in TUBE_COLUMNS))
    Console(soft_wrap=True).print(table)


def _tube_row(client: greenstalk.Client[bytes], name: str) -> dict[str, Any]:
    try:
        s: Any = client.stats_tube(name)
    except greenstalk.NotFoundError:  # gone between list-tubes and stats-tube
        s = {}
    states = ("ready", "reserved", "delayed", "buried", "urgent")
    row: dict[str, Any] = {"tube": name}
    row.update({state: s.get(f"current-jobs-{state}", 0) for state in states})
    row["waiting"] = s.get("current-waiting", 0)
    row["pause"] = s.get("pause-time-left", 0)
    return row


@click.command()
@click.argument("job_id", required=False, type=JOB_ID)
@click.option(
    "--ready", "ready_tube", metavar="TUBE", callback=tube_name, help="The next ready job of TUBE."
)
@click.option("--delayed", "delayed_tube", metavar="TUBE", callback=tube_name,
              help="The next delayed job of TUBE.")  # fmt: skip
@click.option("--buried", "buried_tube", metavar="TUBE", callback=tube_name,
              help="The oldest buried job of TUBE.")  # fmt: skip
@server_options
def peek(
    job_id: int | None, ready_tube: str | None, delayed_tube: str | None,
    buried_tube: str | None, server: Server, as_json: bool,
) -> None:  # fmt: skip
    """Show one job: by ID, or the next --ready/--delayed/--buried job of a tube."""
    chosen = [(s, t) for s, t in (("ready", ready_tube), ("delayed", delayed_tube),
              ("buried", buried_tube)) if t is not None]  # fmt: skip
    if (job_id is None) == (not chosen) or len(chosen) > 1:
        raise click.UsageError("give a job ID or one of --ready/--delayed/--buried TUBE")
    tube = chosen[0][1] if chosen else "default"
    with connect(server, use=tube) as client:
        job = _peek(client, job_id, chosen[0][0] if chosen else None, tube)
        job_stats = dict(client.stats_job(job))
    if as_json:
        emit_json({"id": job.id, "stats": job_stats, **body_text(job.body)})
        return
    emit_mapping(job_stats)
    click.echo(f"body ({len(job.body)} bytes):")
    _echo_body(job.body)


def _peek(
    client: greenstalk.Client[bytes], job_id: int | None, state: str | None, tube: str
) -> greenstalk.Job[bytes]:
    try:
        if job_id is not None:
            return client.peek(job_id)
        return getattr(client, f"peek_{state}")()  # type: ignore[no-any-return]
    except greenstalk.NotFoundError:
        what = f"job {job_id}" if job_id is not None else f"{state} job in tube {tube!r}"
        raise NotFound(f"no {what}") from None


def _echo_body(body: bytes) -> None:
    fields = body_text(body)
    text = fields.get("body")
    click.echo(text if text is not None else f"(binary, base64) {fields['body_base64']}")


@click.command()
@click.argument("tube", callback=tube_name)
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--pri", default=1024, show_default=True, type=U32)
@click.option("--delay", default=0, show_default=True, type=U32, help="Seconds.")
@click.option("--ttr", default=60, show_default=True, type=U32, help="Seconds.")
@click.option("--lines", is_flag=True, help="One job per line of SOURCE (a progress bar shows).")
@server_options
def put(
    tube: str, source: IO[bytes], pri: int, delay: int, ttr: int, lines: bool,
    server: Server, as_json: bool,
) -> None:  # fmt: skip
    """Put a job into TUBE with the bytes of SOURCE (a file, or - for stdin)."""
    bodies = [line.rstrip(b"\r\n") for line in source] if lines else [source.read()]
    ids: list[int] = []
    try:
        with connect(server, use=tube) as client, _progress(len(bodies) > 1) as progress:
            task = progress.add_task("put", total=len(bodies))
            for body in bodies:
                ids.append(_put_one(client, body, pri, delay, ttr, len(ids) + 1 if lines else 0))
                progress.advance(task)
    finally:  # the jobs put before a failure are reported too: they are in the queue
        if ids or not bodies:
            _report_inserted(ids, lines, as_json)


def _report_inserted(ids: list[int], lines: bool, as_json: bool) -> None:
    if as_json:
        emit_json({"ids": ids} if lines else {"id": ids[0]})
    else:
        click.echo("\n".join(f"inserted {job_id}" for job_id in ids))


def _put_one(
    client: greenstalk.Client[bytes], body: bytes, pri: int, delay: int, ttr: int, line: int
) -> int:
    """One put; JOB_TOO_BIG says the size, the server's limit and the flag that sets it."""
    try:
        return client.put(body, priority=pri, delay=delay, ttr=ttr)
    except greenstalk.JobTooBigError:
        where = f"line {line}: " if line else ""
        raise TooBig(
            f"{where}job is {len(body)} bytes; the server takes at most "
            f"{_max_job_size(client)} (serve -z)"
        ) from None


def _max_job_size(client: greenstalk.Client[bytes]) -> str:
    """The server's max-job-size from its stats (the connection stays usable after
    JOB_TOO_BIG: the server skips the body)."""
    try:
        return str(client.stats()["max-job-size"])
    except (greenstalk.Error, OSError, KeyError):
        return "its max-job-size"


@click.command()
@click.argument("tube", callback=tube_name)
@click.argument("count", required=False, type=click.IntRange(1, ALL), default=ALL)
@server_options
def kick(tube: str, count: int, server: Server, as_json: bool) -> None:
    """Kick up to COUNT (default: all) buried jobs of TUBE to ready; if it has none
    buried, its delayed jobs."""
    with connect(server) as client:
        _stats_tube(client, tube)  # an unknown tube is NOT_FOUND, as for stats TUBE
        client.use(tube)
        kicked = client.kick(count)
    emit_json({"kicked": kicked}) if as_json else click.echo(f"kicked {kicked}")


@click.command()
@click.argument("job_ids", nargs=-1, required=True, type=JOB_ID)
@server_options
def delete(job_ids: tuple[int, ...], server: Server, as_json: bool) -> None:
    """Delete jobs by id (ready, delayed or buried; a reserved job only by its worker)."""
    missing = []
    with connect(server) as client, _progress(len(job_ids) > 1) as progress:
        task = progress.add_task("delete", total=len(job_ids))
        for job_id in job_ids:
            try:
                client.delete(job_id)
            except greenstalk.NotFoundError:
                missing.append(job_id)
            progress.advance(task)
    deleted = len(job_ids) - len(missing)
    if as_json:
        emit_json({"deleted": deleted, "not_found": missing})
    else:
        click.echo(f"deleted {deleted}" + (f", not found: {_ids(missing)}" if missing else ""))
    if missing:
        sys.exit(EXIT_NOT_FOUND)


def _ids(ids: list[int]) -> str:
    return " ".join(map(str, ids))


@click.command()
@click.argument("tube", callback=tube_name)
@click.argument("seconds", type=U32)
@server_options
def pause(tube: str, seconds: int, server: Server, as_json: bool) -> None:
    """Stop reservations from TUBE for SECONDS (0 ends a pause) (pause-tube)."""
    with connect(server) as client:
        try:
            client.pause_tube(tube, seconds)
        except greenstalk.NotFoundError:
            raise NotFound(f"no tube {tube!r}") from None
    emit_json({"tube": tube, "paused": seconds}) if as_json else click.echo(
        f"paused {tube} for {seconds} s" if seconds else f"unpaused {tube}"
    )


@click.command()
@click.argument("tube", callback=tube_name)
@click.option("--dump", type=click.File("w"), help="Write each job as a JSON line here first.")
@server_options
def drain(tube: str, dump: IO[str] | None, server: Server, as_json: bool) -> None:
    """Delete every ready, delayed and buried job of TUBE (reserved jobs stay with their
    workers), writing each to --dump first when given."""
    with connect(server) as client:
        counts = _stats_tube(client, tube)  # an unknown tube is NOT_FOUND, as for stats TUBE
        client.use(tube)
        total = sum(counts[f"current-jobs-{s}"] for s in ("ready", "delayed", "buried"))
        with _progress(total > 1) as progress:
            task = progress.add_task("drain", total=total)
            drained = _drain_all(client, dump, lambda: progress.advance(task))
        reserved = _stats_tube(client, tube)["current-jobs-reserved"]
    if as_json:
        emit_json({"drained": drained, "reserved_left": reserved})
    else:
        click.echo(f"drained {drained}" + (f" ({reserved} reserved left)" if reserved else ""))


def _drain_all(client: greenstalk.Client[bytes], dump: IO[str] | None, tick: Any) -> int:
    drained = 0
    for state in ("ready", "delayed", "buried"):
        while (job := _next(client, state)) is not None:
            if dump is not None:
                dump.write(json.dumps({"id": job.id, "state": state, **body_text(job.body)}))
                dump.write("\n")
            try:
                client.delete(job)
            except greenstalk.NotFoundError:  # taken by a worker meanwhile
                continue
            drained += 1
            tick()
    return drained


def _next(client: greenstalk.Client[bytes], state: str) -> greenstalk.Job[bytes] | None:
    try:
        return getattr(client, f"peek_{state}")()  # type: ignore[no-any-return]
    except greenstalk.NotFoundError:
        return None


def _progress(show: bool) -> Progress:
    """A progress bar on stderr for bulk work, shown only on a terminal."""
    return Progress(console=Console(stderr=True), disable=not (show and sys.stderr.isatty()))


COMMANDS = (stats, tubes, peek, put, kick, delete, pause, drain)
