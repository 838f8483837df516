"""Cable cuts that real bmv2 survives: a link between two bmv2 ports runs through a wire.

A link fault takes a cable down as carrier loss (traffic/faults.py). On a plain veth
pair between two switches that is `ip link set dev X down` on both ends, and real
simple_switch does not survive it: one thread reads every port through libpcap, and
libpcap waits on a port that is administratively down until it comes back up, so
while one port is down the switch reads nothing on any port (measured: 0 of 50
frames forwarded between two other ports; with the port's *peer* down instead, the
port only loses its carrier and all 50 pass). A failed link then looked like a
switch that stopped: the SM rerouted round the link, but the switch with the dead
port never read another credit or data frame.

So on bmv2 a switch-to-switch link is built as

    <prefix>s1-eth2 = <prefix>s1-w2  ~~tc mirred~~  <prefix>s3-w1 = <prefix>s3-eth1

two veth pairs whose outer ends, the wire, forward to each other with tc's ingress
qdisc, a match-all u32 filter and a mirred redirect (all in the kernel; no process).
A fault takes the wire's two ends down: both switch ports lose their carrier at once
(the agents see a cable cut), neither is ever administratively down. A host link
needs no wire: its host end goes down, which drops the switch port's carrier.

The wire's names are the ports' with `-eth` as `-w` (never longer), recorded in the
run's ledger with the ports; removing a port removes its wire end with it.
"""

from __future__ import annotations

import subprocess

from mininet.link import Link

MTU = 9000  # at least every switch port's (hold_loop.MTU, frames.ETHERNET_MTU)


class WireError(RuntimeError):
    """A wire could not be made: names the interface and the command's error."""


def wire_name(iface: str) -> str:
    """The wire end behind a switch port: `fk3-s1-eth2` -> `fk3-s1-w2`."""
    head, sep, port = iface.rpartition("-eth")
    if not sep or not port.isdigit():
        raise WireError(f"{iface!r} is not a switch port name (`<node>-eth<N>`)")
    return f"{head}-w{port}"


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise WireError(f"{' '.join(cmd)}: {proc.stderr.strip() or proc.returncode}")


def make(port_a: str, port_b: str) -> tuple[str, str]:
    """Two switch ports joined by a wire, in this namespace; returns the wire's ends."""
    wires = (wire_name(port_a), wire_name(port_b))
    made: list[str] = []
    try:
        for port, wire in zip((port_a, port_b), wires, strict=True):
            _run(["ip", "link", "add", "name", port, "type", "veth", "peer", "name", wire])
            made.append(port)
            _run(["ip", "link", "set", "dev", wire, "mtu", str(MTU), "up"])
            _quiet(wire)
        for src, dst in (wires, wires[::-1]):
            _run(["tc", "qdisc", "add", "dev", src, "ingress"])
            _run(["tc", "filter", "add", "dev", src, "parent", "ffff:", "protocol", "all",
                  "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
                  "dev", dst])
    except WireError:
        for port in made:  # its wire end goes with it
            subprocess.run(["ip", "link", "del", port], capture_output=True)
        raise
    return wires


def _quiet(iface: str) -> None:
    """No IPv6 chatter on the wire: only the switches' frames cross it."""
    try:
        with open(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6", "w") as knob:
            knob.write("1\n")
    except OSError:
        pass


class WiredLink(Link):
    """A Mininet link between two switches in this namespace, through a wire."""

    @classmethod
    def makeIntfPair(cls, intfname1, intfname2, addr1=None, addr2=None,  # noqa: N802
                     node1=None, node2=None, deleteIntfs=True):  # noqa: N803
        for node in (node1, node2):
            if node is not None and getattr(node, "inNamespace", False):
                raise WireError(f"{node.name}: a wired link joins switches in this "
                                "namespace only")
        make(intfname1, intfname2)
