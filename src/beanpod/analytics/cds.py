"""A class-data-sharing archive of the classes Spark's JVM loads, for short runs.

A small log's run is mostly the JVM loading and verifying Spark's classes; a dynamic CDS
archive (``-XX:ArchiveClassesAtExit``) maps them from one file instead (about 7 of 21 CPU
seconds at 10k events; docs/analytics.md). The first run writes it under the user's cache
directory, keyed by the Java and the pyspark jars, and later runs map it. The archive is
only ever published whole (written under a temporary name, checked by a JVM that maps it,
renamed): a truncated archive crashes the JVM that maps it. Any failure here means a run
without the archive, never a failed run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: The directory of the archive (default ``$XDG_CACHE_HOME/beanpod`` or ``~/.cache/beanpod``).
DIR_ENV = "BEANPOD_CACHE_DIR"
#: ``off`` runs without the archive and writes none.
SWITCH_ENV = "BEANPOD_CDS"
#: The JVM's CDS messages (a stale archive is simply not used) stay off the terminal.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: How long the first run waits for its JVM to write the archive at exit.
DUMP_TIMEOUT_S = 300.0
#: An archive no run has mapped for this long is removed (another Java or pyspark's: each
#: install of the jars has its own); a pending one whose run ended without publishing it,
#: after an hour.
UNUSED_S = 7 * 86400
ABANDONED_S = 3600


@dataclass(frozen=True)
class Archive:
    """The JVM options of a run (``java_options``) of ``java``, and where a first run's JVM
    writes the archive (``pending``) before it is published as ``path``."""

    path: Path
    java: Path
    java_options: str
    pending: Path | None = None

    def publish(self, jvm_status: int | None, classpath: str) -> None:
        """After the JVM (of ``classpath``) exited with ``jvm_status``: publish the archive
        it wrote if a JVM maps it, else drop it."""
        if self.pending is None:
            return
        try:
            if jvm_status == 0 and _maps(self.java, self.pending, classpath):
                os.replace(self.pending, self.path)
            else:
                self.pending.unlink(missing_ok=True)
        except (OSError, subprocess.SubprocessError):
            pass  # a run without an archive, and the next one writes it again

    def failed_start(self) -> bool:
        """The JVM did not start: drop what this archive left; True when it mapped an
        existing archive (then a start without one is worth a try)."""
        try:
            (self.pending or self.path).unlink(missing_ok=True)
        except OSError:
            return False
        return self.pending is None


def cache_dir() -> Path:
    """Where the archive lives: $BEANPOD_CACHE_DIR, else the XDG cache directory."""
    if configured := os.environ.get(DIR_ENV):
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg, "beanpod")


def prepare(jars: Path) -> Archive | None:
    """The archive for the Java Spark will run and the pyspark ``jars`` (None: run without
    one: switched off, no Java found, or a cache directory it cannot write)."""
    java = _java()
    if os.environ.get(SWITCH_ENV, "").lower() == "off" or java is None:
        return None
    try:
        path = cache_dir() / f"spark-{_key(java, jars)}.jsa"
        _drop_unused(path.parent)
        if path.is_file():
            os.utime(path)  # in use: kept by _drop_unused
            return Archive(path, java, f"-XX:SharedArchiveFile={path} {QUIET}")
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp",
                                         delete=False) as probe:  # fmt: skip
            pending = Path(probe.name)  # writable; the JVM replaces it at exit
    except OSError:
        return None
    return Archive(path, java, f"-XX:ArchiveClassesAtExit={pending} {QUIET}", pending)


def _java() -> Path | None:
    """The java Spark's scripts run: $JAVA_HOME/bin/java, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home, "bin", "java")) if home else shutil.which("java")
    return Path(found).resolve() if found and os.access(found, os.X_OK) else None


def _key(java: Path, jars: Path) -> str:
    """Changes with the JVM's build and with any of the jars (the archive would not match)."""
    digest = hashlib.sha256(str(java).encode())
    libjvm = java.parent.parent / "lib" / "server" / "libjvm.so"
    for path in (java, libjvm, *sorted(jars.glob("*.jar"))):
        if path.exists():
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def _maps(java: Path, archive: Path, classpath: str) -> bool:
    """True when ``java`` of ``classpath`` starts with ``archive`` mapped (``-Xshare:on``
    checks the JVM's build and the jars; a truncated archive crashes a JVM that maps it)."""
    if not archive.is_file() or archive.stat().st_size == 0:
        return False
    with tempfile.TemporaryDirectory(prefix="beanpod-cds-") as scratch:
        command = [
            str(java), "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", classpath,
            *QUIET.split(),
            "-XX:-CreateCoredumpOnCrash", f"-XX:ErrorFile={scratch}/hs_err.log", "-version",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, timeout=60, check=False)
    return done.returncode == 0


def _drop_unused(folder: Path) -> None:
    """Remove archives unused for UNUSED_S (~185 MB each) and abandoned pending ones."""
    now = time.time()
    for path in folder.glob("spark-*.jsa*"):
        age = now - path.stat().st_mtime
        if age > (UNUSED_S if path.suffix == ".jsa" else ABANDONED_S):
            path.unlink(missing_ok=True)
