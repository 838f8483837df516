"""Throwaway network namespaces for the NIC tests: every name starts with `nct`.

Everything a fixture creates is deleted by name in its finalizer; deleting a
namespace deletes its ends of the veths and the bridge inside it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def need_root() -> None:
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("needs root and ip (network namespaces)")


@dataclass(frozen=True)
class Host:
    """A namespace with one interface: what a NIC process needs to know."""

    ns: str
    iface: str
    mac: str
    lid: int

    @property
    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.ns]


def make_pair(a: str, b: str) -> tuple[Host, Host]:
    """Two namespaces `a`, `b` joined by a veth `a`0 <-> `b`0 (names must start with nct)."""
    assert a.startswith("nct") and b.startswith("nct")
    hosts = (Host(a, f"{a}0", "02:00:00:00:0a:01", 1), Host(b, f"{b}0", "02:00:00:00:0a:02", 2))
    ip("netns", "add", a)
    ip("netns", "add", b)
    ip("link", "add", hosts[0].iface, "type", "veth", "peer", "name", hosts[1].iface)
    for h in hosts:
        ip("link", "set", h.iface, "netns", h.ns)
        _quiet_ipv6(h.ns)
        ip("-n", h.ns, "link", "set", h.iface, "address", h.mac, "up")
    return hosts


def make_bridge(sw: str, names: list[str]) -> list[Host]:
    """Namespace `sw` with a Linux bridge, and one namespace per name cabled to it."""
    assert sw.startswith("nct") and all(n.startswith("nct") for n in names)
    ip("netns", "add", sw)
    _quiet_ipv6(sw)
    ip("-n", sw, "link", "add", "nctbr", "type", "bridge", "forward_delay", "0", "stp_state", "0")
    ip("-n", sw, "link", "set", "nctbr", "up")
    hosts = []
    for i, name in enumerate(names):
        host = Host(name, f"{name}0", f"02:00:00:00:0b:{i + 1:02x}", i + 1)
        ip("netns", "add", name)
        _quiet_ipv6(name)
        ip("link", "add", host.iface, "type", "veth", "peer", "name", f"{name}p")
        ip("link", "set", host.iface, "netns", name)
        ip("link", "set", f"{name}p", "netns", sw)
        ip("-n", sw, "link", "set", f"{name}p", "master", "nctbr", "up")
        ip("-n", name, "link", "set", host.iface, "address", host.mac, "up")
        hosts.append(host)
    return hosts


def _quiet_ipv6(ns: str) -> None:
    subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                    "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"],
                   capture_output=True)


def namespace_pair(a: str, b: str):
    """Body of a fixture: two fresh namespaces joined by a veth, deleted afterwards."""
    need_root()
    delete_namespaces(a, b)
    try:
        yield make_pair(a, b)
    finally:
        delete_namespaces(a, b)


def delete_namespaces(*names: str) -> None:
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class NicProcess:
    """`python -m traffic.nic_cli` in a host's namespace; `.summary` after `.wait()`."""

    def __init__(self, host: Host, mode: str, rate: float, log_dir: Path, flows: dict,
                 duration: float, start_at: float, extra: tuple[str, ...] = (),
                 control: Path | None = None, until_done: bool = False) -> None:
        self.host = host
        self.log_dir = log_dir
        name = flows.get("name", host.ns)
        self.name = name
        flows_path = log_dir / f"{name}.flows.json"
        flows_path.parent.mkdir(parents=True, exist_ok=True)
        flows_path.write_text(json.dumps({"name": name, "lid": host.lid, **flows}))
        # Real-time from the start: start-up on a loaded machine must fit in the lead time.
        rt = ["chrt", "-f", "10"] if shutil.which("chrt") else []
        cmd = [*host.prefix, *rt, sys.executable, "-m", "traffic.nic_cli", "--iface", host.iface,
               "--mode", mode, "--rate-pps", str(rate), "--flows", str(flows_path),
               "--log-dir", str(log_dir), "--duration", str(duration),
               "--start-at", f"{start_at:.6f}", *extra]
        if control:
            cmd += ["--control", str(control)]
        if until_done:
            cmd.append("--until-done")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.summary: dict = {}

    def wait_ready(self) -> None:
        """Until the NIC has its socket open (its first stdout line)."""
        line = self.proc.stdout.readline()
        if '"ready"' not in line:
            self.kill()
            raise AssertionError(f"NIC {self.name} did not start: {self.proc.stderr.read()}")

    def wait(self, timeout: float = 60) -> dict:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"NIC {self.name} did not finish: {err}") from None
        assert self.proc.returncode == 0, f"NIC {self.name} failed: {err}\n{out}"
        self.summary = json.loads((self.log_dir / f"{self.name}.summary.json").read_text())
        return self.summary

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def wait_for_socket(path: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"control socket {path} never appeared")
        time.sleep(0.02)
