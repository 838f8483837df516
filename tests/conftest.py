"""Shared pytest fixtures and markers for fabriclab's tests."""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from topologies.ledger import emulation_lock as ledger_emulation_lock


def _can_emulate() -> str | None:
    """None if Mininet tests can run here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("mnexec") is None:
        return "needs Mininet (apt-get install mininet)"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, check=False)
    if probe.returncode != 0:
        return "needs network namespaces (ip netns)"
    return None


def _makes_emulation(item) -> bool:
    name = Path(str(item.fspath)).name
    return "mininet" in item.keywords or "netns" in name or "mininet" in name


@pytest.fixture(scope="session")
def emulation_lock():
    """Held from the first emulating test to the end of the session: module-scoped
    fixtures (a fabric shared by a file's tests) are then inside it too
    (topologies/ledger.py: the machine-wide lock)."""
    with ledger_emulation_lock():
        yield


PARTS = ("all", "serial", "parallel")


def pytest_addoption(parser):
    parser.addoption(
        "--part", choices=PARTS, default="all",
        help="which tests to run: serial = those that emulate (Mininet, namespaces) or "
             "measure time (marker `timing`), which must not share the CPU with other "
             "tests; parallel = the rest, which scripts/test.sh runs beside them at a "
             "lower priority; all (default) = both in one process")


_stacks_file = None


def _interrupted(signum, frame):  # noqa: ARG001 - a signal handler's signature
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    if config.getoption("--part") != "all":
        # scripts/test.sh stops a part by PID with SIGTERM (a background job ignores
        # SIGINT): as an interrupt, so fixtures still stop what they started
        signal.signal(signal.SIGTERM, _interrupted)
        # and asks a part that hangs for every thread's stack before it stops it (to a
        # file: the part's own stderr is captured while a test runs)
        stacks = os.environ.get("FABRICLAB_TEST_STACKS")
        if stacks:
            global _stacks_file
            _stacks_file = open(stacks, "w")  # noqa: SIM115 - open for the whole session
            faulthandler.register(signal.SIGUSR1, file=_stacks_file, all_threads=True)


def _serial(item) -> bool:
    return _makes_emulation(item) or "timing" in item.keywords


def _select_part(config, items) -> None:
    part = config.getoption("--part")
    if part == "all":
        return
    keep, drop = [], []
    for item in items:
        (keep if _serial(item) == (part == "serial") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_modifyitems(config, items):
    _select_part(config, items)
    reason = _can_emulate()
    bmv2 = shutil.which("simple_switch_grpc")
    p4c = shutil.which("p4c")
    for item in items:
        if _makes_emulation(item) and "emulation_lock" not in item.fixturenames:
            item.fixturenames.insert(0, "emulation_lock")
        if reason and "mininet" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=f"Mininet test: {reason}"))
        # bmv2 tests need the real switch only (the embedded compiler builds for it where
        # p4c is absent); p4c tests need the real compiler. DEVELOPERS.md: ../shared/p4ref.
        if not bmv2 and "bmv2" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="needs simple_switch_grpc on PATH"))
        if not p4c and "p4c" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="needs p4c on PATH"))
