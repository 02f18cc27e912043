"""What `beanpod serve` was asked to enforce at its edge (docs/security.md)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_REQUEST_TIMEOUT_S = 30.0
FD_RESERVE = 64  # descriptors kept back from RLIMIT_NOFILE: WAL segments, logs, accept
# Unread replies past which a connection is closed (it stops being read sooner: at the
# transport's 64 KiB high-water mark, see BatchSession.pause_writing).
OUTPUT_HARD_LIMIT = 64 << 20


@dataclass(frozen=True)
class TlsSettings:
    """The TLS listeners and their certificate (a docstring: see EdgeSettings)."""

    listen: str | None  # ADDR:PORT of the TLS listener (beanstalkd protocol), if any
    cert: str
    key: str
    client_ca: str | None = None
    client_auth: str = "none"  # none, optional or required
    workq_listen: str | None = None  # ADDR:PORT of a TLS Workq listener
    http: bool = False  # --http-tls: the HTTP listener (--http) serves HTTPS too


@dataclass(frozen=True)
class EdgeSettings:
    """Limits, access and TLS. (A written docstring: dataclasses would make one from
    inspect.signature, formatting every annotation, before the first reply.)"""

    max_memory: int | None = None  # bytes (a --max-memory N% is resolved at parse time)
    max_jobs_per_tube: int | None = None
    max_connections: int | None = None  # None: RLIMIT_NOFILE minus FD_RESERVE
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S  # 0: no deadline
    idle_timeout_s: float = 0.0  # 0: idle connections stay open (as beanstalkd)
    output_hard_limit: int = OUTPUT_HARD_LIMIT
    allow: tuple[str, ...] = ()  # CIDRs; empty: every address may connect
    insecure_public: bool = False
    tls: TlsSettings | None = None
    unix_mode: int | None = None  # chmod of a unix socket, e.g. 0o660
    unix_group: str | None = None
    audit_log: str | None = None

    @property
    def metered(self) -> bool:
        return self.max_memory is not None or self.max_jobs_per_tube is not None
