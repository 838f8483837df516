"""Switch targets: the embedded switch (everywhere) or real bmv2 + p4c (where installed).

Everything above the switch is target-agnostic; this module is the one place
that knows how to compile a program and start a switch process for each target.
"""

from __future__ import annotations

import enum
import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CPU_PORT = 510  # matches CPU_PORT in p4src/include/headers.p4


class TargetError(RuntimeError):
    """A target that is not available or a program that does not compile."""


class Target(enum.Enum):
    EMBEDDED = "embedded"
    BMV2 = "bmv2"


def bmv2_available() -> bool:
    return bool(shutil.which("simple_switch_grpc") and shutil.which("p4c"))


def resolve(requested: str) -> Target:
    """`auto` picks bmv2 when simple_switch_grpc and p4c are on PATH, else embedded."""
    if requested == "auto":
        return Target.BMV2 if bmv2_available() else Target.EMBEDDED
    try:
        target = Target(requested)
    except ValueError:
        raise TargetError(f"unknown target {requested!r}: use embedded, bmv2 or auto") from None
    if target is Target.BMV2 and not bmv2_available():
        raise TargetError(
            "target bmv2 needs simple_switch_grpc and p4c on PATH (the lab VM has them; "
            "see README 'Lab VM')"
        )
    return target


@dataclass(frozen=True)
class CompiledProgram:
    bmv2_json: Path
    p4info: Path


def compile_program(target: Target, source: Path, out_dir: Path) -> CompiledProgram:
    """Compile a v1model program with the target's compiler, cached by source hash."""
    source = Path(source).resolve()
    digest = _sources_digest(source)
    out = Path(out_dir) / target.value / f"{source.stem}-{digest[:12]}"
    program = CompiledProgram(out / f"{source.stem}.json", out / f"{source.stem}.p4info.txtpb")
    if program.bmv2_json.exists() and program.p4info.exists():
        return program
    out.mkdir(parents=True, exist_ok=True)
    if target is Target.EMBEDDED:
        cmd = [sys.executable, "-m", "p4compiler.cli"]
    else:
        cmd = ["p4c"]
    cmd += ["--target", "bmv2", "--arch", "v1model", "-o", str(out),
            "--p4runtime-files", str(program.p4info), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not program.bmv2_json.exists():
        raise TargetError(f"compiling {source.name} failed:\n{proc.stderr.strip() or proc.stdout.strip()}")
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
) -> list[str]:
    """The command line that starts one switch with no program (the SM pushes it).

    `trace_file` turns on bmv2-style per-packet trace lines (slow; for debugging)."""
    iface_args: list[str] = []
    for port, iface in sorted(ports.items()):
        iface_args += ["-i", f"{port}@{iface}"]
    if target is Target.EMBEDDED:
        cmd = [sys.executable, "-m", "p4switch.cli", "--device-id", str(device_id), *iface_args,
               "--cpu-port", str(CPU_PORT), "--grpc-server-addr", grpc_addr, "--no-p4"]
        if trace_file:
            cmd += ["--log-file", str(trace_file)]
        for port, spec in sorted((port_params or {}).items()):
            cmd += ["--port-params", f"{port}:{spec}"]
        return cmd
    cmd = ["simple_switch_grpc", "--device-id", str(device_id), *iface_args, "--no-p4"]
    if trace_file:
        cmd += ["--log-file", str(trace_file)]
    return cmd + ["--", "--grpc-server-addr", grpc_addr, "--cpu-port", str(CPU_PORT)]
