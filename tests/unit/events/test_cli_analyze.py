"""``beanpod analyze`` argument handling and the message when pyspark is missing."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from beanpod.cli import analyze as cli_analyze


def test_missing_pyspark_exits_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name)
    )
    result = CliRunner().invoke(cli_analyze.analyze, ["--events", "e", "--out", "o"])
    assert result.exit_code == 1
    assert "pip install beanpod[analytics]" in result.output


def test_bad_day_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        cli_analyze.analyze, ["--events", "e", "--out", "o", "--to", "2025-02-30"]
    )
    assert result.exit_code == 2 and "not a day" in result.output
