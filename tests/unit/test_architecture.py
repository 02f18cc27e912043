"""The seams of docs/architecture.md, checked rather than remembered.

- the import contracts in pyproject.toml ([tool.importlinter]: layers, the extensions
  above the engine, the web layer through core.query and core.admin, analytics apart,
  no cycles);
- nothing outside the engine's layers (core/engine.py and the classes it inherits:
  ENGINE_LAYERS), core/tube.py and core/conn.py touches an underscore member of the
  engine, a tube or a connection (the extensions use the public moves);
- outside the engine's own modules nothing writes a field of a Job, Tube, Conn or the
  Engine, or drives the timer wheel (the extensions use the engine's moves: retube,
  amend, move_deadline, arm, detached_conn...);
- no function-level imports in the engine's extensions (core/qless, core/workq);
- the WAL-room refusal is asked only through Engine.refuses (beanstalkd put inlines it).
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "beanpod"
CORE = PACKAGE / "core"
# The engine, one class per module, each inheriting the one above it (core/ledger.py).
ENGINE_LAYERS = {CORE / "ledger.py": "Ledger", CORE / "moves.py": "Moves",
                 CORE / "extension_moves.py": "ExtensionMoves", CORE / "clients.py": "Clients",
                 CORE / "engine.py": "Engine"}  # fmt: skip
GUARDED = {**ENGINE_LAYERS, CORE / "tube.py": "Tube", CORE / "conn.py": "Conn"}


def _python_files(root: Path) -> Iterator[Path]:
    yield from sorted(root.rglob("*.py"))


@functools.cache  # every scan walks the same files: parse each once per session
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
    """Uses in `path` of the guarded classes' private names: `something._name`, and
    `getattr(something, "_name")`. `self._x` and `cls._x` are the file's own business only
    inside a class that defines `_x` itself (an extension's own `_forget`): one that
    inherits or borrows an engine member is caught too."""
    tree = _tree(path)
    own_at: dict[int, set[str]] = {}  # node -> the names its innermost class defines
    for cls in ast.walk(tree):  # outer classes first: an inner class overwrites
        if isinstance(cls, ast.ClassDef):
            own = _own_names(cls)
            own_at.update((id(node), own) for node in ast.walk(cls))
    found = []
    for node in ast.walk(tree):
        name = _private_name(node)
        if name not in private:
            continue
        mine = name in own_at.get(id(node), set())
        if mine and isinstance(node, ast.Attribute) and _is_self(node.value):
            continue
        found.append(f"{_where(path)}:{node.lineno}: .{name}")
    return found


def _private_name(node: ast.AST) -> str:
    """`_x` of `obj._x` or of `getattr(obj, "_x")` (setattr, hasattr, delattr too)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)):  # fmt: skip
        return node.args[1].value
    return ""


def _own_names(cls: ast.ClassDef) -> set[str]:
    """What a class defines itself: its methods, class attributes and `self.x = ...`."""
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if _is_self(node.value):
                names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)  # a class attribute (or a local: harmless here)
    return names


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
    assert "_unpause" in private  # the scan sees the engine's private methods at all
    uses = [
        use
        for path in _python_files(PACKAGE)
        if path not in GUARDED
        for use in private_uses(path, private)
    ]
    assert uses == []


def test_the_private_use_scan_finds_a_planted_call(tmp_path: Path) -> None:
    planted = tmp_path / "ext.py"
    planted.write_text(
        "def f(q):\n"
        "    q.engine._serve(q.tube, 0)\n"
        "    self._serve()\n"  # a `self` outside any class: not its own
        "class Ext(Engine):\n"
        "    def g(self):\n"
        "        self._serve()\n"  # inherited from the engine
        "        getattr(self.engine, '_serve')()\n"
        "class Own:\n"
        "    def _serve(self):\n"
        "        self._serve()\n"  # its own method: allowed
    )
    found = private_uses(planted, {"_serve"})
    assert sorted(int(hit.split(":")[1]) for hit in found) == [2, 3, 6, 7], found


# The engine's own modules, which keep its books: the engine (its layers) and the records it keeps,
# and the timings it feeds. The write-ahead log's replay and snapshot (the durability
# package) rebuild those books through the engine's moves (make_ready_restored,
# place_restored, restore_pause, ids_above, keep_journal...) and are checked like any
# extension; the composition root (server/) too: it plugs the event sink in and turns the
# drain on through the engine's moves (keep_events, start_draining).
ENGINE_OWN = {CORE / f"{name}.py" for name in (
    "job", "tube", "conn", "timers", "pqueue", "waiters", "stats", "timings",
)} | set(ENGINE_LAYERS)  # fmt: skip
OWNERS = {CORE / "job.py": "Job", CORE / "tube.py": "Tube", CORE / "conn.py": "Conn",
          **ENGINE_LAYERS}  # fmt: skip
# A field is written "through" one of these when the written object is named so: a job,
# a tube, a connection, the engine (`job.pri = `, `info.tube.refs += `, `q.engine.x = `).
# A field no other class of the package has (`pause_until`, `cmd_pause`) is caught
# through any name (`paused.pause_until = `).
HOLDERS = ("job", "tube", "conn", "engine", "reserver")
CONN_BOOKS = ("deadline_moved", "emptied")  # Conn's soonest-deadline cache, kept by the engine
# Job.file, the segment of the job's latest full record, is the write-ahead log's own pin
# (its ledger's), kept on the job to save a dict: the durability package writes it.
DURABILITY_FIELDS = {"file"}


def _engine_own(path: Path) -> bool:
    return path in ENGINE_OWN


def _fields_for(path: Path, fields: set[str]) -> set[str]:
    parts = path.relative_to(PACKAGE).parts if path.is_relative_to(PACKAGE) else ()
    return fields - DURABILITY_FIELDS if parts[:1] == ("durability",) else fields


def owned_fields() -> set[str]:
    """Every field Job, Tube, Conn and Engine set on themselves (and Job's counters)."""
    names: set[str] = set()
    for path, class_name in OWNERS.items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                for item in ast.walk(node):
                    if isinstance(item, ast.Attribute) and _is_self(item.value):
                        names.add(item.attr)
                    elif isinstance(item, ast.FunctionDef) and item.decorator_list:
                        names.add(item.name)  # a property setter: Job.reserves...
    return {n for n in names if not n.startswith("_")}


def fields_of_others() -> set[str]:
    """Fields another class of the package may have written: those it sets on itself,
    and those it declares unless it is frozen (a NamedTuple, a frozen dataclass)."""
    owners = set(OWNERS.items())
    names: set[str] = set()
    for path in _python_files(PACKAGE):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef) and (path, node.name) not in owners:
                names |= _writable_fields(node)
    return names


def _writable_fields(cls: ast.ClassDef) -> set[str]:
    names = {
        node.attr
        for node in ast.walk(cls)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        and _is_self(node.value)
    }  # fmt: skip
    frozen = any(_name(base) == "NamedTuple" for base in cls.bases) or any(
        isinstance(d, ast.Call) and any(k.arg == "frozen" for k in d.keywords)
        for d in cls.decorator_list
    )
    if not frozen:
        names |= {
            item.target.id
            for item in cls.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
    return names


def _holder(node: ast.expr) -> bool:
    while isinstance(node, ast.Subscript | ast.Call):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    name = _name(node)
    return name.lower().endswith(HOLDERS) or name in ("old", "new")


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def book_writes(path: Path, fields: set[str], only_theirs: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Writes in `path` to an engine-owned field through a job, tube, connection or the
    engine, or through any name to one of `only_theirs` (fields no other class has):
    assignment, augmented assignment, setattr; any use of the engine's timer wheel
    (`engine.timers`), and calls of a connection's deadline bookkeeping."""
    found = []
    for node in ast.walk(_tree(path)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.ctx, ast.Store)
                    and target.attr in fields and not _is_self(target.value)
                    and (_holder(target.value) or target.attr in only_theirs)):  # fmt: skip
                found.append(f"{_where(path)}:{node.lineno}: {ast.unparse(target)} =")
        if isinstance(node, ast.Call):
            found += _book_call(path, node)
        elif isinstance(node, ast.Attribute) and node.attr == "timers" and _holder(node.value):
            found.append(f"{_where(path)}:{node.lineno}: {ast.unparse(node)}")  # its wheel
    return found


def _book_call(path: Path, call: ast.Call) -> list[str]:
    """A call of a connection's deadline bookkeeping, or a `setattr` on a job, tube,
    connection or the engine."""
    func = call.func
    hit = False
    if isinstance(func, ast.Name):
        hit = func.id == "setattr" and bool(call.args) and _holder(call.args[0])
    elif isinstance(func, ast.Attribute):
        owner = func.value
        hit = func.attr in CONN_BOOKS and _holder(owner)
    return [f"{_where(path)}:{call.lineno}: {ast.unparse(func)}()"] if hit else []


def test_outside_the_engine_nothing_writes_its_books_or_drives_its_timers() -> None:
    fields = owned_fields()
    assert {"pri", "deadline", "refs", "jobs", "watch", "next_conn_id"} <= fields
    theirs = fields - fields_of_others()
    assert {"pause_until", "pause_ms", "cmd_pause"} <= theirs and "jobs" not in theirs
    found = [
        hit
        for path in _python_files(PACKAGE)
        if not _engine_own(path)
        for hit in book_writes(path, _fields_for(path, fields), theirs)
    ]
    assert found == []


def test_the_book_scan_finds_planted_writes_and_timer_calls(tmp_path: Path) -> None:
    planted = tmp_path / "ext.py"
    planted.write_text(
        "def f(q, job, conn, info):\n"
        "    job.deadline = 5\n"
        "    info.tube.refs += 1\n"
        "    q.engine.timers.arm(5, 10, job)\n"
        "    conn.deadline_moved(job)\n"
        "    setattr(q.engine, 'put', print)\n"
        "    q.engine.next_conn_id, conn.watch = 1, []\n"
        "    ext.worker = ''  # a field of the extension's own record: allowed\n"
        "    q.engine.arm(5, 10, job)  # the engine's move: allowed\n"
        "    cancel = self.engine.timers.cancel\n"
        "    paused.pause_until = 5  # a tube's field, whatever the name\n"
        "    paused.jobs = 5  # a name other classes have too: through a tube only\n"
    )
    fields = owned_fields()
    found = book_writes(planted, fields, fields - fields_of_others())
    lines = sorted(int(hit.split(":")[1]) for hit in found)
    assert lines == [2, 3, 4, 5, 6, 7, 7, 10, 11], found


def test_the_book_scan_covers_the_durability_package(tmp_path: Path) -> None:
    """The restore's pause, put back by hand (before Engine.restore_pause), is caught in
    durability/; Job.file, the log's own pin, is not."""
    restore = PACKAGE / "durability" / "restore.py"
    assert restore.is_file() and not _engine_own(restore)
    fields = _fields_for(restore, owned_fields())
    tmp = tmp_path / "restore.py"
    tmp.write_text(
        "def finish(engine, paused, pause, job, seg):\n"
        "    paused.pause_ms = pause.pause_ms\n"
        "    paused.pause_until = pause.pause_until\n"
        "    engine.timers.arm(pause.pause_until, PAUSE_END, paused)\n"
        "    job.file = seg\n"
    )
    found = book_writes(tmp, fields, fields - fields_of_others())
    assert sorted(int(hit.split(":")[1]) for hit in found) == [2, 3, 4], found


def test_the_book_scan_covers_the_composition_root(tmp_path: Path) -> None:
    """server/app.py is checked too: it plugs the event log in and drains through the
    engine's moves; the old direct writes are caught."""
    assert not _engine_own(PACKAGE / "server" / "app.py")
    tmp = tmp_path / "app.py"
    tmp.write_text(
        "def wire(self, events, now):\n"
        "    self.engine.events = events\n"
        "    self.engine.next_conn_id = now * 1000\n"
        "    self.engine.draining = True\n"
        "    self.engine.keep_events(events, now * 1000)\n"
        "    self.engine.start_draining()\n"
    )
    fields = owned_fields()
    found = book_writes(tmp, fields, fields - fields_of_others())
    assert sorted(int(hit.split(":")[1]) for hit in found) == [2, 3, 4], found


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
    fold (the job is then placed by a checked move inside `Engine.restarting()`), once each."""
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
