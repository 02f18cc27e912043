"""`beanpod wal verify|dump DIR`: operator tools for a write-ahead log directory."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click

from beanpod.core import ext_codecs  # every extension's decoder, as `serve` registers them
from beanpod.core.engine import Engine
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.records import Record, RecordError, decode
from beanpod.durability.restore import RestoreError, Restorer
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.recovery import LogReader, salvage

DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.group()
def wal() -> None:
    """Inspect a write-ahead log directory (safe while the server runs)."""


def _records(reader: LogReader, bad: list[str]) -> Iterator[tuple[int, int, Record]]:
    paths = dict(reader.segments)
    for index, offset, payload in reader.records(strict=False):
        try:
            yield index, offset, decode(payload)
        except RecordError as exc:
            bad.append(f"{paths[index]} offset {offset}: {exc}")


@wal.command()
@click.argument("directory", type=DIR)
@click.option("--salvage", "do_salvage", is_flag=True,
              help="Keep every readable record: damaged segments are rewritten without "
                   "their damaged regions (originals saved as NAME.corrupt).")  # fmt: skip
def verify(directory: Path, do_salvage: bool) -> None:
    """Check every segment's header and records; exit 1 if start-up would refuse."""
    if do_salvage:
        for action in salvage(directory):
            click.echo(action)
    bad: list[str] = []
    engine = Engine()
    now = time.time_ns() // 1_000_000
    restorer = Restorer(engine)
    covered = _snapshot(directory, restorer, bad)
    reader = LogReader(directory, max(covered, default=0))
    try:
        for i, _, r in _records(reader, bad):
            restorer.feed(i, r)
        restored = restorer.finish(now)
    except RestoreError as exc:
        bad.append(str(exc))
        restored = None
    _report_segments(reader, bad)
    if restored is not None:
        n = engine.counts
        click.echo(
            f"{restored.jobs} jobs (ready {n.ready}, delayed {n.delayed}, buried "
            f"{n.buried}), {len(restored.paused)} paused tubes, "
            f"{len(restored.states)} named states, next id {restored.next_id}"
        )
    if bad:
        for line in bad:
            click.echo(f"error: {line}", err=True)
        click.echo(
            "run `beanpod wal verify --salvage DIR` to keep what is readable (see docs/wal.md)",
            err=True,
        )
        sys.exit(1)


def _report_segments(reader: LogReader, bad: list[str]) -> None:
    for r in reader.reports:
        state = "unused (preallocated, no records yet)" if r.unused else "ok"
        if r.damage:
            what = "torn tail (truncated at start-up)" if r.torn else "CORRUPT"
            state = "; ".join(f"{what} at offset {d.offset}: {d.reason}" for d in r.damage)
            if not r.torn:
                bad.append(f"{r.path} offset {r.damage[0].offset}: {r.damage[0].reason}")
        click.echo(f"{r.path.name}  v{r.version}  {r.records} records  {r.end} bytes  {state}")


def _snapshot(directory: Path, restorer: Restorer, bad: list[str]) -> dict[int, int]:
    """Check DIR/snapshot as start-up would and fold it in if start-up would use it;
    return the segments it covers (their records are then not read)."""
    path = snapshot_file.path_of(directory)
    snap, why = snapshot_file.read_usable(directory)
    if why is not None:
        click.echo(f"{path.name}  not used: {why} (start-up replays the whole log)")
    if snap is None or why is not None:
        return {}
    try:
        jobs = snapshot_payload.load_all(restorer, snap.data, snap.start)
    except RecordError as exc:
        bad.append(f"{path}: {exc} (remove it: the log is then replayed whole)")
        return {}
    click.echo(
        f"{path.name}  v{snapshot_file.VERSION}  {jobs} jobs  covers segments "
        f"{min(snap.covered)}..{snap.last} (not read at start-up)"
    )
    return snap.covered


@wal.command()
@click.argument("directory", type=DIR)
@click.option(
    "--bodies", is_flag=True, help="Print job bodies and extension bytes too (Python bytes syntax)."
)
def dump(directory: Path, bodies: bool) -> None:
    """Print every record, one per line: SEGMENT:OFFSET TYPE FIELDS."""
    _dump_snapshot(directory, bodies)
    reader = LogReader(directory)
    bad: list[str] = []
    for index, offset, rec in _records(reader, bad):
        fields = rec._asdict()
        body = fields.pop("body", None)
        ext = fields.pop("ext", b"")
        text = " ".join(
            f"{k}={v!r}" if isinstance(v, bytes | str) else f"{k}={v}" for k, v in fields.items()
        )
        if ext:
            text += f" ext={ext_codecs.describe(fields['ext_kind'], ext)} ext_bytes={len(ext)}"
            text += f" ext_data={ext!r}" if bodies else ""
        if body is not None:
            text += f" body={body!r}" if bodies else f" body_bytes={len(body)}"
        click.echo(f"{index}:{offset} {type(rec).__name__[:-6].lower()} {text}")
    for r in reader.reports:
        for d in r.damage:
            kind = "torn tail" if r.torn else "damage"
            click.echo(f"# {r.path.name}: {kind} at offset {d.offset}: {d.reason}", err=True)
    for line in bad:
        click.echo(f"# {line}", err=True)


def _dump_snapshot(directory: Path, bodies: bool) -> None:
    """The snapshot's jobs, one line each (`snapshot:N job ...`), before the records."""
    try:
        snap = snapshot_file.read(directory)
        if snap is None:
            return
        restorer = Restorer(Engine())
        snapshot_payload.load_all(restorer, snap.data, snap.start)
    except (snapshot_file.SnapshotError, RecordError, OSError) as exc:
        click.echo(f"# snapshot: not readable: {exc}", err=True)
        return
    click.echo(
        f"# snapshot: covers segments {min(snap.covered)}..{snap.last}, next id {restorer.next_id}"
    )
    for n, job in enumerate(restorer.jobs.values()):
        body = f"body={job.body!r}" if bodies else f"body_bytes={len(job.body)}"
        state = job.state.name.lower()
        fields = f"pri={job.pri} delay={job.delay} ttr={job.ttr} file={job.file}"
        if job.id in restorer.ext:
            fields += f" ext={ext_codecs.describe(*restorer.ext[job.id])}"
        click.echo(
            f"snapshot:{n} job id={job.id} tube={job.tube.name!r} state={state} {fields} {body}"
        )
