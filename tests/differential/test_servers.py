"""The harness's server start-up: a session must never reach another session's server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from tests.differential.servers import HOST, _listening_in_proc, free_port


def test_a_listener_counts_only_for_the_process_that_owns_it() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind((HOST, 0))
        listener.listen()
        port = listener.getsockname()[1]
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert _listening_in_proc(port, os.getpid()) is True
            # A server that lost the race for this port must not pass for started.
            assert _listening_in_proc(port, other.pid) is False
        finally:
            other.kill()
            other.wait()


def test_free_port_never_hands_out_a_port_twice() -> None:
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
