"""The local socket over which the agent processes report to the SM.

A switch's agent (controller/agent.py) runs as its own process beside the
switch; it reports carrier events to the SM over a stream socket on this
machine: a unix socket (an address containing "/") or loopback TCP
("127.0.0.1:PORT"). Nothing else is accepted, so reports never leave the
host. One JSON object per line, agent -> SM:

    {"kind": "ready", "switch": "s1", "pid": 4242, "ports": {"s1-eth2": 2}}
    {"kind": "port_event", "switch": "s1", "port": 2, "up": false,
     "detected_ns": 1700000000000000000, "switchover_ns": 1700000000001200000, "error": ""}

`ReportEndpoint` is the SM's side: it accepts any number of agents, hands
every port event to a callback (`SubnetManager.report`, so the event thread
and the timeline are the same as for an in-process agent) and remembers
which switches' agents said they are ready. `ReportClient` is the agent's
side. The agent writes `port_down` before it reports, so the socket is never
on the data plane's critical path.
"""

from __future__ import annotations

import ipaddress
import json
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from controller.agent import PortEvent


class ReportAddressError(ValueError):
    """A report address that is neither a unix socket path nor loopback HOST:PORT."""


class AgentNotReady(RuntimeError):
    """Some agents did not say they were ready in time (or exited first)."""


def parse_address(address: str) -> tuple[socket.AddressFamily, str | tuple[str, int]]:
    """(family, sockaddr) of a report address: a path, or a loopback HOST:PORT."""
    if "/" in address:
        return socket.AF_UNIX, address
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not port.isdigit():
        raise ReportAddressError(
            f"report address {address!r}: expected a unix socket path or 127.0.0.1:PORT")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ReportAddressError(
            f"report address {address!r}: only loopback TCP (127.0.0.1:PORT) or a unix socket;"
            " reports must not leave this machine")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return family, (host, int(port))


def encode_event(event: PortEvent) -> dict:
    return {"kind": "port_event", **asdict(event)}


def decode_event(message: dict) -> PortEvent:
    return PortEvent(switch=str(message["switch"]), port=int(message["port"]),
                     up=bool(message["up"]), detected_ns=int(message["detected_ns"]),
                     switchover_ns=int(message["switchover_ns"]),
                     error=str(message.get("error", "")))


class ReportEndpoint:
    """The SM's report socket: port events -> `on_event`, ready messages -> `ready`."""

    def __init__(self, address: str, on_event: Callable[[PortEvent], None]) -> None:
        family, where = parse_address(address)
        self.on_event = on_event
        self.ready: dict[str, dict] = {}  # switch -> its agent's ready message
        self.problems: list[str] = []  # lines that were not a valid report
        self._path: Path | None = None
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        if family == socket.AF_UNIX:
            self._path = Path(where)
            if self._path.is_socket():  # left by a run that was killed
                self._path.unlink()
            old_umask = os.umask(0o177)  # only this user may report
            try:
                self._sock.bind(where)
            finally:
                os.umask(old_umask)
            self.address = str(where)
        else:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._sock.bind(where)
            host, port = self._sock.getsockname()[:2]
            self.address = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        self._sock.listen(128)
        self._closed = threading.Event()
        self._cond = threading.Condition()
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True, name="sm-reports")

    def start(self) -> ReportEndpoint:
        self._thread.start()
        return self

    def _accept(self) -> None:
        while not self._closed.is_set():
            readable, _, _ = select.select([self._sock], [], [], 0.2)
            if not readable or self._closed.is_set():
                continue
            try:
                conn, _peer = self._sock.accept()
            except OSError:
                continue
            with self._cond:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="sm-report-conn").start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as lines:
            try:
                for line in lines:
                    self._handle(line)
            except OSError:
                pass  # closed under us at shutdown, or the agent died

    def _handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
            kind = message["kind"]
            if kind == "port_event":
                self.on_event(decode_event(message))
            elif kind == "ready":
                with self._cond:
                    self.ready[str(message["switch"])] = message
                    self._cond.notify_all()
            else:
                raise ValueError(f"unknown kind {kind!r}")
        except (ValueError, KeyError, TypeError) as exc:
            self.problems.append(f"bad report {line[:200]!r}: {exc}")

    def wait_ready(self, switches: list[str], timeout: float,
                   failed: Callable[[], str | None] = lambda: None) -> None:
        """Until every listed switch's agent said ready; AgentNotReady naming the rest if
        `timeout` passes or `failed()` returns a reason (e.g. an agent process exited)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                missing = sorted(set(switches) - set(self.ready))
                if not missing:
                    return
                reason = failed()
                if reason:
                    raise AgentNotReady(reason)
                if time.monotonic() >= deadline:
                    raise AgentNotReady(f"no ready report within {timeout:g} s from the agents "
                                        f"of {', '.join(missing)}")
                self._cond.wait(0.1)

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=2)
        self._sock.close()
        with self._cond:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if self._path is not None:
            self._path.unlink(missing_ok=True)


class ReportClient:
    """An agent's connection to the SM's report endpoint (reconnects once if it broke)."""

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        self.family, self.where = parse_address(address)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._sock = self._connect()

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self.timeout
        while True:
            sock = socket.socket(self.family, socket.SOCK_STREAM)
            try:
                sock.connect(self.where)
                return sock
            except OSError as exc:
                sock.close()
                if time.monotonic() >= deadline:
                    raise ConnectionError(f"SM report endpoint {self.where}: {exc}") from None
                time.sleep(0.05)

    def send(self, message: dict) -> None:
        data = json.dumps(message).encode() + b"\n"
        with self._lock:
            try:
                self._sock.sendall(data)
            except OSError:
                self._sock.close()
                self._sock = self._connect()
                self._sock.sendall(data)

    def ready(self, switch: str, ports: dict[str, int]) -> None:
        self.send({"kind": "ready", "switch": switch, "pid": os.getpid(), "ports": ports})

    def port_event(self, event: PortEvent) -> None:
        self.send(encode_event(event))

    def close(self) -> None:
        with self._lock:
            self._sock.close()
