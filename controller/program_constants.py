"""The constants a P4 program and its control plane must agree on, read from the program.

fabric.p4 declares them once, as a serializable enum (p4src/include/headers.p4):

    enum bit<32> FabricConst { CPU_PORT = 510, NUM_CLASSES = 8, FC_SESSION_BASE = 100,
                               NOTIFY_GROUP = 1000, HOLD_OUT_PORT = 508,
                               HOLD_IN_PORT = 509, HOLD_SESSION = 99 }

and derives its own `const`s from it. A serializable enum survives compilation where a
`const` does not: the embedded compiler lists every serializable enum in the bmv2 JSON
("enums"), and a P4Info lists those the control plane's types use
(type_info.serializable_enums). So the runner starts the switches with the program's
CPU port, and the SM creates the program's clone sessions and multicast group, for
whatever program a run compiled, not for a copy of fabric.p4's numbers.

A compiled program that carries no FabricConst at all (real p4c drops a serializable
enum the control plane never sees from both artifacts) falls back to fabric.p4's,
read from headers.p4's enum, and says so in `source`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HEADERS_P4 = Path(__file__).resolve().parents[1] / "p4src" / "include" / "headers.p4"
ENUM = "FabricConst"
# enum entry -> ProgramConstants field
ENTRIES = {"CPU_PORT": "cpu_port", "NUM_CLASSES": "num_classes",
           "FC_SESSION_BASE": "fc_session_base", "NOTIFY_GROUP": "notify_group"}
# Entries a program may lack: without them it has no hold loop (p4src/include/hold_loop.p4).
OPTIONAL = {"HOLD_OUT_PORT": "hold_out_port", "HOLD_IN_PORT": "hold_in_port",
            "HOLD_SESSION": "hold_session"}


class ProgramConstantsError(ValueError):
    """A program whose FabricConst lacks an entry the control plane needs."""


@dataclass(frozen=True)
class ProgramConstants:
    cpu_port: int  # the switch's --cpu-port: packet-in/out
    num_classes: int  # VLs / PFC priorities per port (the arrays' port * NUM_CLASSES + class)
    fc_session_base: int  # clone session fc_session_base + p sends flow-control frames out of p
    notify_group: int  # multicast group of a switch's switch-to-switch ports (notify.p4)
    source: str = ""  # where they were read: "bmv2 JSON", "P4Info" or the headers.p4 fallback
    # The hold loop (hold_loop.p4): held frames leave by hold_out_port through clone
    # session hold_session and come back in by hold_in_port; None: the program has none.
    hold_out_port: int | None = None
    hold_in_port: int | None = None
    hold_session: int | None = None

    @property
    def has_hold_loop(self) -> bool:
        return None not in (self.hold_out_port, self.hold_in_port, self.hold_session)


def _build(values: Mapping[str, int], source: str) -> ProgramConstants:
    missing = [name for name in ENTRIES if name not in values]
    if missing:
        raise ProgramConstantsError(
            f"{source}: the program's {ENUM} enum has no {', '.join(missing)} "
            f"(it needs {', '.join(ENTRIES)})")
    optional = {field: int(values[name]) for name, field in OPTIONAL.items() if name in values}
    return ProgramConstants(**{field: int(values[name]) for name, field in ENTRIES.items()},
                            source=source, **optional)


@cache
def fabric_p4(headers_p4: Path = HEADERS_P4) -> ProgramConstants:
    """fabric.p4's constants, read from its source: the fallback for a compiled program
    that carries none."""
    text = headers_p4.read_text()
    block = re.search(r"enum\s+bit<\d+>\s+" + ENUM + r"\s*\{([^}]*)\}", text)
    if block is None:
        raise ProgramConstantsError(f"{headers_p4}: no {ENUM} enum")
    body = re.sub(r"/\*.*?\*/", "", block.group(1), flags=re.S)
    values = {name: int(value, 0) for name, value in re.findall(r"(\w+)\s*=\s*(\w+)", body)}
    return _build(values, f"{headers_p4.name} (the compiled program carries no {ENUM})")


def of_program(bmv2_json: Mapping, p4info=None) -> ProgramConstants:
    """The constants of a compiled program: its bmv2 JSON's FabricConst, else its P4Info's
    (`p4info`: a p4.config.v1 P4Info message or controller.p4info.P4Info), else fabric.p4's."""
    for enum in bmv2_json.get("enums", ()):
        if enum.get("name") == ENUM:
            return _build({str(n): int(v) for n, v in enum["entries"]}, "bmv2 JSON")
    proto = getattr(p4info, "proto", p4info)
    if proto is not None and ENUM in proto.type_info.serializable_enums:
        members = proto.type_info.serializable_enums[ENUM].members
        return _build({m.name: int.from_bytes(m.value, "big") for m in members}, "P4Info")
    return fabric_p4()


def from_files(p4info_path: Path | str | None, bmv2_json_path: Path | str) -> ProgramConstants:
    """of_program for a compiled program's files, read once per file version."""
    paths = [Path(bmv2_json_path)] + ([Path(p4info_path)] if p4info_path else [])
    try:
        stamps = tuple((str(p), p.stat().st_mtime_ns) for p in paths)
    except OSError as exc:
        raise ProgramConstantsError(f"cannot read the compiled program: {exc}") from None
    return _from_files(stamps)


@cache
def _from_files(stamps: tuple[tuple[str, int], ...]) -> ProgramConstants:
    json_path = Path(stamps[0][0])
    try:
        bmv2 = json.loads(json_path.read_text())
    except (OSError, ValueError) as exc:
        raise ProgramConstantsError(f"{json_path}: not a bmv2 JSON ({exc})") from None
    p4info = None
    if len(stamps) > 1:
        from controller.p4info import P4Info

        p4info = P4Info.from_file(stamps[1][0])
    return of_program(bmv2, p4info)
