"""Faults on a schedule: link down/up, NIC control commands, and hooks for the runner.

    schedule = FaultSchedule([
        (1.0, LinkDown([LinkEnd("s1-eth2"), LinkEnd("s2-eth1")])),
        (1.5, NicCommand("/tmp/run/h3.sock", "stall")),
        (2.0, Hook("kill s2", runner.kill_switch_s2)),   # the runner owns switch processes
        (3.0, LinkUp([LinkEnd("s1-eth2"), LinkEnd("s2-eth1")])),
    ])
    schedule.start()          # a thread; times are seconds from start()
    ...
    schedule.join(); schedule.events  # what ran, when (CLOCK_REALTIME ns), and errors

A link goes down as carrier loss on both ends: a switch port in this namespace is
set down over rtnetlink (traffic/link_state.py), an end in another namespace with
`ip link set dev X down` run with its command prefix (e.g. ["ip", "netns", "exec",
"h1"] for a host's interface).
NIC faults go through the NIC emulator's control socket (traffic/nic.py):
`stall`, `resume`, `pause_storm on|off`, `drop_credits N`. A switch
kill/restart is the runner's: pass it as a `Hook`.

The executed times in `events` are what the analysis takes as the failure
time (timing.recovery_gaps).
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from traffic import link_state
from traffic.realtime import realtime


class FaultError(Exception):
    """A fault that could not be applied: names it and says what failed."""


@dataclass(frozen=True)
class LinkEnd:
    """One end of a link: an interface, and the command prefix that reaches its namespace."""

    iface: str
    prefix: tuple[str, ...] = ()
    # A supervised server (topologies/remote.py): runs the command there, raises on failure
    run: Callable[[list[str]], None] | None = field(default=None, compare=False)


def set_link(ends: Sequence[LinkEnd], up: bool) -> None:
    """Every end up or down at once (carrier follows on a veth's peer), as a cable cut
    takes both ends together. Ends in this namespace are set over rtnetlink in one go
    (traffic/link_state.py: no `ip` process to start, so the recorded start is the
    cut); the others (a host's namespace, another server) run `ip link set dev X
    up|down` with their prefix, started at the same time."""
    state = "up" if up else "down"
    started = []
    for end in ends:
        if end.run is not None:
            end.run(["ip", "link", "set", "dev", end.iface, state])
        elif end.prefix:
            cmd = [*end.prefix, "ip", "link", "set", "dev", end.iface, state]
            started.append((cmd, subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.PIPE, text=True)))
    local = [end.iface for end in ends if end.run is None and not end.prefix]
    errors = [f"link {state}: {p}" for p in link_state.set_state(local, up)] if local else []
    for cmd, proc in started:
        _out, err = proc.communicate()
        if proc.returncode != 0:
            errors.append(f"{' '.join(cmd)}: {err.strip() or proc.returncode}")
    if errors:
        raise FaultError("; ".join(errors))


class NicControl:
    """Client of a NIC emulator's control socket: one command, one JSON reply."""

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self.path = str(path)
        self.timeout = timeout

    def send(self, command: str) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(self.timeout)
            try:
                sock.connect(self.path)
                sock.sendall(command.strip().encode() + b"\n")
                reply = b""
                while not reply.endswith(b"\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
            except OSError as exc:
                raise FaultError(f"NIC control {self.path}: {command!r}: {exc}") from None
        try:
            answer = json.loads(reply)
        except ValueError:
            raise FaultError(f"NIC control {self.path}: {command!r}: bad reply {reply!r}") from None
        if not answer.get("ok"):
            raise FaultError(f"NIC control {self.path}: {command!r}: {answer.get('error')}")
        return answer

    def stall(self) -> dict:
        return self.send("stall")

    def resume(self) -> dict:
        return self.send("resume")

    def pause_storm(self, on: bool) -> dict:
        return self.send(f"pause_storm {'on' if on else 'off'}")

    def drop_credits(self, n: int) -> dict:
        return self.send(f"drop_credits {int(n)}")

    def stats(self) -> dict:
        return self.send("stats")["stats"]

    def stop(self) -> dict:
        return self.send("stop")


# --------------------------------------------------------------------------- fault actions


@dataclass(frozen=True)
class LinkState:
    """Set a link down (carrier loss on both ends) or up again."""

    ends: tuple[LinkEnd, ...]
    up: bool

    @property
    def name(self) -> str:
        return f"link_{'up' if self.up else 'down'} " + "/".join(e.iface for e in self.ends)

    def __call__(self) -> None:
        set_link(self.ends, up=self.up)


def LinkDown(ends: Sequence[LinkEnd]) -> LinkState:  # noqa: N802 (reads as a fault's name)
    return LinkState(tuple(ends), up=False)


def LinkUp(ends: Sequence[LinkEnd]) -> LinkState:  # noqa: N802
    return LinkState(tuple(ends), up=True)


@dataclass(frozen=True)
class NicCommand:
    """A control command to one NIC: stall, resume, pause_storm on|off, drop_credits N."""

    socket_path: str
    command: str
    # A NIC on a supervised server: its fleet's control channel (through the supervisor)
    send: Callable[[str], object] | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return f"nic {self.socket_path}: {self.command}"

    def __call__(self) -> None:
        if self.send is not None:
            self.send(self.command)
        else:
            NicControl(self.socket_path).send(self.command)


@dataclass(frozen=True)
class Hook:
    """Anything the runner does at a time (switch kill/restart, SM action): a named callable."""

    name: str
    fn: Callable[[], object]

    def __call__(self) -> None:
        self.fn()


Fault = LinkState | NicCommand | Hook


@dataclass(frozen=True)
class FaultEvent:
    """One fault as it happened: planned offset, CLOCK_REALTIME ns it ran, error if any."""

    name: str
    at_s: float
    started_ns: int
    finished_ns: int
    error: str = ""


@dataclass
class FaultSchedule:
    """(time_s, fault) pairs run in time order by one thread, from start()."""

    faults: Sequence[tuple[float, Fault]]
    # SCHED_FIFO for link faults (traffic/realtime.py; 0: normal scheduling): the agents'
    # detection is measured from a link fault's start, and the agents run real-time
    rt_priority: int = 0
    events: list[FaultEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why rt_priority did not take effect
    _thread: threading.Thread | None = None
    _cancel: threading.Event = field(default_factory=threading.Event)

    def start(self, start_ns: int | None = None) -> FaultSchedule:
        """Run in a thread; times count from CLOCK_REALTIME start_ns (default now)."""
        origin = start_ns if start_ns is not None else time.time_ns()
        self._thread = threading.Thread(target=self._run, args=(origin,), daemon=True,
                                        name="faults")
        self._thread.start()
        return self

    def run(self, start_ns: int | None = None) -> list[FaultEvent]:
        """Run in this thread; returns the events."""
        self._run(start_ns if start_ns is not None else time.time_ns())
        return self.events

    def _run(self, origin: int) -> None:
        for at_s, fault in sorted(self.faults, key=lambda p: p[0]):
            delay = (origin + at_s * 1e9 - time.time_ns()) / 1e9
            if delay > 0 and self._cancel.wait(delay):
                return
            error = ""
            # Link faults only: a hook may start a process that lives on (a switch restart)
            with realtime(self.rt_priority if isinstance(fault, LinkState) else 0) as why:
                if why is not None and why not in self.notes:
                    self.notes.append(why)
                started = time.time_ns()
                try:
                    fault()
                except Exception as exc:  # recorded: one failed fault must not stop the others
                    error = f"{type(exc).__name__}: {exc}"
            self.events.append(FaultEvent(fault.name, at_s, started, time.time_ns(), error))

    def join(self, timeout: float | None = None) -> list[FaultEvent]:
        if self._thread:
            self._thread.join(timeout)
        return self.events

    def cancel(self) -> None:
        self._cancel.set()

    def first(self, prefix: str) -> FaultEvent | None:
        """The first event whose name starts with prefix (e.g. "link_down")."""
        return next((e for e in self.events if e.name.startswith(prefix)), None)
