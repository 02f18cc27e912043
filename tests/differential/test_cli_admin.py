"""The admin CLI speaks plain beanstalkd: the same commands against beanpod and against a
real beanstalkd 1.12 print the same output (process-specific values aside)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from beanpod.cli import main
from tests.differential.servers import BEANSTALKD, Server

pytestmark = pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd is not on PATH")

AGE = re.compile(r"^(age:\s+)\d+$", re.M)  # seconds since put: may tick over between servers


@pytest.fixture(params=["beanpod", "beanstalkd"])
def port(request: pytest.FixtureRequest) -> Iterator[int]:
    server = Server(request.param).start()
    yield server.port
    server.stop()


def run(port: int, *args: str, stdin: str | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(main, [*args, "-p", str(port)], input=stdin)
    assert result.exit_code == code, result.output
    return AGE.sub(r"\g<1>N", result.output)


def session(port: int) -> list[str]:
    """A scripted admin session; every output, in order."""
    out = [run(port, "put", "emails", stdin="hello"), run(port, "put", "emails", "--pri", "5",
           "--delay", "100", "--ttr", "7", stdin="later")]  # fmt: skip
    out.append(run(port, "put", "emails", "--lines", "--json", stdin="a\nb\nc\n"))
    out += [run(port, "tubes"), run(port, "tubes", "--json"), run(port, "peek", "1")]
    out += [run(port, "peek", "--delayed", "emails", "--json"), run(port, "stats", "emails")]
    out.append(run(port, "peek", "--buried", "emails", code=1))
    out += [run(port, "pause", "emails", "30"), run(port, "stats", "emails", "--json")]
    out += [run(port, "pause", "emails", "0"), run(port, "kick", "emails", "--json")]
    out += [run(port, "delete", "3", "99", code=1), run(port, "delete", "4", "--json")]
    out.append(run(port, "drain", "emails", "--dump", "-"))
    out += [run(port, "tubes"), run(port, "stats", "nope", code=1)]
    out.append(run(port, "pause", "nope", "1", code=1))
    out += [run(port, "kick", "nope", code=1), run(port, "drain", "nope", code=1)]
    return out


def test_every_command_prints_the_same_against_beanpod_and_beanstalkd() -> None:
    outputs = {}
    for kind in ("beanpod", "beanstalkd"):
        server = Server(kind).start()
        try:
            outputs[kind] = session(server.port)
        finally:
            server.stop()
    for ours, theirs in zip(outputs["beanpod"], outputs["beanstalkd"], strict=True):
        assert ours == theirs


def test_session_output_is_what_an_operator_expects(port: int) -> None:
    out = session(port)
    assert out[0] == "inserted 1\n"
    assert json.loads(out[2]) == {"ids": [3, 4, 5]}
    assert "emails" in out[3] and "4 " in out[3].split("emails")[1]
    assert "body (5 bytes):\nhello\n" in out[5]
    assert json.loads(out[6])["body"] == "later"
    assert "no buried job in tube 'emails'" in out[8]
    assert out[9] == "paused emails for 30 s\n"
    assert json.loads(out[12]) == {"kicked": 1}  # nothing buried: the delayed job
    assert out[13] == "deleted 1, not found: 99\n"
    lines = out[15].splitlines()
    assert [json.loads(line)["body"] for line in lines[:-1]] == [
        "later",
        "hello",
        "c",
    ]  # by priority
    assert lines[-1] == "drained 3"
    assert "no tube 'nope'" in out[17]


def test_top_prints_each_refresh_with_rates(port: int) -> None:
    run(port, "put", "jobs", stdin="x")
    out = run(port, "top", "-n", "2", "--interval", "0.1")
    assert out.count("beanpod top") == 2 and "jobs" in out and "put/s" in out
    frames = run(port, "top", "-n", "2", "--interval", "0.1", "--json").splitlines()
    assert [t["tube"] for t in json.loads(frames[1])["tubes"]] == ["default", "jobs"]


def test_unreachable_server_is_one_line_and_status_2() -> None:
    result = CliRunner().invoke(main, ["stats", "-p", "1"])
    assert result.exit_code == 2
    assert result.output.startswith("Error: cannot connect to 127.0.0.1:1: connection refused;")
