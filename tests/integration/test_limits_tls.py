"""TLS over real sockets: greenstalk over a pre-wrapped socket, mutual TLS (a client
of another CA refused at the handshake, counted), Workq over TLS, and a certificate
reload that keeps open connections."""

from __future__ import annotations

import shutil
import signal
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import greenstalk
import pytest

from beanpod.server.edge.settings import EdgeSettings, TlsSettings
from tests.support.certs import Certs, make_certs
from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient
from tests.support.workq_server import RawWorkq, WorkqServer, new_id


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def tls_server(certs: Certs, auth: str = "none") -> WorkqServer:
    tls = TlsSettings(
        "127.0.0.1:0", certs.server_cert, certs.server_key,
        certs.ca if auth != "none" else None, auth, workq_listen="127.0.0.1:0",
    )  # fmt: skip
    return WorkqServer(workq_port=0, edge=EdgeSettings(tls=tls)).start()


@pytest.fixture
def mtls(certs: Certs) -> Iterator[WorkqServer]:
    srv = tls_server(certs, "required")
    yield srv
    srv.stop()


def port_of(srv: WorkqServer, index: int = 0) -> int:
    assert srv.app is not None
    return int(srv.app.tls_addresses[index].rsplit(":", 1)[1])


def client_context(certs: Certs, cert: str | None = None, key: str | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=certs.ca)
    if cert is not None:
        context.load_cert_chain(cert, key)
    return context


def wrapped(srv: WorkqServer, context: ssl.SSLContext, index: int = 0) -> ssl.SSLSocket:
    sock = socket.create_connection(("127.0.0.1", port_of(srv, index)), timeout=10)
    return context.wrap_socket(sock, server_hostname="localhost")


def refused(srv: WorkqServer, context: ssl.SSLContext) -> bool:
    """True if the server refuses this client at the handshake (with TLS 1.3 the client
    learns it on its first read: an alert or the connection closed)."""
    try:
        sock = wrapped(srv, context)
    except (ssl.SSLError, OSError):
        return True
    try:
        sock.sendall(b"list-tube-used\r\n")
        return sock.recv(64) == b""
    except (ssl.SSLError, OSError):
        return True
    finally:
        sock.close()


def test_greenstalk_over_tls(certs: Certs) -> None:
    srv = tls_server(certs)
    try:
        sock = wrapped(srv, client_context(certs))
        with greenstalk.Client(sock) as client:
            job_id = client.put("over tls")
            job = client.reserve(timeout=5)
            assert (job.id, job.body) == (job_id, "over tls")
            client.delete(job)
        plain = RawClient(srv.connect())  # the plain listener is unaffected
        assert plain.cmd(b"peek %d\r\n" % job_id) == b"NOT_FOUND\r\n"
        plain.close()
    finally:
        srv.stop()


def test_mutual_tls_accepts_the_ca_and_refuses_another(mtls: WorkqServer, certs: Certs) -> None:
    good = wrapped(mtls, client_context(certs, certs.client_cert, certs.client_key))
    client = RawClient(good)  # type: ignore[arg-type]
    assert client.cmd(b"put 0 0 60 2\r\nok\r\n") == b"INSERTED 1\r\n"
    for cert, key in ((certs.rogue_cert, certs.rogue_key), (None, None)):
        assert refused(mtls, client_context(certs, cert, key))
    stats = client.cmd(b"stats\r\n")
    assert b"tls-handshakes-failed: 2\n" in stats
    assert mtls.app is not None
    for _ in range(100):  # each refused connection left the engine exactly once
        if mtls.call(lambda: mtls.app.engine.counts.conns) == 1:  # type: ignore[union-attr]
            break
        time.sleep(0.05)
    assert mtls.call(lambda: mtls.app.engine.counts.conns) == 1  # type: ignore[union-attr]
    assert mtls.call(lambda: mtls.app.edge.gate.open) == 1  # type: ignore[union-attr]
    assert client.cmd(b"peek 1\r\n") == b"FOUND 1 2\r\nok\r\n"
    good.close()


def test_workq_over_tls(mtls: WorkqServer, certs: Certs) -> None:
    sock = wrapped(mtls, client_context(certs, certs.client_cert, certs.client_key), 1)
    wq = RawWorkq(sock)  # type: ignore[arg-type]
    job = new_id().encode()
    wq.expect(b"add %s q 1000 60000 2\r\nhi\r\n" % job, b"+OK\r\n")
    wq.expect(b"delete %s\r\n" % job, b"+OK\r\n")
    sock.close()


def test_reload_keeps_open_connections(certs: Certs, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    shutil.copy(certs.server_cert, cert)
    shutil.copy(certs.server_key, key)
    tls = TlsSettings("127.0.0.1:0", str(cert), str(key))
    srv = WorkqServer(edge=EdgeSettings(tls=tls)).start()
    try:
        old = wrapped(srv, client_context(certs))
        first = old.getpeercert(binary_form=True)
        shutil.copy(certs.renewed_cert, cert)
        shutil.copy(certs.renewed_key, key)
        assert srv.app is not None and srv.app.edge.tls is not None
        assert srv.call(srv.app.edge.tls.reload) is True
        assert RawClient(old).cmd(b"list-tube-used\r\n") == b"USING default\r\n"  # type: ignore[arg-type]
        fresh = wrapped(srv, client_context(certs))
        assert fresh.getpeercert(binary_form=True) != first
        assert RawClient(fresh).cmd(b"list-tube-used\r\n") == b"USING default\r\n"  # type: ignore[arg-type]
        key.write_text("not a key")  # a broken reload keeps the working certificate
        assert srv.call(srv.app.edge.tls.reload) is False
        wrapped(srv, client_context(certs)).close()
        old.close()
        fresh.close()
    finally:
        srv.stop()


def test_tls_on_the_served_event_loop(certs: Certs) -> None:
    """`beanpod serve` (uvloop when installed): every handshake completes or is refused
    at once, none waits for the handshake timeout."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    flags = ["--tls-listen", f"127.0.0.1:{port}", "--tls-cert", certs.server_cert,
             "--tls-key", certs.server_key, "--tls-client-ca", certs.ca]  # fmt: skip
    srv = SubprocessServer(flags).start()
    try:
        for cert, key in [(certs.client_cert, certs.client_key)] * 6 + [(None, None)] * 2:
            context = client_context(certs, cert, key)
            with context.wrap_socket(
                socket.create_connection(("127.0.0.1", port), timeout=5),
                server_hostname="localhost", do_handshake_on_connect=False,
            ) as tls:  # fmt: skip
                try:
                    tls.do_handshake()
                    tls.sendall(b"list-tube-used\r\n")
                    reply = tls.recv(64)
                except ssl.SSLError:
                    reply = b""
            assert reply == (b"USING default\r\n" if cert else b"")
        srv.signal(signal.SIGHUP)  # reload: the server stays up and keeps serving
        context = client_context(certs, certs.client_cert, certs.client_key)
        with context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5),
                                 server_hostname="localhost") as tls:  # fmt: skip
            tls.sendall(b"list-tube-used\r\n")
            assert tls.recv(64) == b"USING default\r\n"
        for _ in range(100):
            if any("TLS certificate reloaded" in line for line in srv.log):
                break
            time.sleep(0.05)
        assert any("TLS certificate reloaded" in line for line in srv.log)
    finally:
        srv.stop()


def test_http_listener_over_tls(certs: Certs) -> None:
    """--http-tls: /healthz and /metrics over HTTPS with the same certificate; a client of
    another CA is refused at the handshake, and plain HTTP gets no answer."""
    import urllib.request

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    flags = ["--http", f"127.0.0.1:{port}", "--http-tls", "--tls-cert", certs.server_cert,
             "--tls-key", certs.server_key]  # fmt: skip
    srv = SubprocessServer(flags).start()
    try:
        url = f"https://localhost:{port}/healthz"
        deadline = time.monotonic() + 10
        while True:  # the HTTP listener may come up a moment after the beanstalkd port
            try:
                with urllib.request.urlopen(url, context=client_context(certs), timeout=5) as r:
                    assert (r.status, r.read()) == (200, b'{"status": "ok"}')
                break
            except (ConnectionRefusedError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        with pytest.raises(urllib.error.URLError):  # the system CAs do not know ours
            urllib.request.urlopen(url, context=ssl.create_default_context(), timeout=5)
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(f"http://localhost:{port}/healthz", timeout=5).read()
    finally:
        srv.stop()
