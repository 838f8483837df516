"""topologies/cpu_wait.py: the switches' wait for a CPU, read from the kernel's schedstat."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from topologies import cpu_wait
from topologies.cpu_wait import (
    CpuWaitMonitor,
    SwitchWait,
    mark_starved,
    sample_period_s,
    starved_floor_ms,
)


def test_the_threads_of_a_process_and_the_cpus_steal_are_read():
    delays = cpu_wait.thread_run_delays(os.getpid())
    assert os.getpid() in delays and all(d >= 0 for d in delays.values())
    assert cpu_wait.thread_run_delays(2**22 + 12345) == {}  # no such process: nothing
    steal = cpu_wait.steal_ms()
    assert steal and all(k.startswith("cpu") and v >= 0 for k, v in steal.items())


def test_a_starved_stretch_is_the_run_of_samples_a_thread_waited_half_of():
    w = SwitchWait()
    for i, waited_ms in enumerate([5, 30, 40, 45, 10, 30, 2]):  # samples of 50 ms
        w.add(0.05 * (i + 1), 0.05, int(waited_ms * 1e6), int(waited_ms * 1e6))
    # 30 + 40 + 45 from 0.05 s; the later 30 alone is shorter
    assert w.longest_starved_ms == pytest.approx(115) and w.at_s == pytest.approx(0.05)
    assert w.waited_ms == pytest.approx(162)


def test_samples_come_further_apart_with_many_switches():
    assert sample_period_s(3) == pytest.approx(0.05)
    assert sample_period_s(20) == pytest.approx(0.2)  # fattree:4: ~3% of one CPU
    assert CpuWaitMonitor({}).stop()["switches"] == {}  # never started: nothing sampled


def test_starved_means_longer_than_the_floor_for_the_link_rate():
    assert starved_floor_ms(300) == pytest.approx(100)  # 30 frames = 100 ms at 300 frames/s
    assert starved_floor_ms(100) == pytest.approx(300)
    assert starved_floor_ms(20000) == pytest.approx(100)  # never below 100 ms
    figures = {"switches": {"s1": {"longest_starved_ms": 99.0},
                            "s2": {"longest_starved_ms": 250.0}}}
    assert mark_starved(figures, 300) == {"s2": 250.0}
    assert figures["starved"] == {"s2": 250.0} and figures["starved_floor_ms"] == 100
    assert mark_starved(None, 300) == {}


@pytest.mark.timing  # busy processes on one CPU: in the serial part
def test_a_process_that_shares_one_cpu_with_two_busy_ones_is_seen_starved():
    busy = "import time\nend = time.time() + 1.2\nwhile time.time() < end: pass\n"
    procs = [subprocess.Popen([sys.executable, "-c", busy]) for _ in range(3)]
    idle = subprocess.Popen([sys.executable, "-c", "import time\nprint(flush=True)\n"
                             "time.sleep(1.2)"], stdout=subprocess.PIPE)
    try:
        idle.stdout.readline()  # started: from here on it only sleeps
        cpu = min(os.sched_getaffinity(0))
        for p in procs:
            os.sched_setaffinity(p.pid, {cpu})
        monitor = CpuWaitMonitor({"busy": procs[0].pid, "idle": idle.pid})
        monitor.start()
        for p in procs + [idle]:
            p.wait(10)
        figures = monitor.stop()
    finally:
        for p in procs + [idle]:
            if p.poll() is None:
                p.kill()
                p.wait()
        idle.stdout.close()
    busy_w, idle_w = figures["switches"]["busy"], figures["switches"]["idle"]
    # one of three on a CPU waits about two thirds of the time, in every sample
    assert busy_w["longest_starved_ms"] >= 300, figures
    assert busy_w["wait_share"] >= 0.3, figures
    # a sleeping one waits only when it wakes: never for a starved floor's length
    assert idle_w["longest_starved_ms"] < 100 and idle_w["wait_share"] < 0.1, figures
