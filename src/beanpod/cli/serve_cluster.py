"""`beanpod serve --cluster etcd://HOST:PORT[,...]/NAME --node-id ID`: the options of a
cluster's node, and the serve options refused with them (docs/cluster.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from beanpod.durability.cluster import tuning

F = TypeVar("F", bound=Callable[..., Any])

# serve's parameters that cannot apply on a cluster's node, and why
REFUSED = {
    "fsync_ms": "durability is etcd's: a reply waits for the etcd commit",
    "no_fsync": "durability is etcd's: a reply waits for the etcd commit",
    "checkpoint_floor": "the log is kept in etcd (a node checkpoints every --checkpoint-batches)",
    "segment_size": "the log is kept in etcd",
    "clock": "a cluster runs on the real clock",
}


# options of a cluster's node only
TUNING = ("checkpoint_batches", "trim_every", "defrag_every")


def cluster_options(command: F) -> F:
    command = _tuning("--defrag-every", click.FloatRange(min=0), tuning.DEFRAG_EVERY, "SECONDS",
                      "the leader defragments etcd's members (one at a time) after a trim at "
                      "most this often; 0: never")(command)  # fmt: skip
    command = _tuning("--trim-every", click.FloatRange(min=0.1), tuning.TRIM_EVERY, "SECONDS",
                      "how often the leader trims the log below the checkpoint two nodes "
                      "hold, then compacts etcd")(command)  # fmt: skip
    command = _tuning("--checkpoint-batches", click.IntRange(min=1), tuning.CHECKPOINT_BATCHES, "N",
                      "with -b DIR, a checkpoint there every N log batches")(command)  # fmt: skip
    command = click.option(
        "--node-id",
        default=None,
        help="This node's name in the cluster (with --cluster; shown by GET /leader).",
    )(command)
    return click.option(
        "--cluster",
        default=None,
        metavar="etcd://HOST:PORT[,HOST:PORT...]/NAME",
        help="Run as one node of a cluster whose log is kept in these etcd members "
        "(docs/cluster.md). [default: a single node]",
    )(command)


def check_cluster(
    ctx: click.Context, cluster: str | None, node_id: str | None, address: str, port: int
) -> None:
    """Refuse, in one line, what cannot apply on a cluster's node."""
    if cluster is None:
        for name in ("node_id", *TUNING):
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
                raise click.UsageError(f"--{name.replace('_', '-')} needs --cluster")
        return
    if not node_id:
        raise click.UsageError("--cluster needs --node-id ID (this node's name)")
    if address.startswith("unix:") or port == 0:
        raise click.UsageError("--cluster needs -l HOST -p PORT: the leader's address is shown")
    for name, why in REFUSED.items():
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
            flag = "--" + name.replace("_", "-")
            raise click.UsageError(f"{flag} cannot be used with --cluster: {why}")


def _tuning(
    flag: str, kind: click.FloatRange | click.IntRange, default: float, metavar: str, says: str
) -> Callable[[F], F]:
    """An option of a cluster's node only (refused without --cluster)."""
    return click.option(flag, type=kind, default=default, show_default=True, metavar=metavar,
                        help=f"With --cluster: {says}.")  # fmt: skip
