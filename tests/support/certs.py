"""Throwaway certificates for the TLS tests, made with the openssl command line: a CA,
a server certificate for 127.0.0.1/localhost, a client certificate signed by the CA, and
a client certificate from another CA (to be refused)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Certs:
    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str
    rogue_cert: str  # a client certificate the CA did not sign
    rogue_key: str
    renewed_cert: str  # a second server certificate (for reload), same CA and names
    renewed_key: str


def _run(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def _ca(d: Path, name: str) -> tuple[str, str]:
    key, cert = d / f"{name}.key", d / f"{name}.pem"
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
         f"/CN={name}", "-keyout", str(key), "-out", str(cert))  # fmt: skip
    return str(cert), str(key)


def _signed(d: Path, name: str, ca: tuple[str, str], ext: str) -> tuple[str, str]:
    key, csr, cert, extfile = (d / f"{name}.{s}" for s in ("key", "csr", "pem", "ext"))
    extfile.write_text(ext)
    _run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout",
         str(key), "-out", str(csr))  # fmt: skip
    _run("x509", "-req", "-in", str(csr), "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial",
         "-days", "2", "-extfile", str(extfile), "-out", str(cert))  # fmt: skip
    return str(cert), str(key)


def make_certs(directory: Path) -> Certs:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    ca, rogue_ca = _ca(directory, "ca"), _ca(directory, "rogue-ca")
    server = _signed(directory, "server", ca, "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    client = _signed(directory, "client", ca, "extendedKeyUsage=clientAuth\n")
    rogue = _signed(directory, "rogue", rogue_ca, "extendedKeyUsage=clientAuth\n")
    renewed = _signed(directory, "renewed", ca, "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    return Certs(ca[0], *server, *client, *rogue, *renewed)
