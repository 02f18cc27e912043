"""Build the zip that ``spark-submit --py-files`` ships to executors.

    python -m beanpod.analytics.bundle beanpod-analytics.zip

The zip holds only what the pipeline imports: ``beanpod/__init__.py`` and the
``beanpod/build.py`` it reads (which build to import, standard library only),
``beanpod/events`` and ``beanpod/analytics`` (no server code).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

PACKAGES = ("events", "analytics")


def build_zip(target: str | Path) -> Path:
    """Write the analytics zip to ``target`` and return its path."""
    root = Path(__file__).resolve().parent.parent  # .../beanpod
    target = Path(target)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for module in ("__init__.py", "build.py"):
            archive.write(root / module, f"beanpod/{module}")
        for package in PACKAGES:
            for source in sorted((root / package).rglob("*.py")):
                archive.write(source, f"beanpod/{source.relative_to(root).as_posix()}")
    return target


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    print(build_zip(args[0] if args else "beanpod-analytics.zip"))


if __name__ == "__main__":
    main()
