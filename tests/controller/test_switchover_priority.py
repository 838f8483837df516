"""A switchover write waits less behind a busy packet loop with the control-priority knobs.

One embedded switch running fabric.p4 in namespace swp-ns, flooded on port 1
by raw-socket senders (as fast as they go: the packet loop never sleeps, and
the senders take the machine's cores as the other switches of a large fabric
would). A client in the namespace times the agent's switchover, the
`port_liveness` Write (controller/liveness.py), over the agent's own
P4Runtime connection, once against a switch started with CPython's GIL
interval and normal scheduling (`--switch-interval-us 5000
--control-rt-priority 0 --control-nice 0`) and once with the defaults (0.5 ms,
control threads at SCHED_FIFO 10); the client runs at the agent's SCHED_FIFO
priority in the second case, as `controller.agent` does. No
Mininet: root, `ip netns` and the embedded compiler are needed (skipped
otherwise). Everything created is named swp-* and deleted by name.

The bounds are loose on purpose (a 2-core machine shared with other work):
the defaults must not be slower, and their median must stay within a
generous absolute bound; the numbers are printed for docs/controller.md.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import netns_lab as lab
import pytest

from controller.agent import main as agent_main
from controller.agent import set_realtime_priority

pytestmark = pytest.mark.timing  # asserts on elapsed time (conftest: the serial part)

ROOT = Path(__file__).resolve().parents[2]
NS = "swp-ns"
VETHS = [("swp-in0", NS, "swp-in1", NS), ("swp-out0", NS, "swp-out1", NS)]
GRPC = "127.0.0.1:50291"  # inside swp-ns
SENDERS = 2
WRITES = 40
MEDIAN_BOUND_MS = 40.0  # the 20-switch switchover before the change was 28-41 ms

# CPython's GIL interval, every thread at normal scheduling
BASELINE = ["--switch-interval-us", "5000", "--control-rt-priority", "0", "--control-nice", "0"]
TUNED: list[str] = []  # the switch's defaults: 0.5 ms, control threads SCHED_FIFO 10 (nice -10)

# A fabric DATA-sized frame to an unknown DLID: parsed, looked up and dropped at ingress,
# the per-frame work of a busy switch without a second port to keep up with.
FLOOD = r"""
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = bytes.fromhex("020000000002020000000001" "88b5") + bytes(range(60))
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    for _ in range(200):
        try:
            s.send(frame)
        except OSError:  # ENOBUFS: the switch is behind, as intended
            pass
"""

# In the namespace: push fabric.p4, connect as the agent does, then time WRITES switchovers
# (port 2 down, up, down...) spaced by 15 ms; print them as JSON.
CLIENT = r"""
import json, sys, time
from controller.agent import connect_agent, set_realtime_priority
from controller.liveness import Liveness
from controller.p4runtime_client import SwitchConnection
addr, p4info, bmv2_json, writes, rt = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
note = set_realtime_priority(rt)
sm = SwitchConnection("swp", addr, 1, (1, 0))
sm.set_pipeline(p4info, bmv2_json)
agent = connect_agent("swp", addr, 1, p4info)
liveness = Liveness(agent)
print("ready", flush=True)
sys.stdin.readline()  # the flood has started
time.sleep(0.5)
took = []
for i in range(writes):
    t0 = time.perf_counter()
    liveness.set(2, up=bool(i % 2))
    took.append((time.perf_counter() - t0) * 1e3)
    time.sleep(0.015)
print(json.dumps({"write_ms": took, "note": note}), flush=True)
agent.close()
sm.close()
"""


@pytest.fixture
def swp_namespace(tmp_path):
    p4info, bmv2_json = lab.compile_fabric(tmp_path / "build")
    lab.teardown((NS,), VETHS)  # leftovers of an interrupted run, by name
    lab.build((NS,), VETHS, {})
    try:
        yield p4info, bmv2_json
    finally:
        lab.teardown((NS,), VETHS)


def _in_ns(*cmd: str) -> list[str]:
    return ["ip", "netns", "exec", NS, *cmd]


def _time_writes(tmp_path: Path, label: str, switch_options: list[str], rt_priority: int,
                 p4info: Path, bmv2_json: Path) -> dict:
    """Start a switch with `switch_options`, flood it, time WRITES switchovers."""
    log = tmp_path / f"switch-{label}.log"
    procs: list[subprocess.Popen] = []
    try:
        with open(log, "w") as out:
            switch = subprocess.Popen(
                _in_ns(sys.executable, "-m", "p4switch.cli", "--device-id", "1",
                       "-i", "1@swp-in1", "-i", "2@swp-out1", "--cpu-port", "510",
                       "--grpc-server-addr", GRPC, "--no-p4", *switch_options),
                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        procs.append(switch)
        lab.wait_for(log, "running", switch)
        client = subprocess.Popen(
            _in_ns(sys.executable, "-c", CLIENT, GRPC, str(p4info), str(bmv2_json),
                   str(WRITES), str(rt_priority)),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, cwd=ROOT)
        procs.append(client)
        assert client.stdout.readline().strip() == "ready", client.stderr.read()[-800:]
        seconds = str(WRITES * 0.05 + 5)
        procs += [subprocess.Popen(_in_ns(sys.executable, "-c", FLOOD, "swp-in0", seconds),
                                   cwd=ROOT) for _ in range(SENDERS)]
        client.stdin.write("go\n")
        client.stdin.flush()
        out, err = client.communicate(timeout=120)
        assert client.returncode == 0, err[-800:]
        result = json.loads(out.strip().splitlines()[-1])
        result["switch_log"] = log.read_text()
        return result
    finally:
        for proc in reversed(procs):
            lab.stop(proc)


def _summary(write_ms: list[float]) -> str:
    q = statistics.quantiles(write_ms, n=10)
    return (f"median {statistics.median(write_ms):.2f} ms, p90 {q[-1]:.2f} ms, "
            f"max {max(write_ms):.2f} ms")


@pytest.mark.slow
def _direction_holds(before: list[float], after: list[float]) -> bool:
    """The defaults are not slower: mean and tail, with room for noise.

    The medians are a few ms apart and cross now and then on a shared machine;
    the mean and the tail (what a switchover waits behind a batch and other
    processes) are where the knobs show.
    """
    p90 = statistics.quantiles(after, n=10)[-1], statistics.quantiles(before, n=10)[-1]
    return (statistics.fmean(after) <= statistics.fmean(before) * 1.1 + 0.5
            and p90[0] <= p90[1] * 1.25 + 1.0)


def test_switchover_write_under_load_is_faster_with_control_priority(swp_namespace, tmp_path):
    p4info, bmv2_json = swp_namespace
    baseline = _time_writes(tmp_path, "baseline", BASELINE, 0, p4info, bmv2_json)
    tuned = _time_writes(tmp_path, "tuned", TUNED, 20, p4info, bmv2_json)
    before, after = baseline["write_ms"], tuned["write_ms"]
    assert len(before) == len(after) == WRITES
    # the switch ran with the knobs it was given (or said why not)
    assert "note:" not in baseline["switch_log"], baseline["switch_log"][-500:]
    rounds = [(before, after)]
    if not _direction_holds(before, after):
        # One pair measured while something else took the cores (the parallel part of
        # the suite runs beside this one): measure a second pair in the other order and
        # judge the two pairs pooled, so a burst of load on one side does not decide.
        tuned2 = _time_writes(tmp_path, "tuned-2", TUNED, 20, p4info, bmv2_json)
        baseline2 = _time_writes(tmp_path, "baseline-2", BASELINE, 0, p4info, bmv2_json)
        rounds.append((baseline2["write_ms"], tuned2["write_ms"]))
        before, after = before + baseline2["write_ms"], after + tuned2["write_ms"]
    print(f"\nswitchover write under load, {WRITES} writes x {len(rounds)} round(s): "
          f"GIL 5 ms, normal scheduling: {_summary(before)}; "
          f"GIL 0.5 ms, control SCHED_FIFO 10, agent 20: {_summary(after)}"
          + (f"; notes: {tuned['note']}" if tuned["note"] else ""))
    assert _direction_holds(before, after), rounds
    assert statistics.median(after) < MEDIAN_BOUND_MS, after


def test_agent_falls_back_to_normal_scheduling_with_a_note():
    assert set_realtime_priority(0) is None  # 0: nothing asked
    note = set_realtime_priority(1000)  # refused by any kernel (EINVAL), as EPERM would be
    assert note is not None and note.startswith("normal scheduling (SCHED_FIFO 1000:")


def test_agent_rt_priority_out_of_range_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        agent_main(["--switch", "s1", "--grpc", "127.0.0.1:1", "--device-id", "1",
                    "--p4info", "x", "--ports", "a=1", "--report", "/nonexistent",
                    "--rt-priority", "100"])
    assert exc.value.code == 2
    assert "--rt-priority must be in 0..99, got 100" in capsys.readouterr().err
