"""What `beanpod serve` has done at the two moments its start-up time is made of: when
its early listeners accept (cli/early.py), and when the beanstalkd listener serves, so
the first reply can go out. The probe is the real CLI with a hook at each moment; it
prints a JSON object (the modules loaded at each moment, whether the collector runs)
and leaves at the moment asked for.

`python -m bench.startup --instructions` counts the instructions from exec to each
moment under cachegrind (deterministic, where a busy machine makes the wall times swing);
tests/integration/test_startup_imports.py checks what is loaded by then.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.instructions import cachegrind_count

# argv: STOP ("listening" or "serving"), then `beanpod serve`'s arguments. Nothing is
# imported before the hooks that `beanpod serve` would not import itself.
PROBE = """
import gc, os, sys
import beanpod.server.early_listen as early
stop, seen = sys.argv.pop(1), {}
def leave(moment):
    seen[moment] = sorted(sys.modules)
    if moment == stop:
        import json
        print(json.dumps(seen), flush=True)
        os._exit(0)
listen_all = early.listen_all
def listening(*args):
    listen_all(*args)
    seen["collecting"] = gc.isenabled()
    leave("listening")
early.listen_all = listening  # before beanpod.cli imports it
sys.argv = ["beanpod", "serve", *sys.argv[1:]]
import beanpod.cli
from beanpod.server import ports  # the server imports it before serving anyway
serve = ports.ListenSockets.serve
async def serving(self, role, *args):
    server = await serve(self, role, *args)
    if role == "beanstalkd":
        leave("serving")
    return server
ports.ListenSockets.serve = serving
beanpod.cli.main()
"""
# Every listener on, as `beanpod serve` starts by default, on free ports.
SERVE_ARGS = ("-l", "127.0.0.1", "-p", "0", "--workq-port", "0", "--http", "127.0.0.1:0")


def probe_env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(src), os.environ.get("PYTHONPATH")) if p)}  # fmt: skip


def probe_argv(stop: str, args: tuple[str, ...] = SERVE_ARGS) -> list[str]:
    return [sys.executable, "-c", PROBE, stop, *args]


def loaded(src: Path, stop: str = "serving") -> dict[str, object]:
    """What the probe saw, from `src`'s beanpod, by the moment `stop`."""
    done = subprocess.run(probe_argv(stop), env=probe_env(src), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the start-up probe failed:\n{done.stderr[-2000:]}")
    seen: dict[str, object] = json.loads(done.stdout)
    return seen


def instructions(src: Path, stop: str) -> int:
    """User-space instructions from exec of `beanpod serve` (from `src`) to `stop`."""
    return cachegrind_count(probe_argv(stop), probe_env(src))
