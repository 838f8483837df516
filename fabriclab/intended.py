"""The intended fabric of a bring-up from a net-file (topologies/netfile.py), matched to
the fabric that runs by node GUID: the SM reaches switches by the running fabric's
names, the acceptance report speaks of the net-file's.

A switch or host of the file whose GUID the running fabric does not have is refused
with the file, line and name: the SM cannot check a switch it cannot reach.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from topologies.description import Fabric, LinkParams
from topologies.generators import TopologyError
from topologies.netfile import load_netfile


class IntendedFabricError(TopologyError):
    """An intended-fabric file that does not match the fabric that runs."""


def _line_of(text: str, label: str) -> int | None:
    pattern = re.compile(r'^\s*(Switch|Hca|Ca|Rt)\s+\d+\s+"' + re.escape(label) + '"')
    for lineno, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return lineno
    return None


def intended_from_file(path: str, running: Fabric, params: LinkParams) -> Fabric:
    """The net-file's fabric with its nodes renamed to the running fabric's (by GUID)."""
    wanted = load_netfile(path, params)
    text = Path(path).read_text()
    by_guid = {n.guid: n for n in running.nodes}
    names, unknown = {}, []
    for node in wanted.nodes:
        match = by_guid.get(node.guid)
        if match is None or match.kind is not node.kind:
            line = _line_of(text, node.label)
            unknown.append(f"{path}:{line or '?'}: {node.kind.value} {node.label!r} "
                           f"(guid {node.guid:#x}) is not in the running fabric "
                           f"{running.name}")
        else:
            names[node.name] = match
    if unknown:
        raise IntendedFabricError("; ".join(unknown))
    nodes = tuple(dataclasses.replace(names[n.name], label=n.label or names[n.name].label)
                  for n in wanted.nodes)
    links = tuple(dataclasses.replace(lk, a=names[lk.a].name, b=names[lk.b].name)
                  for lk in wanted.links)
    return Fabric(f"{wanted.name} (intended)", nodes, links)
