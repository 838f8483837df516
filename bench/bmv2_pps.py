"""Packets/s of real bmv2 (simple_switch_grpc) beside the embedded switch, same program.

    sudo python -m bench.bmv2_pps [--seconds 2] [--rounds 2]

The rig of bench/switch_pps.py (a generator namespace sending minimum-size fabric
DATA frames as fast as it can into dptb0, the device under test forwarding them
to dptb1, the rate read from dptb1's tx_packets), with two devices under test
measured alternately in one run, best of `--rounds`:

* embedded: p4switch.Switch running p4src/fabric.p4 (the embedded compiler's JSON);
* bmv2: simple_switch_grpc with the same JSON and P4Info pushed over P4Runtime by
  the SM's own client, the same dlid_route entry installed.

Both are pinned to one CPU, the generator to another. Skipped (with the reason)
where simple_switch_grpc is not on PATH or without root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import switch_pps  # noqa: E402 - after the path setup, as switch_pps does

DEVICE_ID = 1


def compiled_fabric(out: Path) -> tuple[Path, Path]:
    """(bmv2 JSON that real bmv2 loads, P4Info) of fabric.p4 from the embedded compiler."""
    r = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target", "bmv2", "--arch",
                        "v1model", "-o", str(out), "--p4runtime-files",
                        str(out / "fabric.p4info.txtpb"), str(REPO / "p4src" / "fabric.p4")],
                       capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        raise RuntimeError(f"embedded compiler failed on fabric.p4: {r.stderr.strip()[:300]}")
    return out / "fabric.json", out / "fabric.p4info.txtpb"


def run_bmv2(program: str, p4info: str) -> None:
    """The bmv2 device under test: simple_switch_grpc, pipeline and one route over P4Runtime."""
    from controller.p4runtime_client import SwitchConnection
    from topologies.ports import free_tcp_port

    port = free_tcp_port()
    sw = subprocess.Popen(["simple_switch_grpc", "--device-id", str(DEVICE_ID), "-i",
                           "1@dptb0", "-i", "2@dptb1", "--no-p4", "--", "--grpc-server-addr",
                           f"127.0.0.1:{port}", "--cpu-port", "510"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # SIGTERM is taken by sigwait below: blocked only now, after simple_switch_grpc
    # started (a child inherits the signal mask, and with SIGTERM blocked it ignored
    # terminate() and outlived this driver: two were left after a bench run), before
    # the gRPC client's threads start and before "ready" lets the bench send it
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        conn = SwitchConnection("bench", f"127.0.0.1:{port}", DEVICE_ID)
        conn.set_pipeline(p4info, program)
        conn.write([conn.insert(conn.p4info.table_entry(
            "FabricIngress.dlid_route", {"hdr.lrh.dlid": switch_pps.DLID},
            "FabricIngress.forward", {"port": 2}))])
        print("ready", flush=True)
        signal.sigwait({signal.SIGTERM})
        conn.close()
    finally:
        sw.terminate()  # the process this function started, by its handle
        try:
            sw.wait(timeout=3)
        except subprocess.TimeoutExpired:
            sw.kill()
            sw.wait()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description="bmv2 vs embedded switch packet rate")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dut", choices=["bmv2"], help=argparse.SUPPRESS)
    ap.add_argument("--program", help=argparse.SUPPRESS)
    ap.add_argument("--p4info", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.dut == "bmv2":
        run_bmv2(args.program, args.p4info)
        return {}
    if shutil.which("simple_switch_grpc") is None:
        return {"bmv2_pps_skipped": "simple_switch_grpc is not on PATH (see DEVELOPERS.md)"}
    if os.geteuid() != 0:
        return {"bmv2_pps_skipped": "needs root (network namespaces, raw sockets)"}
    out = Path(tempfile.mkdtemp(prefix="dpt-bmv2-"))
    program, p4info = compiled_fabric(out)
    frame = switch_pps.fabric_frame()
    embedded_cmd = [sys.executable, str(REPO / "bench" / "switch_pps.py"), "--dut", "switch",
                    "--program", str(program), "--fabric"]
    bmv2_cmd = [sys.executable, "-m", "bench.bmv2_pps", "--dut", "bmv2",
                "--program", str(program), "--p4info", str(p4info)]
    switch_pps.setup()
    try:
        embedded = bmv2 = embedded_cpu = bmv2_cpu = 0.0
        for _ in range(args.rounds):
            pps, per_cpu = switch_pps.measure(embedded_cmd, frame, args.seconds)
            embedded, embedded_cpu = max(embedded, pps), max(embedded_cpu, per_cpu)
            pps, per_cpu = measure_bmv2(bmv2_cmd, frame, args.seconds)
            bmv2, bmv2_cpu = max(bmv2, pps), max(bmv2_cpu, per_cpu)
    finally:
        switch_pps.teardown()
        shutil.rmtree(out, ignore_errors=True)
    result = {"same_program_embedded_pps": round(embedded), "same_program_bmv2_pps": round(bmv2),
              "bmv2_over_embedded": round(bmv2 / embedded, 3) if embedded else 0.0,
              "same_program": "p4src/fabric.p4 (embedded compiler's JSON)"}
    for k, v in result.items():
        print(f"{k:<28} {v}")
    return result


def measure_bmv2(cmd: list[str], frame: bytes, seconds: float) -> tuple[float, float]:
    """switch_pps.measure; its per-CPU figure counts the driver, not simple_switch_grpc
    (its child), so only the packet rate is reported for bmv2."""
    return switch_pps.measure(cmd, frame, seconds)


if __name__ == "__main__":
    for key, value in main().items():
        if key.endswith("_skipped"):
            print(f"{key}: {value}")
