"""The `qless` module qless-core's tests import (its qless.py holds `QlessRecorder`).

`QlessRecorder(client)` answers with the recorder of the run's current target: beanpod
(`BeanpodRecorder`), or qless-core's own recorder over Redis with qless.lua (the
control). The test classes set `target` in their setUpClass.
"""

from __future__ import annotations

import contextlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.differential.qless_core.beanpod_server import ServerSupply
from tests.differential.qless_core.recorder import BeanpodRecorder

BEANPOD, REDIS = "beanpod", "redis"
target = BEANPOD
supply: ServerSupply | None = None  # set by the conftest's session fixture
core_dir: Path | None = None  # qless-core's checkout (holds qless.py and qless.lua)


def load_core_recorder(directory: Path) -> ModuleType:
    """qless-core's own qless.py, under another name (this module is `qless`)."""
    spec = importlib.util.spec_from_file_location("qless_core_recorder", directory / "qless.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def QlessRecorder(client: Any) -> Any:
    if target == BEANPOD:
        assert supply is not None, "the qless_core conftest did not set up beanpod"
        return BeanpodRecorder(supply)
    assert core_dir is not None
    with contextlib.chdir(core_dir):  # it opens 'qless.lua' from the working directory
        return load_core_recorder(core_dir).QlessRecorder(client)
