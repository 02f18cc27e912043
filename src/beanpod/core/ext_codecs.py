"""Every job extension's write-ahead-log codec, in one place: importing this module
registers each `JobExt.KIND` the server can write in `EXT_DECODERS`. The server loads it
with the extensions (server/extensions.py) before it restores a log, and the offline
readers (`beanpod wal verify|dump`) import it, so both decode the same records."""

from __future__ import annotations

import struct

from beanpod.core.job import EXT_DECODERS
from beanpod.core.qless.ext import QlessExt, RecurExt
from beanpod.core.workq.ext import WorkqExt

# KIND -> the name `beanpod wal dump` shows for it.
NAMES: dict[int, str] = {WorkqExt.KIND: "workq", QlessExt.KIND: "qless", RecurExt.KIND: "recur"}


def describe(kind: int, data: bytes) -> str:
    """One word for an extension's bytes, as dump prints it: `workq:UUID`, `qless:JID`,
    `recur:JID`; `kind N (no decoder)` for a kind no extension registers."""
    decoder = EXT_DECODERS.get(kind)
    if decoder is None:
        return f"kind {kind} (no decoder)"
    try:
        ext = decoder(data)
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        return f"{NAMES.get(kind, kind)} (unreadable: {exc})"
    return f"{NAMES.get(kind, kind)}:{ext.key}"
