"""`beanpod serve`'s log set-up: every record once, on stderr, whichever beanpod logger
(the cluster's too) and however often it is set up."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from beanpod.cli.logs import setup_logging


@pytest.fixture
def restored() -> Iterator[None]:
    """setup_logging replaces the root logger's handlers: pytest's come back after."""
    root, beanpod = logging.getLogger(), logging.getLogger("beanpod")
    handlers, levels = root.handlers[:], (root.level, beanpod.level)
    yield
    root.handlers[:] = handlers
    root.setLevel(levels[0])
    beanpod.setLevel(levels[1])


@pytest.mark.usefixtures("restored")
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_cluster_line_is_written_once(
    capsys: pytest.CaptureFixture[str], log_format: str
) -> None:
    setup_logging(0, log_format)
    setup_logging(1, log_format)  # again (as a re-executed node does): still one handler
    logging.getLogger("beanpod.cluster").info("cluster c1: n1 leads")
    logging.getLogger("beanpod").warning("listening")
    lines = capsys.readouterr().err.splitlines()
    assert [("leads" in line, "listening" in line) for line in lines] == [
        (True, False),
        (False, True),
    ], lines
