"""Where a switch's held frames wait, as the SM sees it: round the switch's hold loop
(real bmv2: port 508 to 509 through a relay or a paced veth pair, topologies/hold_loop.py) or by
recirculation.

A run that starts its switches makes their loops itself (topologies/network.py) and
tells the SM which (controller/bringup.py). `fabriclab-sm up` drives switches someone
else started: it can use a loop only where one is wired on this machine, so with
`--hold-loops PREFIX` it looks for each switch's pair by the names a run gives them
(`PREFIX<switch>-eth508` -> `-eth509`), turns the loop on where it finds one, and says
for every other switch that its held frames recirculate and why: on stdout, on stderr
as a warning, and in `--metadata` (`held_frames`). `fabriclab-sm status` reads back
what a switch does (`FabricIngress.hold_loop_config`'s default action).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from p4.v1 import p4runtime_pb2

from controller.flow_control import HOLD_LOOP_TABLE
from controller.p4info import decode
from topologies import hold_loop

# Where held frames wait when `up --fc` is not told to look for hold loops.
WHY_NOT_ASKED = ("no --hold-loops given: right for the embedded switch; on real bmv2 "
                 "recirculating held frames starves credits and resumes (docs/fabric.md, "
                 "\"The hold loop\")")


def plan(switches: list[str], prefix: str | None, constants) -> hold_loop.HoldLoops:
    """Each switch's held frames: with a `prefix` (`--hold-loops`) its loop where one is
    wired here, recirculation elsewhere, and why; without one, recirculation everywhere."""
    if prefix is None:
        return hold_loop.HoldLoops(without={name: WHY_NOT_ASKED for name in switches})
    return hold_loop.find(switches, prefix, hold_loop.program_ports(constants))


def report(hold: hold_loop.HoldLoops, *, asked: bool, flow_control: str,
           metadata: str | None) -> None:
    """One line per switch on stdout; a warning on stderr for each loop that was asked for
    (`asked`) and not found; the record in the `metadata` file when given."""
    for name, where in hold.held_frames().items():
        print(f"{name}: held frames: {where}")
    if asked:
        for name, why in sorted(hold.without.items()):
            print(f"fabriclab-sm: warning: {name} has no hold loop ({why}): its held frames "
                  "recirculate, which on real bmv2 starves credits", file=sys.stderr)
    if metadata:
        Path(metadata).write_text(json.dumps(
            {"flow_control": flow_control, "held_frames": hold.summary(),
             "held_frames_by_switch": hold.held_frames()}, indent=1) + "\n")


def read(obs) -> str | None:
    """What a switch does with held frames, read back: "hold loop" when
    hold_loop_config's default action is set_hold_loop(1), else "recirculation"
    (P4InfoError when its pipeline has no hold loop). `obs`: a SwitchConnection with
    the switch's P4Info."""
    info = obs.p4info
    query = p4runtime_pb2.TableEntry(table_id=info.table(HOLD_LOOP_TABLE).id,
                                     is_default_action=True)
    for entity in obs.read([p4runtime_pb2.Entity(table_entry=query)]):
        params = entity.table_entry.action.action.params
        on = decode(params[0].value) if params else 0
        return "hold loop" if on else hold_loop.RECIRCULATION
    return hold_loop.RECIRCULATION
