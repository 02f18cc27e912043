"""beanpod.testing's small parts: transcripts, fault bookkeeping, lazy exports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from beanpod.testing.faults import COMMAND_NAMES, Faults
from beanpod.testing.transcript import RECEIVED, SENT, Transcript


def test_a_transcript_joins_chunks_and_splits_lines() -> None:
    transcript = Transcript(conn_id=7)
    for direction, data in [(SENT, b"put 0 0 1 2\r"), (SENT, b"\nhi\r\n"),
                            (RECEIVED, b"INSERTED 1\r\n"), (SENT, b"quit")]:  # fmt: skip
        transcript.record(direction, data)
    assert transcript.lines() == ["> put 0 0 1 2", "> hi", "< INSERTED 1", "> quit"]
    assert transcript.sent == b"put 0 0 1 2\r\nhi\r\nquit"
    assert transcript.received == b"INSERTED 1\r\n"


def test_a_transcript_shows_binary_bodies_escaped() -> None:
    transcript = Transcript(conn_id=1)
    transcript.record(SENT, b"\xff\x00\r\n")
    assert transcript.text() == "> \\xff\x00"


def test_failures_are_taken_in_order_and_per_command() -> None:
    faults = Faults()
    faults.fail_next("put", "OUT_OF_MEMORY", times=2)
    faults.fail_next("reserve", "DEADLINE_SOON")
    assert faults.take("delete") is None
    assert faults.take("put") == b"OUT_OF_MEMORY\r\n"
    assert faults.take("reserve") == b"DEADLINE_SOON\r\n"
    assert faults.take("put") == b"OUT_OF_MEMORY\r\n"
    assert faults.take("put") is None


@pytest.mark.parametrize("word", ["out_of_memory", "", "INSERTED\r\n", "OK abc"])
def test_only_protocol_words_can_be_injected(word: str) -> None:
    with pytest.raises(ValueError, match="not a protocol reply word"):
        Faults().fail_next("put", word)


def test_every_beanstalkd_command_can_be_failed() -> None:
    assert {"put", "reserve", "reserve-with-timeout", "delete", "pause-tube"} <= COMMAND_NAMES


def test_importing_the_plugin_loads_no_server_code() -> None:
    code = (
        "import sys, beanpod.testing.plugin, beanpod.testing as t\n"
        "assert 'beanpod.server.app' not in sys.modules, 'server loaded'\n"
        "assert t.BeanpodServer.__name__ == 'BeanpodServer'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
