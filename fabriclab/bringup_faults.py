"""Faults a bring-up is tested with, built into the fabric as it is delivered: the SM
believes in the intended fabric and has to find them (fabriclab/plan.py parses them).

    miswire:LINK,LINK    the two cables' far ends swapped
    missing:LINK         the cable left out
    lossy:LINK@F         the cable loses a fraction F of its frames, both directions
                         (the embedded switch's port `loss` parameter: the frame leaves
                         the port's counters and never arrives: a link error)
    slow:LINK@F          the link runs at F times its configured rate
    old_program:SWITCH   the switch already runs an older version of the program
    unreachable:SWITCH   the switch's process is gone before the SM connects
"""

from __future__ import annotations

import dataclasses

from fabriclab.plan import FaultPlanError, PlannedFault
from topologies import link_names
from topologies.description import Fabric, Link, LinkParams
from topologies.network import port_params

OLD_VERSION = "old"  # the version an old_program switch's P4Info claims


def as_delivered(intended: Fabric, faults: tuple[PlannedFault, ...]) -> Fabric:
    """The fabric as cabled: `intended` with the cable faults applied."""
    links = list(intended.links)

    def index(link: Link) -> int:
        return next(i for i, lk in enumerate(links) if (lk.a, lk.a_port, lk.b, lk.b_port)
                    == (link.a, link.a_port, link.b, link.b_port))

    removed = []
    for f in faults:
        if f.kind == "miswire":
            i, j = index(f.link), index(f.peer)
            one, two = links[i], links[j]
            links[i] = dataclasses.replace(one, b=two.b, b_port=two.b_port)
            links[j] = dataclasses.replace(two, b=one.b, b_port=one.b_port)
            if links[i].a == links[i].b or links[j].a == links[j].b:
                raise FaultPlanError(f"fault miswire:{f.target}: swapping would wire a "
                                     "switch to itself")
        elif f.kind == "missing":
            removed.append(links[index(f.link)])
        elif f.kind == "slow":
            i = index(f.link)
            p = links[i].params
            links[i] = dataclasses.replace(links[i], params=LinkParams(
                max(1, round(p.rate_pps * f.value)), p.delay_us, p.buffer_pkts))
    kept = tuple(lk for lk in links if lk not in removed)
    return dataclasses.replace(intended, name=f"{intended.name} (as delivered)", links=kept)


def switch_port_params(delivered: Fabric, faults: tuple[PlannedFault, ...]
                       ) -> dict[str, dict[int, str]]:
    """The switches' port parameters for the delivered fabric, lossy cables included."""
    params = port_params(delivered)
    for f in faults:
        if f.kind == "lossy":
            for node, port in ((f.link.a, f.link.a_port), (f.link.b, f.link.b_port)):
                params[node][port] += f",loss={f.value:g}"
    return params


def old_program(intended):
    """The intended program (controller.acceptance.Program) as an older version: the
    same tables, a P4Info claiming version OLD_VERSION, hence another cookie."""
    from p4.config.v1 import p4info_pb2

    from controller.acceptance import program
    from controller.p4info import P4Info

    proto = p4info_pb2.P4Info()
    proto.CopyFrom(intended.p4info.proto)
    proto.pkg_info.version = OLD_VERSION
    return program(P4Info(proto), intended.bmv2_json)


def preload(faults: tuple[PlannedFault, ...], net, fabric: Fabric, intended) -> None:
    """Before the SM connects: old programs loaded, unreachable switches stopped."""
    from controller.p4runtime_client import SwitchConnection

    for f in faults:
        if f.kind == "old_program":
            old = old_program(intended)
            node = fabric.node(f.node)
            # an operator's earlier session: below the SM's election id, gone before it
            with SwitchConnection(f.node, net.grpc_addrs[f.node], node.device_id,
                                  (1, 0)) as conn:
                conn.set_pipeline(old.p4info, old.bmv2_json, cookie=old.id.cookie)
        elif f.kind == "unreachable":
            net.switch(f.node).kill()


def refused_on_target(faults: tuple[PlannedFault, ...], embedded: bool) -> str | None:
    """Why a fault cannot be built on this switch target, or None."""
    lossy = [f for f in faults if f.kind == "lossy"]
    if lossy and not embedded:
        return (f"fault lossy:{lossy[0].target} needs the embedded switch (a port's `loss` "
                "parameter; this kernel has no netem): use --target embedded")
    return None


def describe(f: PlannedFault) -> str:
    """One line for the report: what was injected where."""
    if f.kind == "miswire":
        return (f"miswire: far ends of {link_names.port_pair(f.link)} and "
                f"{link_names.port_pair(f.peer)} swapped")
    if f.kind == "missing":
        return f"missing: cable {link_names.port_pair(f.link)} left out"
    if f.kind == "lossy":
        return f"lossy: cable {link_names.port_pair(f.link)} loses {f.value:.1%} of its frames"
    if f.kind == "slow":
        return f"slow: link {link_names.port_pair(f.link)} runs at {f.value:.0%} of its rate"
    return f"{f.kind}: switch {f.node}"
