"""Switch targets: which compiler builds the program and which switch runs it.

The two are independent choices (`--compiler embedded|p4c`, `--switch
embedded|bmv2`): the embedded compiler's JSON runs on real bmv2 and p4c's on
the embedded switch. `--target` names the usual pairs:

* `embedded`: the embedded compiler and switch (everywhere; `make demo`);
* `bmv2`: real simple_switch_grpc, with real p4c where it is on PATH, else with
  the embedded compiler (said in the run's versions);
* `auto` (the default): `bmv2` only where the whole reference toolchain (p4c
  and simple_switch_grpc) is installed, as on the lab VM; `embedded` otherwise,
  so a machine with bmv2 alone (CI with ../shared/p4ref before p4c is added to
  it) keeps running the embedded pair unless bmv2 is asked for.

Everything above the switch is target-agnostic; this module is the one place
that knows how to compile a program and start a switch process for each choice.
"""

from __future__ import annotations

import enum
import hashlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


class TargetError(RuntimeError):
    """A target that is not available or a program that does not compile."""


class Compiler(enum.Enum):
    EMBEDDED = "embedded"
    P4C = "p4c"


class SwitchKind(enum.Enum):
    EMBEDDED = "embedded"
    BMV2 = "bmv2"


def p4c_available() -> bool:
    return shutil.which("p4c") is not None


def bmv2_switch_available() -> bool:
    return shutil.which("simple_switch_grpc") is not None


def bmv2_available() -> bool:
    """The whole reference toolchain: real p4c and simple_switch_grpc."""
    return p4c_available() and bmv2_switch_available()


@dataclass(frozen=True)
class Target:
    """A compiler and a switch, and why they were chosen."""

    compiler: Compiler
    switch: SwitchKind
    reason: str = ""

    @property
    def value(self) -> str:
        """The switch's name: what a run's metrics call its target."""
        return self.switch.value

    @property
    def label(self) -> str:
        return f"{self.switch.value} switch, {self.compiler.value} compiler"

    def versions(self) -> dict:
        """What the run's versions.json records about the toolchain."""
        out = {"target": self.value, "compiler": self.compiler.value,
               "switch": self.switch.value, "target_reason": self.reason,
               "link_rate_enforcement": LINK_RATE_ENFORCEMENT[self.switch],
               "held_frames": HELD_FRAMES[self.switch]}
        if self.compiler is Compiler.P4C:
            out["p4c"] = first_line(["p4c", "--version"])
        if self.switch is SwitchKind.BMV2:
            out["simple_switch_grpc"] = first_line(["simple_switch_grpc", "--version"])
        return out


# How each switch applies a link's rate (topologies/link_rates.py does it for bmv2).
LINK_RATE_ENFORCEMENT = {
    SwitchKind.EMBEDDED: "embedded switch port scheduler: rate_pps, delay_us and depth per port",
    SwitchKind.BMV2: "bmv2 egress queues: set_queue_rate/set_queue_depth over Thrift where "
                     "simple_switch_grpc has it, else tc htb on the switch's interfaces "
                     "(the run's metrics say which); no propagation delay",
}

# Where fabric.p4 keeps a frame that may not leave yet (PFC paused, no credit).
HELD_FRAMES = {
    SwitchKind.EMBEDDED: "recirculation, paced by the embedded switch (50 us-1 ms a pass)",
    SwitchKind.BMV2: "the hold loop: port 508 to port 509 of each switch through a relay "
                     "that gives held frames back in ticket order (topologies/hold_relay.py), "
                     "where the run makes one; "
                     "else recirculation (replaced by the run's own once its switches run)",
}

Target.EMBEDDED = Target(Compiler.EMBEDDED, SwitchKind.EMBEDDED, "embedded target")


def first_line(cmd: list[str]) -> str | None:
    """The first line a tool prints (its version), or None when it cannot run."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def _choice(enum_type, value: str | None, what: str):
    if value in (None, "", "auto"):
        return None
    try:
        return enum_type(value)
    except ValueError:
        names = ", ".join(m.value for m in enum_type)
        raise TargetError(f"unknown {what} {value!r}: use {names} or auto") from None


def resolve(requested: str = "auto", compiler: str | None = None,
            switch: str | None = None) -> Target:
    """The target for `--target requested [--compiler C] [--switch S]`."""
    if requested not in ("auto", "embedded", "bmv2"):
        raise TargetError(f"unknown target {requested!r}: use embedded, bmv2 or auto")
    want_compiler = _choice(Compiler, compiler, "compiler")
    want_switch = _choice(SwitchKind, switch, "switch")
    reasons = []
    if want_switch is not None:
        reasons.append(f"--switch {want_switch.value}")
    elif requested == "bmv2":
        want_switch = SwitchKind.BMV2
        reasons.append("--target bmv2")
    elif requested == "embedded":
        want_switch = SwitchKind.EMBEDDED
        reasons.append("--target embedded")
    elif bmv2_available():
        want_switch = SwitchKind.BMV2
        reasons.append("auto: p4c and simple_switch_grpc are on PATH")
    else:
        want_switch = SwitchKind.EMBEDDED
        reasons.append("auto: " + ("p4c is not on PATH" if bmv2_switch_available()
                                   else "simple_switch_grpc is not on PATH"))
    if want_compiler is not None:
        reasons.append(f"--compiler {want_compiler.value}")
    elif want_switch is SwitchKind.BMV2 and p4c_available():
        want_compiler = Compiler.P4C
        reasons.append("p4c is on PATH")
    else:
        want_compiler = Compiler.EMBEDDED
        if want_switch is SwitchKind.BMV2:
            reasons.append("embedded compiler: p4c is not on PATH")
    if want_switch is SwitchKind.BMV2 and not bmv2_switch_available():
        raise TargetError("the bmv2 switch needs simple_switch_grpc on PATH (the lab VM has "
                          "it; developers: ../shared/p4ref, see DEVELOPERS.md)")
    if want_compiler is Compiler.P4C and not p4c_available():
        raise TargetError("the p4c compiler needs p4c on PATH (the lab VM has it; see "
                          "DEVELOPERS.md)")
    return Target(want_compiler, want_switch, "; ".join(reasons))


@dataclass(frozen=True)
class CompiledProgram:
    bmv2_json: Path
    p4info: Path

    @property
    def constants(self):
        """The program's own constants (CPU port, clone session base, ...):
        controller/program_constants.py, read once per compiled file."""
        from controller.program_constants import from_files

        return from_files(self.p4info, self.bmv2_json)


def compile_program(target: Target, source: Path, out_dir: Path) -> CompiledProgram:
    """Compile a v1model program with the target's compiler, cached by source hash."""
    source = Path(source).resolve()
    digest = _sources_digest(source)
    out = Path(out_dir) / target.compiler.value / f"{source.stem}-{digest[:12]}"
    program = CompiledProgram(out / f"{source.stem}.json", out / f"{source.stem}.p4info.txtpb")
    if program.bmv2_json.exists() and program.p4info.exists():
        return program
    # Compiled beside the cache and renamed into place: a second run starting at the
    # same time never reads a half-written program.
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        if target.compiler is Compiler.EMBEDDED:
            cmd = [sys.executable, "-m", "p4compiler.cli"]
        else:
            cmd = ["p4c"]
        cmd += ["--target", "bmv2", "--arch", "v1model", "-o", str(work),
                "--p4runtime-files", str(work / program.p4info.name), str(source)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not (work / program.bmv2_json.name).exists():
            raise TargetError(f"compiling {source.name} with {target.compiler.value} failed:\n"
                              f"{proc.stderr.strip() or proc.stdout.strip()}")
        if out.is_dir() and not (program.bmv2_json.exists() and program.p4info.exists()):
            shutil.rmtree(out)  # a cache entry left half-written by an older version
        try:
            work.rename(out)
        except OSError:
            if not (program.bmv2_json.exists() and program.p4info.exists()):
                raise  # not a concurrent compile that got there first
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return program


def _sources_digest(source: Path) -> str:
    """Hash of the program and everything beside it (its includes)."""
    h = hashlib.sha256()
    for path in sorted(source.parent.rglob("*.p4")):
        h.update(path.relative_to(source.parent).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def switch_command(
    target: Target,
    device_id: int,
    ports: dict[int, str],
    grpc_addr: str,
    trace_file: Path | None = None,
    port_params: dict[int, str] | None = None,
    thrift_port: int | None = None,
    priority_queues: int = 1,
    *,
    cpu_port: int,
) -> list[str]:
    """The command line that starts one switch with no program (the SM pushes it).

    `trace_file` turns on bmv2-style per-packet trace lines (slow; for debugging).
    `port_params` are the embedded switch's per-port link properties; bmv2 gets its
    rates after start-up (topologies/link_rates.py), over `thrift_port` where it has
    Thrift. `priority_queues` > 1: that many egress queues per port (QoS: one per VL;
    strict priority on bmv2, VL arbitration on the embedded switch once the SM sets it).
    `cpu_port`: the program's (CompiledProgram.constants), where packet-in/out go."""
    iface_args: list[str] = []
    for port, iface in sorted(ports.items()):
        iface_args += ["-i", f"{port}@{iface}"]
    if target.switch is SwitchKind.EMBEDDED:
        cmd = [sys.executable, "-m", "p4switch.cli", "--device-id", str(device_id), *iface_args,
               "--cpu-port", str(cpu_port), "--grpc-server-addr", grpc_addr, "--no-p4"]
        if trace_file:
            cmd += ["--log-file", str(trace_file)]
        for port, spec in sorted((port_params or {}).items()):
            cmd += ["--port-params", f"{port}:{spec}"]
        if priority_queues > 1:
            cmd += ["--priority-queues", str(priority_queues)]
        return cmd
    cmd = ["simple_switch_grpc", "--device-id", str(device_id), *iface_args, "--no-p4"]
    if thrift_port is not None:
        cmd += ["--thrift-port", str(thrift_port)]
    if trace_file:
        cmd += ["--log-file", str(trace_file)]
    cmd += ["--", "--grpc-server-addr", grpc_addr, "--cpu-port", str(cpu_port)]
    if priority_queues > 1:
        cmd += ["--priority-queues", str(priority_queues)]
    return cmd
