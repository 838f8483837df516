"""Switch server ports (P4Runtime, Thrift) come from below the kernel's ephemeral
range, never twice, never one somebody already listens on, and never one another run
on the machine has claimed but whose switch has not bound it yet: two runs started
in the same second once handed the same port to a switch each."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from topologies import ports

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def claims(tmp_path):
    return tmp_path / "claims"


def _first_bindable(start: int) -> int:
    for candidate in range(start, start + 1000):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", candidate))
            except OSError:
                continue
        return candidate
    raise AssertionError("no bindable port near 24000")


def test_ports_are_below_the_ephemeral_range_and_distinct(claims) -> None:
    low, _high = ports.ephemeral_range()
    got = [ports.free_tcp_port(claims) for _ in range(200)]
    try:
        assert len(set(got)) == len(got)
        assert all(ports.FIRST_PORT <= p < low for p in got)
    finally:
        for p in got:
            ports.release_port(p)


def test_a_port_in_use_is_skipped(monkeypatch, claims) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        candidate = _first_bindable(24000)
        busy.bind(("127.0.0.1", candidate))
        busy.listen()
        # the search starts exactly at the busy port
        monkeypatch.setattr(ports.random, "randrange", lambda span: candidate - ports.FIRST_PORT)
        port = ports.free_tcp_port(claims)
        ports.release_port(port)
        assert port != candidate and port > candidate


def test_a_port_another_process_claimed_is_skipped_until_that_process_ends(
        monkeypatch, claims) -> None:
    """The other run's switch has not bound its port yet: the port is free to bind,
    yet taken. When that run's process ends, its claim goes with it."""
    candidate = _first_bindable(25000)
    other = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from topologies import ports
        import random
        random.randrange = lambda span: {candidate} - ports.FIRST_PORT
        print(ports.free_tcp_port(Path({str(claims)!r})), flush=True)
        sys.stdin.read()
        """)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert int(other.stdout.readline()) == candidate
        monkeypatch.setattr(ports.random, "randrange", lambda span: candidate - ports.FIRST_PORT)
        mine = ports.free_tcp_port(claims)
        ports.release_port(mine)
        assert mine != candidate
    finally:
        other.stdin.close()
        other.wait(timeout=10)
    again = ports.free_tcp_port(claims)
    ports.release_port(again)
    assert again == candidate


def test_a_released_port_can_be_handed_out_again_and_holds_no_descriptor(
        monkeypatch, claims) -> None:
    candidate = _first_bindable(26000)
    monkeypatch.setattr(ports.random, "randrange", lambda span: candidate - ports.FIRST_PORT)
    first = ports.free_tcp_port(claims)
    assert first == candidate and first in ports._claimed
    ports.release_port(first)
    assert first not in ports._claimed
    assert ports.free_tcp_port(claims) == candidate
    ports.release_port(candidate)
