"""`beanpod top`: a live per-tube view with rates, over the beanstalkd protocol."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import click
import greenstalk
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from beanpod.cli.admin import _tube_row
from beanpod.cli.admin_conn import Server, connect, server_options

TUBE_STATES = ("ready", "reserved", "delayed", "buried", "waiting")
SERVER_COUNTS = (("current-jobs-ready", "ready"), ("current-jobs-reserved", "reserved"),
                 ("current-workers", "workers"), ("current-waiting", "waiting"))  # fmt: skip
SERVER_RATES = (
    ("put/s", ("cmd-put",)),
    ("reserve/s", ("cmd-reserve", "cmd-reserve-with-timeout")),
    ("delete/s", ("cmd-delete",)),
)


@dataclass
class Sample:
    """One poll of the server: its stats, each tube's row and counters, and when."""

    at: float
    server: dict[str, Any]
    tubes: list[dict[str, Any]]
    tube_counters: dict[str, tuple[int, int]] = field(default_factory=dict)  # puts, deletes


def poll(client: greenstalk.Client[bytes]) -> Sample:
    sample = Sample(time.monotonic(), dict(client.stats()), [])
    for name in client.tubes():
        row = _tube_row(client, name)
        sample.tubes.append(row)
        try:
            s: Any = client.stats_tube(name)
        except greenstalk.NotFoundError:
            continue
        sample.tube_counters[name] = (s["total-jobs"], s["cmd-delete"])
    return sample


def render(now: Sample, before: Sample | None) -> Group:
    """The screen: a server line with rates, then one row per tube."""
    span = (now.at - before.at) if before else 0.0

    def rate(new: int, old: int) -> str:
        return f"{(new - old) / span:,.0f}" if span > 0 else "-"

    return Group(Text(_server_line(now, before, rate)), _tube_table(now, before, rate))


def _server_line(now: Sample, before: Sample | None, rate: Any) -> str:
    s = now.server
    parts = [f"beanpod top  {s.get('current-connections', 0)} connections"]
    for key, label in SERVER_COUNTS:
        parts.append(f"{s.get(key, 0)} {label}")
    for label, keys in SERVER_RATES:
        total = sum(int(s.get(k, 0)) for k in keys)
        old = sum(int(before.server.get(k, 0)) for k in keys) if before else total
        parts.append(f"{label} {rate(total, old)}")
    return "  ".join(parts)


def _tube_table(now: Sample, before: Sample | None, rate: Any) -> Table:
    table = Table("tube", *TUBE_STATES, "put/s", "delete/s", "pause", box=None, header_style="bold")
    for row in now.tubes:
        name = row["tube"]
        puts, deletes = now.tube_counters.get(name, (0, 0))
        old_puts, old_deletes = (before.tube_counters if before else {}).get(name, (puts, deletes))
        counts = [str(row[state]) for state in TUBE_STATES]
        pause = str(row["pause"]) if row["pause"] else ""
        table.add_row(name, *counts, rate(puts, old_puts), rate(deletes, old_deletes), pause)
    return table


@click.command()
@click.option("--interval", default=1.0, show_default=True, type=click.FloatRange(0.1),
              help="Seconds between refreshes.")  # fmt: skip
@click.option("--iterations", "-n", type=click.IntRange(1), help="Stop after N refreshes.")
@server_options
def top(interval: float, iterations: int | None, server: Server, as_json: bool) -> None:
    """A live view of every tube with put and delete rates (Ctrl-C quits). Not on a
    terminal, each refresh is printed in turn (with -n, for scripts)."""
    console = Console(soft_wrap=True)
    samples = _samples(server, interval, iterations)
    if as_json:  # one JSON object per refresh
        for sample, _ in samples:
            click.echo(json.dumps({"server": sample.server, "tubes": sample.tubes}))
    elif not console.is_terminal:
        for sample, before in samples:
            console.print(render(sample, before))
    else:
        with Live(console=console, auto_refresh=False) as live:
            for sample, before in samples:
                live.update(render(sample, before), refresh=True)


def _samples(
    server: Server, interval: float, iterations: int | None
) -> Iterator[tuple[Sample, Sample | None]]:
    """Poll and sleep until `iterations` samples or Ctrl-C; each with the one before. The
    connection is the generator's, so only its own failures are worded as the server's
    (not a closed stdout's)."""
    before: Sample | None = None
    count = 0
    try:
        with connect(server) as client:
            while iterations is None or count < iterations:
                if count:
                    time.sleep(interval)
                sample = poll(client)
                yield sample, before
                before, count = sample, count + 1
    except KeyboardInterrupt:
        return
