"""What one client connection sent and received, in order, for golden tests."""

from __future__ import annotations

from dataclasses import dataclass, field

SENT, RECEIVED = ">", "<"  # from the client's point of view: > it sent, < it received


@dataclass
class Transcript:
    conn_id: int
    chunks: list[tuple[str, bytes]] = field(default_factory=list)  # (direction, bytes)

    def record(self, direction: str, data: bytes) -> None:
        if self.chunks and self.chunks[-1][0] == direction:
            self.chunks[-1] = (direction, self.chunks[-1][1] + data)
        else:
            self.chunks.append((direction, data))

    @property
    def sent(self) -> bytes:
        return b"".join(data for direction, data in self.chunks if direction == SENT)

    @property
    def received(self) -> bytes:
        return b"".join(data for direction, data in self.chunks if direction == RECEIVED)

    def lines(self) -> list[str]:
        """Each CRLF-ended line, prefixed '> ' (client sent) or '< ' (server replied);
        bytes that are not UTF-8 are shown escaped."""
        out: list[str] = []
        for direction, data in self.chunks:
            text = data.decode("utf-8", "backslashreplace")
            out.extend(f"{direction} {line}" for line in text.split("\r\n")[:-1])
            if not text.endswith("\r\n"):
                out.append(f"{direction} {text.split(chr(13) + chr(10))[-1]}")
        return out

    def text(self) -> str:
        return "\n".join(self.lines())
