"""The seams of docs/architecture.md, checked rather than remembered.

- the import contracts in pyproject.toml ([tool.importlinter]: layers, the extensions
  above the engine, the web layer through core.query and core.admin, analytics apart,
  no cycles);
- nothing outside core/engine.py, core/tube.py and core/conn.py touches an underscore
  member of the engine, a tube or a connection (the extensions use the public moves);
- no function-level imports in the engine's extensions (core/qless, core/workq);
- the WAL-room refusal is asked only through Engine.refuses (beanstalkd put inlines it).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "beanpod"
CORE = PACKAGE / "core"
GUARDED = {CORE / "engine.py": "Engine", CORE / "tube.py": "Tube", CORE / "conn.py": "Conn"}


def _python_files(root: Path) -> Iterator[Path]:
    yield from sorted(root.rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _private_members(path: Path, class_name: str) -> set[str]:
    """Underscore (not dunder) methods and attributes a class defines on itself."""
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in ast.walk(node):
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.Attribute) and _is_self(item.value):
                    names.add(item.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _where(path: Path) -> str:
    return str(path.relative_to(SRC)) if path.is_relative_to(SRC) else path.name


def private_uses(path: Path, private: set[str]) -> list[str]:
    """`something._name` uses in `path` of the guarded classes' private names (`self._x`
    and `cls._x` are the file's own business)."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Attribute) and node.attr in private and not _is_self(node.value):
            found.append(f"{_where(path)}:{node.lineno}: .{node.attr}")
    return found


def function_level_imports(path: Path) -> list[str]:
    found = []
    for func in ast.walk(_tree(path)):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(func):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found.append(f"{_where(path)}:{node.lineno}")
    return found


def test_import_contracts_hold() -> None:
    pytest.importorskip("importlinter", reason="import-linter is not installed")
    root = SRC.parent
    proc = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
         "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_no_underscore_member_of_engine_tube_or_conn_is_used_outside_its_file() -> None:
    private = set().union(*(_private_members(p, c) for p, c in GUARDED.items()))
    assert "_serve" in private  # the scan sees the engine's private methods at all
    uses = [
        use
        for path in _python_files(PACKAGE)
        if path not in GUARDED
        for use in private_uses(path, private)
    ]
    assert uses == []


def test_the_private_use_scan_finds_a_planted_call(tmp_path: Path) -> None:
    planted = tmp_path / "ext.py"
    planted.write_text("def f(q):\n    q.engine._serve(q.tube, 0)\n    self._serve()\n")
    found = private_uses(planted, {"_serve"})
    assert len(found) == 1 and found[0].endswith(":2: ._serve")


@pytest.mark.parametrize("extension", ["qless", "workq"])
def test_the_extensions_import_at_module_level_only(extension: str) -> None:
    found = [
        hit for path in _python_files(CORE / extension) for hit in function_level_imports(path)
    ]
    assert found == []


def test_wal_room_is_asked_only_through_engine_refuses() -> None:
    """journal.room() is called by Engine.refuses and, inlined, by the beanstalkd put
    handler; storage/ and durability/ ask their own writer."""
    allowed = {CORE / "engine.py", PACKAGE / "protocols" / "beanstalkd" / "handlers.py"}
    callers = set()
    for path in _python_files(PACKAGE):
        if path.is_relative_to(PACKAGE / "storage") or path.is_relative_to(PACKAGE / "durability"):
            continue
        for node in ast.walk(_tree(path)):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and func.attr == "room":
                callers.add(path)
    assert callers <= allowed, sorted(str(p) for p in callers - allowed)


def test_job_state_is_assigned_only_by_move() -> None:
    """`job.state = ...` appears in core/job.py only: in move(), which checks the table,
    and in fold_logged_state() and restored_job(), the write-ahead-log replay's unchecked
    fold (the job is then placed by a checked move inside `restarting()`), once each."""
    found = []
    for layer in ("core", "durability", "protocols", "server", "cli", "web", "testing"):
        for path in _python_files(PACKAGE / layer):
            found += [f"{_where(path)}:{line}" for line in _state_assignments(_tree(path))]
    lines = _assignment_lines("move", "fold_logged_state", "restored_job")
    allowed = [f"beanpod/core/job.py:{line}" for line in lines]
    assert sorted(found) == sorted(allowed)


def _state_assignments(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        lines += [
            node.lineno
            for target in targets
            if isinstance(target, ast.Attribute) and target.attr == "state"
        ]
    return lines


def _assignment_lines(*functions: str) -> list[int]:
    lines = [
        line
        for node in ast.walk(_tree(CORE / "job.py"))
        if isinstance(node, ast.FunctionDef) and node.name in functions
        for line in _state_assignments(node)
    ]
    assert len(lines) == len(functions), "core/job.py: one state assignment in each of these"
    return lines
