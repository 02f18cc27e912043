"""The JVM's stderr passes through without its start-up noise (the incubator warning)."""

from __future__ import annotations

import io

from beanpod.analytics.launch import forward


def test_forward_drops_only_the_noise_lines() -> None:
    jvm = io.BytesIO(
        b"WARNING: Using incubator modules: jdk.incubator.vector\n"
        b"12:00:01 ERROR Executor: Exception in task 0.0\n"
        b"  WARNING: Using incubator modules: indented, so not the JVM's line\n"
        b"no newline at the end"
    )
    ours = io.BytesIO()
    forward(jvm, ours)
    assert ours.getvalue() == (
        b"12:00:01 ERROR Executor: Exception in task 0.0\n"
        b"  WARNING: Using incubator modules: indented, so not the JVM's line\n"
        b"no newline at the end"
    )
