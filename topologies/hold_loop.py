"""The hold loop of a real bmv2 switch: where held frames wait, in ticket order.

fabric.p4 holds a frame that may not leave (PFC paused, no credit) by recirculating
it. Real simple_switch serves recirculated packets before new arrivals and as fast
as it can, so while a queue is held its frames starve the switch's input: the CREDIT
and resume frames that would release them are never read. Each bmv2 switch of a run
therefore gets a veth pair whose two ends are both switch ports:

    port HOLD_OUT_PORT (`<prefix><switch>-eth508`)  ->  port HOLD_IN_PORT (`...-eth509`)

and the SM tells fabric.p4 to send held frames round it (p4src/include/hold_loop.p4,
controller/flow_control.py). Two shapes, both paced at PACE_PPS frames a second, so
held frames cost bmv2 at most PACE_PPS passes a second and arrive among the fabric
ports' frames, not before them:

* the relay (what a run makes): each port is one end of its own veth pair, and a
  relay process between the two other ends (`...-hr508` -> `...-hr509`,
  topologies/hold_relay.py) gives the frames back in their queue's ticket order,
  as a switch's buffer would;
* the direct pair (`relay=False`): port 508 and port 509 are the two ends of one
  veth pair, tc htb on the out end (every frame charged COST_BYTES, as
  topologies/link_rates.py does for links) into a pfifo of LIMIT_PKTS frames.
  One FIFO for every held frame: a busy queue that a blocked head scrambled stays
  scrambled (docs/fabric.md), which is why runs use the relay.

The MTU is raised for the hold header in front of a full-size frame.

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

import json
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


RELAY_TAG = "hr"  # the relay's ends: `<prefix><switch>-hr508`, `-hr509`


@dataclass(frozen=True)
class HoldLoop:
    switch: str
    out_port: int
    in_port: int
    out_iface: str
    in_iface: str
    pace_pps: int = PACE_PPS
    relay_rx: str | None = None  # the relay's ends (None: a direct pair, paced by tc)
    relay_tx: str | None = None

    @property
    def relayed(self) -> bool:
        return self.relay_rx is not None

    @property
    def interfaces(self) -> list[str]:
        relay = [self.relay_rx, self.relay_tx] if self.relayed else []
        return [self.out_iface, self.in_iface, *relay]

    def relay_command(self, python: str, stats: Path) -> list[str]:
        """The relay process of this loop (topologies/hold_relay.py)."""
        return [python, "-m", "topologies.hold_relay", "--rx", self.relay_rx,
                "--tx", self.relay_tx, "--pace", str(self.pace_pps), "--stats", str(stats)]

    @property
    def ports(self) -> dict[int, str]:
        """The switch's -i arguments for the loop: {port: interface}."""
        return {self.out_port: self.out_iface, self.in_port: self.in_iface}

    def describe(self) -> str:
        if self.relayed:
            return (f"hold loop {self.out_iface} -> relay -> {self.in_iface} (ports "
                    f"{self.out_port} -> {self.in_port}), in ticket order, "
                    f"{self.pace_pps} frames/s")
        return (f"hold loop {self.out_iface} -> {self.in_iface} (ports {self.out_port} -> "
                f"{self.in_port}), tc htb {self.pace_pps} frames/s, pfifo {LIMIT_PKTS}")


def plan(prefix: str, switch: str, out_port: int, in_port: int,
         pace_pps: int = PACE_PPS, relay: bool = True) -> HoldLoop:
    """The loop of one switch, named like its other interfaces."""
    try:
        out_iface = link_names.kernel_interface(prefix, switch, out_port)
        in_iface = link_names.kernel_interface(prefix, switch, in_port)
    except link_names.LinkNameError as exc:
        raise HoldLoopError(str(exc)) from None
    if pace_pps <= 0:
        raise HoldLoopError(f"hold loop of {switch}: pace {pace_pps} frames/s is not positive")
    if not relay:
        return HoldLoop(switch, out_port, in_port, out_iface, in_iface, pace_pps)
    # as long as the port's own name: `-hr508` is one character shorter than `-eth508`
    rx, tx = (f"{prefix}{switch}-{RELAY_TAG}{port}" for port in (out_port, in_port))
    return HoldLoop(switch, out_port, in_port, out_iface, in_iface, pace_pps, rx, tx)


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
            pace = "/".join(map(str, sorted({loop.pace_pps for loop in self.loops.values()})))
            if all(loop.relayed for loop in self.loops.values()):
                return (f"hold loop on every switch ({len(self.loops)}): port "
                        f"{_ports(self.loops)} through a relay that gives held frames back "
                        f"in ticket order at {pace} frames/s (topologies/hold_relay.py)")
            return (f"hold loop on every switch ({len(self.loops)}): a veth pair from port "
                    f"{_ports(self.loops)}, paced by tc htb at "
                    f"{pace} frames/s (topologies/hold_loop.py)")
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
    a switch's loop is used only where its interfaces, named as `plan` names them, exist
    here as a run wires them (a relay's two pairs, or one veth pair paced by htb); else
    why not. The switch's own port map cannot be read over P4Runtime: that it was
    started with `-i OUT@out_iface -i IN@in_iface` is taken from the names."""
    names = list(switches)
    if ports is None:
        return HoldLoops(without={name: WHY_NO_PROGRAM_LOOP for name in names})
    loops, without = {}, {}
    for name in names:
        try:
            relayed = plan(prefix, name, *ports)
        except HoldLoopError as exc:
            without[name] = str(exc)
            continue
        loop = relayed if _exists(relayed.relay_rx) else plan(prefix, name, *ports, relay=False)
        problem = wiring_problem(loop)
        if problem is None:
            loops[name] = loop
        else:
            without[name] = problem
    return HoldLoops(loops, without)


def _exists(iface: str) -> bool:
    return Path("/sys/class/net", iface).exists()


def _peers(a: str, b: str) -> bool:
    """Whether two interfaces are the two ends of one veth pair (an end's iflink is its
    peer's ifindex)."""
    return _sys_int(a, "iflink") == _sys_int(b, "ifindex")


def wiring_problem(loop: HoldLoop) -> str | None:
    """None when the loop is wired as a run wires it; else what is missing."""
    for iface in loop.interfaces:
        if not _exists(iface):
            return (f"no interface {iface} on this machine (a switch started elsewhere or "
                    f"without its hold loop)")
    if loop.relayed:
        for port_end, relay_end in ((loop.out_iface, loop.relay_rx),
                                    (loop.in_iface, loop.relay_tx)):
            if not _peers(port_end, relay_end):
                return f"{port_end} and {relay_end} are not the two ends of one veth pair"
        return None
    if not _peers(loop.out_iface, loop.in_iface):
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


def _veth(a: str, b: str) -> None:
    _run(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
    for iface in (a, b):
        _no_ipv6(iface)
        _run(["ip", "link", "set", iface, "mtu", str(MTU), "up"])


def create(loop: HoldLoop) -> None:
    """Make the pairs, quiet and up (a direct pair also paced). Existing (a restarted
    switch): left as is. The relay process is the switch node's to start."""
    if _exists(loop.out_iface):
        return
    if loop.relayed:
        _veth(loop.out_iface, loop.relay_rx)
        _veth(loop.in_iface, loop.relay_tx)
        return
    _veth(loop.out_iface, loop.in_iface)
    for cmd in tc_commands(loop):
        _run(cmd)


def _sys_int(iface: str, name: str) -> int | None:
    """/sys/class/net/IFACE/NAME as a number, None when there is none."""
    try:
        return int(Path(f"/sys/class/net/{iface}/{name}").read_text())
    except (OSError, ValueError):
        return None


def stats(loop: HoldLoop, relay_stats: Path | None = None) -> dict:
    """What went round the loop so far: frames into the loop (the switch sent them out of
    its hold port), frames out of it (delivered to the hold in port), qdisc drops (a
    direct pair's), and a relay's own counts (`relay`: frames in and out, refused, not
    held, waiting, its round-trip estimate) from the file it keeps."""
    out = {"frames_in": _sys_int(loop.out_iface, "statistics/tx_packets"),
           "frames_out": _sys_int(loop.in_iface, "statistics/rx_packets"),
           "qdisc_drops": 0 if loop.relayed else link_rates.qdisc_drops(loop.out_iface)}
    if loop.relayed and relay_stats is not None:
        try:
            out["relay"] = json.loads(relay_stats.read_text())
        except (OSError, ValueError):
            out["relay"] = None
    return out
