"""The hold loop of a real bmv2 switch: a paced veth pair where held frames wait.

fabric.p4 holds a frame that may not leave (PFC paused, no credit) by recirculating
it. Real simple_switch serves recirculated packets before new arrivals and as fast
as it can, so while a queue is held its frames starve the switch's input: the CREDIT
and resume frames that would release them are never read. Each bmv2 switch of a run
therefore gets a veth pair whose two ends are both switch ports:

    port HOLD_OUT_PORT (`<prefix><switch>-eth508`)  ->  port HOLD_IN_PORT (`...-eth509`)

and the SM tells fabric.p4 to send held frames round it (p4src/include/hold_loop.p4,
controller/flow_control.py). tc htb on the out end paces the loop at PACE_PPS frames
a second (every frame charged COST_BYTES, as topologies/link_rates.py does for
links), so held frames cost bmv2 at most PACE_PPS passes a second and arrive among
the fabric ports' frames, not before them; its pfifo holds LIMIT_PKTS frames, more
than every receive buffer of a switch together, so a held frame is never dropped
there. The MTU is raised for the hold header in front of a full-size frame.

The interfaces are named like the switch's others (the run's prefix), recorded in the
run's ledger before they exist, and removed by name at teardown, also after a failure
(the qdiscs live on the out end and go with it).

Which switches get a loop is decided in one place, `for_fabric` (every path that starts
switches: a scenario run, `fabriclab bringup`, through topologies/network.py); `find`
is what `fabriclab-sm` does for switches it did not start: it uses a loop only where
one is wired on this machine. Either way a `HoldLoops` says, per switch, where its held
frames wait ("hold loop ..." or "recirculation: why"), and the SM writes
hold_loop_config only for the switches it names (controller/bringup.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from topologies import link_names, link_rates
from topologies.link_rates import COST_BYTES

PACE_PPS = 500  # held frames into the switch per second, at most
LIMIT_PKTS = 65536  # the loop's queue: more than a switch's receive buffers together
MTU = 9000  # a frame plus the 20-byte hold header


class HoldLoopError(RuntimeError):
    """A hold loop could not be made."""


@dataclass(frozen=True)
class HoldLoop:
    switch: str
    out_port: int
    in_port: int
    out_iface: str
    in_iface: str
    pace_pps: int = PACE_PPS

    @property
    def interfaces(self) -> list[str]:
        return [self.out_iface, self.in_iface]

    @property
    def ports(self) -> dict[int, str]:
        """The switch's -i arguments for the loop: {port: interface}."""
        return {self.out_port: self.out_iface, self.in_port: self.in_iface}

    def describe(self) -> str:
        return (f"hold loop {self.out_iface} -> {self.in_iface} (ports {self.out_port} -> "
                f"{self.in_port}), tc htb {self.pace_pps} frames/s, pfifo {LIMIT_PKTS}")


def plan(prefix: str, switch: str, out_port: int, in_port: int,
         pace_pps: int = PACE_PPS) -> HoldLoop:
    """The loop of one switch, named like its other interfaces."""
    try:
        out_iface = link_names.kernel_interface(prefix, switch, out_port)
        in_iface = link_names.kernel_interface(prefix, switch, in_port)
    except link_names.LinkNameError as exc:
        raise HoldLoopError(str(exc)) from None
    if pace_pps <= 0:
        raise HoldLoopError(f"hold loop of {switch}: pace {pace_pps} frames/s is not positive")
    return HoldLoop(switch, out_port, in_port, out_iface, in_iface, pace_pps)


RECIRCULATION = "recirculation"  # what `held_frames` says where a switch has no loop
WHY_EMBEDDED = "the embedded switch recirculates a held frame cheaply (50 us-1 ms a pass)"
WHY_NO_PROGRAM_LOOP = ("the program has no hold loop (FabricConst lacks HOLD_OUT_PORT, "
                       "HOLD_IN_PORT, HOLD_SESSION)")
WHY_ON_SERVERS = ("switches on servers get no hold loop (it is made on the runner's "
                  "machine only); on bmv2 recirculating starves credits")


@dataclass(frozen=True)
class HoldLoops:
    """Where each switch's held frames wait: its loop, or recirculation and why."""

    loops: dict[str, HoldLoop] = field(default_factory=dict)  # switch -> its wired loop
    without: dict[str, str] = field(default_factory=dict)  # switch -> why it has none

    @property
    def switches(self) -> frozenset[str]:
        """The switches whose held frames go round a loop: the SM turns it on there."""
        return frozenset(self.loops)

    def held_frames(self) -> dict[str, str]:
        """Per switch, "hold loop ..." or "recirculation: why"."""
        out = {name: loop.describe() for name, loop in self.loops.items()}
        out.update({name: f"{RECIRCULATION}: {why}" for name, why in self.without.items()})
        return dict(sorted(out.items()))

    def summary(self) -> str:
        """One line for versions.json's `held_frames`: starts with "hold loop" when every
        switch has one, with "recirculation" when one has not."""
        if not self.without:
            pace = sorted({loop.pace_pps for loop in self.loops.values()})
            return (f"hold loop on every switch ({len(self.loops)}): a veth pair from port "
                    f"{_ports(self.loops)}, paced by tc htb at "
                    f"{'/'.join(map(str, pace))} frames/s (topologies/hold_loop.py)")
        whys = sorted(set(self.without.values()))
        head = (f"{RECIRCULATION} on every switch" if not self.loops else
                f"{RECIRCULATION} on {', '.join(sorted(self.without))}, "
                f"hold loop on {', '.join(sorted(self.loops))}")
        return f"{head}: {'; '.join(whys)}"


def _ports(loops: dict[str, HoldLoop]) -> str:
    pairs = sorted({(loop.out_port, loop.in_port) for loop in loops.values()})
    return ", ".join(f"{out} to port {into}" for out, into in pairs)


def program_ports(constants) -> tuple[int, int] | None:
    """A program's hold loop ports (out, in) from its constants
    (controller/program_constants.py), or None when it has no hold loop."""
    if not constants.has_hold_loop:
        return None
    return constants.hold_out_port, constants.hold_in_port


def for_fabric(switches: Iterable[str], prefix: str, *, bmv2: bool,
               ports: tuple[int, int] | None, on_servers: bool = False) -> HoldLoops:
    """The loops a run makes for the switches it starts: one per switch on real bmv2 when
    the program has hold loop ports and the switches run on this machine; else none,
    and why. HoldLoopError for a name the kernel would refuse."""
    names = list(switches)
    why = (WHY_EMBEDDED if not bmv2 else WHY_NO_PROGRAM_LOOP if ports is None else
           WHY_ON_SERVERS if on_servers else None)
    if why is not None:
        return HoldLoops(without={name: why for name in names})
    return HoldLoops(loops={name: plan(prefix, name, *ports) for name in names})


def find(switches: Iterable[str], prefix: str, ports: tuple[int, int] | None) -> HoldLoops:
    """The loops wired on this machine for switches someone else started (fabriclab-sm):
    a switch's loop is used only where its two interfaces, named as `plan` names them,
    exist here as one veth pair paced by htb; else why not. The switch's own port map
    cannot be read over P4Runtime: that it was started with `-i OUT@out_iface -i
    IN@in_iface` is taken from the names."""
    names = list(switches)
    if ports is None:
        return HoldLoops(without={name: WHY_NO_PROGRAM_LOOP for name in names})
    loops, without = {}, {}
    for name in names:
        try:
            loop = plan(prefix, name, *ports)
        except HoldLoopError as exc:
            without[name] = str(exc)
            continue
        problem = wiring_problem(loop)
        if problem is None:
            loops[name] = loop
        else:
            without[name] = problem
    return HoldLoops(loops, without)


def wiring_problem(loop: HoldLoop) -> str | None:
    """None when the loop's veth pair is here and paced; else what is missing."""
    for iface in loop.interfaces:
        if not Path("/sys/class/net", iface).exists():
            return (f"no interface {iface} on this machine (a switch started elsewhere or "
                    f"without its hold loop)")
    # a veth end's iflink is its peer's ifindex
    if _sys_int(loop.out_iface, "iflink") != _sys_int(loop.in_iface, "ifindex"):
        return f"{loop.out_iface} and {loop.in_iface} are not the two ends of one veth pair"
    proc = subprocess.run(["tc", "qdisc", "show", "dev", loop.out_iface], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0 or " htb " not in f" {proc.stdout} ":
        return f"{loop.out_iface} is not paced (no tc htb on it)"
    return None


def tc_commands(loop: HoldLoop) -> list[list[str]]:
    """htb on the out end: pace_pps frames/s (mpu COST_BYTES), a pfifo of LIMIT_PKTS."""
    dev = ["dev", loop.out_iface]
    bits = loop.pace_pps * COST_BYTES * 8
    return [
        ["tc", "qdisc", "replace", *dev, "root", "handle", "1:", "htb", "default", "1"],
        ["tc", "class", "add", *dev, "parent", "1:", "classid", "1:1", "htb",
         "rate", f"{bits}bit", "ceil", f"{bits}bit", "burst", str(COST_BYTES),
         "cburst", str(COST_BYTES), "mpu", str(COST_BYTES), "quantum", str(COST_BYTES)],
        ["tc", "qdisc", "add", *dev, "parent", "1:1", "pfifo", "limit", str(LIMIT_PKTS)],
    ]


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise HoldLoopError(f"{' '.join(cmd)}: {proc.stderr.strip()}")


def _no_ipv6(iface: str) -> None:
    knob = Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6")
    if knob.exists():
        knob.write_text("1\n")


def create(loop: HoldLoop) -> None:
    """Make the pair, quiet, up and paced. Existing (a restarted switch): left as is."""
    if Path("/sys/class/net", loop.out_iface).exists():
        return
    _run(["ip", "link", "add", loop.out_iface, "type", "veth", "peer", "name", loop.in_iface])
    for iface in loop.interfaces:
        _no_ipv6(iface)
        _run(["ip", "link", "set", iface, "mtu", str(MTU), "up"])
    for cmd in tc_commands(loop):
        _run(cmd)


def _sys_int(iface: str, name: str) -> int | None:
    """/sys/class/net/IFACE/NAME as a number, None when there is none."""
    try:
        return int(Path(f"/sys/class/net/{iface}/{name}").read_text())
    except (OSError, ValueError):
        return None


def stats(loop: HoldLoop) -> dict[str, int | None]:
    """What went round the loop so far: frames into the loop (the switch sent them out of
    its hold port), frames out of it (delivered to the hold in port), qdisc drops."""
    return {"frames_in": _sys_int(loop.out_iface, "statistics/tx_packets"),
            "frames_out": _sys_int(loop.in_iface, "statistics/rx_packets"),
            "qdisc_drops": link_rates.qdisc_drops(loop.out_iface)}
