"""Runs that several scenario tests assert on, made once per session (conftest.py's
`shared_runs`, `stream_run` and `incast_run` fixtures)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SharedRun:
    """A run that several tests assert on, with what it left behind."""

    result: object  # fabriclab.runner.RunResult
    left_behind: frozenset[str]  # prefixed names that were not there before the run


class SharedRuns:
    """Runs of one scenario, made once per session on first use and shared by the tests
    that need exactly that run: each asserts its own part of one run, instead of
    repeating the same bring-up and traffic. The run happens inside the first test that
    asks (so under the emulation lock that test holds)."""

    def __init__(self, tmp_path_factory) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.runs: dict[tuple[str, str], SharedRun] = {}

    def get(self, key: str, scenario, target) -> SharedRun:
        from fabriclab.runner import run
        from topologies.ledger import prefixed_names

        slot = (key, target.value)
        if slot not in self.runs:
            before = prefixed_names()
            result = run(scenario, target, self.tmp_path_factory.mktemp(f"{key}-{target.value}"))
            self.runs[slot] = SharedRun(result, frozenset(prefixed_names() - before))
        return self.runs[slot]


def incast_at_scenario_size(flow_control: str):
    """The shipped `incast` (3 -> 1 at 2000 frames/s, 256 frames per sender) in the given
    flow-control mode; in its own mode (credit) it is the shipped scenario as it is."""
    from fabriclab import scenario as sc

    return sc.parse({**sc.load("incast").as_dict(), "flow_control": flow_control},
                    f"incast ({flow_control})")
