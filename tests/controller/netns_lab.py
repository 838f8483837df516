"""A small lab of network namespaces and veths for the controller's root tests.

`build(namespaces, veths, macs)` makes the namespaces (IPv6 off, loopback of
the first one up) and the veth pairs, and `teardown` deletes them by name;
processes started in them are waited for by `wait_for` and stopped by PID by
`stop` (`ip netns exec` execs the program itself, so its PID is the program's).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

Veth = tuple[str, str, str, str]  # (end a, namespace a, end b, namespace b)


def run(*cmd: str, ns: str | None = None, check: bool = True, timeout: float = 60):
    prefix = ["ip", "netns", "exec", ns] if ns else []
    result = subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=timeout,
                            cwd=ROOT)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}): "
                             f"{result.stdout[-500:]} {result.stderr[-500:]}")
    return result


def build(namespaces: tuple[str, ...], veths: list[Veth], macs: dict[tuple[str, str], str]
          ) -> None:
    """Namespaces (the first gets its loopback up), veth pairs, and MACs by (ns, iface)."""
    for ns in namespaces:
        run("ip", "netns", "add", ns)
        run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=ns)
        run("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=ns)
    run("ip", "-n", namespaces[0], "link", "set", "lo", "up")
    for a, ns_a, b, ns_b in veths:
        run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        run("ip", "link", "set", a, "netns", ns_a)
        run("ip", "link", "set", b, "netns", ns_b)
        run("ip", "-n", ns_a, "link", "set", a, "up")
        run("ip", "-n", ns_b, "link", "set", b, "up")
    for (ns, iface), mac in macs.items():
        run("ip", "-n", ns, "link", "set", iface, "address", mac)


def teardown(namespaces: tuple[str, ...], veths: list[Veth]) -> None:
    for ns in namespaces:  # deleting a namespace deletes its veth ends
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    for a, _, _, _ in veths:
        subprocess.run(["ip", "link", "del", a], capture_output=True)


def wait_for(path: Path, text: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    """Until `text` appears in the process's log; fail with its tail if it exits or not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text():
            return
        if proc.poll() is not None:
            pytest.fail(f"{path.name}: exited: {path.read_text()[-500:]}")
        time.sleep(0.05)
    pytest.fail(f"{path.name}: no {text!r} after {timeout}s: {path.read_text()[-500:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def compile_fabric(out_dir: Path, tools: tuple[str, ...] = ("ip",)) -> tuple[Path, Path]:
    """fabric.p4 compiled by the embedded compiler into out_dir: (P4Info, bmv2 JSON).
    Skips the test without root, one of `tools`, or the embedded compiler and switch."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in tools):
        pytest.skip(f"needs root and {', '.join(tools)}")
    if not (_have("p4compiler.cli") and _have("p4switch.cli")):
        pytest.skip("needs the embedded compiler and switch")
    result = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target", "bmv2",
                             "--arch", "v1model", "-o", str(out_dir),
                             str(ROOT / "p4src" / "fabric.p4")],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    if result.returncode != 0:
        pytest.skip(f"embedded compiler failed: {result.stderr.strip()[-300:]}")
    return out_dir / "fabric.p4info.txtpb", out_dir / "fabric.json"


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False

