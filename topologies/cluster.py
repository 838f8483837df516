"""One fabric over several servers with Mininet's cluster mode (mininet.examples.cluster).

The nodes are Mininet's cluster nodes (`RemoteMixin`): each node's shell runs on
its server over SSH, so a host's namespace is made there (`mnexec` through
SSH) and the veths of a link between two nodes of one server are made there
(`RemoteLink.makeIntfPair`). A link whose ends run on different servers is a
tunnel made by `VxlanLink`, Mininet's `RemoteGRELink` with the tunnel kind
changed: this kernel has no GRE, and a VXLAN device carries any Ethernet frame
(credit and pause frames, every LRH kind) as a veth does.

fabriclab runs a process per switch, NIC and agent that the runner must signal
(SIGTERM so a NIC writes its logs, SIGINT so tcpdump flushes its capture), read
(a NIC's "ready" line) and stop by PID with the start time the ledger checks.
Mininet's `RemoteMixin.popen` starts a process through `ssh` without a
terminal, where a signal to the ssh client never reaches the remote process. On
namespace servers reached directly (`ns:N`) those processes therefore start
from the runner straight into their server's namespace (`ip netns exec`,
`mnexec -a` for a host): same kernel, same PIDs, so the ledger stops them by PID
as on one machine. On supervised servers (real servers, and `ssh:ns:N`) they
start through the server's process supervisor over SSH (topologies/remote.py,
fabriclab/remote_supervisor.py), which also adopts the node shells and records
the switch ends of the links, so its own ledger there stops and removes them.

Mininet's cluster cleanup (`ClusterCleanup`, `mn -c` on every server) is never
called: teardown is the run's ledger.
"""

from __future__ import annotations

import itertools
import signal
import subprocess

from mininet.examples.cluster import RemoteLink, RemoteMixin
from mininet.link import Link
from mininet.node import Host, Node

from topologies.servers import Server, ServerError, ServerSet
from traffic.frames import ETHERNET_MTU

VXLAN_PORT = 4789
TUNNEL_KIND = "vxlan"


def _hangup_ends_it() -> None:
    """In a node shell's child before exec: SIGHUP back to its default (ends it)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class ClusterNodeMixin(RemoteMixin):
    """Mininet's remote node, with the run's SSH configuration (keys, known hosts)."""

    def __init__(self, name: str, server: Server, servers: ServerSet, run_ledger,
                 **params) -> None:
        self.fabric_server = server
        self.servers = servers
        self.run_ledger = run_ledger
        # RemoteMixin prefixes `sudo -E -u USER` and adds the destination itself.
        self.sshbase = [*servers.ssh_base(), "-q", "-tt"]
        super().__init__(name, server=server.name, user="root", serverIP=server.address,
                         **params)

    def startShell(self, *args, **kwargs) -> None:  # noqa: N802 - Mininet's name
        """The node's shell over SSH; both its ends go into the ledger at once (the local
        ssh client and the shell on the server), so a killed run's next cleanup ends them
        and with them the SSH session."""
        super().startShell(*args, **kwargs)
        self.run_ledger.add_process(self.shell.pid, f"ssh to {self.fabric_server.name} "
                                    f"for {self.name}")
        if self.pid and self.remote_host is not None:  # its PID is the server's
            self.remote_host.adopt(self.pid, f"shell of {self.name}")
        elif self.pid:
            self.run_ledger.add_process(self.pid, f"shell of {self.name} on "
                                        f"{self.fabric_server.name}")

    def _popen(self, cmd, **params):
        # Mininet ends a node's shell with SIGHUP. Under `nohup` the runner ignores it,
        # and an ssh client started with SIGHUP ignored never ends: the run would hang
        # at its end. The shell's ssh gets the default disposition back.
        params.setdefault("preexec_fn", _hangup_ends_it)
        return super()._popen(cmd, **params)

    @property
    def remote_host(self):
        """The server's supervisor (topologies.remote.RemoteHost) on a supervised server."""
        return self.servers.remote.get(self.fabric_server.name) if self.servers.supervised \
            else None

    def run_prefix(self) -> list[str]:
        """How the runner starts a process in this node's server's root namespace."""
        if self.remote_host is not None:
            raise ServerError(f"{self.name} runs on supervised server "
                              f"{self.fabric_server.name}: its processes start through the "
                              "supervisor, not from here")
        if self.fabric_server.netns is None:
            raise ServerError(f"{self.name} runs on SSH server {self.fabric_server.name}: "
                              "processes there need a remote supervisor (docs/cluster.md)")
        return ["ip", "netns", "exec", self.fabric_server.netns]


class ClusterHost(ClusterNodeMixin, Host):
    """A host made on its server; its processes start from the runner (see above)."""

    _local = False

    def popen(self, *args, **kwargs):
        remote = self.remote_host
        if remote is not None:  # `mnexec -a PID` on the server, through its supervisor
            cmd = args[0] if args else kwargs.pop("args")
            return remote.popen(list(cmd), what=f"{cmd[0]} on {self.name}",
                                mnexec_pid=self.pid, **kwargs)
        if self.fabric_server.netns is None:
            return super().popen(*args, **kwargs)
        self._local = True  # Host.popen's `mnexec -da PID`, from here: same kernel, same PIDs
        try:
            return Host.popen(self, *args, **kwargs)
        finally:
            self._local = False

    def _popen(self, cmd, **params):
        if self._local:
            return Node._popen(self, cmd, **params)
        return super()._popen(cmd, **params)  # the node's shell: over SSH


class VxlanLink(RemoteLink):
    """A link between two servers as a pair of VXLAN devices (Mininet's RemoteGRELink
    with `type vxlan`): same names, same MTU as a veth, frames carried unchanged."""

    _vni = itertools.count(4096)

    def __init__(self, node1, node2, **kwargs) -> None:
        self.tunnel_vni: int | None = None
        RemoteLink.__init__(self, node1, node2, **kwargs)

    def makeIntfPair(self, intfname1, intfname2, addr1=None, addr2=None,  # noqa: N802
                     node1=None, node2=None, deleteIntfs=True):  # noqa: N803
        node1 = self.node1 if node1 is None else node1
        node2 = self.node2 if node2 is None else node2
        if node1.fabric_server == node2.fabric_server:
            return Link.makeIntfPair(intfname1, intfname2, addr1, addr2, node1, node2,
                                     deleteIntfs=deleteIntfs)
        self.tunnel_vni = next(self._vni)
        for node, name, addr, peer in ((node1, intfname1, addr1, node2),
                                       (node2, intfname2, addr2, node1)):
            _vxlan(node, name, addr, self.tunnel_vni, peer.fabric_server.address)
        self.tunnel = 1
        return None

    def stop(self) -> None:
        if self.tunnel:
            self.intf1.delete()
            self.intf2.delete()
        else:
            Link.stop(self)
        self.tunnel = None


def _vxlan(node, name: str, addr: str | None, vni: int, remote: str) -> None:
    local = node.fabric_server.address
    cmds = [f"ip link add name {name} type vxlan id {vni} local {local} remote {remote} "
            f"dstport {VXLAN_PORT} nolearning",
            f"ip link set dev {name} mtu {ETHERNET_MTU}",
            *([f"ip link set dev {name} address {addr}"] if addr else []),
            f"ip link set dev {name} up"]
    for cmd in cmds:
        out = node.cmd(cmd).strip()
        if out:
            raise ServerError(f"{node.name} on {node.fabric_server.name}: {cmd}: {out}")


def interface_mtu(node, name: str) -> int | None:
    out = node.cmd(f"cat /sys/class/net/{name}/mtu").strip()
    return int(out) if out.isdigit() else None


def link_report(net, fabric, prefix: str, placement) -> list[dict]:
    """Every cross-server link with its tunnel kind, VNI and both ends' MTU, checked."""
    from topologies import link_names

    out = []
    for link in placement.cross_server_links:
        a, b = net.get(link.a), net.get(link.b)
        name_a, name_b = link_names.kernel_interfaces(prefix, link)
        mtus = (interface_mtu(a, name_a), interface_mtu(b, name_b))
        mininet_link = a.intf(name_a).link
        if mtus != (ETHERNET_MTU, ETHERNET_MTU):
            raise ServerError(f"tunnel {link_names.node_pair(link)}: MTU {mtus}, "
                              f"expected {ETHERNET_MTU} at both ends")
        out.append({"link": link_names.node_pair(link), "kind": TUNNEL_KIND,
                    "vni": getattr(mininet_link, "tunnel_vni", None),
                    "servers": [placement.node_server[link.a], placement.node_server[link.b]],
                    "mtu": ETHERNET_MTU, "rate_pps": link.params.rate_pps})
    return out


def describe(net, fabric, prefix: str, servers: ServerSet, placement) -> dict:
    """metrics.json's `cluster`: servers, placement per node, cross-server links, tunnels."""
    return {**servers.as_dict(), "placement": placement.how,
            "node_server": dict(placement.node_server),
            "switches_per_server": placement.switches_per_server(fabric),
            "cross_server_links": len(placement.cross_server_links),
            "tunnel": TUNNEL_KIND,
            "tunnels": link_report(net, fabric, prefix, placement)}


def check_tools(servers: ServerSet) -> None:
    """Every server has what the cluster nodes run there (mnexec, ip, sudo)."""
    for server in servers.servers:
        done = servers.ssh(server, ["command", "-v", "mnexec", "ip", "sudo"])
        if done.returncode != 0 or len(done.stdout.split()) < 3:
            raise ServerError(f"server {server.name} lacks mnexec, ip or sudo "
                              "(apt-get install mininet iproute2 sudo)")


def register_interfaces(fabric, prefix: str, placement, servers: ServerSet) -> None:
    """Supervised servers: the switch ends of every link (veths, VXLAN devices live in
    the server's root namespace) go into the server's supervisor ledger, by name."""
    from topologies import link_names

    if not servers.supervised:
        return
    per_server: dict[str, list[str]] = {}
    for link in fabric.links:
        for node, name in zip((link.a, link.b), link_names.kernel_interfaces(prefix, link)):
            if link_names.is_switch(fabric, node):
                per_server.setdefault(placement.node_server[node], []).append(name)
    for server, names in per_server.items():
        servers.remote[server].add_interfaces(names)


def run_in_server(node, cmd: list[str], **popen_kwargs) -> subprocess.Popen:
    """A process started by the runner in the root namespace of `node`'s server."""
    return subprocess.Popen([*node.run_prefix(), *cmd], **popen_kwargs)


def _switch_class():
    from topologies.network import P4Switch, offloads_off_command

    class ClusterSwitch(ClusterNodeMixin, P4Switch):
        """A P4 switch node on its server: the shell over SSH (Mininet's cluster node),
        the switch process started into the server's namespace (see the module doc)."""

        def spawn(self, cmd, **popen_kwargs):
            if self.remote_host is not None:  # the supervisor runs in the server's root ns
                return self.remote_host.popen(cmd, what=f"switch {self.name}", **popen_kwargs)
            return run_in_server(self, cmd, **popen_kwargs)

        def quiet_interface(self, iface: str) -> None:
            self.cmd(f"sysctl -qw net.ipv6.conf.{iface}.disable_ipv6=1")
            self.cmd(" ".join(offloads_off_command(iface)))

    return ClusterSwitch


def node_options(placement, servers: ServerSet, hosts: list[str], switches: list[str],
                 ledger) -> dict[str, dict]:
    """Per node, the Mininet options that put it on its server."""
    switch_cls = _switch_class()
    out = {}
    for name in hosts:
        server = servers.by_name(placement.node_server[name])
        out[name] = {"cls": ClusterHost, "server": server, "servers": servers,
                     "run_ledger": ledger}
    for name in switches:
        server = servers.by_name(placement.node_server[name])
        out[name] = {"cls": switch_cls, "server": server, "servers": servers,
                     "run_ledger": ledger, "grpc_host": server.address}
    return out
