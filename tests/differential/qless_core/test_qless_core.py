"""qless-core's own test suite (test/test_*.py, unmodified), run twice: against beanpod
(through `BeanpodRecorder`) and against Redis with qless.lua (the control).

QLESS_CORE_DIR names the converted test/ directory of a qless-core checkout (docs/qless.md,
"Running qless-core's suite"); its parent holds qless.py and qless.lua. Each test class
`TestX` becomes `BeanpodTestX` and `RedisTestX`. Tests beanpod deliberately fails are
listed once, in docs/qless.md, and marked xfail (strict) by conftest.py.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import unittest
from pathlib import Path
from typing import Any

import pytest

from tests.differential.qless_core import shim
from tests.differential.qless_core.suite import suite_dir

SUITE = suite_dir()
if SUITE is None:
    pytest.skip(
        "QLESS_CORE_DIR is not set to qless-core's converted test/ directory "
        "(docs/qless.md: Running qless-core's suite)",
        allow_module_level=True,
    )
pytest.importorskip("redis", reason="qless-core's tests import redis-py (pip install redis)")


def _import_suite(directory: Path) -> list[Any]:
    """Import every test_*.py of the suite with our shim standing in for `qless`."""
    sys.modules["qless"] = shim  # type: ignore[assignment]
    sys.path.insert(0, str(directory))
    try:
        return [importlib.import_module(p.stem) for p in sorted(directory.glob("test_*.py"))]
    except SyntaxError as exc:
        raise RuntimeError(
            f"{exc.filename} is still Python 2: convert QLESS_CORE_DIR with lib2to3 first "
            "(docs/qless.md, Running qless-core's suite)"
        ) from exc
    finally:
        sys.path.remove(str(directory))


def _variant(case: type[unittest.TestCase], target: str) -> type[unittest.TestCase]:
    """`case` with its recorder talking to `target`."""

    def set_up_class(cls: type[unittest.TestCase]) -> None:
        shim.target = target
        super(made, cls).setUpClass()

    made = type(target.capitalize() + case.__name__, (case,),
                {"setUpClass": classmethod(set_up_class), "__module__": __name__,
                 "qless_core_file": Path(inspect.getfile(case)).name})  # fmt: skip
    return made


def _variants(directory: Path) -> dict[str, type[unittest.TestCase]]:
    """Both variants of every test class of the suite, by name."""
    made: dict[str, type[unittest.TestCase]] = {}
    for module in _import_suite(directory):
        for case in vars(module).values():
            if (isinstance(case, type) and issubclass(case, unittest.TestCase)
                    and case.__module__ == module.__name__):  # fmt: skip
                for target in (shim.BEANPOD, shim.REDIS):
                    variant = _variant(case, target)
                    made[variant.__name__] = variant
    return made


globals().update(_variants(SUITE))
