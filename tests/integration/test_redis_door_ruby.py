"""The Ruby gem's calls against the Redis door, as far as this machine allows: no
RubyGems here, so not the gem itself but tests/ruby/qless_gem_calls.rb, our script that
makes the gem's calls through Debian's redis-rb (ruby-redis 4.8, RESP2): INFO, EVALSHA
after NOSCRIPT and SCRIPT LOAD of qless-with-throttles' qless.lua (from the registry's
sdist at test time), put/pop/complete, MULTI/ZCARD/EXEC, a `user_script:` error,
throttle.release, PUBLISH and a bare UNSUBSCRIBE. `ruby` runs as a subprocess against a
real `beanpod serve --redis-port`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.qless_sdist import sdist
from tests.support.servers import SubprocessServer

SCRIPT = Path(__file__).parents[1] / "ruby" / "qless_gem_calls.rb"
STEPS = 16  # the "ok ..." lines the script prints when every step passes


def ruby() -> str:
    """The ruby binary, or skip when ruby or its redis library (ruby-redis) is missing."""
    found = shutil.which("ruby")
    if found is None:
        pytest.skip("ruby is not installed (apt-get install ruby ruby-redis)")
    probe = subprocess.run([found, "-e", "require 'redis'"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("ruby's redis library is not installed (apt-get install ruby-redis)")
    return found


def test_the_ruby_gems_calls(tmp_path: Path) -> None:
    binary = ruby()
    lua = sdist(tmp_path, "qless-with-throttles") / "qless" / "lua" / "qless.lua"
    server = SubprocessServer(["--redis-port", "0", "--http", "off"]).start()
    try:
        port = str(server.listener_port("Redis"))
        done = subprocess.run([binary, str(SCRIPT), port, str(lua)], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
    finally:
        server.stop()
    print(done.stdout)
    assert done.returncode == 0, done.stderr[-2000:]
    oks = [line for line in done.stdout.splitlines() if line.startswith("ok ")]
    assert len(oks) == STEPS, done.stdout
    assert "ok error: Complete(): Job j1 is not currently running" in done.stdout
    assert done.stderr == ""  # no warning from redis-rb about what the door answered
