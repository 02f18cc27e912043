"""Which build runs (compiled by mypyc, or pure Python), BEANPOD_PURE, and the guard
against extension modules that would shadow newer source (setup.py, beanpod.build)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from beanpod import build


def _run(code: str, *args: str, **env: str) -> str:
    """stdout of this Python running `code` (or `-m ...`), BEANPOD_PURE only as given."""
    full = {k: v for k, v in os.environ.items() if k != "BEANPOD_PURE"} | env
    argv = [sys.executable, *(args or ("-c", code))]
    out = subprocess.run(argv, env=full, capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.strip()


def test_version_names_the_build_the_process_imports() -> None:
    origin = _run("import beanpod.core.engine as m; print(m.__file__)")
    expected = "pure" if origin.endswith(".py") else "compiled"
    version = _run("", "-m", "beanpod", "serve", "--version")
    assert version == f"beanpod, version 0.1.0 ({expected} build)"


def test_beanpod_pure_imports_the_python_of_every_compiled_module() -> None:
    code = ("import importlib; from beanpod import build; "
            "print(build.kind(), *(importlib.import_module('beanpod.' + m).__file__ "
            "for m in build.COMPILED))")  # fmt: skip
    kind, *files = _run(code, BEANPOD_PURE="1").split()
    assert kind == "pure"
    assert len(files) == len(build.COMPILED)
    assert all(f.endswith(".py") for f in files), files


@pytest.mark.parametrize("value", ["", "0"])
def test_beanpod_pure_unset_or_zero_keeps_the_build(value: str) -> None:
    assert _run("from beanpod import build; print(build.kind())", BEANPOD_PURE=value) == (
        _run("from beanpod import build; print(build.kind())")
    )


def test_stale_names_extensions_older_than_source_or_no_longer_compiled(tmp_path: Path) -> None:
    core = tmp_path / "core"
    core.mkdir()
    suffix = ".cpython-311-x86_64-linux-gnu.so"
    for name in ("engine", "job", "query"):
        (core / f"{name}.py").write_text("")
        (core / f"{name}{suffix}").write_bytes(b"")
        os.utime(core / f"{name}.py", (1000, 1000))  # (a clock tick between the writes
        os.utime(core / f"{name}{suffix}", (2000, 2000))  # must not order them)
    os.utime(core / f"engine{suffix}", (1, 1))  # built before the source was edited
    assert build.stale(tmp_path) == [
        f"core/engine{suffix}: older than engine.py",
        f"core/query{suffix}: not compiled any more",
    ]
