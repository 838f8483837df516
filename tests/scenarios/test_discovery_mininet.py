"""Discovery on a Mininet fabric finds exactly the cables that differ from the plan.

The intended fabric is leafspine:2,2,1; the one Mininet builds has leaf s1's two
uplink cables swapped (s1:2 goes to s4, s1:3 to s3) and the cable s2:3-s4:2
left out. The SM, which believes in the intended fabric, sends PROBEs as
packet-out of every intended port and reads the packet-ins fabric.p4 punts:

    h1 -- s1 ==(2,3 swapped)== s3, s4
    h2 -- s2 --(2)-- s3          s2:3 -x- s4:2 (missing)
"""

from __future__ import annotations

import dataclasses

import pytest

from controller.discovery import FoundLink, PortRef, compare, discover
from topologies.generators import build

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

SWAPPED = ["miswired s1:2: expected s3:1, found s4:1",
           "miswired s1:3: expected s4:1, found s3:1",
           "miswired s3:1: expected s1:2, found s1:3",
           "miswired s4:1: expected s1:3, found s1:2"]
MISSING = ["missing link s2:3 <-> s4:2: no probe out of s2:3 arrived",
           "missing link s4:2 <-> s2:3: no probe out of s4:2 arrived"]


def miswired(intended):
    """The intended fabric with s1's uplinks swapped and the s2-s4 cable left out."""
    links = []
    for link in intended.links:
        if {link.a, link.b} == {"s2", "s4"}:
            continue
        if link.a == "s1" and link.a_port in (2, 3):
            link = dataclasses.replace(link, a_port=5 - link.a_port)
        links.append(link)
    return dataclasses.replace(intended, name="leafspine:2,2,1 (miswired)", links=tuple(links))


@pytest.fixture(scope="module")
def discovered(module_mininet_fabric):
    """One discovery of the miswired fabric, which both tests read (neither changes it)."""
    intended = build("leafspine:2,2,1")
    _net, sm, _ledger = module_mininet_fabric.start(miswired(intended), intended)
    ports = {s.name: [p for p, _, _ in intended.neighbours(s.name)] for s in intended.switches}
    found = discover(sm.connections, {s.name: s.guid for s in intended.switches}, ports,
                     quiet=0.5)
    return intended, found


def test_discovery_names_exactly_the_swapped_and_the_missing_cables(discovered):
    intended, found = discovered
    problems = compare(intended, found, check_hosts=False)
    assert sorted(p for p in problems if p.startswith("miswired")) == SWAPPED
    assert sorted(p for p in problems if p.startswith("missing")) == MISSING
    assert sorted(problems) == sorted(SWAPPED + MISSING), "nothing else is reported"


def test_the_correct_cable_is_found_from_both_ends(discovered):
    _intended, found = discovered
    s2, s3 = PortRef("s2", 2), PortRef("s3", 2)
    assert FoundLink(s2, s3) in found.links and FoundLink(s3, s2) in found.links
    assert found.unknown_probes == 0
    # 3 cables between switches, each probed from both ends; host ports see no switch
    assert len(found.links) == 6
