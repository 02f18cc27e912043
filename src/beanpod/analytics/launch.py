"""Start Spark's JVM with its start-up noise kept off the user's terminal.

Spark's launcher always adds ``--add-modules=jdk.incubator.vector`` to the driver's JVM,
and the JVM then prints ``WARNING: Using incubator modules: jdk.incubator.vector`` to
stderr at every start; no JVM flag turns that line off. The JVM's stderr is read through
a pipe instead, and every other line (Spark's log lines, a crash) passes through as it is.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import IO, Any

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway

_launch_gateway: Any = launch_gateway  # untyped in pyspark

#: Lines the JVM prints at start-up that tell a user of ``beanpod analyze`` nothing.
NOISE = (b"WARNING: Using incubator modules:",)


def forward(source: IO[bytes], target: IO[bytes], noise: tuple[bytes, ...] = NOISE) -> None:
    """Copy ``source`` to ``target`` line by line, except lines starting with ``noise``."""
    for line in iter(source.readline, b""):
        if not line.startswith(noise):
            target.write(line)
            target.flush()


def quiet_context(conf: SparkConf) -> SparkContext:
    """A SparkContext whose JVM's stderr reaches ours without the :data:`NOISE` lines.

    The pipe is read from before the JVM starts, so a launch that fails still shows why.
    """
    read_end, write_end = os.pipe()
    source = os.fdopen(read_end, "rb")
    threading.Thread(target=forward, args=(source, sys.stderr.buffer), daemon=True).start()
    try:
        gateway = _launch_gateway(conf, popen_kwargs={"stderr": write_end})
    finally:
        os.close(write_end)  # the JVM holds its own copy: EOF when it exits
    return SparkContext(conf=conf, gateway=gateway)
