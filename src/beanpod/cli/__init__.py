"""The `beanpod` command line (entry point `beanpod.cli:main`)."""

import sys

from beanpod.cli.early import listen_now

listen_now(sys.argv)  # `beanpod serve`: accept connections before the heavy imports
from beanpod.cli.main import main  # noqa: E402

__all__ = ["main"]
