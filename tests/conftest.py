"""Suite-wide: servers started by tests (as processes, which inherit this environment)
run without the HTTP listener, so many can run at once without fighting over its default
port 11380. Tests of the HTTP surface pass `--http 127.0.0.1:0`, which wins over this."""

from __future__ import annotations

import os

os.environ["BEANPOD_HTTP"] = "off"
