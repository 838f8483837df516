"""fabriclab-stf (p4switch.stf_runner): p4c's STF dialect and checking rules, run on
the embedded switch in-process, and on real simple_switch where it is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.stf_bmv2 import _counter_answer, find_tool
from p4switch.stf_runner import main
from tests.v1model_program import v1model_program

BASIC_P4 = v1model_program(
    h_fields="bit<8> a; bit<16> t;",
    ingress_locals="""\
action fwd(bit<9> port) { sm.egress_spec = port; }
action set_a(bit<8> v, bit<9> port) { hdr.h.a = v; sm.egress_spec = port; }
action drop() { mark_to_drop(sm); }
table by_a {
    key = { hdr.h.a : exact; }
    actions = { fwd; set_a; drop; }
    default_action = drop();
}
table by_t {
    key = { hdr.h.t : ternary; }
    actions = { fwd; NoAction; }
    default_action = NoAction();
}""",
    ingress="by_a.apply(); by_t.apply();")

BASIC_STF = """\
# p4c's STF dialect: short names, a priority after the table, nibble wildcards
add by_a h.a:0x01 fwd(port:1)
add by_a hdr.h.a:2 I.set_a(v:0x22, port:2)
add by_t 10 h.t:0x11** fwd(port:3)
add by_t 20 h.t:0x1122 fwd(port:4)

packet 0 01 0000
expect 1 01 0000 $
packet 0 02 0000 abcd
expect 2 22 00
packet 0 01 1133
expect 3 01 1133
packet 0 01 1122
expect 4 01 1122 $
packet 0 09 0000
"""

EXTRAS_P4 = v1model_program(
    h_fields="bit<8> a; bit<8> b;",
    ingress_locals="""\
counter(8, CounterType.packets) hits;
register<bit<8>>(4) r;
action flood() { sm.mcast_grp = 1; }
action copy(bit<9> port) { sm.egress_spec = port; clone(CloneType.I2E, 5); }
action from_reg(bit<9> port) { r.read(hdr.h.b, 3); sm.egress_spec = port; }
table t {
    key = { hdr.h.a : exact; }
    actions = { flood; copy; from_reg; NoAction; }
    default_action = NoAction();
}""",
    ingress="hits.count((bit<32>)hdr.h.a); t.apply();",
    egress="""
        if (sm.egress_rid != 0) { hdr.h.b = (bit<8>)sm.egress_rid; }
        if (sm.instance_type == 1) { hdr.h.b = 0xcc; }
    """)

EXTRAS_STF = """\
mc_mgrp_create 1
mc_node_create 7 2
mc_node_create 8 3 4
mc_node_associate 1 0
mc_node_associate 1 1
mirroring_add 5 6
register_write r 3 0x55
add t h.a:1 flood()
add t h.a:2 copy(port:1)
add t h.a:3 from_reg(port:1)

packet 0 01 00
expect 2 01 07
expect 3 01 08
expect 4 01 08
packet 0 02 00
expect 1 02 00
expect 6 02 cc
packet 0 03 00
expect 1 03 55
check_counter hits(1) packets == 1
check_counter hits(2) packets == 1
check_counter hits(4)
"""


def _run(tmp_path: Path, p4: str, script: str, *extra: str) -> int:
    (tmp_path / "prog.p4").write_text(p4)
    (tmp_path / "test.stf").write_text(script)
    return main([str(tmp_path / "prog.p4"), str(tmp_path / "test.stf"), *extra])


def test_p4c_dialect_script_passes(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, BASIC_STF) == 0
    assert capsys.readouterr().out.startswith("PASS")


def test_multicast_mirroring_registers_and_counters(tmp_path, capsys):
    assert _run(tmp_path, EXTRAS_P4, EXTRAS_STF) == 0, capsys.readouterr().out


def test_a_counter_check_that_does_not_hold_fails(tmp_path, capsys):
    script = EXTRAS_STF.replace("hits(1) packets == 1", "hits(1) packets == 2")
    assert _run(tmp_path, EXTRAS_P4, script) == 1
    assert "counter I.hits[1]" in capsys.readouterr().out


def test_a_wrong_byte_names_the_port_line_and_bytes(tmp_path, capsys):
    script = BASIC_STF.replace("expect 3 01 1133", "expect 3 01 1134")
    assert _run(tmp_path, BASIC_P4, script) == 1
    out = capsys.readouterr().out
    assert "port 3: expected 1 packet(s), got 1" in out
    assert "test.stf:12" in out and "expected 011134" in out and "got      011133" in out
    assert "first difference at byte 2" in out


def test_an_unexpected_packet_fails(tmp_path, capsys):
    script = BASIC_STF.replace("packet 0 09 0000", "packet 0 01 0000")  # -> port 1 again
    assert _run(tmp_path, BASIC_P4, script) == 1
    assert "packet 2 unexpected: 010000" in capsys.readouterr().out


def test_a_missing_packet_fails(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, BASIC_STF + "expect 4 09 0000\n") == 1
    assert "missing: expected 090000" in capsys.readouterr().out


def test_expected_data_is_a_prefix_unless_it_ends_with_a_dollar(tmp_path, capsys):
    longer = BASIC_STF.replace("expect 1 01 0000 $", "expect 1 01 00")
    assert _run(tmp_path, BASIC_P4, longer) == 0
    strict = BASIC_STF.replace("expect 2 22 00", "expect 2 22 0000 $")
    assert _run(tmp_path, BASIC_P4, strict) == 1
    assert "expected exactly 3 ($)" in capsys.readouterr().out


def test_expect_without_data_accepts_any_number_of_packets(tmp_path):
    script = BASIC_STF.replace("expect 1 01 0000 $", "expect 1") + "packet 0 01 0000\n"
    assert _run(tmp_path, BASIC_P4, script) == 0


def test_ports_the_script_does_not_mention_are_not_checked(tmp_path):
    # as with bmv2's pcap ports: a packet sent to port 9 leaves no interface
    script = BASIC_STF + "add by_a h.a:0x0a fwd(port:9)\npacket 0 0a 0000\n"
    assert _run(tmp_path, BASIC_P4, script) == 0


def test_expect_none_checks_at_that_point(tmp_path, capsys):
    script = "add by_a h.a:1 fwd(port:1)\npacket 0 01 0000\nexpect 1 none\nexpect 1 01\n"
    assert _run(tmp_path, BASIC_P4, script) == 1
    assert "expected nothing more out of port 1" in capsys.readouterr().out


@pytest.mark.parametrize("p4, script, message", [
    ("control X( {", "packet 0 00", "prog.p4:1:12: error: syntax error"),
    (BASIC_P4, "add nosuch h.a:1 fwd(port:1)", "test.stf:1: the program has no table 'nosuch'"),
    (BASIC_P4, "add by_a zz:1 fwd(port:1)", "has no key field 'zz'"),
    (BASIC_P4, "add by_a h.a:1 fwd()", "needs parameter 'port'"),
    (BASIC_P4, "add by_a h.a:1 fwd(port:1, x:2)", "has no parameter 'x'"),
    (BASIC_P4, "packet 0 0g", "test.stf:1: bad character 'g'"),
    (BASIC_P4, "mc_node_associate 1 0", "no multicast group 1"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, p4, script, message):
    assert _run(tmp_path, p4, script) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


# a program that multicasts to group h.k, writing the replica's rid into h.v
MCAST_P4 = v1model_program(h_fields="bit<8> k; bit<8> v;",
                           ingress="sm.mcast_grp = (bit<16>)hdr.h.k;",
                           egress="hdr.h.v = (bit<8>)sm.egress_rid;")


@pytest.mark.parametrize("script, message", [
    # simple_switch_CLI: "Found duplicate port number '1'", and the node is not made
    ("mc_mgrp_create 3\nmc_node_create 5 1 1 2\n", "lists port 1 twice"),
    # bmv2's PRE: a node belongs to one group at most ("Invalid PRE operation")
    ("mc_mgrp_create 3\nmc_node_create 6 2\nmc_node_associate 3 0\n"
     "mc_node_associate 3 0\n", "multicast node 0 is already in group 3"),
])
def test_multicast_nodes_are_refused_as_bmv2_refuses_them(tmp_path, capsys, script, message):
    assert _run(tmp_path, MCAST_P4, script + "packet 0 03 00\n") == 1
    assert message in capsys.readouterr().out


def test_a_missing_file_is_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "none.p4"), str(tmp_path / "none.stf")]) == 2
    assert "no such file" in capsys.readouterr().err


needs_bmv2 = pytest.mark.skipif(find_tool("simple_switch") is None
                                or find_tool("simple_switch_CLI") is None,
                                reason="real bmv2 simple_switch is not installed")


@needs_bmv2
def test_bmv2_runs_the_same_script(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, BASIC_STF, "--switch", "bmv2", "--timeout", "30") == 0
    assert capsys.readouterr().out.startswith("PASS")


@needs_bmv2
def test_bmv2_mismatch_is_reported(tmp_path, capsys):
    script = BASIC_STF.replace("expect 4 01 1122 $", "expect 4 01 1123 $")
    assert _run(tmp_path, BASIC_P4, script, "--switch", "bmv2", "--timeout", "30") == 1
    assert "port 4: expected 1 packet(s), got 1" in capsys.readouterr().out


@needs_bmv2
def test_bmv2_runs_multicast_mirroring_registers_and_counter_checks(tmp_path, capsys):
    assert _run(tmp_path, EXTRAS_P4, EXTRAS_STF, "--switch", "bmv2", "--timeout", "30") == 0, \
        capsys.readouterr().out
    script = EXTRAS_STF.replace("hits(1) packets == 1", "hits(1) packets == 2")
    assert _run(tmp_path, EXTRAS_P4, script, "--switch", "bmv2", "--timeout", "30") == 1
    assert "counter I.hits[1]" in capsys.readouterr().out


def test_both_forms_of_a_bmv2_counter_answer_are_read():
    assert _counter_answer("RuntimeCmd: I.hits[4]= (59 bytes, 1 packets)\n") == (1, 59)
    assert _counter_answer("BmCounterValue(packets=3, bytes=180)") == (3, 180)
    assert _counter_answer("RuntimeCmd: Invalid counter operation (INVALID_INDEX)") is None


@needs_bmv2
def test_bmv2_takes_more_packets_than_a_fifo_holds(tmp_path, capsys):
    # ~100 KB on port 0 while port 2 (expect-any) sends nothing: bmv2 reads port
    # files in timestamp order, so the writes must not block the run
    lines = ["add by_a h.a:0x01 fwd(port:1)", "expect 2"]
    for _ in range(800):
        lines += ["packet 0 01 0000 " + "ab" * 120, "expect 1 01 0000"]
    script = "\n".join(lines) + "\n"
    assert _run(tmp_path, BASIC_P4, script, "--switch", "bmv2", "--timeout", "60") == 0, \
        capsys.readouterr().out[:500]


def test_priorities_count_from_zero_and_the_larger_wins(tmp_path):
    script = BASIC_STF.replace("add by_t 10 ", "add by_t 0 ").replace("add by_t 20 ", "add by_t 1 ")
    assert _run(tmp_path, BASIC_P4, script) == 0
    swapped = BASIC_STF.replace("add by_t 10 ", "add by_t 1 ").replace("add by_t 20 ", "add by_t 0 ")
    assert _run(tmp_path, BASIC_P4, swapped) == 1  # 0x1122 now goes to port 3


def test_log_shows_the_embedded_switch_trace(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, BASIC_STF, "--log") == 0
    err = capsys.readouterr().err
    assert "Applying table 'I.by_a'" in err


# p4testgen's STFs: every name quoted, a table named by its path from the package
# instance (V1Switch's `ig` parameter), a priority before the keys
P4TESTGEN_STF = """\
add "main.ig.by_a" "hdr.h.a":0x01 "fwd"("port":0x1)
add "main.ig.by_t" 1 "hdr.h.t":0x11** "I.fwd"("port":3)
setdefault "main.ig.by_a" "set_a"("v":0x66,"port":5)
packet 0 01 1100
expect 3 01 1100 $
packet 0 07 0000
expect 5 66 0000 $
"""


def test_p4testgen_scripts_with_quoted_names_and_package_paths_pass(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, P4TESTGEN_STF) == 0, capsys.readouterr().out


@needs_bmv2
def test_bmv2_runs_a_p4testgen_script(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, P4TESTGEN_STF, "--switch", "bmv2", "--timeout", "30") \
        == 0, capsys.readouterr().out


KEYS_P4 = """\
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> k; }
header b_t { bit<8> v; }
struct H { a_t a; b_t b; }
struct M {}
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.a); transition select(h.a.k) { 1: more; 0x3c: more;
                                                              default: accept; } }
    state more { pk.extract(h.b); transition accept; }
}
control V(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action set_v(bit<8> v) { h.b.v = v; }
    table t { key = { h.b.isValid() : exact; } actions = { fwd; NoAction; }
              default_action = NoAction(); }
    table u { key = { h.a.k & 0xf0 : exact; } actions = { set_v; NoAction; }
              default_action = NoAction(); }
    apply { t.apply(); u.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control C(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("key", ['"h.b.isValid()"', '"h.b.isValid<>()"', "h.b.$valid$",
                                 "h.b.valid", "h.b.isValid()"])
def test_a_validity_key_in_every_spelling(tmp_path, capsys, key):
    """p4testgen writes `h.isValid()` (sometimes `isValid<>()`) with parentheses inside
    the entry, before the action's own."""
    script = f'add "I.t" {key}:0x1 "I.fwd"("port":0x3)\npacket 0 01 AA\nexpect 3 01 AA $\n'
    assert _run(tmp_path, KEYS_P4, script) == 0, capsys.readouterr().out


@pytest.mark.parametrize("key", ['"h.a.k & 0xf0"', "h.a.k&0xf0"])
def test_a_key_named_by_an_expression_with_blanks(tmp_path, capsys, key):
    script = f'add "I.u" {key}:0x30 "I.set_v"("v":0x77)\npacket 0 3C00\nexpect 0 3C77 $\n'
    assert _run(tmp_path, KEYS_P4, script) == 0, capsys.readouterr().out


@needs_bmv2
def test_a_runner_killed_mid_run_leaves_no_simple_switch_behind(tmp_path):
    import json
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import time

    from p4compiler.compiler import compile_text

    j = compile_text(BASIC_P4, "basic.p4").json
    child = tmp_path / "child.py"
    child.write_text(
        "import json, sys, time\n"
        "from p4switch.stf_bmv2 import Bmv2Switch\n"
        "sw = Bmv2Switch(json.load(open(sys.argv[1])), [1, 4], timeout=30)\n"
        "sw.start()\n"
        "print(sw.proc.pid, sw.dir, flush=True)\n"
        "time.sleep(60)\n")
    (tmp_path / "prog.json").write_text(json.dumps(j))
    runner = subprocess.Popen([sys.executable, str(child), str(tmp_path / "prog.json")],
                              stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    try:
        pid, workdir = runner.stdout.readline().split(maxsplit=1)
        switch_pid = int(pid)
    finally:
        runner.send_signal(signal.SIGKILL)  # as a timeout would stop it
        runner.wait()
    shutil.rmtree(workdir.strip(), ignore_errors=True)  # the killed runner could not
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(switch_pid, 0)
        except ProcessLookupError:
            return
        with open(f"/proc/{switch_pid}/stat") as stat:
            if stat.read().split(") ")[1].startswith("Z"):
                return  # dead, waiting for init to reap it
        time.sleep(0.05)
    os.kill(switch_pid, signal.SIGKILL)
    pytest.fail(f"simple_switch {switch_pid} outlived its runner")


# An entry added after the packet it decides. With ports 0 and 2 in the script,
# simple_switch takes the packet only when port 2's file (expects only) has ended, so on
# bmv2 the entry is in force for it; the embedded run applies the add in script order.
LATE_ADD_STF = """\
packet 0 01 0000
add by_a h.a:0x01 fwd(port:2)
expect 2 01 0000
"""


def test_ordering_notes_name_the_commands_bmv2_applies_before_an_earlier_packet():
    from p4compiler import stf
    from p4switch.stf_check import ordering_notes

    notes = ordering_notes(stf.parse(LATE_ADD_STF, "late.stf"), "late.stf")
    assert len(notes) == 1 and notes[0].startswith("late.stf:2:"), notes
    assert "packet of line 1 (port 0)" in notes[0]
    # one port: simple_switch takes each packet as it is written
    one_port = LATE_ADD_STF.replace("expect 2", "expect 0").replace("port:2", "port:0")
    assert ordering_notes(stf.parse(one_port, "one.stf"), "one.stf") == []
    # packets on both ports: port 1's packet waits for the next one on port 0, so the add
    # between them is in force for it, and the add before any packet is not noted
    both = ("add by_a h.a:2 fwd(port:1)\npacket 0 02 0000\npacket 1 02 0000\n"
            "add by_a h.a:1 fwd(port:0)\npacket 0 01 0000\npacket 1 01 0000\n")
    notes = ordering_notes(stf.parse(both, "both.stf"), "both.stf")
    assert [n.split(":")[1] for n in notes] == ["4"], notes
    assert "packet of line 3 (port 1)" in notes[0]


def test_a_late_add_is_applied_in_script_order_and_noted(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, LATE_ADD_STF) == 1    # dropped: the entry came later
    err = capsys.readouterr().err
    assert "note: test.stf:2: on real bmv2 this command is already in force" in err


@needs_bmv2
def test_bmv2_applies_the_late_add_before_the_packet_as_the_note_says(tmp_path, capsys):
    assert _run(tmp_path, BASIC_P4, LATE_ADD_STF, "--switch", "bmv2", "--timeout", "30") == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("PASS") and "note: test.stf:2:" in captured.err


# ---- the STF commands of p4c's bmv2 driver and simple_switch_CLI's counter/meter commands
# (differential programs: entries named with `= NAME`, counter_write/counter_reset with the
# CLI's operands, meter_set_rates on a direct meter); the same script on both switches
STF_COMMAND_PROGRAMS = sorted(
    (Path(__file__).resolve().parents[1] / "differential" / "programs").glob("ctl_stf_*.p4"))


def _program(p4: Path, *extra: str) -> int:
    return main([str(p4), str(p4.with_suffix(".stf")), *extra])


@pytest.mark.parametrize("p4", STF_COMMAND_PROGRAMS, ids=[p.stem for p in STF_COMMAND_PROGRAMS])
def test_stf_command_programs_pass_on_the_embedded_switch(p4: Path, capsys):
    assert _program(p4) == 0, capsys.readouterr().out


@needs_bmv2
@pytest.mark.parametrize("p4", STF_COMMAND_PROGRAMS, ids=[p.stem for p in STF_COMMAND_PROGRAMS])
def test_stf_command_programs_pass_on_bmv2(p4: Path, capsys):
    assert _program(p4, "--switch", "bmv2", "--timeout", "30") == 0, capsys.readouterr().out


NAMED_P4 = (Path(__file__).resolve().parents[1] / "differential" / "programs"
            / "ctl_stf_named_entries.p4")
COUNTER_P4 = NAMED_P4.with_name("ctl_stf_counter_write.p4")


@pytest.mark.parametrize("switch", ["embedded", pytest.param("bmv2", marks=needs_bmv2)])
def test_a_named_entry_counter_that_does_not_hold_names_the_entry(tmp_path, capsys, switch):
    script = ("add Ig.t hdr.h.k:1 Ig.fwd(port:1) = one\n"
              "packet 0 01 00 aa\nexpect 1 01 00 aa\n"
              "check_counter Ig.hits($one) packets == 2\n")
    assert _run(tmp_path, NAMED_P4.read_text(), script, "--switch", switch,
                "--timeout", "30") == 1
    assert "counter Ig.hits[$one] (test.stf:4): packets 1, expected == 2" in \
        capsys.readouterr().out


@pytest.mark.parametrize("switch", ["embedded", pytest.param("bmv2", marks=needs_bmv2)])
def test_counter_write_takes_packets_then_bytes(tmp_path, capsys, switch):
    # simple_switch_CLI's counter_write <name> <index> <packets> <bytes>
    script = ("counter_write Ig.seen 3 7 1000\n"
              "packet 0 03 00\n"
              "expect 0 03 00\n"   # no entry: egress_spec stays 0
              "check_counter Ig.seen(3) packets == 8\n"
              "check_counter Ig.seen(3) bytes == 1002\n")
    assert _run(tmp_path, COUNTER_P4.read_text(), script, "--switch", switch,
                "--timeout", "30") == 0, capsys.readouterr().out


@pytest.mark.parametrize("script, message", [
    ("check_counter Ig.hits($nobody)", "test.stf:1: no entry named '$nobody'"),
    ("remove nobody", "test.stf:1: no entry named 'nobody' (add ... = NAME; named: none)"),
    ("add Ig.p hdr.h.k:1 Ig.keep() = a\ncheck_counter Ig.hits(a)",
     "test.stf:2: a is an entry of Ig.p; counter Ig.hits counts Ig.t's entries"),
    ("add Ig.t hdr.h.k:1 Ig.miss() = a\nremove all\nremove a", "test.stf:3: no entry named 'a'"),
])
def test_bad_entry_names_are_one_line_and_exit_2(tmp_path, capsys, script, message):
    assert _run(tmp_path, NAMED_P4.read_text(), script) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


PROFILE_P4 = NAMED_P4.with_name("ctl_stf_profile_changes.p4")


@pytest.mark.parametrize("script, message", [
    ("act_prof_create_member sel_t set_op(v:1, port:1)\nact_prof_create_group sel_t\n"
     "act_prof_add_member_to_group sel_t 0 0\nact_prof_delete_member sel_t 0",
     "test.stf:4: member 0 of Ig.sel_t is still in group 0 (bmv2: MBR_STILL_USED)"),
    ("act_prof_create_member prof_t mark()\nact_prof_delete_member prof_t 0\n"
     "act_prof_modify_member prof_t 0 mark()", "test.stf:3: action profile Ig.prof_t has no "
     "member 0"),
    ("act_prof_create_group sel_t\nact_prof_remove_member_from_group sel_t 0 0",
     "test.stf:2: action profile Ig.sel_t has no member 0"),
])
def test_bad_profile_changes_are_one_line_and_exit_2(tmp_path, capsys, script, message):
    assert _run(tmp_path, PROFILE_P4.read_text(), script) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


IN_USE_SCRIPTS = [
    ("act_prof_create_member prof_t set_o(v:0x11)\ntable_indirect_add prof_t hdr.h.k:1 0\n"
     "act_prof_delete_member prof_t 0\n", "MBR_STILL_USED"),
    ("act_prof_create_member sel_t set_op(v:1, port:1)\nact_prof_create_group sel_t\n"
     "act_prof_add_member_to_group sel_t 0 0\n"
     "table_indirect_add_with_group sel_t hdr.h.k:0x11 0\nact_prof_delete_group sel_t 0\n",
     "GRP_STILL_USED"),
]


@pytest.mark.parametrize("script, code", IN_USE_SCRIPTS)
def test_deleting_a_member_or_group_an_entry_uses_is_refused(tmp_path, capsys, script, code):
    """bmv2 refuses act_prof_delete_member / _group while an entry points at the member
    or group (simple_switch_CLI: 'Invalid table operation (MBR_STILL_USED)'); the
    embedded switch deleted it and the entry then did nothing. A refusal fails the test
    (exit 1, reported with the mismatches) as on bmv2, and the script goes on."""
    assert _run(tmp_path, PROFILE_P4.read_text(), script) == 1
    out, err = capsys.readouterr()
    assert "the switch refused it: " in out and f"({code})" in out
    assert "Traceback" not in out + err


@needs_bmv2
@pytest.mark.parametrize("script, code", IN_USE_SCRIPTS)
def test_bmv2_refuses_to_delete_a_member_or_group_an_entry_uses(tmp_path, capsys, script,
                                                                 code):
    """simple_switch_CLI's error comes after its prompt ('RuntimeCmd: Invalid table
    operation (...)'): the runner reports it as a mismatch."""
    assert _run(tmp_path, PROFILE_P4.read_text(), script, "--switch", "bmv2",
                "--timeout", "30") == 1
    assert f"simple_switch_CLI (test.stf): Invalid table operation ({code})" \
        in capsys.readouterr().out
