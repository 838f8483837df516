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
run's ledger before they exist, and removed by name at teardown, also after a failure.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from topologies import link_names
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


def _stat(iface: str, name: str) -> int | None:
    try:
        return int(Path(f"/sys/class/net/{iface}/statistics/{name}").read_text())
    except (OSError, ValueError):
        return None


def _qdisc_drops(iface: str) -> int | None:
    """Frames the loop's qdiscs dropped (htb and its pfifo together)."""
    proc = subprocess.run(["tc", "-s", "qdisc", "show", "dev", iface], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        return None
    total = 0
    for line in proc.stdout.splitlines():
        words = line.replace(",", " ").split()
        if "dropped" in words:
            total += int(words[words.index("dropped") + 1])
    return total


def stats(loop: HoldLoop) -> dict[str, int | None]:
    """What went round the loop so far: frames into the loop (the switch sent them out of
    its hold port), frames out of it (delivered to the hold in port), qdisc drops."""
    return {"frames_in": _stat(loop.out_iface, "tx_packets"),
            "frames_out": _stat(loop.in_iface, "rx_packets"),
            "qdisc_drops": _qdisc_drops(loop.out_iface)}
