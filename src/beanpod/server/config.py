"""Server configuration: what `beanpod serve` was asked to do."""

from __future__ import annotations

from dataclasses import dataclass, field

from beanpod.durability.cluster import tuning
from beanpod.server.edge.settings import EdgeSettings

DEFAULT_PORT = 11300
DEFAULT_ADDRESS = "127.0.0.1"  # beanstalkd binds every interface; beanpod stays private


@dataclass(frozen=True)
class ServerConfig:
    """`beanpod serve`'s settings. (A written docstring: dataclasses would make one from
    inspect.signature, formatting every annotation, ~1 ms of start-up for these.)"""

    address: str = DEFAULT_ADDRESS  # host, or "unix:/path" for a UNIX socket
    port: int = DEFAULT_PORT
    max_job_size: int = 65535
    verbose: int = 0
    use_uvloop: bool = True
    binlog_dir: str | None = None  # -b: write-ahead log directory (None: in memory only)
    fsync_ms: int = 50  # -f: fsync at most every MS ms; 0 fsyncs before each reply
    no_fsync: bool = False  # -F: never fsync
    segment_size: int = 10485760  # -s: bytes per WAL segment
    checkpoint_floor: int = 134217728  # --checkpoint-floor: 0 off (docs/wal.md "Checkpoint")
    workq_port: int | None = None  # Workq listener port (0: any free port; None: off)
    # Listeners left at their default port ("Workq", "HTTP"): taken, they stay off with a
    # warning instead of failing start-up (server/ports.py).
    default_ports: frozenset[str] = frozenset()
    redis_port: int | None = None  # --redis-port: the Redis-protocol door (None: off)
    redis_address: str | None = None  # --redis-listen (None: -l's host, 127.0.0.1 for unix:)
    redis_password: str | None = None  # --redis-password-file's content: AUTH required
    redis_allow_flush: bool = False  # --redis-allow-flush: FLUSHDB forgets every qless job
    events_dir: str | None = None  # --events: job event log directory (None: no event log)
    clock: str = "real"  # --clock: "real", or "manual" (moves only when told: tests)
    http: tuple[str, int] | None = None  # --http host and port (None: no HTTP listener)
    http_token_file: str | None = None  # --http-token: file holding the HTTP access token
    metrics_max_tubes: int = 500  # --metrics-max-tubes: tubes /metrics exports by name
    analytics_dir: str | None = None  # --analytics: `beanpod analyze` output for the dashboard
    cluster: str | None = None  # --cluster etcd://HOST:PORT[,...]/NAME (docs/cluster.md)
    node_id: str | None = None  # --node-id: this node's name in the cluster
    checkpoint_batches: int = tuning.CHECKPOINT_BATCHES  # --checkpoint-batches
    trim_every: float = tuning.TRIM_EVERY  # --trim-every
    defrag_every: float = tuning.DEFRAG_EVERY  # --defrag-every
    check_moves: bool = False  # --check-moves: the engine checks every move (debugging)
    edge: EdgeSettings = field(default_factory=EdgeSettings)  # limits, TLS, allow-list...

    @property
    def redis_host(self) -> str:
        """The Redis door's address: --redis-listen, else -l's host (loopback with unix:)."""
        if self.redis_address is not None:
            return self.redis_address
        return DEFAULT_ADDRESS if self.unix_path is not None else self.address

    @property
    def unix_path(self) -> str | None:
        return self.address[5:] if self.address.startswith("unix:") else None
