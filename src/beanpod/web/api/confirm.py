"""Confirmation tokens for bulk actions: a dry run answers how many jobs a filter
selects and a token bound to that action and filter; only a request carrying the token
runs it. Tokens are signed (HMAC with a per-process secret) and expire."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any

VALID_SECONDS = 300


class Confirmations:
    def __init__(self, secret: bytes | None = None) -> None:
        self.secret = secret or secrets.token_bytes(32)

    def issue(self, action: str, what: dict[str, Any]) -> str:
        expires = int(time.time()) + VALID_SECONDS
        return f"{expires}.{self._sign(action, what, expires)}"

    def check(self, token: Any, action: str, what: dict[str, Any]) -> bool:
        """Was `token` issued for this action on this selection, and is it still valid?"""
        if not isinstance(token, str) or token.count(".") != 1:
            return False
        expires, signature = token.split(".")
        if not expires.isdigit() or int(expires) < time.time():
            return False
        return hmac.compare_digest(signature, self._sign(action, what, int(expires)))

    def _sign(self, action: str, what: dict[str, Any], expires: int) -> str:
        message = json.dumps([action, what, expires], sort_keys=True).encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()
