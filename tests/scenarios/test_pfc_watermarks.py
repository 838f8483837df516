"""The PFC tuning trap (issue 5), in Mininet with 3 ms links, from the watermark sweep.

The buffer per ingress port and priority is fixed (XOFF + headroom = 48
frames); ~12 frames are in flight when a pause goes out. XOFF too high leaves
too little headroom: frames drop, every one counted as a headroom drop. XOFF
too low pauses early and often: more pause frames for the same traffic.
"""

from __future__ import annotations

import pytest

from fabriclab import scenario as sc
from fabriclab.runner import run
from topologies.targets import Target

pytestmark = [pytest.mark.mininet, pytest.mark.slow]


@pytest.fixture(scope="module")
def points(tmp_path_factory):
    out = {}
    for _label, scenario in sc.load_points("watermark-sweep"):
        result = run(scenario, Target.EMBEDDED, tmp_path_factory.mktemp("wm"))
        assert result.metrics.error is None, result.metrics.error
        out[scenario.pfc.xoff] = result.metrics
    return out


def test_xoff_too_high_for_the_headroom_drops_and_counts_every_drop(points):
    high = points[max(points)]
    assert high.lost > 0
    assert high.unexplained_loss == 0
    assert high.drops_by_reason.get("headroom") == high.lost


def test_enough_headroom_loses_nothing(points):
    for xoff in sorted(points)[:-1]:
        assert points[xoff].lost == 0, f"xoff={xoff}"


def test_xoff_too_low_pauses_more_often(points):
    low, mid = sorted(points)[:2]
    assert points[low].pause_frames > points[mid].pause_frames
