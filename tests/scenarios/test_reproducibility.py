"""Two runs of the same scenario give the same counts within a stated tolerance.

The schedule of every frame is fixed by the scenario (and its seed); what varies
between runs is only the host's timing. Stated tolerances: frames lost agree
within 15 % (or 5 frames, whichever is larger); pause frames, which depend on
exactly when a queue crosses XOFF and XON, within 40 % (or 5).
"""

from __future__ import annotations

import pytest

from fabriclab.runner import run
from tests.scenarios.shared_runs import incast_at_scenario_size
from topologies.targets import Target

pytestmark = [pytest.mark.mininet, pytest.mark.slow]


TOLERANCE = {"lost": 0.15, "pause_frames": 0.40}


def _close(a: int, b: int, share: float) -> bool:
    return abs(a - b) <= max(5, share * max(a, b))


@pytest.mark.parametrize("mode, figure", [("lossy", "lost"), ("pfc", "pause_frames")])
def test_two_runs_of_incast_agree(tmp_path, incast_run, mode, figure):
    # the first run is test_flow_control_modes.py's (the same scenario, conftest.py);
    # the second is made here, after it
    first = incast_run(mode).result.metrics
    second = run(incast_at_scenario_size(mode), Target.EMBEDDED, tmp_path).metrics
    a, b = getattr(first, figure), getattr(second, figure)
    assert a > 0
    assert _close(a, b, TOLERANCE[figure]), (a, b)
    assert first.sent == second.sent, "the schedule itself is identical"
