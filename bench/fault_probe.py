"""A connection straight to a leader (not through the proxy), opened before it is paused
or cut off; while it cannot run or be reached, it is asked for a job and sent a put.
When it wakes or the cut heals, whatever it answers must acknowledge nothing and hand
out nothing (its lease may have run out: another node leads)."""

from __future__ import annotations

import socket
import time

from bench.cluster_nodes import Node

ASK = b"reserve-with-timeout 0\r\nput 0 0 60 5\r\nprobe\r\n"


class Probe:
    def __init__(self, node: Node) -> None:
        self.node = node
        self.sock = socket.create_connection(node.address, timeout=5)

    def ask(self) -> None:
        """While the leader is paused or cut off (the bytes wait in a buffer)."""
        self.sock.sendall(ASK)

    def answer(self, seconds: float = 15) -> bytes:
        """What it sent back before closing (or within `seconds`)."""
        data = b""
        deadline = time.monotonic() + seconds
        with self.sock:
            while time.monotonic() < deadline:
                try:
                    chunk = self.sock.recv(4096)
                except TimeoutError:
                    continue
                except OSError:  # reset: it re-executed itself
                    return data
                if not chunk:
                    return data
                data += chunk
        return data

    def afresh(self) -> bytes:
        """A new connection to the old leader, once it is up again: a put there must not
        be acknowledged (a follower closes the connection)."""
        try:
            with socket.create_connection(self.node.address, timeout=5) as sock:
                sock.sendall(ASK)
                return sock.recv(4096)
        except OSError:
            return b""


def acknowledged(answer: bytes) -> bool:
    return b"INSERTED" in answer or b"RESERVED" in answer
