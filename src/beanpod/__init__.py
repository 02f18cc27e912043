"""beanpod: a fast, durable work-queue server speaking the beanstalkd protocol."""

__version__ = "0.1.0"

import os as _os

if _os.environ.get("BEANPOD_PURE", "") not in ("", "0"):  # the pure build of a compiled tree
    from beanpod.build import use_pure as _use_pure

    _use_pure()
