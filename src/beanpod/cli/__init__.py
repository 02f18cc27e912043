"""The `beanpod` command line (entry point `beanpod.cli:main`)."""

from beanpod.cli.main import main

__all__ = ["main"]
