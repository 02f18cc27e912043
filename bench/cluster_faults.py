"""The cluster's fault run (issue 27): 3 etcd members and 3 nodes on 127.0.0.11-13,
HAProxy in front, producers and workers through it (beanstalkd), a Workq and a qless
client through its other frontends; faults one after another with recovery between;
then the checks, and a table of fault -> gap between puts.

    python -m bench.cluster_faults [--rounds 3] [--rate 50] [--door-rate 10]
        [--checkpoint-batches 200] [--trim-every 2] [--defrag-every 30] [--out FILE.md]

Round 1 is kill -9 of the leader, SIGTERM of it, kill -9 of its whole node (its etcd
member too), SIGSTOP of it for 8 s, a partition of its address (nftables), a follower's
disk full; each later round has the leader faults again, with two kill -9s. Run as root
(nftables, tmpfs). Every node keeps checkpoints and the leader trims the log below them
(`--checkpoint-batches 0`: neither, as the CI test runs). The report adds the largest
etcd dbSize seen and how often the log was trimmed. tests/integration/cluster/
test_fault_run.py runs one round.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.fault_checks import Verdict, judge
from bench.fault_cluster import FaultCluster, Trimming
from bench.fault_kinds import ONE_OF_EACH, ROUND, Fault, Outcome, Run
from bench.fault_load import Load

DB_LIMIT = 256 << 20  # etcd's database must stay under this (bytes)


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    verdict: Verdict = field(default_factory=Verdict)
    db_size: int = 0  # the largest seen through the run
    seconds: float = 0.0
    failures: int = 0  # calls that had to reconnect
    trims: int = 0  # times the leaders trimmed the log (with --checkpoint-batches)
    log_keys: int = 0  # log batches left in etcd at the end

    @property
    def problems(self) -> list[str]:
        """What must never happen: a lost acknowledgement, an old leader's, a full etcd."""
        found = [f"{o.fault}: {p}" for o in self.outcomes for p in o.problems]
        if self.db_size >= DB_LIMIT:
            found.append(f"etcd's database reached {self.db_size} bytes")
        return found + self.verdict.problems

    @property
    def slow(self) -> list[str]:
        """Gaps over the issue's bounds (timing: the bench's verdict, not CI's)."""
        return [f"{o.fault}: gap {o.gap:.2f} s > {o.limit} s"
                for o in self.outcomes if o.gap > o.limit]  # fmt: skip

    def table(self) -> str:
        rows = ["| fault | gap between acknowledged puts | bound | notes |", "|---|---|---|---|"]
        for o in self.outcomes:
            mark = "" if o.gap <= o.limit and not o.problems else " **FAIL**"
            rows.append(f"| {o.fault} | {o.gap:.2f} s{mark} | ≤ {o.limit} s | "
                        f"{'; '.join(o.notes + o.problems)} |")  # fmt: skip
        v = self.verdict
        rows.append("")
        rows.append(f"{v.inserted} puts acknowledged, {v.deleted} deletes acknowledged, "
                    f"{v.left} jobs left on the last leader, {v.unknown} deleted by a delete "
                    f"whose reply was lost; {self.failures} reconnects; "
                    f"etcd dbSize at most {self.db_size / (1 << 20):.1f} MiB; "
                    f"{self.seconds:.0f} s in all")  # fmt: skip
        if self.trims:
            rows.append(f"log trimmed {self.trims} times; {self.log_keys} log keys left in etcd")
        for name, (adds, completions) in v.doors.items():
            rows.append(f"{name} (through its frontend): {adds} adds and {completions} "
                        "completions acknowledged")  # fmt: skip
        rows.append("problems: " + ("; ".join(self.problems + self.slow) or "none"))
        return "\n".join(rows)


def faults(rounds: int) -> list[Fault]:
    return ONE_OF_EACH + ROUND * (rounds - 1)


def fault_run(workdir: Path, rounds: int = 1, rate: float = 50.0, log: bool = False,
              door_rate: float = 10.0, trimming: Trimming | None = None) -> Report:  # fmt: skip
    """Start everything, run the faults, check, stop everything."""
    started = time.monotonic()
    report = Report()
    cluster = FaultCluster(workdir, trimming=trimming)
    run: Run | None = None
    try:
        cluster.settle()
        run = Run(cluster, Load(cluster.proxy, 2, 2, rate, door_rate).start())
        time.sleep(2.0)
        for fault in faults(rounds):
            outcome = fault(run)
            report.outcomes.append(outcome)
            report.db_size = max(report.db_size, cluster.db_size())
            if log:
                print(f"{outcome.fault}: gap {outcome.gap:.2f} s {outcome.notes}"
                      f"{outcome.problems or ''}; etcd dbSize max {report.db_size >> 10} KiB, "
                      f"{cluster.trims()[0]} trims so far", flush=True)  # fmt: skip
        run.load.stop()
        report.failures = run.load.failures()
        cluster.settle()
        report.verdict = judge(run.load, cluster.proxy.beanstalkd)
        report.db_size = max(report.db_size, cluster.db_size())
        report.trims, report.log_keys = cluster.trims()
    finally:
        if run is not None:
            run.load.stop()
        cluster.stop()
        if run is not None and run.disk is not None:
            run.disk.detach()
    report.seconds = time.monotonic() - started
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=50.0, help="puts/s per producer (2)")
    parser.add_argument("--door-rate", type=float, default=10.0,
                        help="jobs/s the Workq and qless clients each add, complete")  # fmt: skip
    parser.add_argument("--checkpoint-batches", type=int, default=200,
                        help="each node checkpoints every N batches (0: no checkpoints, "
                             "no trimming)")  # fmt: skip
    parser.add_argument("--trim-every", type=float, default=2.0, help="seconds between trims")
    parser.add_argument("--defrag-every", type=float, default=30.0,
                        help="seconds between etcd defragmentations (0: never)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    parser.add_argument("--keep", action="store_true", help="keep the logs' directory")
    args = parser.parse_args()
    logging.getLogger("beanpod.client").setLevel(logging.ERROR)  # its reconnects: expected
    workdir = Path(tempfile.mkdtemp(prefix="beanpod-faults-"))
    trimming = None if args.checkpoint_batches <= 0 else Trimming(
        args.checkpoint_batches, args.trim_every, args.defrag_every)  # fmt: skip
    report = fault_run(workdir, args.rounds, args.rate, log=True, door_rate=args.door_rate,
                       trimming=trimming)  # fmt: skip
    table = report.table()
    print(table)
    if args.out is not None:
        args.out.write_text(table + "\n")
    failed = report.problems + report.slow
    if args.keep or failed:
        print(f"logs: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
