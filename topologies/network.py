"""The Mininet network built from a fabric description.

Hosts are Mininet hosts (network namespaces); each switch is a `P4Switch` node
whose process (embedded switch or simple_switch_grpc) runs in the root namespace
on the `sN-ethP` interfaces, named with the run's prefix (`fk3-s1-eth2`, from the
ledger) so two runs can share one machine. Everything created is written to the
run's ledger so teardown (or the next run) removes exactly that.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from mininet.link import Link as MininetLink
from mininet.net import Mininet
from mininet.node import Host, Switch
from mininet.topo import Topo

from topologies import hold_loop, link_names, link_rates, remote, wires
from topologies.description import Fabric, NodeKind
from topologies.ledger import Ledger
from topologies.ports import free_tcp_port, release_port
from topologies.targets import SwitchKind, Target, switch_command
from traffic.realtime import SWITCH_SESSION_NICE, weigh_session


class NetworkError(RuntimeError):
    """The emulated network could not be built or a switch did not start."""


def host_mac(index: int) -> str:
    return f"02:00:00:00:{(index >> 8) & 0xFF:02x}:{index & 0xFF:02x}"


def host_macs(fabric: Fabric) -> dict[str, str]:
    """Each host's MAC, by its place among the description's hosts."""
    return {node.name: host_mac(i) for i, node in enumerate(fabric.hosts, 1)}


CLUSTER_GRPC_BASE = 50000  # + device id: a switch's P4Runtime port on a namespace server
TM_DEPTH = 4096  # packets per switch port queue: above any buffer fabric.p4 admits


def port_params(fabric: Fabric) -> dict[str, dict[int, str]]:
    """Per switch and port, the link properties the switch's port scheduler enforces."""
    out: dict[str, dict[int, str]] = {}
    for sw in fabric.switches:
        ports = {}
        for link in fabric.links_of(sw.name):
            port, _peer, _peer_port = link.endpoint(sw.name)
            p = link.params
            # fabric.p4 manages the buffer in every mode (egress_limit in LOSSY,
            # per ingress port and class in PFC/CREDIT, drops counted); the
            # traffic manager's own queue must never be what drops.
            ports[port] = f"rate_pps={p.rate_pps},delay_us={p.delay_us},depth={TM_DEPTH}"
        out[sw.name] = ports
    return out


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class P4Switch(Switch):
    """A Mininet switch node that runs one P4 switch process and stops it by PID."""

    def __init__(self, name: str, target: Target, device_id: int, grpc_port: int,
                 log_dir: Path, ledger: Ledger, port_params: dict[int, str] | None = None,
                 trace: bool = False, start_timeout: float = 10.0,
                 thrift_port: int | None = None, priority_queues: int = 1,
                 grpc_host: str = "127.0.0.1", cpu_port: int | None = None,
                 hold: hold_loop.HoldLoop | None = None, **params) -> None:
        params.setdefault("inNamespace", False)
        super().__init__(name, **params)
        self.target = target
        self.device_id = device_id
        self.grpc_addr = f"{grpc_host}:{grpc_port}"
        self.grpc_port = grpc_port
        self.log_file = Path(log_dir) / f"{name}.log"
        self.ledger = ledger
        self.port_params = port_params or {}
        self.trace = trace
        self.start_timeout = start_timeout
        self.thrift_port = thrift_port  # bmv2's runtime API, where it was built with Thrift
        self.priority_queues = priority_queues  # > 1: one egress queue per class (QoS)
        if cpu_port is None:
            raise NetworkError(f"switch {name}: no CPU port (the program's constants give it)")
        self.cpu_port = cpu_port  # the program's FabricConst.CPU_PORT
        self.process: subprocess.Popen | None = None
        self.link_rates = ""  # how this switch's link rates are enforced (bmv2)
        self.rated_ports: list[link_rates.PortRate] = []
        self.hold = hold  # its hold loop (bmv2: topologies/hold_loop.py), made at start
        self.relay: subprocess.Popen | None = None  # the loop's relay (hold_relay.py)
        self.relay_stats = self.log_file.with_suffix(".hold-relay.json")
        self.quieted: set[str] = set()  # ports quiet_ports has quieted

    def _port_names(self) -> dict[int, str]:
        return {self.ports[i]: i.name for i in self.intfList() if i.name != "lo"}

    def quiet_ports(self) -> None:
        """Its cabled ports quiet (no IPv6, no offloads). start_network does this for
        every switch before the first one starts: Mininet brings the ports up with IPv6
        on, and a port whose switch starts later would otherwise send its IPv6 duplicate
        address detection (an 86-byte neighbour solicitation) to a switch already
        listening, which counts it as a not_fabric drop (1 lossy incast run in 13)."""
        for iface in self._port_names().values():
            if iface not in self.quieted:
                self.quiet_interface(iface)
                self.quieted.add(iface)

    def start(self, controllers) -> None:  # noqa: ARG002 - Mininet's signature
        self.quiet_ports()
        ports = self._port_names()
        if self.hold is not None:
            hold_loop.create(self.hold)
            ports.update(self.hold.ports)
            for iface in self.hold.ports.values():
                self.quiet_interface(iface)
        if self.hold is not None:
            self._start_relay()
        trace_file = self.log_file.with_suffix(".trace") if self.trace else None
        cmd = switch_command(self.target, self.device_id, ports, self.grpc_addr,
                             trace_file, self.port_params, self.thrift_port,
                             self.priority_queues, cpu_port=self.cpu_port)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_file, "wb")  # noqa: SIM115 - kept open for the child's life
        self.process = self.spawn(cmd, stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        remote.record(self.ledger, self.process, f"switch {self.name}")

    def _start_relay(self) -> None:
        """The hold loop's relay (topologies/hold_relay.py), once: a restarted switch
        finds it still running on the loop's interfaces."""
        if not self.hold.relayed or (self.relay is not None and self.relay.poll() is None):
            return
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_file.with_suffix(".hold-relay.log"), "wb")  # noqa: SIM115
        self.relay = self.spawn(self.hold.relay_command(sys.executable, self.relay_stats),
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        remote.record(self.ledger, self.relay, f"hold relay {self.name}")

    def spawn(self, cmd: list[str], **popen_kwargs) -> subprocess.Popen:
        """Start a process where this switch runs (here: this namespace). One started in
        a session of its own gets the switches' session weight (SWITCH_SESSION_NICE)."""
        proc = subprocess.Popen(cmd, **popen_kwargs)
        if popen_kwargs.get("start_new_session"):
            weigh_session(proc.pid, SWITCH_SESSION_NICE)  # best effort: a plain session else
        return proc

    def run_prefix(self) -> list[str]:
        """The command prefix that reaches this switch's namespace (none here)."""
        return []

    def quiet_interface(self, iface: str) -> None:
        _quiet_interface(iface)

    def wait_ready(self) -> None:
        """Block until the switch's gRPC server answers; NetworkError with its log if not."""
        deadline = time.monotonic() + self.start_timeout
        channel = grpc.insecure_channel(self.grpc_addr)
        ready = grpc.channel_ready_future(channel)
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise NetworkError(
                        f"switch {self.name} exited with code {self.process.returncode} "
                        f"while starting; last lines of {self.log_file}:\n{_tail(self.log_file)}")
                try:
                    ready.result(timeout=0.2)
                    return
                except grpc.FutureTimeoutError:
                    continue
            raise NetworkError(
                f"switch {self.name} did not answer on gRPC {self.grpc_addr} within "
                f"{self.start_timeout:.0f} s; last lines of {self.log_file}:\n{_tail(self.log_file)}")
        finally:
            ready.cancel()
            channel.close()

    def apply_link_rates(self) -> str:
        """bmv2: its links' rates, once it runs (topologies/link_rates.py); says how."""
        ports = {self.ports[i]: i.name for i in self.intfList() if i.name != "lo"}
        rates = link_rates.port_rates(ports, self.port_params)
        self.link_rates = link_rates.apply(self.thrift_port, rates)
        self.rated_ports = rates
        return self.link_rates

    def shaping_drops(self) -> dict[int, int]:
        """Per port, frames its link's shaping qdisc dropped (tc-shaped links only: bmv2's
        own queues are not readable without Thrift); ports that dropped none are left out."""
        if not link_rates.after_pipeline(self.link_rates):
            return {}
        counts = {r.port: link_rates.qdisc_drops(r.iface) for r in self.rated_ports}
        return {port: n for port, n in counts.items() if n}

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's signature
        if self.process is not None:
            remote.stop(self.process)
            self.process = None
        if self.relay is not None:
            remote.stop(self.relay)
            self.relay = None
        for port in (self.grpc_port, self.thrift_port):
            if port is not None:
                release_port(port)  # its claim (topologies/ports.py): free for the next run
        super().stop(deleteIntfs)

    def kill(self) -> None:
        """Fault injection: the switch process dies at once (SIGKILL), its ports stay."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        """Fault injection: a killed switch comes back empty (no pipeline, no entries)."""
        if self.process is not None and self.process.poll() is None:
            return
        self.start([])
        self.wait_ready()

    def crashed(self) -> int | None:
        """The exit code if the switch process died, else None."""
        return None if self.process is None else self.process.poll()

    def relay_crashed(self) -> int | None:
        """The exit code if its hold relay died, else None (also without a relay)."""
        return None if self.relay is None else self.relay.poll()


# A switch port's segmentation and receive offloads, turned off before the switch opens
# it. bmv2 takes its ports in through libpcap, whose receive ring holds frames of the
# largest size the interface may deliver: 64 KiB where it offloads (veth does by
# default), so its 2 MiB ring held 32 frames a port, and bmv2 lost whatever came while
# its intake thread was descheduled that long: 2-29 frames a port and 17-23 a run that
# the kernel delivered (rx_packets) and no P4 counter saw, the "unexplained" loss of
# bmv2 runs (CREDIT storm at 300 pps, 2026-12-06). Without the offloads libpcap sizes a
# frame by the MTU: ~1,300 frames a port at 1500, ~230 at the hold loop's 9000.
OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off")


def offloads_off_command(iface: str) -> list[str]:
    return ["ethtool", "-K", iface, *OFFLOADS_OFF]


def _quiet_interface(iface: str) -> None:
    """No IPv6 chatter on fabric links (only the frames a scenario sends cross them), and
    no offloads (the switch's intake ring holds frames of the MTU, not of 64 KiB)."""
    knob = Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6")
    if knob.exists():
        knob.write_text("1\n")
    try:
        proc = subprocess.run(offloads_off_command(iface), capture_output=True, text=True,
                              check=False)
    except FileNotFoundError:
        raise NetworkError("ethtool is not installed (make setup installs it): a switch "
                           "port's offloads must be off") from None
    if proc.returncode != 0:
        raise NetworkError(f"{' '.join(offloads_off_command(iface))}: {proc.stderr.strip()}")


class _FabricTopo(Topo):
    def build(self, fabric: Fabric, switch_opts: dict[str, dict],  # noqa: D102
              prefix: str = "", host_opts: dict[str, dict] | None = None,
              wired: bool = False) -> None:
        macs = host_macs(fabric)
        for node in fabric.nodes:
            if node.kind is NodeKind.HOST:
                self.addHost(node.name, mac=macs[node.name], ip=None,
                             **(host_opts or {}).get(node.name, {}))
            else:
                self.addSwitch(node.name, **switch_opts[node.name])
        for link in fabric.links:
            name_a, name_b = link_names.kernel_interfaces(prefix, link)
            opts = {}
            if wired and _between_switches(fabric, link):
                opts["cls"] = wires.WiredLink  # real bmv2 survives its cut (topologies/wires.py)
            self.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port,
                         intfName1=name_a, intfName2=name_b, **opts)


def _between_switches(fabric: Fabric, link) -> bool:
    return link_names.is_switch(fabric, link.a) and link_names.is_switch(fabric, link.b)


@dataclass
class EmulatedNetwork:
    """A started Mininet network for one fabric, with its switches' gRPC addresses."""

    fabric: Fabric
    net: Mininet
    target: Target
    grpc_addrs: dict[str, str]
    device_ids: dict[str, int]
    ledger: Ledger
    link_rates: dict[str, str] = field(default_factory=dict)  # switch -> how rates are enforced
    # Where each switch's held frames wait: its hold loop (bmv2) or recirculation, and why
    hold: hold_loop.HoldLoops = field(default_factory=hold_loop.HoldLoops)
    cluster: dict | None = None  # servers, placement, tunnels (topologies/cluster.py)
    servers: object | None = None  # topologies.servers.ServerSet, made for this run

    @property
    def links_shaped_after_pipeline(self) -> bool:
        """Whether some switch's links wait after its pipeline (tc), where the program does
        not see their backlog: then PFC paces them in the program (controller/bringup.py)."""
        return any(map(link_rates.after_pipeline, self.link_rates.values()))

    @property
    def loops(self) -> dict[str, hold_loop.HoldLoop]:
        """The switches' hold loops (real bmv2 on this machine; else none)."""
        return self.hold.loops

    def shaping_drops(self) -> dict[str, dict[int, int]]:
        """Per switch and port, frames dropped by the qdiscs that shape its links (tc on
        bmv2 without Thrift), where no P4 counter sees them."""
        out = {}
        for node in self.fabric.switches:
            sw = self.switch(node.name)
            drops = sw.shaping_drops() if hasattr(sw, "shaping_drops") else {}
            if drops:
                out[node.name] = drops
        return out

    def hold_loop_stats(self) -> dict[str, dict]:
        """Per switch, what went round its hold loop so far (topologies/hold_loop.py)."""
        return {name: hold_loop.stats(loop, self.switch(name).relay_stats)
                for name, loop in sorted(self.loops.items())}

    def run_prefix(self, node: str) -> list[str]:
        """The command prefix that reaches a switch's namespace from the runner."""
        return self.switch(node).run_prefix()

    @property
    def prefix(self) -> str:
        """The run's name prefix: every interface of this network starts with it."""
        return self.ledger.prefix

    def intf(self, node: str, port: int) -> str:
        """The machine's name for a node's port (`fk3-s1-eth2`; a host's port is 0)."""
        return link_names.kernel_interface(self.prefix, node, port)

    def cut_point(self, node: str, port: int) -> str | None:
        """The interface a cable cut takes down at this end of a link: the port itself;
        on bmv2 the wire behind a port that has one, and nothing at a switch port facing
        a host (the host's end goes down; real bmv2 stops reading every port while one
        of its ports is administratively down, topologies/wires.py)."""
        iface = self.intf(node, port)
        if self.target.switch is not SwitchKind.BMV2 or self.servers is not None:
            return iface
        if not link_names.is_switch(self.fabric, node):
            return iface
        link = next(lk for lk in self.fabric.links
                    if (lk.a, lk.a_port) == (node, port) or (lk.b, lk.b_port) == (node, port))
        return wires.wire_name(iface) if _between_switches(self.fabric, link) else None

    def host(self, name: str) -> Host:
        return self.net.get(name)

    def switch(self, name: str) -> P4Switch:
        return self.net.get(name)

    def switch_pids(self) -> dict[str, int]:
        """The switch processes this machine runs, by switch (none in a run across
        servers: their processes are another kernel's)."""
        if self.servers is not None:
            return {}
        procs = {node.name: getattr(self.switch(node.name), "process", None)
                 for node in self.fabric.switches}
        return {name: p.pid for name, p in procs.items() if p is not None and p.pid}

    def crashed_switches(self) -> dict[str, int]:
        out = {}
        for node in self.fabric.switches:
            code = self.switch(node.name).crashed()
            if code is not None:
                out[node.name] = code
        return out

    def crashed_relays(self) -> dict[str, int]:
        """Per switch whose hold relay (topologies/hold_relay.py) died, its exit code."""
        out = {}
        for name in self.loops:
            code = self.switch(name).relay_crashed()
            if code is not None:
                out[name] = code
        return out

    def remote_host(self, node: str):
        """The supervisor of the server that runs `node` (topologies.remote.RemoteHost),
        or None when the runner starts its processes itself."""
        return getattr(self.net.get(node), "remote_host", None)

    def spawn(self, node: str, cmd: list[str], **popen_kwargs):
        """A process where switch `node` runs (here, its server's namespace, or through
        its server's supervisor): the Popen-like handle."""
        return self.switch(node).spawn(cmd, **popen_kwargs)

    def collect_files(self) -> None:
        """Supervised servers: what their processes wrote (captures, NIC logs, switch
        logs) copied into the run directory; nothing to do elsewhere."""
        if self.servers is not None:
            self.servers.collect()

    def stop(self) -> list[str]:
        """Stop Mininet, then anything the ledger still lists. Returns leftovers."""
        left: list[str] = []
        try:
            self.net.stop()
        finally:
            if self.servers is not None:
                left = self.servers.stop_supervisors()
                self.servers.close()
            leftovers = left + self.ledger.teardown()
        return leftovers


def interface_names(fabric: Fabric, prefix: str = "") -> list[str]:
    """Every interface the fabric's links make, as the machine names them."""
    return [name for link in fabric.links
            for name in link_names.kernel_interfaces(prefix, link)]


def _grpc_ports(fabric: Fabric, switch_opts: dict[str, dict], placed: dict[str, dict],
                servers) -> dict[str, str]:
    """Each switch's gRPC address, its port also put in its options: a free port here,
    a fixed one per device on a namespace server (all its ports are free)."""
    addrs = {}
    for node in fabric.switches:
        port = free_tcp_port() if servers is None else CLUSTER_GRPC_BASE + node.device_id
        host = placed.get(node.name, {}).get("grpc_host", "127.0.0.1")
        addrs[node.name] = f"{host}:{port}"
        switch_opts[node.name]["grpc_port"] = port
    return addrs


def _boot(emulated: EmulatedNetwork, placement) -> None:
    """Build the Mininet network, quiet every port, start every switch process (then
    wait for them all: start-up overlaps) and apply the link rates."""
    net, fabric, target = emulated.net, emulated.fabric, emulated.target
    ledger, servers = emulated.ledger, emulated.servers
    if servers is not None:
        from topologies import cluster

        cluster.register_interfaces(fabric, ledger.prefix, placement, servers)
    net.build()
    for host in net.hosts:
        if servers is None or not servers.supervised:  # else its supervisor adopted it
            ledger.add_process(host.pid, f"mininet host {host.name}")
        for intf in host.intfList():
            host.cmd(f"sysctl -qw net.ipv6.conf.{intf.name}.disable_ipv6=1")
    for sw in net.switches:  # all quiet before any listens (P4Switch.quiet_ports)
        sw.quiet_ports()
    # Start every switch process first, then wait: start-up overlaps.
    for sw in net.switches:
        sw.start([])
    for sw in net.switches:
        sw.wait_ready()
    if servers is not None:
        from topologies import cluster

        emulated.cluster = cluster.describe(net, fabric, ledger.prefix, servers, placement)
    if target.switch is SwitchKind.BMV2:
        emulated.link_rates = {sw.name: sw.apply_link_rates() for sw in net.switches}
    else:
        emulated.link_rates = {sw.name: "embedded switch port scheduler"
                               for sw in net.switches}


def start_network(fabric: Fabric, target: Target, ledger: Ledger, log_dir: Path,
                  port_params: dict[str, dict[int, str]] | None = None,
                  servers=None, placement=None, priority_queues: int = 1, *,
                  constants) -> EmulatedNetwork:
    """Build and start the network; on any failure everything created is removed.
    `constants`: the program's (topologies.targets.CompiledProgram.constants): the
    switches' CPU port and, where the program has them, its hold loop ports: on real
    bmv2 (not on servers) every switch gets its hold loop there (hold_loop.for_fabric),
    recorded in the ledger before it is made.

    With `servers` (topologies.servers.ServerSet) and a `placement`, every node runs
    on its server through Mininet's cluster nodes (topologies/cluster.py)."""
    if os.geteuid() != 0:
        raise NetworkError("building the emulated network needs root (network namespaces)")
    try:
        names = interface_names(fabric, ledger.prefix)
    except link_names.LinkNameError as exc:
        raise NetworkError(str(exc)) from None
    try:
        hold = hold_loop.for_fabric([sw.name for sw in fabric.switches], ledger.prefix,
                                    bmv2=target.switch is SwitchKind.BMV2,
                                    ports=hold_loop.program_ports(constants),
                                    on_servers=servers is not None)
    except hold_loop.HoldLoopError as exc:
        raise NetworkError(str(exc)) from None
    loops = hold.loops
    names = names + [n for loop in loops.values() for n in loop.interfaces]
    clashes = [n for n in names if Path("/sys/class/net", n).exists()]
    if clashes:
        raise NetworkError(
            f"interfaces already exist: {', '.join(clashes[:8])}"
            f"{' ...' if len(clashes) > 8 else ''}. If an interrupted fabriclab run left them, "
            "`make cleanup` removes them; otherwise another program owns them.")
    placed: dict[str, dict] = {}
    link_cls = MininetLink
    if servers is not None:
        from topologies import cluster

        placed = cluster.node_options(placement, servers, [h.name for h in fabric.hosts],
                                      [s.name for s in fabric.switches], ledger)
        link_cls = cluster.VxlanLink
    switch_opts = {node.name: dict(
        cls=P4Switch, target=target, device_id=node.device_id, log_dir=log_dir,
        ledger=ledger, port_params=(port_params or {}).get(node.name),
        thrift_port=free_tcp_port() if target.switch is SwitchKind.BMV2 else None,
        priority_queues=priority_queues, cpu_port=constants.cpu_port,
        hold=loops.get(node.name)) for node in fabric.switches}
    grpc_addrs = _grpc_ports(fabric, switch_opts, placed, servers)
    device_ids = {node.name: node.device_id for node in fabric.switches}
    for node in fabric.switches:
        switch_opts[node.name].update(placed.get(node.name, {}))
    wired = target.switch is SwitchKind.BMV2 and servers is None
    if wired:
        names = names + [wires.wire_name(link_names.kernel_interface(ledger.prefix, n, p))
                         for lk in fabric.links if _between_switches(fabric, lk)
                         for n, p in ((lk.a, lk.a_port), (lk.b, lk.b_port))]
    if servers is None:  # on servers the names live in the servers' namespaces
        ledger.add_interfaces(names)
    host_opts = {h.name: placed[h.name] for h in fabric.hosts if h.name in placed}
    net = Mininet(topo=_FabricTopo(fabric=fabric, switch_opts=switch_opts,
                                   prefix=ledger.prefix, host_opts=host_opts, wired=wired),
                  controller=None,
                  link=link_cls, build=False, autoSetMacs=False, waitConnected=False)
    emulated = EmulatedNetwork(fabric, net, target, grpc_addrs, device_ids, ledger,
                               hold=hold, servers=servers)
    try:
        _boot(emulated, placement)
    except BaseException:
        emulated.stop()
        raise
    return emulated
