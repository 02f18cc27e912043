"""The fault run's verdicts, once the load has stopped: every acknowledged put is either
acknowledged deleted or still on the last leader with its body (peeked through the
proxy); no acknowledged delete is undone; ids are unique, and rising per producer; a
woken or cut-off old leader acknowledged nothing (bench/fault_probe.py). The Workq and
qless clients alike: every acknowledged add/put is there, every acknowledged completion
is still complete, and no job was handed out again after its completion."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import BinaryIO

from bench.fault_doors import DoorClient
from bench.fault_load import Load

CHUNK = 500  # peeks pipelined per round trip


def peek_all(address: tuple[str, int], ids: list[int]) -> dict[int, bytes | None]:
    """`peek <id>` for every id (pipelined): its body, or None where NOT_FOUND."""
    found: dict[int, bytes | None] = {}
    with socket.create_connection(address, timeout=30) as sock:
        reader = sock.makefile("rb")
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            sock.sendall(b"".join(b"peek %d\r\n" % jid for jid in chunk))
            for jid in chunk:
                found[jid] = _peek_reply(reader, jid)
    return found


def _peek_reply(reader: BinaryIO, jid: int) -> bytes | None:
    line = reader.readline()
    if line == b"NOT_FOUND\r\n":
        return None
    word, got, size = line.split()
    assert word == b"FOUND" and int(got) == jid, f"peek {jid}: {line!r}"
    return reader.read(int(size) + 2)[:-2]


@dataclass
class Verdict:
    inserted: int = 0
    deleted: int = 0
    left: int = 0  # acknowledged, not deleted, still there
    unknown: int = 0  # deleted by a delete whose reply was lost (not acknowledged)
    doors: dict[str, tuple[int, int]] = field(default_factory=dict)  # adds, completions
    problems: list[str] = field(default_factory=list)

    def check(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)


def judge(load: Load, proxy: tuple[str, int]) -> Verdict:
    verdict = Verdict()
    bodies = {jid: body for p in load.producers for _, jid, body in p.acked}
    deleted = {jid: body for w in load.workers for _, jid, body in w.deleted}
    verdict.inserted, verdict.deleted = len(bodies), len(deleted)
    for producer in load.producers:
        ids = producer.ids()
        verdict.check(ids == sorted(set(ids)), f"{producer.name}: ids not unique and rising")
    every = [jid for p in load.producers for jid in p.ids()]
    verdict.check(len(every) == len(set(every)), "an id was acknowledged to two puts")
    wrong = [jid for jid, body in deleted.items() if jid in bodies and bodies[jid] != body]
    verdict.check(not wrong, f"{len(wrong)} jobs handed out with another body: {wrong[:5]}")
    now = peek_all(proxy, sorted(set(bodies) | set(deleted)))
    sent = {jid for w in load.workers for jid in w.unknown}  # outcome unknown: gone or not
    gone = [jid for jid in bodies if jid not in deleted and now[jid] != bodies[jid]]
    lost = [jid for jid in gone if jid not in sent or now[jid] is not None]
    verdict.unknown = len(gone) - len(lost)
    verdict.check(not lost, f"{len(lost)} acknowledged puts lost: {lost[:5]}")
    undone = [jid for jid in deleted if now[jid] is not None]
    verdict.check(not undone, f"{len(undone)} acknowledged deletes undone: {undone[:5]}")
    verdict.left = sum(1 for jid in bodies if now[jid] is not None)
    for door in load.doors:
        judge_door(door, verdict)
    return verdict


def judge_door(door: DoorClient, verdict: Verdict) -> None:
    """A Workq or qless client's acknowledgements, against its jobs' states now."""
    verdict.doors[door.name] = len(door.acked), len(door.completed)
    now = door.states(sorted(set(door.acked) | set(door.completed)))
    lost = [job for job in door.acked if now[job] is None]
    verdict.check(not lost, f"{door.name}: {len(lost)} acknowledged adds lost: {lost[:5]}")
    undone = [job for job in door.completed if now[job] != door.done]
    verdict.check(not undone, f"{door.name}: {len(undone)} acknowledged completions undone: "
                              f"{[(job, now[job]) for job in undone[:5]]}")  # fmt: skip
    verdict.check(not door.again, f"{door.name}: {len(door.again)} jobs handed out again "
                                  f"after their completion: {door.again[:5]}")  # fmt: skip
