"""Differential testing of the two P4 toolchains (issue 17): every program/STF pair runs
through each available (compiler, switch) combination, over P4Runtime and veths, and the
frames that come out are compared with the STF expectations and between combinations.

    (a) p4c      + bmv2        (b) p4c      + embedded
    (c) embedded + bmv2        (d) embedded + embedded

A combination is available when its compiler and its switch are installed; p4c is
looked up on PATH, bmv2 as simple_switch_grpc. One switch process per combination serves
every program (a new pipeline per program). Interface and namespace names carry this
process's id, so two runs never touch each other's links.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parity"))
import stf_harness as sh  # noqa: E402

REPO = sh.REPO
HERE = Path(__file__).resolve().parent
PROGRAM_DIRS = (HERE / "programs", REPO / "tests" / "compiler" / "programs")
FABRIC = REPO / "p4src" / "fabric.p4"

COMPILERS = {"embedded": sh.TARGETS["embedded"].compiler, "p4c": ["p4c"]}
SWITCHES = {"embedded": (sh.TARGETS["embedded"].switch, 2.0, 0.1),
            "bmv2": (["simple_switch_grpc"], 3.0, 0.3)}
COMBINATIONS = {"a": ("p4c", "bmv2"), "b": ("p4c", "embedded"),
                "c": ("embedded", "bmv2"), "d": ("embedded", "embedded")}


def programs() -> list[Path]:
    """Every .p4 with an .stf beside it in the corpus directories, plus fabric.p4."""
    out = [p4 for d in PROGRAM_DIRS if d.is_dir() for p4 in sorted(d.glob("*.p4"))
           if p4.with_suffix(".stf").exists()]
    return [*out, FABRIC]


def stf_for(p4: Path) -> Path | None:
    """The program's STF script (fabric.p4's lives in tests/differential/programs)."""
    if p4 == FABRIC:
        return HERE / "programs" / "fabric.stf.in"
    return p4.with_suffix(".stf")


def missing_tool(combo: str) -> str | None:
    """Why the combination cannot run here, or None."""
    compiler, switch = COMBINATIONS[combo]
    if compiler == "p4c" and shutil.which("p4c") is None:
        return "p4c is not installed"
    if switch == "bmv2" and shutil.which("simple_switch_grpc") is None:
        return "simple_switch_grpc is not installed"
    return None


def compile_with(compiler: str, p4: Path, out: Path) -> tuple[Path, Path]:
    """(bmv2 JSON, text P4Info) from `compiler`, p4c's command line; RuntimeError if it
    refuses the program."""
    target = sh.Target(compiler, COMPILERS[compiler], [], 0, 0)
    return sh.compile_program(target, p4, out)


@dataclass
class Result:
    """What one program did on one combination: STF mismatches, per packet sent the
    frames captured per port (in order), and what each check_counter read."""

    errors: list[str] = field(default_factory=list)
    frames: list[dict[int, list[bytes]]] = field(default_factory=list)
    counters: list[tuple[int, int]] = field(default_factory=list)  # check_counter's reads


@dataclass
class Lab:
    """One switch process (of one kind) on veths `<tag><port>` <-> peers in a namespace."""

    switch: str
    ports: list[int]
    workdir: Path
    proc: subprocess.Popen | None = None
    conn: object = None
    socks: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        return f"d{os.getpid() % 100000}{self.switch[0]}"

    @property
    def netns(self) -> str:
        return f"{self.tag}-h"

    def start(self) -> None:
        from controller.p4runtime_client import SwitchConnection

        sh.setup_veths(self.ports, prefix=self.tag, netns=self.netns)
        self.socks = sh.open_peer_sockets(self.ports, prefix=self.tag, netns=self.netns)
        cmd, _wait, _quiet = SWITCHES[self.switch]
        if os.environ.get("FABRICLAB_DIFF_LOG"):  # the switches' packet logs, to debug
            cmd = [*cmd, "--log-console"]
        target = sh.Target(self.switch, [], cmd, 0, 0)
        grpc_port = sh.free_port()
        self.log = self.workdir / f"{self.switch}-switch.log"
        self.proc = sh.start_switch(target, self.ports, grpc_port, self.log, prefix=self.tag)
        try:
            self.conn = SwitchConnection(self.switch, f"127.0.0.1:{grpc_port}", device_id=1,
                                         timeout=15.0)
        except Exception:
            self.stop()
            raise RuntimeError(f"{self.switch} switch did not come up: "
                               f"{self.log.read_text()[-2000:]}") from None

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        for s in self.socks.values():
            s.close()
        self.socks = {}
        if self.proc is not None:
            sh.stop_switch(self.proc)
            self.proc = None
        sh.teardown_veths(self.ports, prefix=self.tag, netns=self.netns)

    def alive(self) -> str | None:
        """None while the switch process runs, else what its log ends with."""
        if self.proc is not None and self.proc.poll() is None:
            return None
        return f"exit code {self.proc.returncode if self.proc else '?'}: " + \
            (self.log.read_text()[-1500:] if self.log.exists() else "")

    def run(self, json_path: Path, info_path: Path, script, name: str) -> Result:
        """Push the pipeline, run the STF script, return what came out."""
        _cmd, wait_s, quiet_s = SWITCHES[self.switch]
        self.conn.set_pipeline(info_path, json_path)
        target = sh.Target(self.switch, [], [], wait_s, quiet_s)
        res = Result()
        try:
            res.errors = sh.run_stf(target, self.conn, self.socks, script, name,
                                    trace=res.frames, counters=res.counters,
                                    program=json.loads(json_path.read_text()))
        finally:
            sh.remove_replication(self.conn, script)
        return res


def _masked(script, frames: list[dict[int, list[bytes]]]) -> list[dict[int, list[str]]]:
    """The frames as hex, with the nibbles the script's expectations leave open (`*`:
    timestamps, checksums over them) blanked, matched per port in order."""
    patterns: dict[int, list[str]] = defaultdict(list)
    for c in script.commands:
        if type(c).__name__ == "Expect" and c.pattern is not None:
            patterns[c.port].append(c.pattern)
    seen: dict[int, int] = defaultdict(int)
    out = []
    for per_packet in frames:
        d = {}
        for port, fs in per_packet.items():
            hexes = []
            for f in fs:
                h = f.hex()
                pats = patterns[port]
                if seen[port] < len(pats) and len(pats[seen[port]]) == len(h):
                    h = "".join("*" if p == "*" else g for p, g in zip(pats[seen[port]], h))
                seen[port] += 1
                hexes.append(h)
            d[port] = hexes
        out.append(d)
    return out


def compare(results: dict[str, Result], script) -> list[str]:
    """Packet-for-packet differences between combinations: the same frames on the same
    ports after every packet sent (up to the STF's wildcard nibbles), and the same
    counter values at every check_counter."""
    diffs = []
    items = sorted((c, _masked(script, r.frames)) for c, r in results.items())
    for (ca, ra), (cb, rb) in zip(items, items[1:]):
        if len(ra) != len(rb):
            diffs.append(f"({ca}) sent {len(ra)} packets, ({cb}) {len(rb)}")
            continue
        for i, (fa, fb) in enumerate(zip(ra, rb)):
            for port in sorted(set(fa) | set(fb)):
                a, b = fa.get(port, []), fb.get(port, [])
                if a != b:
                    diffs.append(f"packet {i + 1}, port {port}: ({ca}) {a} vs ({cb}) {b}")
    counted = sorted((c, r.counters) for c, r in results.items())
    for (ca, ra), (cb, rb) in zip(counted, counted[1:]):
        diffs += [f"check_counter at line {la}: ({ca}) read {va}, ({cb}) {vb}"
                  for (la, va), (_lb, vb) in zip(ra, rb) if va != vb]
    return diffs


def all_ports(scripts) -> list[int]:
    return sorted({p for s in scripts for p in sh.stf_ports(s)})


def wait_until(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


__all__ = ["COMBINATIONS", "Lab", "Result", "compare", "compile_with", "missing_tool",
           "programs", "stf_for", "all_ports", "defaultdict"]
