"""The faults of the fault run, one function each: inject, wait for the cluster to serve
again, restore the machine, wait until every node names one leader. Each returns what
the table shows (the longest wait between two acknowledged puts around it)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.fault_cluster import FaultCluster, Machine, wait_until
from bench.fault_disk import FullDisk
from bench.fault_load import Load
from bench.fault_partition import Partition
from bench.fault_probe import Probe, acknowledged

PAUSE_SECONDS = 8.0
SETTLE_SECONDS = 1.0  # of puts flowing after the cluster settled, inside the gap's window


@dataclass
class Outcome:
    fault: str
    limit: float  # the bound on the gap (s)
    gap: float = 0.0
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class Run:
    cluster: FaultCluster
    load: Load
    disk: FullDisk | None = None

    def served_again(self, moment: float, old: Machine | None) -> None:
        """A leader other than `old` (when given) answers and a put was acknowledged since."""
        if old is not None:
            self.cluster.leader(60, besides=old.node)
        wait_until("a put acknowledged", lambda: self.load.puts_after(moment) > 0, 60)

    def measure(self, outcome: Outcome, moment: float) -> Outcome:
        """Once every node names one leader and puts flowed a while: the gap."""
        self.cluster.settle()
        settled = time.monotonic() - moment
        time.sleep(SETTLE_SECONDS)
        outcome.gap, began = self.load.gap(moment, time.monotonic())
        outcome.notes.append(f"gap began at {began:+.2f} s; all 3 nodes back at {settled:.0f} s")
        return outcome


def kill_leader(run: Run, sig: signal.Signals, limit: float) -> Outcome:
    outcome = Outcome(f"{sig.name} of the leader", limit)
    leader = run.cluster.leader()
    assert leader.node.process is not None
    moment = time.monotonic()
    os.kill(leader.node.process.pid, sig)
    run.served_again(moment, leader)
    run.cluster.restart_node(leader)
    return run.measure(outcome, moment)


def kill9(run: Run) -> Outcome:
    return kill_leader(run, signal.SIGKILL, 5.0)


def sigterm(run: Run) -> Outcome:
    return kill_leader(run, signal.SIGTERM, 1.5)


def whole_node(run: Run) -> Outcome:
    """kill -9 of the leader's node and of its etcd member (made etcd's Raft leader
    first: the worst case) together; both restart."""
    outcome = Outcome("kill -9 of the leader's whole node", 8.0)
    leader = run.cluster.leader()
    run.cluster.make_raft_leader(leader)
    moment = time.monotonic()
    for pid in leader.pids():
        os.kill(pid, signal.SIGKILL)
    run.served_again(moment, leader)
    run.cluster.restart_member(leader)
    run.cluster.restart_node(leader)
    return run.measure(outcome, moment)


def pause(run: Run) -> Outcome:
    """SIGSTOP of the leader for 8 s; woken, it must acknowledge nothing."""
    outcome = Outcome(f"SIGSTOP of the leader for {PAUSE_SECONDS:.0f} s", 5.0)
    leader = run.cluster.leader()
    assert leader.node.process is not None
    probe = Probe(leader.node)
    moment = time.monotonic()
    os.kill(leader.node.process.pid, signal.SIGSTOP)
    try:
        probe.ask()
        run.served_again(moment, leader)
        time.sleep(max(0.0, moment + PAUSE_SECONDS - time.monotonic()))
    finally:
        os.kill(leader.node.process.pid, signal.SIGCONT)
    return _old_leader_checked(run, outcome, leader, probe, moment)


def partition(run: Run) -> Outcome:
    """The leader's address cut off (its node and its etcd member, made etcd's Raft
    leader first: the worst case) for 8 s."""
    outcome = Outcome("partition of the leader's address", 5.0)
    leader = run.cluster.leader()
    run.cluster.make_raft_leader(leader)
    probe = Probe(leader.node)
    cut = Partition(leader)
    outcome.notes.append(f"by {cut.how}")
    moment = time.monotonic()
    with cut:
        probe.ask()
        run.served_again(moment, leader)
        time.sleep(max(0.0, moment + PAUSE_SECONDS - time.monotonic()))
    return _old_leader_checked(run, outcome, leader, probe, moment)


def _old_leader_checked(run: Run, outcome: Outcome, old: Machine, probe: Probe,
                        moment: float) -> Outcome:  # fmt: skip
    """What the old leader said on a connection opened before the fault, and on a new
    one once it is back: no INSERTED, no RESERVED."""
    answer = probe.answer()
    if acknowledged(answer):
        outcome.problems.append(f"the old leader answered {answer!r} after the fault")
    run.measure(outcome, moment)
    if run.cluster.leader().node is not old.node:  # (it may lead again, rightly)
        fresh = probe.afresh()
        if acknowledged(fresh):
            outcome.problems.append(f"the old leader, back, answered {fresh!r}")
    return outcome


def disk_full(run: Run) -> Outcome:
    """A follower's directory (tmpfs) filled up: the cluster keeps serving, and the
    follower keeps following. The disk stays full for `full_disk_leads`."""
    outcome = Outcome("a follower's disk full", 1.5)
    if os.geteuid() != 0:
        outcome.notes.append("skipped: mounting a tmpfs needs root")
        return outcome
    leader = run.cluster.leader()
    follower = next(m for m in run.cluster.machines if m is not leader)
    run.disk = disk = FullDisk(run.cluster, follower)
    disk.attach()
    run.cluster.settle()
    moment = time.monotonic()
    outcome.notes.append(f"{disk.fill()} bytes filled")
    time.sleep(5.0)
    node = follower.node
    if not node.alive():
        outcome.problems.append(f"the follower {node.node_id} died: see {node.log}")
    outcome.notes.append(f"follower /readyz {'200' if node.ready() else 'not 200'}")
    return run.measure(outcome, moment)


def full_disk_leads(run: Run) -> Outcome:
    """kill -9 of the leader while the other follower is paused: the node whose disk is
    full takes over and serves (its event log fails; the queue must not)."""
    outcome = Outcome("kill -9 of the leader: the full-disk node takes over", 5.0)
    if run.disk is None:
        outcome.notes.append("skipped: no full disk")
        return outcome
    full = run.disk.machine
    leader = run.cluster.leader()
    other = next(m for m in run.cluster.machines if m is not leader and m is not full)
    assert leader.node.process is not None and other.node.process is not None
    moment = time.monotonic()
    os.kill(other.node.process.pid, signal.SIGSTOP)
    try:
        os.kill(leader.node.process.pid, signal.SIGKILL)
        run.served_again(moment, leader)
    finally:
        os.kill(other.node.process.pid, signal.SIGCONT)
    if run.cluster.leader().node is not full.node:
        outcome.problems.append(f"{full.node.node_id} (disk full) did not take over")
    run.cluster.restart_node(leader)
    run.disk.free()
    return run.measure(outcome, moment)


Fault = Callable[[Run], Outcome]
ONE_OF_EACH: list[Fault] = [kill9, sigterm, whole_node, pause, partition, disk_full,
                             full_disk_leads]  # fmt: skip
ROUND: list[Fault] = [kill9, sigterm, kill9, whole_node, pause, partition]
