"""Drop reasons: the names of the drop counter's cells, from the program the SM pushed.

The data plane counts drops in `FabricIngress.drop_counter` at index
port * DROP_REASONS + reason; this module names those indices. The block size per
port comes from the program's P4Info (controller/program_layout.py). The names come
from the program's bmv2 JSON, where it declares them as a serializable enum
`enum bit<32> DropReason { NO_ROUTE = 0, ... }` (compilers list serializable enums
under "enums"), as fabric.p4 does (p4src/include/headers.p4); a program that does not
falls back to fabric.p4's, read once from headers.p4.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HEADERS_P4 = Path(__file__).resolve().parents[1] / "p4src" / "include" / "headers.p4"
DROP_REASON_ENUM = "DropReason"


@dataclass(frozen=True)
class DropReasons:
    per_port: int  # DROP_REASONS: size of one port's block of the counter
    names: dict[int, str]  # reason code -> lower-case name ("no_route", "tail", ...)

    def split(self, index: int) -> tuple[int, str]:
        """(port, reason name) of a drop counter index."""
        port, reason = divmod(index, self.per_port)
        return port, self.names.get(reason, f"reason{reason}")


@cache
def load(headers_p4: Path = HEADERS_P4) -> DropReasons:
    """fabric.p4's reasons, read from its source: for a switch whose program is not known
    (the SM names the pushed program's own, `of_program`)."""
    text = headers_p4.read_text()
    block = re.search(r"enum\s+bit<\d+>\s+" + DROP_REASON_ENUM + r"\s*\{([^}]*)\}", text)
    size = re.search(r"const\s+bit<\d+>\s+DROP_REASONS\s*=\s*(\w+)\s*;", text)
    if block is None or size is None:
        raise ValueError(f"{headers_p4}: no {DROP_REASON_ENUM} enum or DROP_REASONS constant")
    body = re.sub(r"/\*.*?\*/", "", block.group(1), flags=re.S)
    names = {int(value, 0): name.lower()
             for name, value in re.findall(r"(\w+)\s*=\s*(\w+)", body)}
    return DropReasons(int(size.group(1), 0), names)


def of_program(bmv2_json: Mapping, per_port: int | None = None) -> DropReasons:
    """The reasons of a compiled program: names from its DropReason enum (else headers.p4),
    `per_port` from its P4Info layout (else headers.p4's DROP_REASONS)."""
    enum = next((e for e in bmv2_json.get("enums", ()) if e.get("name") == DROP_REASON_ENUM),
                None)
    fallback = load() if enum is None or per_port is None else None
    names = ({int(v): str(n).lower() for n, v in enum["entries"]} if enum is not None
             else fallback.names)
    block = per_port if per_port is not None else fallback.per_port
    if names and max(names) >= block:
        raise ValueError(f"drop reason {names[max(names)]!r} ({max(names)}) does not fit the "
                         f"program's {block} drop counter cells per port")
    return DropReasons(block, names)
