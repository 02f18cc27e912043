"""beanpod: a fast, durable work-queue server speaking the beanstalkd protocol."""

__version__ = "0.1.0"

from beanpod.build import pure_requested as _pure_requested
from beanpod.build import use_pure as _use_pure

if _pure_requested():  # the pure build of a compiled tree
    _use_pure()
