"""Fat-tree routing: d-mod-k up-port choice, one top switch per destination, deadlock-free.

For leveled Clos fabrics (k-ary fat trees, leaf-spine): leaves are the
switches with hosts, a switch's level is its distance from the nearest leaf,
and every switch-to-switch link must join adjacent levels (else
`RoutingError`: use updn). A packet climbs until it reaches a switch that has
the destination below it, then descends; so every path is up*/down* and the
routing is deadlock-free on VL 0 alone.

Up-port choice is d-mod-k (Zahavi's and OpenSM ftree's idea): the j-th host
in LID order leaves a level-r switch on up port `(j // W_r) % n_up`, where W_r
is the product of the up-port counts of the levels below. All switches of a
level agree, so a destination's routes converge on one top switch and the
down path from it is unique; on a k-ary fat tree every link then carries the
same number of destinations and every path is shortest. A switch with several
down ports towards the same leaf uses the lowest.

Built for size: the tables are bytearrays filled with slice assignments, the
up-port pattern of a switch is one periodic byte string, and what a switch has
below it is a short list of LID intervals (a pod's hosts are one interval), so
fattree:76 (110k hosts, 7,220 switches) is a few seconds.

Backups (`backups`): the next up port (cyclically) for every upward route, a
different top switch that has the same destination below it; downward routes
have no loop-free alternate in a fat tree and get none.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from controller.routing.graph import SwitchGraph
from controller.routing.tables import NO_PORT, ForwardingTable, Routes, RoutingError
from topologies.description import Fabric


@dataclass
class _Levels:
    level: list[int]
    up: list[list[int]]  # per switch: up ports, by port number
    divisor: list[int]  # per switch: W_r of its level
    below: list[list[tuple[int, int, int]]]  # per switch: (first LID, end LID, down port)
    # per switch: (up port, LID intervals the switch behind it cannot deliver); empty
    # on an intact fat tree, where every top switch reaches every host
    unreachable_up: list[list[tuple[int, list[tuple[int, int]]]]]
    host_runs: list[tuple[int, int, int]]  # (first ordinal, first LID, length): LID runs


class FatTree:
    deadlock_free = True  # by construction: the SM skips the cycle check
    name = "ftree"

    def route(self, fabric: Fabric, lids: dict[str, int]) -> Routes:
        graph = SwitchGraph.from_fabric(fabric, lids)
        return self._tables(graph, _levels(graph), shift=0)

    def backups(self, fabric: Fabric, lids: dict[str, int], routes: Routes) -> Routes:
        """Another up port for every upward route (none for downward ones)."""
        graph = SwitchGraph.from_fabric(fabric, lids)
        levels = _levels(graph)
        backup = self._tables(graph, levels, shift=1, down=False)
        for s, name in enumerate(graph.names):
            if len(levels.up[s]) < 2:
                backup[name] = ForwardingTable(graph.max_lid + 1)
        for host in graph.hosts:  # delivered on a host port: nothing to fall back on
            backup[graph.names[host.switch]].ports[host.lid] = NO_PORT
        return backup

    def _tables(self, graph: SwitchGraph, levels: _Levels, shift: int,
                down: bool = True) -> Routes:
        size = graph.max_lid + 1
        hosts = len(graph.hosts)
        tables: Routes = {}
        for s, name in enumerate(graph.names):
            lft = bytearray(b"\xff" * size)
            up = levels.up[s]
            if up:
                pattern = _up_pattern(up, levels.divisor[s], shift, hosts)
                for first_ordinal, first_lid, length in levels.host_runs:
                    lft[first_lid:first_lid + length] = \
                        pattern[first_ordinal:first_ordinal + length]
                _repair(lft, up, levels.unreachable_up[s])
            # downward routes overwrite (a backup table blanks them instead)
            for lo, hi, port in levels.below[s]:
                lft[lo:hi] = bytes([port if down else NO_PORT]) * (hi - lo)
            tables[name] = ForwardingTable(ports=lft)
        if down:
            for host in graph.hosts:
                tables[graph.names[host.switch]][host.lid] = host.port
        return tables


def _up_pattern(up: list[int], divisor: int, shift: int, length: int) -> bytes:
    """Byte j = up[(j // divisor + shift) % len(up)] for j < length."""
    n = len(up)
    block = b"".join(bytes([up[(i + shift) % n]]) * divisor for i in range(n))
    return (block * (length // len(block) + 1))[:length]


def _repair(lft: bytearray, up: list[int],
            unreachable: list[tuple[int, list[tuple[int, int]]]]) -> None:
    """On a degraded fat tree (failed links), move each destination whose d-mod-k up port
    leads to a switch that cannot deliver it to the next up port that can."""
    if not unreachable:
        return
    blocked = {port: intervals for port, intervals in unreachable}
    for port, intervals in unreachable:
        for lo, hi in intervals:
            for lid in range(lo, hi):
                if lft[lid] != port:
                    continue
                start = up.index(port)
                for step in range(1, len(up)):
                    other = up[(start + step) % len(up)]
                    if not any(a <= lid < b for a, b in blocked.get(other, ())):
                        lft[lid] = other
                        break
                else:
                    lft[lid] = NO_PORT


def _levels(graph: SwitchGraph) -> _Levels:
    leaves = sorted({h.switch for h in graph.hosts})
    level = graph.bfs(leaves)
    for s, lvl in enumerate(level):
        if lvl < 0:
            raise RoutingError(f"ftree: switch {graph.names[s]} is not connected to any "
                               f"switch with hosts")
    up: list[list[int]] = [[] for _ in graph.names]
    down: list[list[tuple[int, int]]] = [[] for _ in graph.names]  # (port, child)
    for s, links in enumerate(graph.links):
        for port, peer, _pp in links:
            if level[peer] == level[s]:
                raise RoutingError(
                    f"ftree: link {graph.names[s]}:{port} - {graph.names[peer]} joins two "
                    f"switches of level {level[s]}: not a fat tree (use --engine updn)")
            (up[s] if level[peer] > level[s] else down[s]).append((port, peer))
    top = max(level, default=0)
    # W_r: product of the (most common) up-port counts of the levels below r
    width = [Counter(len(up[s]) for s in range(graph.size) if level[s] == r).most_common(1)[0][0]
             for r in range(top + 1)]
    w_of_level = [1]
    for r in range(top):
        w_of_level.append(w_of_level[-1] * max(1, width[r]))

    # hosts as runs of consecutive LIDs (one run when host LIDs are dense)
    host_runs: list[tuple[int, int, int]] = []
    leaf_intervals: dict[int, list[tuple[int, int]]] = {leaf: [] for leaf in leaves}
    for j, host in enumerate(graph.hosts):
        last = host_runs[-1] if host_runs else None
        if last and last[1] + last[2] == host.lid:
            host_runs[-1] = (last[0], last[1], last[2] + 1)
        else:
            host_runs.append((j, host.lid, 1))
        intervals = leaf_intervals[host.switch]
        if intervals and intervals[-1][1] == host.lid:
            intervals[-1] = (intervals[-1][0], host.lid + 1)
        else:
            intervals.append((host.lid, host.lid + 1))

    # what every switch has below it, bottom-up: merged LID intervals
    reach: list[list[tuple[int, int]]] = [leaf_intervals.get(s, []) for s in range(graph.size)]
    below: list[list[tuple[int, int, int]]] = [[] for _ in graph.names]
    for r in range(1, top + 1):
        for s in (s for s in range(graph.size) if level[s] == r):
            # descending ports: the lowest port is written last and wins an overlap
            for port, child in sorted(down[s], reverse=True):
                below[s].extend((lo, hi, port) for lo, hi in reach[child])
            reach[s] = _merge(reach[s] + [(lo, hi) for lo, hi, _p in below[s]])
    # what every switch can deliver by going up first, top-down; what its up ports cannot
    everything = _merge([(lid, lid + n) for _j, lid, n in host_runs])
    full = list(reach)
    unreachable_up: list[list[tuple[int, list[tuple[int, int]]]]] = [[] for _ in graph.names]
    for r in range(top - 1, -1, -1):
        for s in (s for s in range(graph.size) if level[s] == r):
            for port, parent in sorted(up[s]):
                missing = _subtract(everything, full[parent])
                if missing:
                    unreachable_up[s].append((port, missing))
            full[s] = _merge(reach[s] + [iv for _p, parent in up[s] for iv in full[parent]])
    for s in range(graph.size):
        up[s] = sorted(p for p, _peer in up[s])
    return _Levels(level, up, [w_of_level[level[s]] for s in range(graph.size)], below,
                   unreachable_up, host_runs)


def _subtract(intervals: list[tuple[int, int]], minus: list[tuple[int, int]]
              ) -> list[tuple[int, int]]:
    """Merged intervals minus merged intervals."""
    out = []
    for lo, hi in intervals:
        for a, b in minus:
            if b <= lo or a >= hi:
                continue
            if a > lo:
                out.append((lo, a))
            lo = max(lo, b)
            if lo >= hi:
                break
        if lo < hi:
            out.append((lo, hi))
    return out


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged
