"""greenstalk's own test suite, unmodified, against `beanpod serve`.

The suite starts `$BEANSTALKD_PATH -l HOST -p PORT` (or `-l unix:PATH`) and connects
100 ms later, so it passes only if beanpod accepts connections as soon as beanstalkd
does. PyPI's greenstalk sdists carry no tests, so point GREENSTALK_TESTS at
test_greenstalk.py from a greenstalk source checkout (tests/test_greenstalk.py); the
installed greenstalk must be the same version. The suite uses 127.0.0.1:4444 and
/tmp/greenstalk-test.sock, so it is not run in parallel with itself.
"""

from __future__ import annotations

import compileall
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = os.environ.get("GREENSTALK_TESTS")
pytestmark = pytest.mark.skipif(
    not SUITE or not Path(SUITE).is_file(),
    reason="GREENSTALK_TESTS is not set to greenstalk's tests/test_greenstalk.py "
    "(PyPI's sdist has no tests; take it from a greenstalk source checkout)",
)
SRC = Path(__file__).resolve().parents[2] / "src"


def test_greenstalks_own_suite_passes_against_beanpod(tmp_path: Path) -> None:
    assert SUITE is not None
    wrapper = tmp_path / "beanstalkd"  # what a user would write: beanpod in beanstalkd's place
    script = Path(sys.executable).parent / "beanpod"
    command = f"{script}" if script.exists() else f"{sys.executable} -m beanpod"
    wrapper.write_text(f'#!/bin/sh\nexec {command} serve --workq-port off "$@"\n')
    wrapper.chmod(0o755)
    # As an installed package has it: with PYTHONDONTWRITEBYTECODE=1 and no __pycache__,
    # every server start would compile what it imports (tens of ms of a ~150 ms budget).
    compileall.compile_dir(SRC, quiet=1)
    env = {**os.environ, "BEANSTALKD_PATH": str(wrapper)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(Path(SUITE).resolve())],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-4000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and not re.search(r"failed|error|skipped", summary), summary
