"""Fault notification upstream: is it safe with these routes and backups, and what does it save?

With notification (p4src/include/notify.p4) a switch may leave on its primary or
its backup port for a destination, whichever a down port or a neighbour's
NOTIFY left it; a switch with neither drops and notifies its upstream, which
moves to its own backup, and so on. Any mix of primary and backup choices can
therefore be in use at once, during a failure and while the SM's global
reroute is installed.

`notification_check` verifies two things on any engine's output:

* deadlock and loop freedom: the channel dependency graph (CDG) of every
  destination with *both* choices of every switch in it (every switch a
  sender's frames can reach that way), per VL, has no cycle. A forwarding loop
  over such choices would be a cycle of this graph, so an acyclic one rules out
  both. Only then does the SM turn notification on.
* what it saves: every single switch-to-switch link failure, every destination,
  notifications run to their fixpoint (every switch that can send to a dead end
  is told): how many (failure, source switch, destination) cases that lost
  their path still deliver with local backups alone (`rerouted_locally`), and
  with notification (`rerouted_notified`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from controller.routing.diagnostics import (
    Channel,
    DestinationTree,
    describe_cycle,
    destination_trees,
    find_cycle,
)
from controller.routing.graph import SwitchGraph

NO_PORT = 0xFF


@dataclass(frozen=True)
class NotificationCheck:
    deadlock_free: bool  # no CDG cycle with every primary and backup choice, on any VL
    cycle: str  # one cycle, named, when there is one
    affected: int = 0  # (link failure, source switch, destination) cases that lost their path
    rerouted_locally: int = 0  # ... delivered by the backups of the failed link's ends alone
    rerouted_notified: int = 0  # ... delivered once notifications reached their fixpoint
    dropped: list[str] = field(default_factory=list)  # first cases nothing saves, described

    @property
    def coverage(self) -> float | None:
        return self.rerouted_notified / self.affected if self.affected else None


def _backup_lookup(backups: Mapping[str, Mapping[int, int]], graph: SwitchGraph):
    out = []
    for name in graph.names:
        table = backups.get(name, {})
        out.append(getattr(table, "ports", None) or dict(table))
    return out


def _backup(table, lid: int) -> int:
    if isinstance(table, dict):
        port = table.get(lid)
        return -1 if port is None else port
    port = table[lid] if lid < len(table) else NO_PORT
    return -1 if port == NO_PORT else port


def _choices(tree: DestinationTree, backup_of, s: int) -> list[int]:
    primary = tree.egress[s]
    choices = [primary] if primary >= 0 else []
    backup = _backup(backup_of[s], tree.lid)
    if backup >= 0 and backup != primary:
        choices.append(backup)
    return choices


def notification_cdg(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]],
                     backups: Mapping[str, Mapping[int, int]],
                     vl_of: Mapping[int, int] | None = None
                     ) -> dict[int, set[tuple[Channel, Channel]]]:
    """Per VL, the CDG with every switch's primary and backup choice towards each
    destination, from every switch a sender's frames can reach over such choices."""
    peers = [{p: v for p, v, _pp in links} for links in graph.links]
    backup_of = _backup_lookup(backups, graph)
    senders = {h.switch for h in graph.hosts}
    per_vl: dict[int, set[tuple[Channel, Channel]]] = {}
    for tree in destination_trees(graph, routes):
        edges = per_vl.setdefault(vl_of.get(tree.lid, 0) if vl_of else 0, set())
        choices = [_choices(tree, backup_of, s) for s in range(graph.size)]
        active = set(senders)
        stack = list(senders)
        while stack:
            s = stack.pop()
            if s == tree.switch:
                continue
            for port in choices[s]:
                n = peers[s].get(port, -1)
                if n >= 0 and n not in active:
                    active.add(n)
                    stack.append(n)
        for s in active:
            if s == tree.switch:
                continue
            for port in choices[s]:
                n = peers[s].get(port, -1)
                if n < 0 or n == tree.switch:
                    continue  # a host port, or the destination's switch (delivers)
                for nport in choices[n]:
                    if peers[n].get(nport, -1) >= 0:
                        edges.add(((s, port), (n, nport)))
    return per_vl


def notification_check(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]],
                       backups: Mapping[str, Mapping[int, int]],
                       vl_of: Mapping[int, int] | None = None,
                       coverage: bool = True) -> NotificationCheck:
    """The CDG check, and (with `coverage`) every single link failure played out."""
    for vl, edges in sorted(notification_cdg(graph, routes, backups, vl_of).items()):
        cycle = find_cycle(edges)
        if cycle:
            return NotificationCheck(False, f"VL {vl}: {describe_cycle(graph, cycle)}")
    if not coverage:
        return NotificationCheck(True, "")
    return _coverage(graph, routes, backups)


def _coverage(graph: SwitchGraph, routes, backups) -> NotificationCheck:
    peers = [{p: v for p, v, _pp in links} for links in graph.links]
    backup_of = _backup_lookup(backups, graph)
    links = sorted({(min((s, p), (v, pp)), max((s, p), (v, pp)))
                    for s, ls in enumerate(graph.links) for p, v, pp in ls})
    sources = sorted({h.switch for h in graph.hosts})
    affected = local = notified = 0
    dropped: list[str] = []
    for tree in destination_trees(graph, routes):
        choices = [_choices(tree, backup_of, s) for s in range(graph.size)]
        for (u, pu), (v, pv) in links:
            dead = {(u, pu), (v, pv)}
            lost = [s for s in sources if s != tree.switch and tree.reaches[s]
                    and _uses(tree, s, dead)]
            if not lost:
                continue
            pruned: list[set[int]] = [set() for _ in range(graph.size)]
            local_ok = {s for s in lost if _deliver(tree, choices, peers, dead, pruned, s)}
            _notify_fixpoint(tree, choices, peers, dead, pruned)
            for s in lost:
                affected += 1
                local += s in local_ok
                if _deliver(tree, choices, peers, dead, pruned, s):
                    notified += 1
                elif len(dropped) < 10:
                    dropped.append(f"link {graph.names[u]}:{pu}-{graph.names[v]}:{pv} down: "
                                   f"{graph.names[s]} -> lid {tree.lid} undeliverable")
    return NotificationCheck(True, "", affected, local, notified, dropped)


def _uses(tree: DestinationTree, s: int, dead: set[tuple[int, int]]) -> bool:
    """The primary path from s crosses a dead channel."""
    x = s
    while x >= 0 and x != tree.switch:
        if (x, tree.egress[x]) in dead:
            return True
        x = tree.next_switch[x]
    return False


def _effective(choices, dead, pruned, s: int) -> int:
    for port in choices[s]:
        if (s, port) not in dead and port not in pruned[s]:
            return port
    return -1


def _notify_fixpoint(tree, choices, peers, dead, pruned) -> None:
    """Every switch left without a port tells every neighbour that forwards to it."""
    changed = True
    while changed:
        changed = False
        stuck = {s for s in range(len(choices))
                 if s != tree.switch and _effective(choices, dead, pruned, s) < 0}
        for s in range(len(choices)):
            if s == tree.switch:
                continue
            port = _effective(choices, dead, pruned, s)
            if port >= 0 and peers[s].get(port, -1) in stuck:
                pruned[s].add(port)
                changed = True


def _deliver(tree, choices, peers, dead, pruned, s: int) -> bool:
    seen = set()
    x = s
    while x != tree.switch:
        if x in seen:
            return False
        seen.add(x)
        port = _effective(choices, dead, pruned, x)
        x = peers[x].get(port, -1) if port >= 0 else -1
        if x < 0:
            return False
    return True
