"""The switches' side of a run: one local agent process (controller/agent.py) per switch.

Each agent watches its switch's fabric interfaces, marks a port down in
`port_liveness` over its own P4Runtime connection the moment a carrier drops,
and reports the event to the SM's report socket (controller/port_reports.py). Agents are registered in
the run's ledger by PID, so teardown and `fabriclab cleanup` stop them by PID;
the run waits until every agent has said it is ready before traffic starts.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from topologies import link_names, remote
from topologies.description import Fabric
from topologies.ledger import Ledger

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT_S = 60.0  # 20 agents importing gRPC at once take ~10 s on 2 cores
SOCKET_NAME = "sm-reports.sock"
MAX_UNIX_PATH = 107  # sun_path is 108 bytes with the terminating NUL


def report_address(run_dir: Path) -> tuple[str, Path | None]:
    """(unix socket path, private directory made for it or None): in the run directory,
    or in a short private directory when the run directory's path is too long."""
    path = Path(run_dir).resolve() / SOCKET_NAME
    if len(str(path)) <= MAX_UNIX_PATH:
        return str(path), None
    private = Path(tempfile.mkdtemp(prefix="fl-sm-"))
    return str(private / SOCKET_NAME), private


def _tail(path: Path, lines: int = 10) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class AgentFleet:
    """The agent processes of one run and the SM's report endpoint they talk to."""

    endpoint: object  # controller.port_reports.ReportEndpoint
    ledger: Ledger
    log_dir: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    private_dir: Path | None = None  # made for the report socket, removed at stop
    forwards: list = field(default_factory=list)  # SSH reverse forwards of the report socket

    def start(self, fabric: Fabric, grpc_addrs: dict[str, str], p4info: Path,
              timeout: float = READY_TIMEOUT_S, where=None, spawn=None,
              report_at=None) -> AgentFleet:
        """One agent per switch, watching its inter-switch and host ports; returns once
        every agent said ready. On failure everything started is stopped and the error
        (controller.port_reports.AgentNotReady) names the agents and their logs.
        `where(switch)` is the command prefix that reaches the switch's namespace, or
        `spawn(switch, cmd, **popen_kwargs)` starts the agent where the switch runs
        (EmulatedNetwork.spawn: its server's namespace, or its server's supervisor):
        the agent watches carriers there. `report_at(switch)` is the report address
        the agent uses there (default: the endpoint's)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            prefix = self.ledger.prefix  # the run's interface names (`fk3-s1-eth2`)
            for sw in fabric.switches:
                ports = ",".join(f"{link_names.kernel_interface(prefix, sw.name, port)}={port}"
                                 for port, _peer, _peer_port in fabric.neighbours(sw.name))
                cmd = [sys.executable, "-m", "controller.agent", "--switch", sw.name,
                       "--grpc", grpc_addrs[sw.name], "--device-id", str(sw.device_id),
                       "--p4info", str(p4info), "--ports", ports,
                       "--report", report_at(sw.name) if report_at else self.endpoint.address]
                kwargs = {"stdout": None, "stderr": subprocess.STDOUT,
                          "stdin": subprocess.DEVNULL, "cwd": str(ROOT),
                          "start_new_session": True}
                with open(self.log_dir / f"agent-{sw.name}.log", "wb") as log:
                    kwargs["stdout"] = log
                    proc = spawn(sw.name, cmd, **kwargs) if spawn else subprocess.Popen(
                        [*(where(sw.name) if where else []), *cmd], **kwargs)
                self.procs[sw.name] = proc
                remote.record(self.ledger, proc, f"agent {sw.name}")
            self.endpoint.wait_ready(sorted(self.procs), timeout, self._exited)
        except BaseException:
            self.stop()
            raise
        return self

    def _exited(self) -> str | None:
        for name, proc in sorted(self.procs.items()):
            if proc.poll() is not None:
                log = self.log_dir / f"agent-{name}.log"
                return (f"agent {name} exited with code {proc.returncode} while starting; "
                        f"last lines of {log}:\n{_tail(log)}")
        return None

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self.procs.items()}

    def stop(self) -> list[str]:
        """SIGTERM to every agent at once, then wait (SIGKILL after 3 s) by PID; the report
        endpoint closes last. Returns the agents that could not be stopped."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        leftovers = [name for name, proc in sorted(self.procs.items())
                     if not remote.stop(proc)]
        for proc in self.procs.values():
            try:
                proc.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
        self.procs.clear()
        for forward in self.forwards:
            remote.stop(forward)
        self.forwards.clear()
        self.endpoint.close()
        if self.private_dir is not None:
            shutil.rmtree(self.private_dir, ignore_errors=True)
            self.private_dir = None
        return leftovers


def start_agents(fabric: Fabric, grpc_addrs: dict[str, str], p4info: Path, sm,
                 run_dir: Path, ledger: Ledger, timeout: float = READY_TIMEOUT_S,
                 where=None, net=None) -> AgentFleet:
    """The SM's report socket for this run, and an agent process per switch reporting to it.
    With `net` (an EmulatedNetwork), each agent starts where its switch runs; on a
    supervised server it reports to a unix socket there that SSH forwards to the SM's."""
    address, private = report_address(run_dir)
    endpoint = sm.serve_reports(address)
    fleet = AgentFleet(endpoint, ledger, Path(run_dir) / "logs", private_dir=private)
    report_at = None
    if net is not None and net.servers is not None and net.servers.supervised:
        report_at = _forward_reports(fleet, fabric, net, address)
        for host in net.servers.remote.values():  # the P4Info goes to each server too
            host.map_root(Path(p4info).parent)
    return fleet.start(fabric, grpc_addrs, p4info, timeout, where,
                       spawn=net.spawn if net is not None else None, report_at=report_at)


def _forward_reports(fleet: AgentFleet, fabric: Fabric, net, address: str):
    """One SSH reverse forward of the report socket per server with switches; the
    address each switch's agent reports to there."""
    by_server: dict[str, str] = {}
    servers = net.servers
    try:
        for sw in fabric.switches:
            host = net.remote_host(sw.name)
            if host.server not in by_server:
                ssh = [*servers.ssh_base(), host.server]
                proc, remote_path = host.forward_unix(ssh, address)
                fleet.forwards.append(proc)
                fleet.ledger.add_process(proc.pid, f"report forward to {host.server}")
                by_server[host.server] = remote_path
    except BaseException:
        fleet.stop()
        raise
    return lambda switch: by_server[net.remote_host(switch).server]
