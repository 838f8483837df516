"""Drop reasons as p4src/include/headers.p4 declares them (`const bit<32> DROP_* = N;`).

The data plane counts drops in `FabricIngress.drop_counter` at index
port * DROP_REASONS + reason; this module names those indices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HEADERS_P4 = Path(__file__).resolve().parents[1] / "p4src" / "include" / "headers.p4"


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
    consts = {name: int(value, 0) for name, value in
              re.findall(r"const\s+bit<\d+>\s+DROP_(\w+)\s*=\s*(\w+)\s*;", headers_p4.read_text())}
    if "REASONS" not in consts:
        raise ValueError(f"{headers_p4}: no DROP_REASONS constant")
    per_port = consts.pop("REASONS")
    return DropReasons(per_port, {code: name.lower() for name, code in consts.items()})
