"""``python -m bench``: see bench/README.md."""

from bench.driver import main

raise SystemExit(main())
