"""Packets/s through the embedded switch, next to a bare Python raw-socket forwarder.

    sudo python bench/switch_pps.py [--seconds 2] [--rounds 2] [--mode lossy|pfc]
                                    [--compare-rev REV] [--compare-switch-rev REV]

Builds two namespaces (dpt-ba, dpt-bb) joined to the root namespace by veths
dptb0 and dptb1; a Python generator in dpt-ba sends minimum-size frames as fast
as it can; the device under test, in its own process in the root namespace,
forwards dptb0 -> dptb1. The rate is dptb1's tx_packets counter over the
measurement window (what the DUT managed to send). DUTs:

* bare: an epoll loop that moves frames from one AF_PACKET socket to the other
  (the fastest plain-Python forwarder with the switch's socket setup);
* switch: p4switch.Switch running p4src/fabric.p4 compiled by the embedded
  compiler (a fabric DATA frame routed by dlid_route), or a hand-written
  one-table forwarding program when the compiler is not available.

`--mode pfc` sets fabric.p4's flow-control mode to PFC (watermarks no single flow
reaches), so every frame also steps the receive-buffer accounting; the default is the
program's own (LOSSY). `--compare-rev REV` measures, in the same run, a third DUT: the
switch running fabric.p4 as it was at git revision REV (read with `git show` into a
temporary directory), to see what a change to the program costs.
`--compare-switch-rev REV` measures another third DUT: today's fabric.p4 on the switch
code (`p4switch/`) as it was at REV, to see what a change to the switch buys.

All are measured in the same run, alternately, best of `--rounds`, each DUT
pinned to one CPU and the generator to another. Because the machine is shared,
the packets per CPU-second each DUT used are reported too (less noisy than the
wall-clock rate). `main()` returns {"switch_pps", "bare_forwarder_pps",
"switch_ratio", "switch_pkts_per_cpu_s", "bare_pkts_per_cpu_s", "cpu_ratio",
"program", "mode"}, plus "compare_pps", "compare_ratio", "compare_pkts_per_cpu_s" and
"compare_rev" with `--compare-rev`, and "old_switch_pps", "old_switch_ratio",
"old_switch_pkts_per_cpu_s", "old_switch_cpu_ratio", "old_switch_rev" with
`--compare-switch-rev`.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:  # not ahead of a --switch-tree already put first
    sys.path.insert(0, REPO)

NS = {"dptb0": "dpt-ba", "dptb1": "dpt-bb"}
DLID = 0x0042

GENERATOR = r"""
import signal, socket, sys, time
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
f = bytes.fromhex(sys.argv[2])
end = time.time() + float(sys.argv[3])
send = s.send
while time.time() < end:
    for _ in range(2000):
        try:
            send(f)
        except OSError:
            pass
"""


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def teardown() -> None:
    for link, ns in NS.items():
        subprocess.run(["ip", "link", "del", link], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def setup() -> None:
    teardown()
    for link, ns in NS.items():
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", link, "type", "veth", "peer", "name", f"{link}h")
        sh("ip", "link", "set", f"{link}h", "netns", ns)
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{link}.disable_ipv6=1"],
                       capture_output=True)
        sh("ip", "link", "set", link, "up")
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                        f"net.ipv6.conf.{link}h.disable_ipv6=1"], capture_output=True)
        sh("ip", "netns", "exec", ns, "ip", "link", "set", f"{link}h", "up")
    time.sleep(0.3)


def tx_packets(link: str) -> int:
    with open(f"/sys/class/net/{link}/statistics/tx_packets") as f:
        return int(f.read())


# -- programs ----------------------------------------------------------------------------
def fabric_program(source: str = os.path.join(REPO, "p4src", "fabric.p4")) -> dict | None:
    """fabric.p4 (or `source`) compiled by the embedded compiler, or None if it cannot."""
    out = tempfile.mkdtemp(prefix="dpt-bench-")
    r = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target", "bmv2", "--arch",
                        "v1model", "-o", out, source],
                       capture_output=True, cwd=REPO)
    if r.returncode != 0:
        return None
    for name in os.listdir(out):
        if name.endswith(".json"):
            with open(os.path.join(out, name)) as f:
                return json.load(f)
    return None


def fabric_program_at(rev: str) -> dict:
    """fabric.p4 as it was at git revision `rev`, compiled by the embedded compiler."""
    src = tempfile.mkdtemp(prefix="dpt-bench-rev-")
    listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "p4src"],
                             capture_output=True, text=True, cwd=REPO)
    if listing.returncode != 0 or not listing.stdout.strip():
        raise SystemExit(f"switch_pps: --compare-rev {rev}: no p4src/ at that revision "
                         f"({listing.stderr.strip() or 'empty'})")
    for name in listing.stdout.split():
        text = subprocess.run(["git", "show", f"{rev}:{name}"], capture_output=True,
                              check=True, cwd=REPO).stdout
        path = os.path.join(src, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text)
    prog = fabric_program(os.path.join(src, "p4src", "fabric.p4"))
    if prog is None:
        raise SystemExit(f"switch_pps: fabric.p4 at {rev} does not compile")
    return prog


def switch_tree_at(rev: str) -> str:
    """A temporary directory holding `p4switch/` as it was at git revision `rev`: put
    first on sys.path, it replaces today's switch code (the rest comes from REPO)."""
    out = tempfile.mkdtemp(prefix="dpt-bench-switch-")
    archive = subprocess.run(["git", "archive", rev, "p4switch"], capture_output=True,
                             cwd=REPO)
    if archive.returncode != 0:
        raise SystemExit(f"switch_pps: --compare-switch-rev {rev}: "
                         f"{archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", out], input=archive.stdout, check=True)
    return out


def forwarding_program() -> dict:
    sys.path.insert(0, os.path.join(REPO, "tests", "switch"))
    from bmv2json import ethernet_program

    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["standard_metadata", "ingress_port"])],
            ["forward", "drop"], default=("drop", []))
    return p.build()


def fabric_frame() -> bytes:
    eth = bytes.fromhex("0000000000b2" "0000000000a1" "88b5")
    lrh = bytes([0x00, 1]) + DLID.to_bytes(2, "big") + (7).to_bytes(2, "big") + \
        (24).to_bytes(2, "big")
    bth = bytes([0]) + (5).to_bytes(3, "big") + (1).to_bytes(4, "big")
    app = bytes(24)
    f = eth + lrh + bth + app
    return f + bytes(max(0, 60 - len(f)))


# -- devices under test (run in a child process) -------------------------------------------
def run_bare() -> None:
    from p4switch.ports import frame_buffer_size, open_port

    signal.signal(signal.SIGTERM, lambda _s, _f: os._exit(0))
    a, b = open_port("dptb0"), open_port("dptb1")
    bufsize = frame_buffer_size("dptb0")
    ep = select.epoll()
    ep.register(a.fileno(), select.EPOLLIN)
    recv, send = a.recv, b.send
    print("ready", flush=True)
    while True:
        ep.poll()
        for _ in range(64):
            try:
                frame = recv(bufsize)
            except OSError:  # EAGAIN; ENETDOWN while the veths are being deleted
                break
            try:
                send(frame)
            except OSError:
                pass


# fabric.p4's set_fc_mode(mode, xoff, xon, headroom, credit_limit, credit_coalesce,
# hoq_lifetime_us, watchdog_detect_us, watchdog_restore_us): PFC with watermarks one
# unpaced flow never reaches, so nothing is paused and every frame is forwarded
PFC_CONFIG = (1, 100_000, 50_000, 100_000, 0, 1, 0, 0, 0)


def run_switch(program_path: str, fabric: bool, mode: str = "lossy") -> None:
    from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
    from p4switch.switch import Switch

    # SIGTERM is taken by sigwait below, in this thread only: blocked before the
    # data-plane thread starts, so that it is never delivered there (which would kill
    # the process in the middle of a send) and the switch stops cleanly.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    with open(program_path) as f:
        prog = json.load(f)
    sw = Switch({1: "dptb0", 2: "dptb1"}, cpu_port=510)
    sw.load_program(prog)
    if fabric:
        table = next(t for t in sw.program.tables if t.endswith("dlid_route"))
        action = next(a for a in sw.program.tables[table].action_ids if a.endswith("forward"))
        sw.table_add(table, [MatchParam(MatchKind.EXACT, DLID)], ActionCall(action, (2,)))
        if mode == "pfc":
            config = next(t for t in sw.program.tables if t.endswith("fc_config"))
            set_mode = next(a for a in sw.program.tables[config].action_ids
                            if a.endswith("set_fc_mode"))
            sw.table_set_default(config, ActionCall(set_mode, PFC_CONFIG))
    else:
        sw.table_add("fwd", [MatchParam(MatchKind.EXACT, 1)], ActionCall("forward", (2,)))
    settle = getattr(sw, "specialise_now", None)
    if settle is not None:  # the configuration tables baked in, as the switch has them
        settle()            # once they have been left alone (not within the window)
    sw.start()
    print("ready", flush=True)
    signal.sigwait({signal.SIGTERM})
    sw.stop()


def _json_file(program: dict) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(program, f)
        return f.name


# -- measurement ------------------------------------------------------------------------
def _pin(cpu: int):
    """preexec_fn pinning a child to one CPU, so that runs are comparable."""
    cpus = sorted(os.sched_getaffinity(0))

    def pin() -> None:
        if len(cpus) > 1:
            os.sched_setaffinity(0, {cpus[cpu % len(cpus)]})
    return pin


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(dut_cmd: list[str], frame: bytes, seconds: float) -> tuple[float, float]:
    """The DUT on one CPU, the generator on another: (packets/s the DUT sent,
    packets per CPU-second the DUT used)."""
    dut = subprocess.Popen(dut_cmd, stdout=subprocess.PIPE, text=True, cwd=REPO,
                           preexec_fn=_pin(1))
    gen = None
    try:
        if dut.stdout.readline().strip() != "ready":
            raise RuntimeError(f"DUT {dut_cmd} did not start")
        warmup = 0.3
        gen = subprocess.Popen(["ip", "netns", "exec", NS["dptb0"], sys.executable, "-c",
                                GENERATOR, "dptb0h", frame.hex(), str(seconds + warmup + 0.2)],
                               preexec_fn=_pin(0))
        time.sleep(warmup)
        c0, t0, u0 = tx_packets("dptb1"), time.monotonic(), cpu_seconds(dut.pid)
        time.sleep(seconds)
        c1, t1, u1 = tx_packets("dptb1"), time.monotonic(), cpu_seconds(dut.pid)
        gen.wait(timeout=seconds + 10)
        return (c1 - c0) / (t1 - t0), (c1 - c0) / max(u1 - u0, 1e-3)
    finally:
        for proc in (gen, dut):  # both gone before the veths are deleted
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="switch vs bare forwarder packet rate")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dut", choices=["bare", "switch"], help=argparse.SUPPRESS)
    ap.add_argument("--program", help=argparse.SUPPRESS)
    ap.add_argument("--fabric", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", choices=["lossy", "pfc"], default="lossy",
                    help="fabric.p4's flow-control mode (pfc: buffer accounting per frame)")
    ap.add_argument("--compare-rev", metavar="REV",
                    help="also measure fabric.p4 as at this git revision, in the same run")
    ap.add_argument("--compare-switch-rev", metavar="REV",
                    help="also measure the switch code (p4switch/) as at this git revision")
    ap.add_argument("--switch-tree", help=argparse.SUPPRESS)
    return ap


def main(argv: list[str] | None = None) -> dict:
    args = _parser().parse_args(argv)
    if args.switch_tree:
        sys.path.insert(0, args.switch_tree)
    if args.dut == "bare":
        run_bare()
        return {}
    if args.dut == "switch":
        run_switch(args.program, args.fabric, args.mode)
        return {}
    if os.geteuid() != 0:
        raise SystemExit("switch_pps: needs root (network namespaces, raw sockets)")
    prog = fabric_program()
    fabric = prog is not None
    frame = fabric_frame() if fabric else bytes.fromhex("0000000000b20000000000a188b5") + \
        bytes(46)
    if prog is None:
        prog = forwarding_program()
    if args.compare_rev and not fabric:
        raise SystemExit("switch_pps: --compare-rev needs fabric.p4 to compile here")
    compare = fabric_program_at(args.compare_rev) if args.compare_rev else None
    path = _json_file(prog)
    compare_path = _json_file(compare) if compare else None
    old_tree = switch_tree_at(args.compare_switch_rev) if args.compare_switch_rev else None
    me = [sys.executable, os.path.abspath(__file__)]
    switch_args = (["--fabric"] if fabric else []) + ["--mode", args.mode]
    setup()
    try:
        bare = switch = bare_cpu = switch_cpu = other = other_cpu = old = old_cpu = 0.0
        for _ in range(args.rounds):
            pps, per_cpu = measure(me + ["--dut", "bare"], frame, args.seconds)
            bare, bare_cpu = max(bare, pps), max(bare_cpu, per_cpu)
            cmd = me + ["--dut", "switch", "--program", path] + switch_args
            pps, per_cpu = measure(cmd, frame, args.seconds)
            switch, switch_cpu = max(switch, pps), max(switch_cpu, per_cpu)
            if compare_path:
                cmd = me + ["--dut", "switch", "--program", compare_path] + switch_args
                pps, per_cpu = measure(cmd, frame, args.seconds)
                other, other_cpu = max(other, pps), max(other_cpu, per_cpu)
            if old_tree:
                cmd = me + ["--dut", "switch", "--program", path, "--switch-tree",
                            old_tree] + switch_args
                pps, per_cpu = measure(cmd, frame, args.seconds)
                old, old_cpu = max(old, pps), max(old_cpu, per_cpu)
    finally:
        teardown()
        for p in (path, compare_path):
            if p:
                os.unlink(p)
        if old_tree:
            shutil.rmtree(old_tree, ignore_errors=True)
    result = {"switch_pps": round(switch), "bare_forwarder_pps": round(bare),
              "switch_ratio": round(switch / bare, 3) if bare else 0.0,
              "switch_pkts_per_cpu_s": round(switch_cpu),
              "bare_pkts_per_cpu_s": round(bare_cpu),
              "cpu_ratio": round(switch_cpu / bare_cpu, 3) if bare_cpu else 0.0,
              "program": "fabric.p4" if fabric else "hand-written forwarding JSON",
              "mode": args.mode}
    if compare_path:
        result.update(compare_rev=args.compare_rev, compare_pps=round(other),
                      compare_ratio=round(other / bare, 3) if bare else 0.0,
                      compare_pkts_per_cpu_s=round(other_cpu))
    if old_tree:
        result.update(old_switch_rev=args.compare_switch_rev, old_switch_pps=round(old),
                      old_switch_ratio=round(old / bare, 3) if bare else 0.0,
                      old_switch_pkts_per_cpu_s=round(old_cpu),
                      old_switch_cpu_ratio=round(old_cpu / bare_cpu, 3) if bare_cpu else 0.0)
    _print_result(result, args)
    return result


def _print_result(result: dict, args: argparse.Namespace) -> None:
    print(f"program            {result['program']}")
    print(f"switch_pps         {result['switch_pps']}")
    print(f"bare_forwarder_pps {result['bare_forwarder_pps']}")
    print(f"switch_ratio       {result['switch_ratio']}")
    print(f"per CPU-second     switch {result['switch_pkts_per_cpu_s']} bare "
          f"{result['bare_pkts_per_cpu_s']} ratio {result['cpu_ratio']}")
    if "compare_pps" in result:
        print(f"fabric.p4 at {args.compare_rev}: {result['compare_pps']} pps, ratio "
              f"{result['compare_ratio']}, per CPU-second {result['compare_pkts_per_cpu_s']} "
              f"(mode {args.mode})")
    if "old_switch_pps" in result:
        print(f"switch at {args.compare_switch_rev}: {result['old_switch_pps']} pps, ratio "
              f"{result['old_switch_ratio']}, per CPU-second "
              f"{result['old_switch_pkts_per_cpu_s']} ratio {result['old_switch_cpu_ratio']}")


if __name__ == "__main__":
    main()
