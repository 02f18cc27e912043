"""The registry's qless-py sdists (`qless-py`, `qless-with-throttles` 0.11.4), downloaded
and unpacked at test time: nothing of them is kept in this repository."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest


def sdist(tmp: Path, name: str) -> Path:
    """The unpacked sdist of `name==0.11.4`, or skip when the registry cannot give it."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "-d", str(tmp), f"{name}==0.11.4"], capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    archives = list(tmp.glob("*.tar.gz"))
    if done.returncode != 0 or not archives:
        pytest.skip(f"pip download {name}==0.11.4 failed: {done.stderr.strip()[-300:]}")
    with tarfile.open(archives[0]) as archive:
        archive.extractall(tmp, filter="data")
    return next(p for p in tmp.iterdir() if p.is_dir())
