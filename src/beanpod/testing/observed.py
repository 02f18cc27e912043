"""What the harness saw of its clients since the last reset: commands by name, tubes
named, and each connection's transcript. Kept by the harness's own sessions only, so the
production server's hot path pays nothing for it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from beanpod.protocols.beanstalkd import commands, wire
from beanpod.protocols.beanstalkd.context import Context
from beanpod.protocols.beanstalkd.handlers import HANDLERS, Handler
from beanpod.testing.faults import Faults
from beanpod.testing.transcript import Transcript

# Parser outcomes that are a malformed run of a real command.
ALIASES = {commands.PUT_TOO_BIG: "put", commands.PUT_BAD_CRLF: "put",
           commands.PUT_TRAILING: "put", commands.QLESS_TOO_BIG: "qless"}  # fmt: skip
NAMING_TUBES = frozenset({wire.USE, wire.WATCH})


class Observed:
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.counts: Counter[str] = Counter()
        self.tubes_named: set[str] = {"default"}
        self.transcripts: list[Transcript] = []
        self.inserted: list[tuple[str, int, bytes]] = []  # (tube, id, body) of client puts
        self.handlers = {verb: self._wrap(verb, handler) for verb, handler in HANDLERS.items()}

    def clear(self) -> None:
        self.counts.clear()
        self.tubes_named = {"default"}
        self.transcripts.clear()
        self.inserted.clear()

    def _wrap(self, verb: bytes, handler: Handler) -> Handler:
        """The handler, counted and failable; protocol errors (c.ERROR) pass as they are."""
        name = ALIASES.get(verb) or verb.decode().strip()
        if verb == commands.ERROR:
            return handler
        names_tube, is_put = verb in NAMING_TUBES, verb == wire.PUT
        counts, take = self.counts, self.faults.take

        def observed(session: Context, cmd: tuple[Any, ...]) -> bytes | None:
            counts[name] += 1
            if names_tube:
                self.tubes_named.add(str(cmd[1]))
            failure = take(name)
            if failure is not None:
                return failure
            reply = handler(session, cmd)
            if is_put and reply is not None and reply.startswith(b"INSERTED "):
                self.inserted.append((session.conn.use.name, int(reply[9:-2]), cmd[-1]))
            return reply

        return observed

    def name_tube(self, name: str) -> None:
        self.tubes_named.add(name)

    def transcript(self, conn_id: int) -> Transcript:
        transcript = Transcript(conn_id)
        self.transcripts.append(transcript)
        return transcript
