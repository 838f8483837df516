"""LID assignment: deterministic, and stable across SM restarts through a guid -> LID file.

As OpenSM's guid2lid file: a node keeps its LID for as long as the file
lives, whatever else joins or leaves. Nodes not yet in the map are assigned in
a fixed order, hosts sorted by name first, then switches sorted by name, each
taking the lowest free unicast LID, so a fresh fabric gets h1.. = 1.. and the
switches right after the hosts. Unicast LIDs are 0x0001-0xBFFF (49,151); a
fabric that needs more is refused with `LidSpaceExhausted` before anything is
written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from topologies.description import Fabric, Node

LID_MIN = 0x0001
LID_MAX = 0xBFFF  # last unicast LID; 0xC000-0xFFFE are multicast, 0xFFFF permissive


class LidSpaceExhausted(Exception):
    """More endpoints than 16-bit unicast LIDs."""


class LidMapError(Exception):
    """The persistent guid -> LID file cannot be used."""


class LidMap:
    """guid -> LID, loaded from and saved to `path` (None: in memory only)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.by_guid: dict[int, int] = {}
        if self.path is not None and self.path.exists():
            self.by_guid = self._load(self.path)

    @staticmethod
    def _load(path: Path) -> dict[int, int]:
        try:
            raw = json.loads(path.read_text())
            by_guid = {int(guid, 16): int(lid) for guid, lid in raw["guid2lid"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LidMapError(f"{path}: not a guid2lid map: {exc}") from None
        lids = list(by_guid.values())
        bad = [lid for lid in lids if not LID_MIN <= lid <= LID_MAX]
        if bad or len(set(lids)) != len(lids):
            raise LidMapError(f"{path}: LIDs out of range or assigned twice: {sorted(bad)}")
        return by_guid

    def assign(self, fabric: Fabric) -> dict[str, int]:
        """Node name -> LID for every node of `fabric`; saves the map if it changed."""
        order = sorted(fabric.hosts, key=_name_key) + sorted(fabric.switches, key=_name_key)
        new = [n for n in order if n.guid not in self.by_guid]
        free = LID_MAX - LID_MIN + 1 - len(self.by_guid)
        if len(new) > free:
            raise LidSpaceExhausted(
                f"fabric {fabric.name} needs {len(new)} new LIDs but only {free} of the "
                f"{LID_MAX} unicast LIDs (0x0001-0xBFFF) are free")
        used = set(self.by_guid.values())
        candidate = LID_MIN
        for node in new:
            while candidate in used:
                candidate += 1
            self.by_guid[node.guid] = candidate
            used.add(candidate)
        if new:
            self.save()
        return {n.name: self.by_guid[n.guid] for n in order}

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        data = {"guid2lid": {f"{g:#018x}": lid for g, lid in sorted(self.by_guid.items(),
                                                                    key=lambda kv: kv[1])}}
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, self.path)


def extended_lids(fabric: Fabric) -> dict[str, int]:
    """LidMap's order (hosts by name, then switches) from LID 1 without the 16-bit cap:
    for routing studies of fabrics larger than one subnet (DESIGN.md's extended-address
    mode); not persistent."""
    order = sorted(fabric.hosts, key=_name_key) + sorted(fabric.switches, key=_name_key)
    return {node.name: lid for lid, node in enumerate(order, LID_MIN)}


def _name_key(node: Node) -> tuple:
    """h2 before h10: names compare by their text and number parts."""
    head = node.name.rstrip("0123456789")
    tail = node.name[len(head):]
    return (head, int(tail) if tail else -1, node.name)
