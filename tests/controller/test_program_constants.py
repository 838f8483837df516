"""The constants the control plane shares with the P4 program come from the compiled
program (controller/program_constants.py), so a program with other values is run with
its own: the switches' CPU port, the SM's clone sessions and notify group."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from controller import flow_control as fc
from controller import program_constants
from controller.p4info import P4Info
from controller.program_constants import ProgramConstantsError
from topologies.generators import build
from topologies.targets import Target, compile_program, switch_command

ROOT = Path(__file__).resolve().parents[2]
VARIANT = {"CPU_PORT": 320, "NUM_CLASSES": 8, "FC_SESSION_BASE": 200, "NOTIFY_GROUP": 2000}


def _variant(tmp_path: Path) -> Path:
    """fabric.p4 with other FabricConst values (a copy of p4src/)."""
    src = tmp_path / "p4src"
    shutil.copytree(ROOT / "p4src", src)
    headers = src / "include" / "headers.p4"
    text = headers.read_text()
    for name, value in VARIANT.items():
        text, n = re.subn(rf"(\b{name}\s*=\s*)\d+", rf"\g<1>{value}", text, count=1)
        assert n == 1, name
    headers.write_text(text)
    return src / "fabric.p4"


class _Conn:
    """What the SM's steps need of a connection: its P4Info, and the writes kept."""

    def __init__(self, name: str, p4info: P4Info) -> None:
        self.name, self.p4info, self.writes = name, p4info, []

    def write(self, updates) -> None:
        self.writes.extend(updates)

    def set_pipeline(self, *_args) -> None:
        pass


def test_fabric_p4_carries_its_constants_and_they_match_its_source():
    program = compile_program(Target.EMBEDDED, ROOT / "p4src" / "fabric.p4", ROOT / "build" / "p4")
    got = program.constants
    assert got.source == "bmv2 JSON"
    assert (got.cpu_port, got.num_classes, got.fc_session_base, got.notify_group) == \
        (510, 8, 100, 1000)
    fallback = program_constants.fabric_p4()
    assert (fallback.cpu_port, fallback.fc_session_base) == (got.cpu_port, got.fc_session_base)
    assert "carries no FabricConst" in fallback.source


def test_a_program_with_other_values_is_run_with_its_own(tmp_path):
    from controller.sm import SubnetManager

    program = compile_program(Target.EMBEDDED, _variant(tmp_path), tmp_path / "build")
    constants = program.constants
    assert (constants.cpu_port, constants.fc_session_base, constants.notify_group) == \
        (320, 200, 2000)
    # the program's parser takes packet-outs from that port (its const derives from the enum)
    parser = program.bmv2_json.read_text()
    assert '"0x0140"' in parser and '"0x01fe"' not in parser

    # the runner starts every switch with it
    cmd = switch_command(Target.EMBEDDED, 1, {1: "s1-eth1"}, "127.0.0.1:1",
                         cpu_port=constants.cpu_port)
    assert cmd[cmd.index("--cpu-port") + 1] == "320"

    # the SM reads them when it pushes the program, and uses them
    fabric = build("line:2")
    info = P4Info.from_file(program.p4info)
    conns = {s.name: _Conn(s.name, info) for s in fabric.switches}
    sm = SubnetManager(fabric, conns)
    sm.push_pipeline(program.p4info, program.bmv2_json)
    assert sm.constants == constants
    writes = fc.updates(conns["s1"], fc.FlowControlParams(mode=fc.Mode.PFC), {1: 50, 2: 50},
                        constants=sm.constants)
    sessions = [u.entity.packet_replication_engine_entry.clone_session_entry.session_id
                for u in writes if u.entity.HasField("packet_replication_engine_entry")]
    assert sessions == [201, 202]
    sm._write_notify_group("s1", conns["s1"], [2])
    group = conns["s1"].writes[-1].entity.packet_replication_engine_entry.multicast_group_entry
    assert group.multicast_group_id == 2000


def test_the_p4info_serves_when_the_bmv2_json_does_not_carry_them():
    info = P4Info.from_file(ROOT / "tests" / "controller" / "data" / "fabric.p4info.txtpb").proto
    enum = info.type_info.serializable_enums[program_constants.ENUM]
    enum.underlying_type.bitwidth = 32
    for name, value in VARIANT.items():
        member = enum.members.add()
        member.name, member.value = name, value.to_bytes(4, "big")
    got = program_constants.of_program({"enums": []}, info)
    assert (got.cpu_port, got.fc_session_base, got.source) == (320, 200, "P4Info")


def test_a_program_missing_an_entry_is_refused_by_name():
    program = {"enums": [{"name": "FabricConst", "entries": [["CPU_PORT", 64]]}]}
    with pytest.raises(ProgramConstantsError, match="has no NUM_CLASSES, FC_SESSION_BASE"):
        program_constants.of_program(program)
