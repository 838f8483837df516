"""Whether the switches got the CPU they asked for during a run's traffic.

The NICs run at real-time priority and keep their schedule on a loaded machine
(traffic/nic_cli.py); the switches run at normal priority. When the machine is
short of CPU, a switch's threads wait on the run queue while the hosts go on
sending: the frames pile up before the switch's pipeline, where no P4 counter sees
them, and a pause or credit decision made on the pipeline's count comes as late as
the switch was kept waiting. A PFC headroom sized for the emulated link cannot cover
that (a CI run on 2 cores lost 81 frames at the headroom that way, its hosts' pauses
250-330 ms late), so a run must say when it happened rather than report a lossless
fabric that lost frames.

The kernel counts, per thread, the time it was runnable but not running
(`/proc/PID/task/TID/schedstat`, second field: run_delay, ns; kept with
CONFIG_SCHED_INFO, on in Debian's kernels). A sampler reads every local switch's
threads every PERIOD_S (longer with many switches) and keeps, per switch, the longest stretch in which its most
delayed thread waited for at least half of each sample ("starved"), and the share of
the traffic's time its threads spent waiting. It also reads the CPUs' steal time
(`/proc/stat`): time a hypervisor gave a virtual CPU to someone else, which no
run_delay shows. A switch on another server (a distributed run) is not sampled.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PERIOD_S = 0.05
# Reading one switch's threads costs ~0.3 ms (16 threads): with many switches the samples
# come further apart, PERIOD_PER_SWITCH_S each, to stay near 3% of one CPU
PERIOD_PER_SWITCH_S = 0.01
STARVED_SHARE = 0.5  # of a sample's length, waited by one thread: that sample is starved
# A switch starved this long fell behind its links: RunMetrics.rate_kept is then false
# (at least this many ms, and at least this many frame times at the link rate)
STARVED_MIN_MS = 100.0
STARVED_MIN_FRAMES = 30


def thread_run_delays(pid: int, proc: Path = Path("/proc")) -> dict[int, int]:
    """{tid: ns runnable but not running} of a process's threads; {} once it is gone."""
    out = {}
    try:
        tids = os.listdir(proc / str(pid) / "task")
    except OSError:
        return out
    for tid in tids:
        try:
            fields = (proc / str(pid) / "task" / tid / "schedstat").read_text().split()
            out[int(tid)] = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended between the listing and the read
    return out


def steal_ms(proc: Path = Path("/proc")) -> dict[str, float]:
    """{cpuN: ms stolen by the hypervisor since boot} from /proc/stat; {} where unreadable."""
    tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
    out = {}
    try:
        lines = (proc / "stat").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        f = line.split()
        if len(f) > 8 and f[0].startswith("cpu") and f[0] != "cpu":
            out[f[0]] = int(f[8]) * tick_ms
    return out


def sample_period_s(switches: int) -> float:
    """How far apart the samples of `switches` switches come."""
    return max(PERIOD_S, PERIOD_PER_SWITCH_S * switches)


@dataclass
class SwitchWait:
    """One switch's figures; times in ms, `at_s` from the sampler's start."""

    longest_starved_ms: float = 0.0
    at_s: float | None = None
    waited_ms: float = 0.0  # all its threads' run_delay over the sampled time
    _run_ms: float = 0.0  # the starved stretch in progress
    _run_at: float | None = None

    def add(self, now_s: float, length_s: float, worst_thread_ns: int, total_ns: int) -> None:
        self.waited_ms += total_ns / 1e6
        if worst_thread_ns >= STARVED_SHARE * length_s * 1e9:
            if self._run_at is None:
                self._run_at = now_s - length_s
            self._run_ms += worst_thread_ns / 1e6
            if self._run_ms > self.longest_starved_ms:
                self.longest_starved_ms, self.at_s = self._run_ms, self._run_at
        else:
            self._run_ms, self._run_at = 0.0, None


@dataclass
class CpuWaitMonitor:
    """Samples the switches' run delays (and the CPUs' steal) from `start` to `stop`."""

    pids: dict[str, int]  # local switch processes by switch name
    period_s: float | None = None  # None: PERIOD_S, longer with many switches
    proc: Path = Path("/proc")
    switches: dict[str, SwitchWait] = field(default_factory=dict)
    steal_max_ms: float = 0.0  # the most any CPU lost to the hypervisor in one sample
    steal_at_s: float | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _t0: float = 0.0
    _elapsed_s: float = 0.0

    def start(self) -> None:
        if self.period_s is None:
            self.period_s = sample_period_s(len(self.pids))
        self.switches = {name: SwitchWait() for name in self.pids}
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="cpu-wait", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        last = {name: thread_run_delays(pid, self.proc) for name, pid in self.pids.items()}
        last_steal, last_t = steal_ms(self.proc), time.monotonic()
        while not self._stop.wait(self.period_s):
            now = time.monotonic()
            length = now - last_t
            for name, pid in self.pids.items():
                cur = thread_run_delays(pid, self.proc)
                deltas = [d - last[name].get(tid, d) for tid, d in cur.items()]
                self.switches[name].add(now - self._t0, length, max(deltas, default=0),
                                        sum(deltas))
                last[name] = cur
            steal = steal_ms(self.proc)
            worst = max((v - last_steal.get(cpu, v) for cpu, v in steal.items()), default=0.0)
            if worst > self.steal_max_ms:
                self.steal_max_ms, self.steal_at_s = worst, now - self._t0
            last_steal, last_t = steal, now
            self._elapsed_s = now - self._t0

    def stop(self) -> dict:
        """The figures (RunMetrics.switch_cpu); the sampler ends."""
        self._stop.set()
        period = self.period_s or sample_period_s(len(self.pids))
        if self._thread is not None:
            self._thread.join(2 * period + 1)
        elapsed = max(self._elapsed_s, 1e-9)
        return {
            "period_ms": round(period * 1e3, 1),
            "sampled_s": round(self._elapsed_s, 3),
            "steal_max_ms": round(self.steal_max_ms, 1),
            "steal_at_s": None if self.steal_at_s is None else round(self.steal_at_s, 3),
            "switches": {name: {"longest_starved_ms": round(w.longest_starved_ms, 1),
                                "at_s": None if w.at_s is None else round(w.at_s, 3),
                                "wait_share": round(w.waited_ms / 1e3 / elapsed, 3)}
                         for name, w in sorted(self.switches.items())}}


def starved_floor_ms(rate_pps: float) -> float:
    """How long a switch may be kept from its CPU before it counts as fallen behind
    links at `rate_pps` (module constants)."""
    return max(STARVED_MIN_MS, STARVED_MIN_FRAMES * 1e3 / max(rate_pps, 1e-9))


def mark_starved(figures: dict | None, rate_pps: float) -> dict[str, float]:
    """{switch: longest starved ms} of the switches kept from their CPU for at least
    `starved_floor_ms`; also written into `figures` ("starved", "starved_floor_ms")."""
    if not figures:
        return {}
    floor = starved_floor_ms(rate_pps)
    starved = {name: w["longest_starved_ms"] for name, w in figures.get("switches", {}).items()
               if w.get("longest_starved_ms", 0) >= floor}
    figures["starved_floor_ms"] = round(floor, 1)
    figures["starved"] = starved
    return starved
