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
    NotFound,
    body_text,
    connect,
    emit_json,
    emit_mapping,
    server_options,
)

ALL = 2**32 - 1  # kick's bound when no N is given: everything
TUBE_COLUMNS = ("ready", "reserved", "delayed", "buried", "urgent", "waiting", "pause")


@click.command()
@click.argument("tube", required=False)
@server_options
def stats(tube: str | None, host: str, port: int, as_json: bool) -> None:
    """Server statistics, or one TUBE's (stats / stats-tube)."""
    with connect(host, port) as client:
        values = dict(client.stats() if tube is None else _stats_tube(client, tube))
    emit_json(values) if as_json else emit_mapping(values)


def _stats_tube(client: greenstalk.Client[bytes], tube: str) -> Any:
    try:
        return client.stats_tube(tube)
    except greenstalk.NotFoundError:
        raise NotFound(f"no tube {tube!r}") from None


@click.command()
@server_options
def tubes(host: str, port: int, as_json: bool) -> None:
    """Every tube with its jobs by state (list-tubes, then stats-tube each)."""
    with connect(host, port) as client:
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
@click.argument("job_id", required=False, type=int)
@click.option("--ready", "ready_tube", metavar="TUBE", help="The next ready job of TUBE.")
@click.option("--delayed", "delayed_tube", metavar="TUBE", help="The next delayed job of TUBE.")
@click.option("--buried", "buried_tube", metavar="TUBE", help="The oldest buried job of TUBE.")
@server_options
def peek(
    job_id: int | None, ready_tube: str | None, delayed_tube: str | None,
    buried_tube: str | None, host: str, port: int, as_json: bool,
) -> None:  # fmt: skip
    """Show one job: by ID, or the next --ready/--delayed/--buried job of a tube."""
    chosen = [(s, t) for s, t in (("ready", ready_tube), ("delayed", delayed_tube),
              ("buried", buried_tube)) if t is not None]  # fmt: skip
    if (job_id is None) == (not chosen) or len(chosen) > 1:
        raise click.UsageError("give a job ID or one of --ready/--delayed/--buried TUBE")
    tube = chosen[0][1] if chosen else "default"
    with connect(host, port, use=tube) as client:
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
@click.argument("tube")
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--pri", default=1024, show_default=True, type=click.IntRange(0, 2**32 - 1))
@click.option("--delay", default=0, show_default=True, type=click.IntRange(0), help="Seconds.")
@click.option("--ttr", default=60, show_default=True, type=click.IntRange(0), help="Seconds.")
@click.option("--lines", is_flag=True, help="One job per line of SOURCE (a progress bar shows).")
@server_options
def put(
    tube: str, source: IO[bytes], pri: int, delay: int, ttr: int, lines: bool, host: str,
    port: int, as_json: bool,
) -> None:  # fmt: skip
    """Put a job into TUBE with the bytes of SOURCE (a file, or - for stdin)."""
    bodies = [line.rstrip(b"\r\n") for line in source] if lines else [source.read()]
    with connect(host, port, use=tube) as client, _progress(len(bodies) > 1) as progress:
        task = progress.add_task("put", total=len(bodies))
        ids = []
        for body in bodies:
            ids.append(_put_one(client, body, pri, delay, ttr))
            progress.advance(task)
    if as_json:
        emit_json({"ids": ids} if lines else {"id": ids[0]})
    else:
        click.echo("\n".join(f"inserted {job_id}" for job_id in ids))


def _put_one(client: greenstalk.Client[bytes], body: bytes, pri: int, delay: int, ttr: int) -> int:
    try:
        return client.put(body, priority=pri, delay=delay, ttr=ttr)
    except greenstalk.BuriedError as exc:
        job_id = getattr(exc, "id", "?")
        raise click.ClickException(f"the server buried job {job_id}: out of memory") from None
    except greenstalk.BeanstalkdError as exc:
        raise click.ClickException(f"put refused: {type(exc).__name__}") from None


@click.command()
@click.argument("tube")
@click.argument("count", required=False, type=click.IntRange(1), default=ALL)
@server_options
def kick(tube: str, count: int, host: str, port: int, as_json: bool) -> None:
    """Kick up to COUNT (default: all) buried jobs of TUBE to ready; if it has none
    buried, its delayed jobs."""
    with connect(host, port, use=tube) as client:
        kicked = client.kick(count)
    emit_json({"kicked": kicked}) if as_json else click.echo(f"kicked {kicked}")


@click.command()
@click.argument("job_ids", nargs=-1, required=True, type=int)
@server_options
def delete(job_ids: tuple[int, ...], host: str, port: int, as_json: bool) -> None:
    """Delete jobs by id (ready, delayed or buried; a reserved job only by its worker)."""
    missing = []
    with connect(host, port) as client, _progress(len(job_ids) > 1) as progress:
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
        sys.exit(1)


def _ids(ids: list[int]) -> str:
    return " ".join(map(str, ids))


@click.command()
@click.argument("tube")
@click.argument("seconds", type=click.IntRange(0, 2**32 - 1))
@server_options
def pause(tube: str, seconds: int, host: str, port: int, as_json: bool) -> None:
    """Stop reservations from TUBE for SECONDS (0 ends a pause) (pause-tube)."""
    with connect(host, port) as client:
        try:
            client.pause_tube(tube, seconds)
        except greenstalk.NotFoundError:
            raise NotFound(f"no tube {tube!r}") from None
    emit_json({"tube": tube, "paused": seconds}) if as_json else click.echo(
        f"paused {tube} for {seconds} s" if seconds else f"unpaused {tube}"
    )


@click.command()
@click.argument("tube")
@click.option("--dump", type=click.File("w"), help="Write each job as a JSON line here first.")
@server_options
def drain(tube: str, dump: IO[str] | None, host: str, port: int, as_json: bool) -> None:
    """Delete every ready, delayed and buried job of TUBE (reserved jobs stay with their
    workers), writing each to --dump first when given."""
    with connect(host, port, use=tube) as client:
        counts = _stats_tube(client, tube)
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
