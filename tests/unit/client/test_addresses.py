"""Several addresses for one client (beanpod.client.socket_conn): parsed, and tried in
turn over real sockets: a refused address is skipped, a lost connection moves on."""

from __future__ import annotations

import asyncio
import socket

import pytest

from beanpod.client import workq_aio
from beanpod.client.socket_conn import Addresses, SocketConn, parse_addresses
from beanpod.client.workq_aio import AsyncClient


@pytest.mark.parametrize(
    ("spec", "found"),
    [
        ("h1:1,h2:2", [("h1", 1), ("h2", 2)]),
        (" h1:1 , h2 ", [("h1", 1), ("h2", 9)]),
        (("h1", 1), [("h1", 1)]),
        ([("h1", 1), "h2:2"], [("h1", 1), ("h2", 2)]),
        ("[::1]:5,::1,[::2]", [("::1", 5), ("::1", 9), ("::2", 9)]),
    ],
)
def test_parse(spec: object, found: list[tuple[str, int]]) -> None:
    assert parse_addresses(spec, 9) == found  # type: ignore[arg-type]


def test_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="no address"):
        parse_addresses(" , ", 9)


def test_in_turn_from_the_one_in_use() -> None:
    addresses = Addresses("a:1,b:2,c:3", 9)
    addresses.move_on()
    assert [index for index, _ in addresses.in_turn()] == [1, 2, 0]
    addresses.move_on()
    addresses.move_on()
    assert addresses.current == ("a", 1)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connect_skips_a_refused_address_and_a_loss_moves_on() -> None:
    with (
        socket.create_server(("127.0.0.1", 0)) as first,
        socket.create_server(("127.0.0.1", 0)) as second,
    ):
        live = [("127.0.0.1", s.getsockname()[1]) for s in (first, second)]
        conn = SocketConn([("127.0.0.1", closed_port()), *live], timeout=5, default_port=1)
        conn._connect()
        assert conn.address == live[0]  # the refused one was skipped
        conn._lost(ConnectionResetError())
        conn._connect()
        assert conn.address == live[1]
        conn._lost(TimeoutError())  # a timeout is no loss of the server: it stays
        assert conn.address == live[1]
        conn.close()


def test_the_asyncio_client_skips_a_refused_address() -> None:
    async def run() -> None:
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        live = ("127.0.0.1", server.sockets[0].getsockname()[1])
        async with server:
            client = await AsyncClient.connect([("127.0.0.1", closed_port()), live])
            assert client.addresses is not None and client.addresses.current == live
            await client.close()
            addresses = Addresses([("127.0.0.1", closed_port()), live], 1)
            _reader, writer = await workq_aio._open(addresses)
            writer.close()
            assert addresses.current == live

    asyncio.run(run())
