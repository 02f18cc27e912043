"""HTTP token auth and CSRF safety over a real socket: every request needs the token
(bearer header, or the cookie /login sets) but the health probes, which without it say
only up/ready; mutating requests from a browser must echo the CSRF token; without a
token only loopback Host names are served."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.support.http import HttpServer

TOKEN = "s3cret-token"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[HttpServer]:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    server = HttpServer(["--http-token", str(token)]).start()
    yield server
    server.stop()


def cookies_of(reply_headers: object) -> dict[str, str]:
    found = {}
    for header in reply_headers.get_all("Set-Cookie") or []:  # type: ignore[attr-defined]
        name, value = header.split(";", 1)[0].split("=", 1)
        found[name] = value
    return found


def test_missing_or_wrong_token_is_401_json(guarded: HttpServer) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic " + TOKEN}):
        reply = guarded.request("GET", "/metrics", headers=headers)
        assert reply.status == 401
        assert reply.json() == {"error": "missing or wrong token", "status": 401}
        assert reply.headers["WWW-Authenticate"] == "Bearer"
    assert guarded.request("POST", "/healthz").status == 401  # only GET/HEAD probes are open


def test_probes_answer_without_the_token_and_tell_only_up_or_ready(guarded: HttpServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for path, body in (("/healthz", {"status": "ok"}), ("/readyz", {"status": "ready"})):
        reply = guarded.get(path)
        assert (reply.status, reply.json()) == (200, body)
        assert "Set-Cookie" not in reply.headers  # not even the CSRF cookie
        assert guarded.request("HEAD", path).status == 200
    guarded.server.signal(signal.SIGUSR1)  # drain: not ready
    deadline = time.monotonic() + 10
    while guarded.get("/readyz").status == 200 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (guarded.get("/readyz").status, guarded.get("/readyz").json()) == (
        503, {"status": "not ready"})  # fmt: skip
    told = guarded.request("GET", "/readyz", headers=auth)
    assert (told.status, told.json()) == (503, {"status": "draining"})  # the token sees why
    for path in ("/metrics", "/api/v1/summary", "/api/v1/tubes", "/healthz/", "/readyz/x"):
        assert guarded.get(path).status == 401, path  # every other route keeps the token


def test_bearer_token_is_accepted(guarded: HttpServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert guarded.request("GET", "/metrics", headers=auth).status == 200
    missing = guarded.request("GET", "/nope", headers=auth)
    assert missing.status == 404  # auth first, then routing
    # A scripted mutating request with the bearer token needs no CSRF token.
    assert guarded.request("POST", "/healthz", headers=auth).status == 405


def test_browser_is_sent_to_login_and_signs_in(guarded: HttpServer) -> None:
    page = guarded.request("GET", "/metrics", headers={"Accept": "text/html"})
    assert page.status == 302 and page.headers["Location"] == "/login?next=/metrics"
    form = guarded.get("/login?next=/metrics")
    assert form.status == 200 and b'name="token"' in form.body
    wrong = guarded.request("POST", "/login", urlencode({"token": "x"}).encode(), FORM)
    assert wrong.status == 401 and b"Wrong token" in wrong.body
    body = urlencode({"token": TOKEN, "next": "/metrics"}).encode()
    signed = guarded.request("POST", "/login", body, FORM)
    assert signed.status == 302 and signed.headers["Location"] == "/metrics"
    session = cookies_of(signed.headers)["beanpod_session"]
    assert TOKEN not in session
    assert "HttpOnly" in signed.headers["Set-Cookie"]
    cookie = {"Cookie": f"beanpod_session={session}"}
    reply = guarded.request("GET", "/metrics", headers=cookie)
    assert reply.status == 200
    csrf = cookies_of(reply.headers)["beanpod_csrf"]
    # A mutating request with only the cookie (what a forged form sends) is refused...
    refused = guarded.request("POST", "/healthz", headers=cookie)
    assert refused.status == 403 and "X-CSRF-Token" in refused.json()["error"]
    # ...and passes the guard with the CSRF token echoed in the header.
    echoed = {**cookie, "Cookie": f"beanpod_session={session}; beanpod_csrf={csrf}",
              "X-CSRF-Token": csrf}  # fmt: skip
    assert guarded.request("POST", "/healthz", headers=echoed).status == 405


def test_login_only_returns_to_this_server(guarded: HttpServer) -> None:
    body = urlencode({"token": TOKEN, "next": "//evil.example/x"}).encode()
    assert guarded.request("POST", "/login", body, FORM).headers["Location"] == "/"
    page = guarded.get("/login?next=%22%3E%3Cscript%3E")
    assert b"<script>" not in page.body


def test_cross_site_mutations_are_refused(guarded: HttpServer) -> None:
    # Without the token a cross-site request never gets as far as the route...
    reply = guarded.request("POST", "/healthz", headers={"Origin": "http://evil.example"})
    assert reply.status == 401
    # ...and a signed-in browser's cross-site request is refused before its CSRF token is
    # even looked at.
    body = urlencode({"token": TOKEN}).encode()
    session = cookies_of(guarded.request("POST", "/login", body, FORM).headers)
    cookie = {"Cookie": f"beanpod_session={session['beanpod_session']}"}
    for extra in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        reply = guarded.request("POST", "/healthz", headers={**cookie, **extra})
        assert reply.status == 403 and "cross-" in reply.json()["error"]


def test_without_a_token_only_loopback_hosts_are_served() -> None:
    http = HttpServer().start()
    try:
        assert http.get("/healthz").status == 200
        rebinding = http.request("GET", "/metrics", headers={"Host": "evil.example:11380"})
        assert rebinding.status == 403 and "loopback" in rebinding.json()["error"]
        for host in ("localhost:1", "localhost", "[::1]", "[::1]:80", "127.0.0.2:5"):
            assert http.request("GET", "/healthz", headers={"Host": host}).status == 200, host
        for host in ("evil.example", "[::1", "0.0.0.0:1", "127.0.0.1.evil.example"):
            assert http.request("GET", "/healthz", headers={"Host": host}).status == 403, host
        cross = http.request("POST", "/healthz", headers={"Origin": "http://evil.example"})
        assert cross.status == 403
        same = http.request(
            "POST", "/healthz", headers={"Origin": f"http://{http.host}:{http.port}"}
        )
        assert same.status == 405  # passed the guard: no such method on the route
        site = http.request("POST", "/healthz", headers={"Sec-Fetch-Site": "cross-site"})
        assert site.status == 403
    finally:
        http.stop()


def test_oversized_request_is_413_json() -> None:
    http = HttpServer().start()
    try:
        reply = http.request("POST", "/login", b"x" * (2 << 20), FORM)
        assert reply.status == 413
        assert reply.json() == {"error": "request body too large", "status": 413}
    finally:
        http.stop()


def test_token_never_appears_in_logs(guarded: HttpServer) -> None:
    guarded.request("GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert not any(re.search(TOKEN, line) for line in guarded.server.log)
