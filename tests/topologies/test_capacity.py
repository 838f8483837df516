"""The pre-start check refuses what cannot fit and warns about CPU-bound rates, with numbers."""

from __future__ import annotations

from topologies.capacity import check
from topologies.description import LinkParams
from topologies.generators import build


def test_small_fabric_fits_without_warnings():
    report = check(build("line:2", LinkParams(rate_pps=500)), memory_available_mb=4000,
                   cores=2, bench={"switch_pps": 10000})
    assert report.fits and report.warnings == ()
    assert report.worst_case_pps == 4 * 500  # two switches with two ports each


def test_too_many_switches_for_memory_are_refused_with_numbers():
    report = check(build("fattree:8"), memory_available_mb=2000, cores=2, bench={})
    assert not report.fits
    assert "80 switches" in report.warnings[0] and "2000 MB" in report.warnings[0]


def test_cpu_bound_rates_are_warned_about():
    report = check(build("fattree:4", LinkParams(rate_pps=5000)), memory_available_mb=24000,
                   cores=2, bench={"switch_pps": 10000})
    assert report.fits
    assert any("CPU-bound" in w and "20000" in w for w in report.warnings)


def test_bmv2_is_held_to_its_own_packet_rate():
    """Real bmv2 forwards fabric.p4 about a tenth as fast as the embedded switch: the
    same fabric and rate that fit the embedded switch are CPU-bound on bmv2."""
    fabric = build("fattree:4", LinkParams(rate_pps=300))  # 80 switch ports: 24000/s
    bench = {"switch_pps": 20000, "same_program_bmv2_pps": 2600}
    assert check(fabric, memory_available_mb=24000, cores=2, bench=bench).warnings == ()
    warned = check(fabric, memory_available_mb=24000, cores=2, bench=bench, switch="bmv2")
    assert any("5200 (2 cores x 2600 measured for the bmv2 switch)" in w
               for w in warned.warnings), warned.warnings
    assumed = check(fabric, memory_available_mb=24000, cores=2, bench={}, switch="bmv2")
    assert assumed.capacity_pps == 2 * 2500
    assert any("assumed for the bmv2 switch" in w for w in assumed.warnings)
