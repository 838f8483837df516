"""Switch server ports (P4Runtime, Thrift) come from below the kernel's ephemeral
range, never twice, and never one somebody already listens on: a port inside the
ephemeral range can be taken by an outgoing connection before the switch binds it."""

from __future__ import annotations

import socket

from topologies import network


def test_ports_are_below_the_ephemeral_range_and_distinct() -> None:
    low, _high = network._ephemeral_range()
    ports = [network.free_tcp_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert all(20000 <= p < low for p in ports)


def test_a_port_in_use_is_skipped(monkeypatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        for candidate in range(24000, 25000):
            try:
                busy.bind(("127.0.0.1", candidate))
                break
            except OSError:
                continue
        busy.listen()
        # the search starts exactly at the busy port
        monkeypatch.setattr(network.random, "randrange", lambda span: candidate - 20000)
        port = network.free_tcp_port()
        assert port != candidate and port > candidate
