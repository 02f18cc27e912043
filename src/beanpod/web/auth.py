"""Token auth and CSRF safety, as middleware every route gets.

With a token (`--http-token FILE`, required off loopback) every request carries it: an
`Authorization: Bearer TOKEN` header (scripts, Prometheus) or the session cookie the
`/login` form sets (browsers). The probes (`GET /healthz`, `GET /readyz`) answer without
it, as a container's HEALTHCHECK or a Kubernetes probe sends none, and then say only
whether the server is up and ready (web/health.py). Mutating requests (POST, PUT, PATCH,
DELETE) must not come from another site: a cross-site `Origin` or `Sec-Fetch-Site` is
refused, and a request authenticated by cookie must echo the CSRF token (cookie
`beanpod_csrf`) in the `X-CSRF-Token` header. Without a token (loopback only) the Host
header must name a loopback host, so a DNS-rebinding page cannot reach the server."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from beanpod.web.address import is_loopback
from beanpod.web.errors import ApiError

SESSION_COOKIE = "beanpod_session"
CSRF_COOKIE = "beanpod_csrf"
CSRF_HEADER = "X-CSRF-Token"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
OPEN_PATHS = frozenset({"/login"})  # reachable without the token (it is where you give it)
# GET/HEAD without the token: up/ready only, and a cluster's leader address (what a proxy
# or a client looking for the leader needs; issue 27's interface)
PROBES = frozenset({"/healthz", "/readyz", "/leader"})


class Guard:
    """Checks one request: who it is (token) and where it comes from (CSRF)."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        # Stable across restarts when a token is set, so open pages keep working.
        self.csrf = _derive(token, "csrf") if token else secrets.token_urlsafe(24)
        self.session = _derive(token, "session") if token else None

    def by_bearer(self, request: web.Request) -> bool:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        return scheme.lower() == "bearer" and self.is_token(value)

    def is_token(self, given: str) -> bool:
        return self.token is not None and _same(given, self.token)

    def by_cookie(self, request: web.Request) -> bool:
        cookie = request.cookies.get(SESSION_COOKIE, "")
        return self.session is not None and _same(cookie, self.session)

    def knows(self, request: web.Request) -> bool:
        """May see everything: no token is configured, or the request carries it."""
        return self.token is None or self.by_bearer(request) or self.by_cookie(request)

    def is_bare_probe(self, request: web.Request) -> bool:
        """A health probe without the token: answered, with nothing but up/ready."""
        return (
            request.method in ("GET", "HEAD") and request.path in PROBES and not self.knows(request)
        )

    def authenticate(self, request: web.Request) -> bool:
        """True: came with the bearer token (no CSRF check needed); False: by cookie or
        no token configured. Raises 401 when a token is needed and missing or wrong."""
        if self.by_bearer(request):
            return True
        if self.token is None or self.by_cookie(request) or request.path in OPEN_PATHS:
            return False
        if _wants_html(request):
            raise web.HTTPFound(f"/login?next={request.path_qs}")
        raise ApiError(401, "missing or wrong token", {"WWW-Authenticate": "Bearer"})

    def check_host(self, request: web.Request) -> None:
        if self.token is None and not is_loopback(_host_name(request.host)):
            raise ApiError(403, f"Host {request.host!r} is not a loopback name")

    def check_csrf(self, request: web.Request) -> None:
        if request.method not in MUTATING:
            return
        if request.headers.get("Sec-Fetch-Site") in ("cross-site", "same-site"):
            raise ApiError(403, "cross-site request refused")
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise ApiError(403, f"cross-origin request from {origin} refused")
        if request.path in OPEN_PATHS or self._scripted(request):
            return
        if not _same(request.headers.get(CSRF_HEADER, ""), self.csrf):
            raise ApiError(403, f"missing or wrong {CSRF_HEADER} header")

    def _scripted(self, request: web.Request) -> bool:
        """No token and no cookies: a script (curl), which no browser page can pose as
        once the Origin check above passed."""
        return self.token is None and not request.cookies


GUARD_KEY = web.AppKey("guard", Guard)


def middleware(guard: Guard) -> Middleware:
    @web.middleware
    async def guard_request(request: web.Request, handler: Handler) -> web.StreamResponse:
        guard.check_host(request)
        if guard.is_bare_probe(request):
            return await handler(request)  # no cookie either: it carries nothing else
        if not guard.authenticate(request):
            guard.check_csrf(request)
        response = await handler(request)
        if request.cookies.get(CSRF_COOKIE) != guard.csrf and not response.prepared:
            response.set_cookie(CSRF_COOKIE, guard.csrf, samesite="Strict", path="/")
        return response

    return guard_request


def csrf_token(request: web.Request) -> str:
    """The value a page must echo in the X-CSRF-Token header of its mutating requests."""
    return request.app[GUARD_KEY].csrf


def _host_name(host: str) -> str:
    """The name in a Host header (`[::1]:80` -> `::1`); "" when it cannot be parsed."""
    try:
        return urlsplit("//" + host).hostname or ""
    except ValueError:
        return ""


def _derive(token: str, purpose: str) -> str:
    return hmac.new(token.encode(), purpose.encode(), hashlib.sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def _wants_html(request: web.Request) -> bool:
    return request.method == "GET" and "text/html" in request.headers.get("Accept", "")
