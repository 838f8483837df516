"""The servers a distributed run spreads its fabric over (`--servers`).

`--servers ns:N` makes N local "servers" for the run: each a named network
namespace (`fk3-srv1`, with the run's prefix) on a management network the run
creates (a bridge `fk3-mgmt` in this namespace, one veth per server, addresses
from a /24 chosen so no interface of this machine uses it), each running its
own sshd on its management address with a host key and a client key the run
generates. The runner and the SM stay here, on the bridge's address, and reach
every server over that network (SSH for Mininet's cluster nodes, P4Runtime for
the switches), exactly as they would reach real servers.

`--servers HOST1,HOST2` names real servers reached by SSH, and `ssh:ns:N` makes
namespace servers driven exactly like real ones: every process of the run on
them goes through the server's supervisor (topologies/remote.py, docs/cluster.md).

Everything made is written to the run's ledger first (namespaces, interfaces,
sshd PIDs), so teardown, or the next run after a crash, removes it by name and
by PID.
"""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from topologies.ledger import Ledger

SSHD = "/usr/sbin/sshd"
MGMT_MTU = 9000  # a VXLAN tunnel adds 50 bytes: fabric frames of 1500 still fit inside
SSH_PORT = 22


class ServerError(RuntimeError):
    """The servers could not be made or reached."""


@dataclass(frozen=True)
class Server:
    name: str  # `srv1`: what placements and metrics call it
    address: str  # management address: SSH, P4Runtime and tunnels go there
    netns: str | None = None  # a namespace server: its named netns here

    def run_here(self, cmd: list[str]) -> list[str]:
        """`cmd` run in this server's root namespace from this machine (namespace servers)."""
        return ["ip", "netns", "exec", self.netns, *cmd] if self.netns else list(cmd)


@dataclass
class ServerSet:
    servers: tuple[Server, ...]
    kind: str  # "namespaces" or "ssh"
    local_address: str  # where the runner is on the management network
    ssh_config: Path | None = None  # Host entries for every server, keys, known_hosts
    workdir: Path | None = None  # keys and sshd files of namespace servers
    sshd: dict[str, subprocess.Popen] = field(default_factory=dict)
    # Supervised servers (real ones, or namespace ones in `ssh:ns:N` mode): every process
    # starts through the server's supervisor (topologies/remote.py), by server name.
    supervised: bool = False
    remote: dict = field(default_factory=dict)  # server name -> topologies.remote.RemoteHost
    run_ledger: Ledger | None = None  # holds the supervisors' cleanup commands

    def ssh_base(self) -> list[str]:
        return ["ssh", *(["-F", str(self.ssh_config)] if self.ssh_config else []),
                "-o", "BatchMode=yes"]

    def by_name(self, name: str) -> Server:
        return next(s for s in self.servers if s.name == name)

    def ssh(self, server: Server, cmd: list[str], timeout: float = 20.0
            ) -> subprocess.CompletedProcess:
        """Run `cmd` on `server` over SSH (BatchMode: a missing key fails, never prompts)."""
        argv = [*self.ssh_base(), server.name, *cmd]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "local_address": self.local_address,
                "processes": "supervisor over ssh" if self.supervised else "started here",
                "servers": {s.name: {"address": s.address, "netns": s.netns}
                            for s in self.servers}}

    def close(self) -> None:
        """The namespace servers' sshd processes stop by PID and their files go; the
        namespaces and interfaces are the ledger's to remove."""
        from topologies.ledger import stop_pid

        self.stop_supervisors()
        for proc in self.sshd.values():
            stop_pid(proc.pid)
        self.sshd.clear()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


    def collect(self) -> None:
        """What the supervised servers' processes wrote, copied into the run directory."""
        for host in self.remote.values():
            host.collect()

    def stop_supervisors(self) -> list[str]:
        """Collect the files, then each supervisor stops what it started (by PID) and
        removes its interfaces and directory. Returns what they could not remove."""
        left = []
        for name, host in list(self.remote.items()):
            try:
                host.collect()
            except Exception as exc:  # noqa: BLE001 - stop it all the same
                left.append(f"{name}: files not collected ({exc})")
            host_left = host.client.shutdown()
            left += [f"{name}: {x}" for x in host_left]
            if not host_left and self.run_ledger is not None:  # nothing to clean up there
                self.run_ledger.remote = [e for e in self.run_ledger.remote
                                          if e["server"] != name]
                self.run_ledger.save()
        self.remote.clear()
        return left


SSH_NS_PREFIX = "ssh:"


def supervised(spec: str) -> bool:
    """Processes go through a supervisor over SSH: real servers, and `ssh:ns:N`."""
    kind, _what = parse_servers(spec)
    return kind == "ssh" or spec.strip().startswith(SSH_NS_PREFIX)


def parse_servers(spec: str) -> tuple[str, int | list[str]]:
    """`ns:3` -> ("namespaces", 3); `a,b` -> ("ssh", ["a", "b"]); ValueError otherwise.
    `ssh:ns:3` is the namespace servers treated as real ones (`supervised`)."""
    spec = spec.strip()
    if spec.startswith(SSH_NS_PREFIX + "ns:"):
        spec = spec[len(SSH_NS_PREFIX):]
    if spec.startswith("ns:"):
        count = spec[3:]
        if not count.isdigit() or not 1 <= int(count) <= 64:
            raise ValueError(f"--servers {spec!r}: `ns:N` needs N from 1 to 64")
        return "namespaces", int(count)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise ValueError(f"--servers {spec!r}: expected `ns:N` or HOST1,HOST2,...")
    return "ssh", names


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ServerError(f"{' '.join(cmd)}: {done.stderr.strip() or done.returncode}")


def management_subnet(prefix: str) -> ipaddress.IPv4Network:
    """A /24 in 10.250-253.x for this run that no address of this machine is in."""
    out = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True, text=True,
                         check=False).stdout
    used = [ipaddress.ip_interface(w) for line in out.splitlines()
            for w in line.split() if "/" in w and w[0].isdigit()]
    start = sum(ord(c) for c in prefix) * 7
    for i in range(1024):
        n = (start + i) % 1024
        net = ipaddress.ip_network(f"10.{250 + n // 256}.{n % 256}.0/24")
        if not any(u.ip in net or net.overlaps(u.network) for u in used):
            return net
    raise ServerError("no free /24 in 10.250.0.0/14 for the management network")


def _keys(workdir: Path) -> tuple[Path, Path]:
    host_key, client_key = workdir / "host_key", workdir / "id_ed25519"
    for key in (host_key, client_key):
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fabriclab", "-f", str(key)])
    (workdir / "authorized_keys").write_text(client_key.with_suffix(".pub").read_text())
    return host_key, client_key


def _sshd_config(workdir: Path, server: Server, host_key: Path) -> Path:
    path = workdir / f"sshd-{server.name}.conf"
    path.write_text("\n".join([
        f"ListenAddress {server.address}", f"Port {SSH_PORT}", f"HostKey {host_key}",
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
        f"PidFile {workdir / f'sshd-{server.name}.pid'}",
        "PermitRootLogin prohibit-password", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
        # Mininet's SSH tunnel links (`ssh -w`) need it; our VXLAN links do not.
        "PermitTunnel yes", "AcceptEnv PYTHONPATH", "LogLevel ERROR", ""]))
    return path


def _ssh_config(workdir: Path, servers: tuple[Server, ...], client_key: Path,
                host_key: Path) -> Path:
    known = workdir / "known_hosts"
    pub = host_key.with_suffix(".pub").read_text().split()
    known.write_text("".join(f"{s.address} {pub[0]} {pub[1]}\n" for s in servers))
    lines = []
    for s in servers:
        lines += [f"Host {s.name} {s.address}", f"  HostName {s.address}", "  User root",
                  f"  IdentityFile {client_key}", "  IdentitiesOnly yes",
                  f"  UserKnownHostsFile {known}", "  StrictHostKeyChecking yes",
                  "  BatchMode yes", "  LogLevel ERROR", "  ConnectTimeout 10", ""]
    path = workdir / "ssh_config"
    path.write_text("\n".join(lines))
    return path


def make_namespace_servers(count: int, ledger: Ledger) -> ServerSet:
    """N namespace servers with sshd on a fresh management network; on failure what
    was made is left in the ledger for its teardown."""
    if not Path(SSHD).exists():
        raise ServerError(f"--servers ns:N runs sshd in each namespace server: {SSHD} is "
                          "missing (apt-get install openssh-server; scripts/setup.sh does)")
    prefix = ledger.prefix
    subnet = management_subnet(prefix)
    hosts = list(subnet.hosts())
    bridge = f"{prefix}mgmt"
    ledger.add_interfaces([bridge])
    _run(["ip", "link", "add", bridge, "type", "bridge"])
    _run(["ip", "link", "set", bridge, "mtu", str(MGMT_MTU)])
    _run(["ip", "addr", "add", f"{hosts[0]}/{subnet.prefixlen}", "dev", bridge])
    _run(["ip", "link", "set", bridge, "up"])
    workdir = Path(tempfile.mkdtemp(prefix=f"fabriclab-{prefix}servers-"))
    workdir.chmod(0o700)
    ledger.add_directory(workdir)
    servers = tuple(Server(f"srv{i}", str(hosts[i + 9]), f"{prefix}srv{i}")
                    for i in range(1, count + 1))
    out = ServerSet(servers, "namespaces", str(hosts[0]), workdir=workdir)
    try:
        _start_servers(out, ledger, bridge, subnet.prefixlen)
    except BaseException:
        out.close()  # sshd by PID, the key directory; the ledger has the rest
        raise
    return out


def _start_servers(out: ServerSet, ledger: Ledger, bridge: str, prefixlen: int) -> None:
    prefix, servers, workdir = ledger.prefix, out.servers, out.workdir
    for i, server in enumerate(servers, 1):
        outside = f"{prefix}m{i}"
        ledger.add_namespace(server.netns)
        ledger.add_interfaces([outside])
        _run(["ip", "netns", "add", server.netns])
        _run(["ip", "link", "add", outside, "mtu", str(MGMT_MTU), "type", "veth", "peer",
              "name", "mgmt0", "mtu", str(MGMT_MTU), "netns", server.netns])
        _run(["ip", "link", "set", outside, "master", bridge, "up"])
        for cmd in (["ip", "link", "set", "lo", "up"],
                    ["ip", "addr", "add", f"{server.address}/{prefixlen}", "dev", "mgmt0"],
                    ["ip", "link", "set", "mgmt0", "up"]):
            _run(server.run_here(cmd))
    host_key, client_key = _keys(workdir)
    out.ssh_config = _ssh_config(workdir, servers, client_key, host_key)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    for server in servers:
        conf = _sshd_config(workdir, server, host_key)
        log = workdir / f"sshd-{server.name}.log"
        proc = subprocess.Popen(server.run_here([SSHD, "-D", "-f", str(conf), "-E", str(log)]),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT, start_new_session=True)
        out.sshd[server.name] = proc
        ledger.add_process(proc.pid, f"sshd of server {server.name}")
    wait_reachable(out)


def ssh_servers(names: list[str], ssh_config: Path | None = None) -> ServerSet:
    """Real servers by name or address, reached with the user's SSH setup."""
    import socket

    servers = []
    for name in names:
        try:
            address = socket.gethostbyname(name)
        except OSError as exc:
            raise ServerError(f"server {name!r}: cannot resolve it ({exc})") from None
        servers.append(Server(name, address))
    local = _route_source(servers[0].address)
    return ServerSet(tuple(servers), "ssh", local, ssh_config=ssh_config)


def _route_source(address: str) -> str:
    out = subprocess.run(["ip", "route", "get", address], capture_output=True, text=True,
                         check=False).stdout.split()
    return out[out.index("src") + 1] if "src" in out else "127.0.0.1"


def wait_reachable(servers: ServerSet, timeout: float = 20.0) -> None:
    """Every server answers over SSH (`true`), or ServerError naming those that do not."""
    deadline = time.monotonic() + timeout
    pending = list(servers.servers)
    last = {}
    while pending and time.monotonic() < deadline:
        for server in list(pending):
            done = servers.ssh(server, ["true"], timeout=10)
            if done.returncode == 0:
                pending.remove(server)
            else:
                last[server.name] = done.stderr.strip() or f"exit {done.returncode}"
        if pending:
            time.sleep(0.2)
    if pending:
        raise ServerError("servers not reachable over SSH: " + "; ".join(
            f"{s.name} ({s.address}): {last.get(s.name, 'timeout')}" for s in pending))
