"""Microseconds per frame of the switch's fused data-plane function on fabric.p4,
called in a loop (no sockets, no epoll): the Python cost of one DATA frame.

    python bench/fused_loop.py [--frames 100000] [--repeat 7] [--compare-switch-rev REV]

The switch is set up as bench/switch_pps.py sets it up (fabric.p4 compiled by the
embedded compiler, the bench's DLID routed to port 2, LOSSY) and given the bench's
frame; the figure is the best of `--repeat` loops of `--frames` calls of
`Program.fused`. `--compare-switch-rev REV` measures the switch code (`p4switch/`)
as it was at git revision REV in a child process, alternately with today's, so
that both see the same machine. `main()` returns {"fused_us_per_frame"} (plus
"old_fused_us_per_frame" with `--compare-switch-rev`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:  # not ahead of a --switch-tree already put first
    sys.path.insert(0, REPO)


def _setup(program: dict):
    """A switch (ports never opened) running `program` with the bench's route."""
    from bench.switch_pps import DLID
    from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
    from p4switch.switch import Switch

    sw = Switch({1: "dptb0", 2: "dptb1"}, cpu_port=510)
    sw.load_program(program)
    table = next(t for t in sw.program.tables if t.endswith("dlid_route"))
    action = next(a for a in sw.program.tables[table].action_ids if a.endswith("forward"))
    sw.table_add(table, [MatchParam(MatchKind.EXACT, DLID)], ActionCall(action, (2,)))
    for port in (1, 2):
        sw.tm.port(port)  # idle, up and unlimited: the fast path's case
    settle = getattr(sw, "specialise_now", None)
    if settle is not None:  # configuration tables baked in, as a running switch has them
        settle()
    return sw


def loop_us(program: dict, frames: int, repeat: int) -> float:
    """Best microseconds per call of the fused function over `repeat` loops."""
    from bench.switch_pps import fabric_frame

    sw = _setup(program)
    fused = sw.program.fused
    if fused is None:
        raise SystemExit("fused_loop: this program has no fused function")
    tm_ports = sw.tm.ports
    frame = fabric_frame()
    r = fused(frame, 1, 1000, tm_ports)
    if r is None or r[0].__class__ is int or r[0].port != 2:
        raise SystemExit(f"fused_loop: the frame is not forwarded to port 2 ({r!r})")
    best = float("inf")
    calls = range(frames)
    for _ in range(repeat):
        t0 = time.perf_counter()
        for i in calls:
            fused(frame, 1, i, tm_ports)
        best = min(best, time.perf_counter() - t0)
    return best / frames * 1e6


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3,
                    help="with --compare-switch-rev: alternations of old and new")
    ap.add_argument("--compare-switch-rev", metavar="REV")
    ap.add_argument("--program", help=argparse.SUPPRESS)
    ap.add_argument("--switch-tree", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.switch_tree:  # a child measuring another revision's p4switch/
        sys.path.insert(0, args.switch_tree)
        with open(args.program) as f:
            print(loop_us(json.load(f), args.frames, args.repeat))
        return {}
    from bench.switch_pps import _json_file, fabric_program, switch_tree_at

    program = fabric_program()
    if program is None:
        raise SystemExit("fused_loop: fabric.p4 does not compile here")
    if not args.compare_switch_rev:
        us = loop_us(program, args.frames, args.repeat)
        print(f"fused function: {us:.3f} us per frame")
        return {"fused_us_per_frame": round(us, 3)}
    tree = switch_tree_at(args.compare_switch_rev)
    path = _json_file(program)
    new: list[float] = []
    old: list[float] = []
    try:
        for _ in range(args.rounds):
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--program", path, "--switch-tree",
                 tree, "--frames", str(args.frames), "--repeat", str(args.repeat)],
                capture_output=True, text=True, check=True, cwd=REPO)
            old.append(float(out.stdout.split()[-1]))
            new.append(loop_us(program, args.frames, args.repeat))
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        os.unlink(path)
    print(f"fused function: {min(new):.3f} us per frame now, {min(old):.3f} at "
          f"{args.compare_switch_rev} (best of {args.rounds} alternations; now "
          f"{', '.join(f'{x:.3f}' for x in new)}; then {', '.join(f'{x:.3f}' for x in old)})")
    return {"fused_us_per_frame": round(min(new), 3),
            "old_fused_us_per_frame": round(min(old), 3)}


if __name__ == "__main__":
    main()
