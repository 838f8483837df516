"""Fixtures for scenario tests that drive the SM directly on a Mininet fabric.

`mininet_fabric.start(physical, intended)` starts `physical` in Mininet
(embedded switches, fabric.p4 pushed by an SM that believes in `intended`)
and returns the network, the SM and the run's ledger;
`mininet_fabric.agents(net, sm, ledger)` adds a local agent process per
switch (fabriclab/agents.py). Everything is in the ledger and is removed by
the fixture's finalizer: agent and switch processes by PID, interfaces by
name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.scenarios.shared_runs import SharedRuns, incast_at_scenario_size

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fabric_program():
    """fabric.p4 compiled for the embedded switch (cached in build/p4 as the runner does)."""
    from topologies.targets import Target, compile_program

    return compile_program(Target.EMBEDDED, ROOT / "p4src" / "fabric.p4", ROOT / "build" / "p4")


class MininetFabrics:
    """Starts fabrics and remembers how to stop each part, last started first."""

    def __init__(self, run_dir: Path, program) -> None:
        self.run_dir = run_dir
        self.program = program
        self.stops: list[Callable[[], object]] = []

    def start(self, physical, intended=None, routing: str = "ftree"):
        from controller.routing import engine
        from controller.sm import SubnetManager, connect_switches
        from topologies.ledger import Ledger
        from topologies.network import start_network
        from topologies.targets import Target

        intended = intended or physical
        ledger = Ledger.create(f"test-{physical.name.replace(':', '-')}-{time.time_ns()}")
        self.stops.append(ledger.teardown)  # whatever net.stop() did not get to
        net = start_network(physical, Target.EMBEDDED, ledger, self.run_dir / "logs",
                            constants=self.program.constants)
        self.stops.append(net.stop)
        sm = SubnetManager(intended, connect_switches(intended, net.grpc_addrs),
                           engine=engine(routing))
        self.stops.append(sm.close)
        sm.push_pipeline(self.program.p4info, self.program.bmv2_json)
        return net, sm, ledger

    def agents(self, net, sm, ledger):
        from fabriclab.agents import start_agents

        fleet = start_agents(net.fabric, net.grpc_addrs, self.program.p4info, sm,
                             self.run_dir, ledger)
        self.stops.append(fleet.stop)
        return fleet

    def stop_all(self) -> list[str]:
        leftovers = []
        while self.stops:
            stop = self.stops.pop()
            try:
                leftovers.extend(stop() or [])
            except Exception as exc:  # noqa: BLE001 -- the remaining parts still go
                leftovers.append(f"{stop.__qualname__}: {type(exc).__name__}: {exc}")
        return leftovers


def _fabrics(path, fabric_program):
    """MininetFabrics in `path`, every fabric stopped afterwards and nothing left."""
    fabrics = MininetFabrics(path, fabric_program)
    try:
        yield fabrics
    finally:
        leftovers = fabrics.stop_all()
    assert not leftovers, f"teardown left {leftovers}"


@pytest.fixture
def mininet_fabric(tmp_path, fabric_program):
    yield from _fabrics(tmp_path, fabric_program)


@pytest.fixture(scope="module")
def module_mininet_fabric(tmp_path_factory, fabric_program):
    """`mininet_fabric` for a module-scoped fixture whose tests only read what one fabric
    showed (stopped after the module's last test)."""
    yield from _fabrics(tmp_path_factory.mktemp("fabric"), fabric_program)


@pytest.fixture(scope="session")
def shared_runs(tmp_path_factory) -> SharedRuns:
    return SharedRuns(tmp_path_factory)


@pytest.fixture
def stream_run(shared_runs):
    """The shipped `stream` scenario as it is, run once per target for
    test_stream_slice.py, test_bmv2_scenarios.py and the shipped-scenario contract."""
    from fabriclab import scenario as sc

    return lambda target: shared_runs.get("stream", sc.load("stream"), target)


@pytest.fixture
def incast_run(shared_runs):
    """The shipped incast on the embedded switch in one mode, run once per session for
    test_flow_control_modes.py, the first of test_reproducibility.py's two runs and the
    shipped-scenario contract."""
    from topologies.targets import Target

    return lambda mode: shared_runs.get(f"incast-{mode}", incast_at_scenario_size(mode),
                                        Target.EMBEDDED)
