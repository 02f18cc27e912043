"""Which build of beanpod runs: "compiled" (the hot path's modules compiled by mypyc from
their Python source, setup.py) or "pure" (the same modules as Python). BEANPOD_PURE=1 in
the environment makes the process import the Python of every compiled module (the pure
build from a compiled install, as scripts/check runs the differential suite a second
time). Standard library only: the CLI asks before anything else is imported.
"""

from __future__ import annotations

# Light imports only (`import beanpod` reads this before the listeners are bound): no
# typing, importlib.util, importlib.abc or pathlib at the top (~10 ms together).
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType

# The modules setup.py compiles (beanpod.<name>); grown by measurement, docs/performance.md.
# Lazy deletion tests entries by identity: core.pqueue passes its int keys as `Any` so
# each stays one object compiled (an `int` would unbox a key below 2**62 and box a new
# one); core.timers' tuples are typed so mypyc does not unbox them (see TimerEntry).
COMPILED = (
    "core.engine", "core.ledger", "core.moves", "core.extension_moves", "core.clients",
    "core.job", "core.job_index", "core.tube", "core.conn", "core.pqueue", "core.timers",
    "core.waiters", "core.stats", "core.timings", "protocols.receive",
    "protocols.beanstalkd.commands", "protocols.beanstalkd.quick",
    "protocols.beanstalkd.handlers", "protocols.beanstalkd.wire",
    "protocols.beanstalkd.context", "server.beanstalkd_session", "server.batch_session",
    "server.clock", "server.ticker", "durability.commit", "durability.journal",
    "durability.records", "durability.wal", "storage.wal", "storage.compaction",
)  # fmt: skip
_NAMES = frozenset(f"beanpod.{m}" for m in COMPILED)
PROBE = "beanpod.core.engine"  # compiled in every compiled build


def pure_requested() -> bool:
    return os.environ.get("BEANPOD_PURE", "") not in ("", "0")


def kind() -> str:
    """ "compiled" when the modules this process imports are mypyc's, else "pure"."""
    import importlib.util

    spec = importlib.util.find_spec(PROBE)
    origin = spec.origin if spec is not None else None
    return "pure" if origin is None or origin.endswith(".py") else "compiled"


def stale(root: os.PathLike[str] | None = None) -> list[str]:
    """Extension modules under `root` (the package) that would shadow their Python source
    wrongly: older than the .py beside them (edited since an in-place build) or of a
    module no longer in COMPILED. An editable install builds in place (docs/performance.md,
    "Builds"); `pip install -e .` again rebuilds."""
    from pathlib import Path

    root = Path(__file__).parent if root is None else Path(root)
    out = []
    for ext in sorted(root.rglob("*.so")):
        source = ext.with_name(ext.name.split(".", 1)[0] + ".py")
        name = ".".join(source.relative_to(root).with_suffix("").parts)
        if name not in COMPILED or not source.exists():
            out.append(f"{ext.relative_to(root)}: not compiled any more")
        elif ext.stat().st_mtime < source.stat().st_mtime:
            out.append(f"{ext.relative_to(root)}: older than {source.name}")
    return out


class _PythonFirst:
    """Finds the .py of a compiled module, so the extension beside it is not loaded."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _NAMES or path is None:
            return None
        leaf = fullname.rsplit(".", 1)[1] + ".py"
        for entry in path:
            source = os.path.join(entry, leaf)
            if os.path.exists(source):
                import importlib.util

                return importlib.util.spec_from_file_location(fullname, source)
        return None


def use_pure() -> None:
    """Import the Python source of every compiled module from now on (idempotent)."""
    if not any(isinstance(f, _PythonFirst) for f in sys.meta_path):
        sys.meta_path.insert(0, _PythonFirst())
