"""What the API's route groups share: the web context, the operator's engine connection
(for moves that need one, like bury) and the confirmation tokens of bulk actions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from beanpod.web.api.confirm import Confirmations
from beanpod.web.context import WebContext

if TYPE_CHECKING:
    from beanpod.core.conn import Conn


@dataclass
class Api:
    ctx: WebContext
    operator: Conn
    confirmations: Confirmations = field(default_factory=Confirmations)
