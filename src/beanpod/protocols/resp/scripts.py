"""Scripts: qless's unified script is recognised, never run. EVALSHA/EVAL/SCRIPT.

A client computes its script's SHA-1 and sends `EVALSHA <sha> 0 <function> <now> ...`;
only after `NOSCRIPT` does it send `SCRIPT LOAD <body>` (script_registry.py recognises
it). Any other script is refused: there is no Lua here.
"""

from __future__ import annotations

from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.calls import run
from beanpod.protocols.resp.context import Session
from beanpod.protocols.resp.script_registry import OLD_PUT

NOSCRIPT = w.error("NOSCRIPT No matching script. Please use EVAL.")
NOT_QLESS = (
    "ERR beanpod serves qless's unified script only (qless.lua with its QlessAPI "
    "table); this script is not one, and there is no Lua interpreter here"
)


def evalsha(s: Session, req: list[bytes]) -> bytes:
    """EVALSHA sha numkeys [key ...] [arg ...]"""
    sha = req[1].decode("ascii", "replace").lower()
    kind = s.door.scripts.loaded.get(sha)
    if kind is None:
        return NOSCRIPT
    return _call(s, sha, kind, req)


def eval_(s: Session, req: list[bytes]) -> bytes:
    """EVAL body numkeys [key ...] [arg ...]"""
    refusal = _numkeys(req)
    if refusal is not None:
        return refusal
    sha, kind = s.door.scripts.load(req[1])
    if kind is None:
        return w.error(NOT_QLESS)
    return _call(s, sha, kind, req)


def _numkeys(req: list[bytes]) -> bytes | None:
    """Redis's refusal of the key count, checked before the script is looked at."""
    try:
        numkeys = int(req[2])
    except ValueError:
        return w.error("ERR value is not an integer or out of range")
    if numkeys < 0:
        return w.error("ERR Number of keys can't be negative")
    if numkeys > len(req) - 3:
        return w.error("ERR Number of keys can't be greater than number of args")
    return None


def _call(s: Session, sha: str, kind: str, req: list[bytes]) -> bytes:
    refusal = _numkeys(req)
    if refusal is not None:
        return refusal
    if int(req[2]):
        return w.error(
            f"ERR user_script:1: No Keys should be provided script: {sha}, on @user_script:1."
        )
    return run(s, sha, kind == OLD_PUT, req[3:])


def script(s: Session, req: list[bytes]) -> bytes:
    """SCRIPT LOAD body | EXISTS sha ... | FLUSH [ASYNC|SYNC]"""
    sub = req[1].lower()
    if sub == b"load" and len(req) == 3:
        sha, kind = s.door.scripts.load(req[2])
        return w.error(NOT_QLESS) if kind is None else w.bulk(sha)
    if sub == b"exists" and len(req) > 2:
        loaded = s.door.scripts.loaded
        return w.array([w.integer(r.decode("ascii", "replace").lower() in loaded) for r in req[2:]])
    if sub == b"flush" and len(req) <= 3:
        s.door.scripts.flush()
        return w.OK
    if sub in (b"load", b"exists", b"flush"):
        name = req[1].decode("utf-8", "replace").lower()
        return w.error(f"ERR wrong number of arguments for 'script|{name}' command")
    name = req[1].decode("utf-8", "replace").upper()
    return w.error(f"ERR unknown subcommand '{name}'. Try SCRIPT HELP.")
