"""Summaries, the Markdown table and the JSON file."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

Run = dict[str, Any]
DASH = "\u2013"  # en dash, for ranges and empty cells
NOISY = 0.15  # share of a core busy with work that is neither the server nor the load


def _ok(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.get("status") == "ok"]


def _spread(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(runs_a: list[Run], runs_b: list[Run]) -> dict[str, Any]:
    """Median/min/max per server and the pairwise ratio A/B over repeats."""
    out: dict[str, Any] = {}
    for key, runs in (("a", runs_a), ("b", runs_b)):
        ok = _ok(runs)
        out[key] = {
            "value": _spread([r["value"] for r in ok]),
            "cpu_us_per_op": _spread([r["cpu_us_per_op"] for r in ok if r.get("cpu_us_per_op")]),
            "server_cpu_util": _spread(
                [r["server_cpu_util"] for r in ok if r.get("server_cpu_util") is not None]
            ),
            "loader_cpu_util": _spread(
                [r["loader_cpu_util"] for r in ok if r.get("loader_cpu_util") is not None]
            ),
            "other_server_core": _spread(
                [r["other_util_server_core"] for r in ok if "other_util_server_core" in r]
            ),
            "other_load_core": _spread(
                [r["other_util_load_core"] for r in ok if "other_util_load_core" in r]
            ),
            "p50_us": _spread([r["p50_us"] for r in ok if "p50_us" in r]),
            "p99_us": _spread([r["p99_us"] for r in ok if "p99_us" in r]),
            "failures": [r for r in runs if r.get("status") != "ok"],
        }
    ratios = [
        a["value"] / b["value"]
        for a, b in zip(runs_a, runs_b, strict=False)
        if a.get("status") == "ok" and b.get("status") == "ok" and b["value"]
    ]
    out["ratio"] = _spread(ratios)
    cpu_ratios = [
        a["cpu_us_per_op"] / b["cpu_us_per_op"]
        for a, b in zip(runs_a, runs_b, strict=False)
        if a.get("status") == "ok"
        and b.get("status") == "ok"
        and a.get("cpu_us_per_op")
        and b.get("cpu_us_per_op")
    ]
    out["cpu_ratio"] = _spread(cpu_ratios)
    noise = [
        max(r.get("other_util_server_core", 0.0), r.get("other_util_load_core", 0.0))
        for r in _ok(runs_a) + _ok(runs_b)
    ]
    out["noisy"] = bool(noise) and max(noise) > NOISY
    return out


def fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _cell_value(s: dict[str, Any] | None, failures: list[Run]) -> str:
    if s is None:
        if failures and all(f.get("status") == "n/a" for f in failures):
            return "n/a"
        return "error" if failures else DASH
    text = f"{fmt(s['median'])} ({fmt(s['min'])}{DASH}{fmt(s['max'])})"
    if failures:
        text += f" [{len(failures)} failed]"
    return text


def _median(s: dict[str, Any] | None) -> float | None:
    return None if s is None else float(s["median"])


def _pct(s: dict[str, Any] | None) -> str:
    return DASH if s is None else f"{s['median'] * 100:.0f}"


def _max_pct(*spreads: dict[str, Any] | None) -> str:
    vals = [s["max"] for s in spreads if s is not None]
    return f"{max(vals) * 100:.0f}" if vals else DASH


def _lat(side: dict[str, Any]) -> str:
    if side["p50_us"] is None:
        return DASH
    return f"{fmt(_median(side['p50_us']))} / {fmt(_median(side['p99_us']))}"


def markdown(cells: list[dict[str, Any]], label_a: str, label_b: str) -> str:
    """Main table plus a CPU table; failures listed below as footnotes."""
    lines = [
        f"| cell | what | unit | {label_a} median (min{DASH}max) | {label_b} median (min{DASH}max) "
        f"| {label_a}/{label_b} (min{DASH}max) | server CPU µs/op {label_a} / {label_b} (ratio) "
        f"| p50 / p99 µs {label_a} | p50 / p99 µs {label_b} |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    notes: list[str] = []
    for c in cells:
        s = c["summary"]
        a, b = s["a"], s["b"]
        ratio = s["ratio"]
        ratio_txt = (
            DASH
            if ratio is None
            else (f"{ratio['median']:.2f} ({ratio['min']:.2f}{DASH}{ratio['max']:.2f})")
        )
        cpu = f"{fmt(_median(a['cpu_us_per_op']))} / {fmt(_median(b['cpu_us_per_op']))}"
        if s["cpu_ratio"] is not None:
            cpu += f" ({s['cpu_ratio']['median']:.2f})"
        name = c["name"] + (" ⚠" if s["noisy"] else "")
        lines.append(
            f"| {name} | {c['describe']} | {c['unit']} | "
            f"{_cell_value(a['value'], a['failures'])} | {_cell_value(b['value'], b['failures'])} "
            f"| {ratio_txt} | {cpu} | {_lat(a)} | {_lat(b)} |"
        )
        for label, side in ((label_a, a), (label_b, b)):
            seen: set[str] = set()
            for f in side["failures"]:
                msg = str(f.get("error", ""))[:400]
                if msg not in seen:
                    seen.add(msg)
                    notes.append(f"- {c['name']} / {label}: {f.get('status')}: {msg}")
    lines += [
        "",
        f"| cell | server CPU % {label_a} | server CPU % {label_b} "
        f"| loader CPU % {label_a} | loader CPU % {label_b} "
        f"| other busy % server core / load core (max over runs) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in cells:
        a, b = c["summary"]["a"], c["summary"]["b"]
        lines.append(
            f"| {c['name']} | {_pct(a['server_cpu_util'])} | {_pct(b['server_cpu_util'])} "
            f"| {_pct(a['loader_cpu_util'])} | {_pct(b['loader_cpu_util'])} "
            f"| {_max_pct(a['other_server_core'], b['other_server_core'])} "
            f"/ {_max_pct(a['other_load_core'], b['other_load_core'])} |"
        )
    if any(c["summary"]["noisy"] for c in cells):
        lines += [
            "",
            f"⚠ at least one run had more than {NOISY:.0%} of a core busy with other "
            "work (see the last column): throughput and latency are unreliable there, "
            "CPU µs/op much less so.",
        ]
    if notes:
        lines += ["", "Failures:", *notes]
    return "\n".join(lines)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str))
    tmp.replace(path)
