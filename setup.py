"""Build: mypyc compiles the hot path's modules from their Python source when a C compiler
is there; otherwise (or with BEANPOD_PURE=1) the same modules install as plain Python.
Project metadata lives in pyproject.toml; docs/performance.md, "Builds"."""

from __future__ import annotations

import os
import runpy
import shutil
import sysconfig
import warnings
from pathlib import Path

from setuptools import setup

# The modules to compile: one list, in src/beanpod/build.py (the running process reports it).
_BUILD = runpy.run_path("src/beanpod/build.py")
COMPILED = _BUILD["COMPILED"]
pure_requested = _BUILD["pure_requested"]  # BEANPOD_PURE, read in one place


# pip runs this file to learn the build's requirements before it installs beanpod's own
# dependencies (and in an isolated environment without them): mypyc's type check must not
# need aiohttp & co. The compiled modules import none of them; the modules they import
# for types are checked silently and what is missing reads as Any. `mypy` (scripts/check)
# still checks the whole tree strictly with every dependency installed.
MYPY_OPTIONS = ["--config-file", "", "--ignore-missing-imports", "--follow-imports", "silent"]


def _why_pure() -> str | None:
    """Why this build cannot compile, or None when it can."""
    if pure_requested():
        return "BEANPOD_PURE is set"
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python.h (python3-dev)"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc is not installed"
    return None


def _ext_modules() -> list[object]:
    why = _why_pure()
    if why is not None:
        if why != "BEANPOD_PURE is set":
            warnings.warn(f"beanpod: building pure Python: {why}", stacklevel=1)
        return []
    from mypyc.build import mypycify

    files = [f"src/beanpod/{m.replace('.', '/')}.py" for m in COMPILED]
    return list(mypycify([*MYPY_OPTIONS, *files], opt_level="3"))


setup(ext_modules=_ext_modules())
