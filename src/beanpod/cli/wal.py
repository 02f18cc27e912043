"""`beanpod wal verify|dump DIR`: operator tools for a write-ahead log directory."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click

from beanpod.core.engine import Engine
from beanpod.core.records import Record, RecordError, decode
from beanpod.core.restore import RestoreError, restore
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
    reader = LogReader(directory)
    bad: list[str] = []
    engine = Engine()
    now = time.time_ns() // 1_000_000
    try:
        restored = restore(engine, ((i, r) for i, _, r in _records(reader, bad)), now)
    except RestoreError as exc:
        bad.append(str(exc))
        restored = None
    for r in reader.reports:
        state = "unused (preallocated, no records yet)" if r.unused else "ok"
        if r.damage:
            what = "torn tail (truncated at start-up)" if r.torn else "CORRUPT"
            state = "; ".join(f"{what} at offset {d.offset}: {d.reason}" for d in r.damage)
            if not r.torn:
                bad.append(f"{r.path} offset {r.damage[0].offset}: {r.damage[0].reason}")
        click.echo(f"{r.path.name}  v{r.version}  {r.records} records  {r.end} bytes  {state}")
    if restored is not None:
        n = engine.counts
        click.echo(f"{restored.jobs} jobs (ready {n.ready}, delayed {n.delayed}, buried "
                   f"{n.buried}), {len(restored.paused)} paused tubes, "
                   f"{len(restored.states)} named states, next id {restored.next_id}")  # fmt: skip
    if bad:
        for line in bad:
            click.echo(f"error: {line}", err=True)
        click.echo("run `beanpod wal verify --salvage DIR` to keep what is readable "
                   "(see docs/wal.md)", err=True)  # fmt: skip
        sys.exit(1)


@wal.command()
@click.argument("directory", type=DIR)
@click.option("--bodies", is_flag=True, help="Print job bodies too (Python bytes syntax).")
def dump(directory: Path, bodies: bool) -> None:
    """Print every record, one per line: SEGMENT:OFFSET TYPE FIELDS."""
    reader = LogReader(directory)
    bad: list[str] = []
    for index, offset, rec in _records(reader, bad):
        fields = rec._asdict()
        body = fields.pop("body", None)
        text = " ".join(f"{k}={v!r}" if isinstance(v, bytes | str) else f"{k}={v}"
                        for k, v in fields.items() if k != "ext" or v)  # fmt: skip
        if body is not None:
            text += f" body={body!r}" if bodies else f" body_bytes={len(body)}"
        click.echo(f"{index}:{offset} {type(rec).__name__[:-6].lower()} {text}")
    for r in reader.reports:
        for d in r.damage:
            kind = "torn tail" if r.torn else "damage"
            click.echo(f"# {r.path.name}: {kind} at offset {d.offset}: {d.reason}", err=True)
    for line in bad:
        click.echo(f"# {line}", err=True)
