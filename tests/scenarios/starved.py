"""A run again when the machine kept a switch from its CPU and the run then failed.

The NICs keep their schedule at real-time priority; a switch that waits for a CPU lets
their frames pile up before its pipeline, where its flow control cannot count them
(topologies/cpu_wait.py). Such a run says so itself (RunMetrics.switch_cpu["starved"],
rate_kept false): what it measured is the machine, not the fabric. A test whose run
failed that way runs it again, at most ATTEMPTS times in all; a run that failed with
every switch fed, or a starved run that passed, is the test's answer as it is. Every
starved attempt is printed with its figures, so a log shows how often it happened.
"""

from __future__ import annotations

from collections.abc import Callable

ATTEMPTS = 3


def starved(metrics) -> dict[str, float]:
    """{switch: ms it waited for a CPU} of a run's starved switches ({}: none)."""
    return dict(((metrics.switch_cpu or {}).get("starved")) or {})


def run_fed(make_run: Callable[[int], object], failed: Callable[[object], bool],
            what: str, attempts: int = ATTEMPTS):
    """`make_run(attempt)` (a RunResult) until a run that did not fail or whose switches
    were fed, at most `attempts` runs; the last one."""
    for attempt in range(1, attempts + 1):
        result = make_run(attempt)
        m = result.metrics
        hungry = starved(m)
        if attempt == attempts or not hungry or not failed(m):
            return result
        print(f"\n{what}: attempt {attempt} failed while switches waited for a CPU "
              f"({', '.join(f'{n} {ms:g} ms' for n, ms in sorted(hungry.items()))}; "
              f"{m.lost} lost, drops {m.drops_by_reason}, verdict {m.verdict}): run again")
    raise AssertionError("unreachable")
