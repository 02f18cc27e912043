"""The beanpod.testing pytest plugin, exercised the way users meet it: pytester runs a
sample application's test module (tests/integration/testing_sample) through the
fixtures, against beanpod and (BEANPOD_TEST_TARGET=beanstalkd) a real beanstalkd."""

from __future__ import annotations

import shutil
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
SAMPLE = Path(__file__).parent / "testing_sample"
PLUGIN = "beanpod.testing.plugin"
BEANPOD_ONLY = 7  # sample tests that need the virtual clock, inspection or faults


def plugin_args() -> list[str]:
    """Load the plugin by name unless the installed package already registers it."""
    registered = any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))
    return [] if registered else ["-p", PLUGIN]


@pytest.fixture
def sample(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(
        shop=(SAMPLE / "shop.py").read_text(), test_shop=(SAMPLE / "shop_tests.py").read_text()
    )
    return pytester


def test_the_sample_app_passes_against_beanpod(sample: pytest.Pytester) -> None:
    result = sample.runpytest_subprocess(*plugin_args(), "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=10)


def test_the_sample_app_passes_under_xdist(sample: pytest.Pytester) -> None:
    """Each worker process gets its own session server on its own free port."""
    pytest.importorskip("xdist")
    result = sample.runpytest_subprocess(*plugin_args(), "-q", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=10)


def test_the_same_tests_run_against_a_real_beanstalkd(
    sample: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = shutil.which("beanstalkd")
    if binary is None:
        pytest.skip("no beanstalkd on PATH")
    monkeypatch.setenv("BEANPOD_TEST_TARGET", "beanstalkd")
    monkeypatch.setenv("BEANPOD_TEST_BEANSTALKD", binary)
    result = sample.runpytest_subprocess(*plugin_args(), "-q", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=10 - BEANPOD_ONLY, skipped=BEANPOD_ONLY)
    result.stdout.fnmatch_lines(
        ["*needs beanpod's in-process server*BEANPOD_TEST_TARGET=beanstalkd*"]
    )


def test_a_server_kept_past_its_test_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        kept = []

        @pytest.mark.beanpod(clock="real")
        def test_keeps_it(beanpod_server):
            kept.append(beanpod_server)

        def test_uses_it_later():
            kept[0].jobs()
        """
    )
    result = pytester.runpytest_subprocess(*plugin_args(), "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ServerStopped: this beanpod test server has stopped*"])


def test_markers_give_a_test_its_own_server(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import greenstalk, pytest

        @pytest.mark.beanpod(wal=True)
        def test_restart_keeps_what_was_acknowledged(beanpod_server):
            with greenstalk.Client(beanpod_server.address) as c:
                c.put("kept")
            beanpod_server.restart()
            assert [j.body for j in beanpod_server.jobs()] == [b"kept"]

        @pytest.mark.beanpod(max_job_size=10)
        def test_small_max_job_size(beanpod_server):
            with greenstalk.Client(beanpod_server.address) as c:
                with pytest.raises(greenstalk.JobTooBigError):
                    c.put("x" * 11)

        def test_the_shared_server_was_reset(beanpod_server, beanpod_server_factory):
            assert beanpod_server.jobs() == []
            other = beanpod_server_factory(clock="real")
            assert other.port != beanpod_server.port

        @pytest.mark.beanpod(unix=True)
        def test_a_fresh_server_of_its_own(beanpod_fresh_server, beanpod_server):
            assert beanpod_fresh_server.unix_path is not None
            assert beanpod_fresh_server.port != beanpod_server.port
        """
    )
    result = pytester.runpytest_subprocess(*plugin_args(), "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_the_guides_example_module_passes(pytester: pytest.Pytester) -> None:
    guide = (Path(__file__).parents[2] / "docs" / "testing.md").read_text()
    example = guide.split("```python\n# test_emails.py\n", 1)[1].split("```", 1)[0]
    pytester.makepyfile(test_emails=example)
    result = pytester.runpytest_subprocess(*plugin_args(), "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)


def test_the_package_registers_the_plugin() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["pytest11"] == {"beanpod": PLUGIN}
