"""The stress test's plan: which host sends to which, round by round, so that every link
is loaded in both directions at its configured rate and no two flows of a round share
a link direction (so none is another's bottleneck).

A directed link is named by its sending end, a `Channel` (node, port): frames leave
`node` by `port`. A flow from host `src` to host `dst` crosses the channels of its
route as the SM installed it: the host's own port 0, then at every switch the port
`routes[switch][lid(dst)]`. Each host sends one flow and receives one flow per round
at most (its NIC's port is a channel too, and the receive side is the switch's).

The planner is greedy: each round takes, among the flows that still cover a channel
nobody loaded yet, the one covering the most, as long as it shares no channel with the
round so far. Channels no route crosses (an unused spare cable) are `uncovered`: the
report names them instead of calling them tested.
"""

from __future__ import annotations

from dataclasses import dataclass

from topologies.description import Fabric, NodeKind

Channel = tuple[str, int]  # (sending node, its port): one direction of one link


class RouteError(ValueError):
    """A route that does not lead to its destination (a loop or a dead end)."""


@dataclass(frozen=True)
class Flow:
    src: str
    dst: str
    path: tuple[Channel, ...]  # from src's port 0 to the port facing dst


@dataclass(frozen=True)
class StressPlan:
    rounds: tuple[tuple[Flow, ...], ...]
    uncovered: tuple[Channel, ...]  # directed links no route crosses

    @property
    def flows(self) -> int:
        return sum(len(r) for r in self.rounds)


def channels(fabric: Fabric) -> list[Channel]:
    """Both directions of every link, as sending ends."""
    out = []
    for link in fabric.links:
        out += [(link.a, link.a_port), (link.b, link.b_port)]
    return sorted(out)


def path(fabric: Fabric, routes: dict[str, dict[int, int]], lids: dict[str, int],
         src: str, dst: str) -> tuple[Channel, ...]:
    """The channels a frame from `src` to `dst` crosses on the installed routes."""
    hops: list[Channel] = [(src, 0)]
    here, port = fabric.host_switch(src)
    seen = set()
    while True:
        if here in seen:
            raise RouteError(f"route {src} -> {dst} loops at {here}")
        seen.add(here)
        out = routes.get(here, {}).get(lids[dst])
        if out is None:
            raise RouteError(f"{here} has no route to {dst} (LID {lids[dst]})")
        hops.append((here, out))
        peer = {p: (n, pp) for p, n, pp in fabric.neighbours(here)}.get(out)
        if peer is None:
            raise RouteError(f"{here} routes {dst} out of port {out}, which has no link")
        here, port = peer
        if fabric.node(here).kind is NodeKind.HOST:
            if here != dst:
                raise RouteError(f"route {src} -> {dst} ends at host {here}")
            return tuple(hops)


def plan_rounds(fabric: Fabric, routes: dict[str, dict[int, int]],
                lids: dict[str, int]) -> StressPlan:
    """Rounds of pairwise flows covering every channel a route can load (module doc)."""
    hosts = sorted(h.name for h in fabric.hosts)
    candidates = [Flow(s, d, path(fabric, routes, lids, s, d))
                  for s in hosts for d in hosts if s != d]
    wanted = set(channels(fabric))
    reachable = set().union(*(f.path for f in candidates)) if candidates else set()
    todo = wanted & reachable
    rounds: list[tuple[Flow, ...]] = []
    while todo:
        used: set[Channel] = set()
        senders, receivers = set(), set()
        chosen: list[Flow] = []
        for flow in sorted(candidates, key=lambda f: (-len(todo.intersection(f.path)),
                                                       f.src, f.dst)):
            gain = todo.intersection(flow.path)
            if not gain or used.intersection(flow.path) or flow.src in senders \
                    or flow.dst in receivers:
                continue
            chosen.append(flow)
            used.update(flow.path)
            senders.add(flow.src)
            receivers.add(flow.dst)
        # gains were counted against `todo` before the round: take them off now
        for flow in chosen:
            todo.difference_update(flow.path)
        rounds.append(tuple(chosen))
    return StressPlan(tuple(rounds), tuple(sorted(wanted - reachable)))
