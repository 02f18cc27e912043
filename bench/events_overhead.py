"""Events-on overhead from one benchmark JSON: ``<cell>_ev`` against ``<cell>``, beanpod only.

    python -m bench --servers beanpod,beanpod --repeat 3 \\
        --cells put_d64_c4,put_d64_c4_ev,rd_d64_c4,rd_d64_c4_ev --out /tmp/ev.json
    python -m bench.events_overhead /tmp/ev.json

Pools the beanpod runs of both sides (``--servers beanpod,beanpod`` doubles the samples)
and prints, per cell pair, the median throughput and server CPU µs/op with events off and
on, and their ratios. Server CPU per op is the steadier figure on a busy machine: the issue's
bar (throughput with events >= 0.8x without) corresponds to CPU/op on <= 1.25x off.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

SUFFIX = "_ev"


def _beanpod_runs(cell: dict[str, Any], servers: dict[str, str]) -> list[dict[str, Any]]:
    return [
        run
        for side, runs in cell["runs"].items()
        if servers.get(side.upper(), "").startswith("beanpod")
        for run in runs
        if run.get("status") == "ok"
    ]


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def overhead(payload: dict[str, Any]) -> list[str]:
    """One line per ``X`` / ``X_ev`` pair found in the payload."""
    cells = {c["name"]: c for c in payload["cells"]}
    servers = payload["servers"]
    lines = []
    for name, cell in cells.items():
        if not name.endswith(SUFFIX) or name[: -len(SUFFIX)] not in cells:
            continue
        off = _beanpod_runs(cells[name[: -len(SUFFIX)]], servers)
        on = _beanpod_runs(cell, servers)
        v_off, v_on = _median(off, "value"), _median(on, "value")
        c_off, c_on = _median(off, "cpu_us_per_op"), _median(on, "cpu_us_per_op")
        if None in (v_off, v_on, c_off, c_on):
            lines.append(f"{name}: no beanpod runs on one side")
            continue
        assert v_off and v_on and c_off and c_on
        lines.append(
            f"{name[: -len(SUFFIX)]:<12} off {v_off:>9.0f} {cell['unit']}, "
            f"{c_off:6.2f} µs CPU/op | on {v_on:>9.0f}, {c_on:6.2f} µs CPU/op | "
            f"throughput on/off {v_on / v_off:.2f}x, CPU/op on/off {c_on / c_off:.2f}x "
            f"(runs {len(off)}/{len(on)})"
        )
    return lines


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if path is None:
        results = sorted((Path(__file__).parent / "results").glob("*.json"))
        if not results:
            raise SystemExit("no benchmark JSON given or found in bench/results")
        path = results[-1]
    print("\n".join(overhead(json.loads(path.read_text()))) or "no <cell>/<cell>_ev pairs")


if __name__ == "__main__":
    main()
