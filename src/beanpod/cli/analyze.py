"""``beanpod analyze``: run the PySpark pipeline over an event log (needs beanpod[analytics])."""

from __future__ import annotations

import importlib.util
from datetime import date, datetime

import click

INSTALL_HINT = "pyspark is not installed: pip install beanpod[analytics]"


def _day(
    ctx: click.Context | None, param: click.Parameter | None, value: str | None
) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a day like 2024-05-31") from None


@click.command("analyze")
@click.option("--events", "events_uri", required=True, help="Event log directory or URI.")
@click.option("--out", "out_uri", required=True, help="Output directory or URI.")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--from", "day_from", default=None, callback=_day, help="First UTC day.")
@click.option("--to", "day_to", default=None, callback=_day, help="Last UTC day.")
def analyze(
    events_uri: str, out_uri: str, master: str | None, day_from: date | None, day_to: date | None
) -> None:
    """Turn the event log into queue statistics (Parquet) and OUT/report.html."""
    if importlib.util.find_spec("pyspark") is None:
        raise click.ClickException(INSTALL_HINT)
    if day_from and day_to and day_from > day_to:
        raise click.BadParameter("--from is after --to")
    from beanpod.analytics.pipeline import Progress, run

    def show(p: Progress) -> None:
        now = datetime.now().strftime("%H:%M:%S")
        if p.seconds is None:
            click.echo(f"{now} [{p.index}/{p.total}] {p.stage} ...", err=True)
        else:
            click.echo(f"{now} [{p.index}/{p.total}] {p.stage} done ({p.seconds:.1f}s)", err=True)

    seconds = run(events_uri, out_uri, master, day_from, day_to, progress=show)
    click.echo(
        f"wrote {out_uri.rstrip('/')}/report.html and {len(seconds) - 3} tables "
        f"in {sum(seconds.values()):.1f}s"
    )
