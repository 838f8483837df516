"""v1model semantics of the embedded switch, on hand-written bmv2 JSON through
Switch.process() (no queue timing)."""

from __future__ import annotations

import zlib

import pytest
from bmv2json import (
    ETHERNET,
    IPV4ISH,
    assign,
    ethernet_program,
    expr,
    extract,
    field,
    frame,
    hexstr,
    prim,
    rt,
)
from fastpath import both_paths  # noqa: F401 - fixture

from p4switch.program_common import ProgramError
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam, Replica
from p4switch.switch import Switch
from tests.v1model_program import v1model_program

pytestmark = pytest.mark.usefixtures("both_paths")

SM = {"type": "header", "value": "standard_metadata"}


def switch_for(p, **kw) -> Switch:
    sw = Switch({1: "p1", 2: "p2", 3: "p3"}, **kw)
    sw.load_program(p.build())
    return sw


def exact(v):
    return MatchParam(MatchKind.EXACT, v)


def fwd(port):
    return ActionCall("forward", (port,))


def test_exact_table_forwards_by_destination_and_default_drops():
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["forward", "drop"],
            default=("drop", []))
    sw = switch_for(p)
    sw.table_add("fwd", [exact(0xB2)], fwd(2))
    f = frame(ipv4={})
    assert sw.process(1, f) == [(2, f)]
    assert sw.process(1, frame(dst=0x99)) == []


def test_parser_select_default_and_short_packet_sets_parser_error():
    p = ethernet_program().scalar("err", 32)
    p.action("save_error", [], [
        assign(field("scalars", "err"), field("standard_metadata", "parser_error")),
        assign(field("standard_metadata", "egress_spec"), hexstr(2)),
        assign(field("ethernet", "src"), field("standard_metadata", "parser_error"))])
    p.run("ingress", "save_error")
    sw = switch_for(p)
    # Non-IPv4 EtherType: only ethernet parsed, no error.
    [(port, out)] = sw.process(1, frame(ether_type=0x88B5, payload=b"xyz"))
    assert port == 2 and out[6:12] == bytes(6) and out.endswith(b"xyz")
    # IPv4 EtherType but truncated header: PacketTooShort (1), ingress still runs.
    [(port, out)] = sw.process(1, frame(payload=b"\x45\x00"))
    assert int.from_bytes(out[6:12], "big") == 1
    assert out.endswith(b"\x45\x00")


def test_lpm_picks_longest_prefix():
    p = ethernet_program()
    p.table("ingress", "route", [("lpm", ["ipv4", "dst"])], ["forward", "drop"],
            default=("drop", []), match_type="lpm")
    sw = switch_for(p)
    sw.table_add("route", [MatchParam(MatchKind.LPM, 0x0A000000, prefix_len=8)], fwd(1))
    sw.table_add("route", [MatchParam(MatchKind.LPM, 0x0A000200, prefix_len=24)], fwd(3))
    assert sw.process(2, frame(ipv4={"dst": 0x0A000205}))[0][0] == 3
    assert sw.process(2, frame(ipv4={"dst": 0x0A010205}))[0][0] == 1
    assert sw.process(2, frame(ipv4={"dst": 0x0B000205})) == []


def test_ternary_higher_priority_wins_regardless_of_insertion_order():
    p = ethernet_program()
    p.table("ingress", "acl", [("ternary", ["ipv4", "src"]), ("range", ["ipv4", "ttl"])],
            ["forward", "drop"], default=("drop", []), match_type="range")
    sw = switch_for(p)
    anything = MatchParam(MatchKind.RANGE, 0, high=255)
    sw.table_add("acl", [MatchParam(MatchKind.TERNARY, 0, mask=0), anything], fwd(1), priority=1)
    sw.table_add("acl", [MatchParam(MatchKind.TERNARY, 0x0A000000, mask=0xFF000000),
                         MatchParam(MatchKind.RANGE, 10, high=100)], fwd(3), priority=10)
    assert sw.process(2, frame(ipv4={"src": 0x0A0000FF, "ttl": 64}))[0][0] == 3
    assert sw.process(2, frame(ipv4={"src": 0x0A0000FF, "ttl": 200}))[0][0] == 1
    assert sw.process(2, frame(ipv4={"src": 0x0B0000FF, "ttl": 64}))[0][0] == 1


def test_table_delete_and_modify_and_default():
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["forward", "drop"],
            default=("drop", []))
    sw = switch_for(p)
    h = sw.table_add("fwd", [exact(0xB2)], fwd(2))
    sw.table_modify("fwd", h, fwd(3))
    assert sw.process(1, frame())[0][0] == 3
    sw.table_delete("fwd", h)
    assert sw.process(1, frame()) == []
    sw.table_set_default("fwd", fwd(1))
    assert sw.process(2, frame())[0][0] == 1
    sw.table_set_default("fwd", None)
    assert sw.process(2, frame()) == []


def test_counters_count_packets_and_bytes_and_direct_counters_count_hits():
    p = ethernet_program().counter("rx", 8)
    p.action("count_and_fwd", [("port", 9)], [
        prim("count", {"type": "counter_array", "value": "rx"},
             field("standard_metadata", "ingress_port")),
        assign(field("standard_metadata", "egress_spec"), rt(0))])
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["count_and_fwd", "drop"],
            default=("drop", []), with_counters=True)
    sw = switch_for(p)
    h = sw.table_add("fwd", [exact(0xB2)], ActionCall("count_and_fwd", (2,)))
    f = frame(ipv4={})
    sw.process(3, f)
    sw.process(3, f)
    sw.process(3, frame(dst=1))
    assert sw.counter_read("rx", 3) == (2 * len(f), 2)
    assert sw.direct_counter_read("fwd", h) == (2 * len(f), 2)
    sw.counter_write("rx", 3, 0, 0)
    assert sw.counter_read("rx", 3) == (0, 0)


def test_register_read_modify_write_keeps_per_port_packet_count():
    p = ethernet_program().register("seen", 4, 8).scalar("tmp", 8)
    reg = {"type": "register_array", "value": "seen"}
    port = field("standard_metadata", "ingress_port")
    p.action("bump", [], [
        prim("register_read", field("scalars", "tmp"), reg, port),
        assign(field("scalars", "tmp"),
               expr("&", expr("+", field("scalars", "tmp"), hexstr(1)), hexstr(0xFF))),
        prim("register_write", reg, port, field("scalars", "tmp")),
        assign(field("ethernet", "src"), field("scalars", "tmp")),
        assign(field("standard_metadata", "egress_spec"), hexstr(1))])
    p.run("ingress", "bump")
    sw = switch_for(p)
    sw.register_write("seen", 2, 254)
    assert sw.process(2, frame())[0][1][11] == 255
    assert sw.process(2, frame())[0][1][11] == 0  # wraps at the register's 8 bits
    assert sw.register_read("seen", 2) == 0


def test_header_validity_add_and_remove_changes_the_frame():
    p = ethernet_program()
    p.action("strip_ip", [], [prim("remove_header", {"type": "header", "value": "ipv4"}),
                              assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.action("add_ip", [], [prim("add_header", {"type": "header", "value": "ipv4"}),
                            assign(field("ipv4", "ttl"), hexstr(7)),
                            assign(field("standard_metadata", "egress_spec"), hexstr(3))])
    p.conditional("ingress", "has_ip", expr("d2b", None, field("ipv4", "$valid$")),
                  "tbl_strip", "tbl_add", init=True)
    p.table("ingress", "tbl_strip", [], ["strip_ip"], default=("strip_ip", []))
    p.table("ingress", "tbl_add", [], ["add_ip"], default=("add_ip", []))
    p._pipeline("ingress")["init_table"] = "has_ip"
    sw = switch_for(p)
    [(port, out)] = sw.process(1, frame(ipv4={}, payload=b"P"))
    assert port == 2 and out == frame(payload=b"P")
    [(port, out)] = sw.process(1, frame(ether_type=0x0801, payload=b"P"))
    assert port == 3 and len(out) == 14 + 20 + 1 and out[14 + 8] == 7 and out[14] == 0


def test_mark_to_drop_in_egress_drops():
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["forward"],
            default=("forward", [2]))
    p.table("egress", "egress_acl", [("exact", ["standard_metadata", "egress_port"])],
            ["drop", "NoAction"], default=("NoAction", []))
    sw = switch_for(p)
    sw.table_add("egress_acl", [exact(2)], ActionCall("drop"))
    assert sw.process(1, frame()) == []
    sw.table_set_default("fwd", fwd(3))
    assert sw.process(1, frame())[0][0] == 3


def test_multicast_replicates_with_egress_rid():
    p = ethernet_program()
    p.action("flood", [], [assign(field("standard_metadata", "mcast_grp"), hexstr(5))])
    p.action("mark_rid", [], [assign(field("ethernet", "src"),
                                     field("standard_metadata", "egress_rid"))])
    p.run("ingress", "flood")
    p.run("egress", "mark_rid")
    sw = switch_for(p)
    sw.mc_group_set(5, [Replica(1, 10), Replica(3, 30)])
    out = sw.process(2, frame())
    assert sorted((port, f[11]) for port, f in out) == [(1, 10), (3, 30)]


def test_clone_i2e_sends_original_copy_with_instance_type():
    p = ethernet_program().scalar("mark", 8)
    p.field_list(1, [["scalars", "mark"]])
    p.action("clone_and_fwd", [], [
        assign(field("scalars", "mark"), hexstr(0x42)),
        assign(field("ethernet", "dst"), hexstr(0xFFFF)),
        prim("clone_ingress_pkt_to_egress", hexstr(7), hexstr(1)),
        assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.action("stamp", [], [
        assign(field("ethernet", "src"),
               expr("|", expr("<<", field("standard_metadata", "instance_type"), hexstr(8)),
                    field("scalars", "mark")))])
    p.run("ingress", "clone_and_fwd")
    p.run("egress", "stamp")
    sw = switch_for(p)
    sw.clone_session_set(7, [Replica(3)])
    out = dict(sw.process(1, frame()))
    assert out[2][:6] == (0xFFFF).to_bytes(6, "big")
    assert out[3][:6] == (0xB2).to_bytes(6, "big")  # the clone is the original frame
    assert out[3][10:12] == bytes([1, 0x42])  # INGRESS_CLONE, field list preserved
    assert out[2][10:12] == bytes([0, 0x42])


def test_clone_e2e_and_truncate():
    p = ethernet_program()
    p.field_list(1, [])  # nothing preserved: still a list bmv2 can look up
    p.action("clone_e2e", [], [prim("clone_egress_pkt_to_egress", hexstr(3), hexstr(1))])
    p.conditional("egress", "is_normal",
                  expr("==", field("standard_metadata", "instance_type"), hexstr(0)),
                  "tbl_clone", None)
    p.table("egress", "tbl_clone", [], ["clone_e2e"], default=("clone_e2e", []))
    p.table("ingress", "fwd", [], ["forward"], default=("forward", [2]))
    sw = switch_for(p)
    sw.clone_session_set(3, [Replica(1)], packet_length_bytes=14)
    out = dict(sw.process(3, frame(payload=b"x" * 50)))
    assert len(out[2]) == 64 and out[1] == frame()


def test_a_keyless_table_takes_no_entries_only_a_default():
    """bmv2 refuses an entry on a table without key fields (NO_TABLE_KEY); one was
    accepted and never matched."""
    from p4switch.runtime_api import DataplaneError

    p = ethernet_program()
    p.table("ingress", "fwd", [], ["forward"], default=("forward", [2]))
    sw = switch_for(p)
    with pytest.raises(DataplaneError, match="NO_TABLE_KEY"):
        sw.table_add("fwd", [], fwd(3))
    sw.table_set_default("fwd", fwd(3))
    assert sw.process(1, frame())[0][0] == 3


def test_recirculate_preserves_field_list_until_done():
    p = ethernet_program().scalar("passes", 8)
    p.field_list(2, [["scalars", "passes"]])
    p.action("count_pass", [], [
        assign(field("scalars", "passes"),
               expr("&", expr("+", field("scalars", "passes"), hexstr(1)), hexstr(0xFF))),
        assign(field("standard_metadata", "egress_spec"), hexstr(2)),
        assign(field("ethernet", "src"), field("scalars", "passes"))])
    p.action("recirc", [], [prim("recirculate", hexstr(2))])
    p.run("ingress", "count_pass")
    p.conditional("egress", "again", expr("<", field("scalars", "passes"), hexstr(3)),
                  "tbl_recirc", None)
    p.table("egress", "tbl_recirc", [], ["recirc"], default=("recirc", []))
    sw = switch_for(p)
    [(port, out)] = sw.process(1, frame())
    assert port == 2 and out[11] == 3


def test_resubmit_runs_ingress_again_with_instance_type_6():
    p = ethernet_program()
    p.action("resub", [], [prim("resubmit", hexstr(0))])
    p.action("out", [], [assign(field("standard_metadata", "egress_spec"), hexstr(3)),
                         assign(field("ethernet", "src"),
                                field("standard_metadata", "instance_type"))])
    p.conditional("ingress", "first",
                  expr("==", field("standard_metadata", "instance_type"), hexstr(0)),
                  "tbl_resub", "tbl_out")
    p.table("ingress", "tbl_resub", [], ["resub"], default=("resub", []))
    p.table("ingress", "tbl_out", [], ["out"], default=("out", []))
    p._pipeline("ingress")["init_table"] = "first"
    sw = switch_for(p)
    [(port, out)] = sw.process(1, frame())
    assert port == 3 and out[11] == 6


def test_hash_crc32_of_fields_matches_zlib():
    p = ethernet_program().scalar("h", 32)
    p.calculation("flow_hash", "crc32", [field("ipv4", "src"), field("ipv4", "dst")])
    p.action("hash_it", [], [
        prim("modify_field_with_hash_based_offset", field("scalars", "h"), hexstr(0),
             {"type": "calculation", "value": "flow_hash"}, hexstr(1 << 32)),
        assign(field("ipv4", "src"), field("scalars", "h")),
        assign(field("standard_metadata", "egress_spec"), hexstr(1))])
    p.run("ingress", "hash_it")
    sw = switch_for(p)
    [(_port, out)] = sw.process(2, frame(ipv4={"src": 0x01020304, "dst": 0x05060708}))
    want = zlib.crc32(bytes([1, 2, 3, 4, 5, 6, 7, 8]))
    assert int.from_bytes(out[14 + 12:14 + 16], "big") == want


def test_packet_in_and_packet_out_through_cpu_port():
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["standard_metadata", "ingress_port"])],
            ["forward", "drop"], default=("drop", []))
    sw = Switch({1: "p1", 2: "p2"}, cpu_port=64)
    sw.load_program(p.build())
    sw.table_add("fwd", [exact(1)], fwd(64))
    sw.table_add("fwd", [exact(64)], fwd(2))
    got = []
    sw.set_packet_in_handler(got.append)
    f = frame()
    assert sw.process(1, f) == [(64, f)]
    assert got == [f]
    assert sw.process(64, f) == [(2, f)]


def test_digest_reports_learn_list_fields():
    p = ethernet_program()
    p.j["learn_lists"].append({"id": 1, "name": "mac_learn", "elements": [
        {"type": "field", "value": ["ethernet", "src"]},
        {"type": "field", "value": ["standard_metadata", "ingress_port"]}]})
    p.action("learn", [], [prim("generate_digest", hexstr(1024), hexstr(1))])
    p.run("ingress", "learn")
    sw = switch_for(p)
    got = []
    sw.set_digest_handler(lambda name, vals: got.append((name, vals)))
    sw.process(3, frame(src=0xA1))
    assert got == [("mac_learn", (0xA1, 3))]


def test_assert_failure_drops_the_packet_but_switch_survives():
    p = ethernet_program()
    # bmv2's assert takes data: the condition converted with b2d
    p.action("check", [], [prim("assert", expr("b2d", None, expr(
                               "==", field("ethernet", "ether_type"), hexstr(0x0800)))),
                           assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.run("ingress", "check")
    sw = switch_for(p)
    assert sw.process(1, frame(ether_type=0x86DD)) == []
    assert sw.process(1, frame())[0][0] == 2
    assert sw.pipeline_errors == 1


def test_header_stack_extract_and_pop():
    p = ethernet_program()
    p.j["header_types"].append({"name": "tag_t", "id": 99, "fields": [["v", 8], ["bos", 8]]})
    for i in range(3):
        p.j["headers"].append({"name": f"tags[{i}]", "id": 100 + i, "header_type": "tag_t",
                               "metadata": False})
    p.j["header_stacks"].append({"name": "tags", "id": 0, "header_type": "tag_t",
                                 "header_ids": [100, 101, 102]})
    p.j["deparsers"][0]["order"] = ["ethernet", "tags[0]", "tags[1]", "tags[2]"]
    states = p.j["parsers"][0]["parse_states"]
    states.clear()
    p.state("start", [extract("ethernet")], key=[field("ethernet", "ether_type")],
            transitions=[(0x9999, None, "parse_tag"), (None, None, None)])
    p.state("parse_tag", [{"op": "extract", "parameters": [{"type": "stack",
                                                            "value": "tags"}]}],
            key=[{"type": "stack_field", "value": ["tags", "bos"]}],
            transitions=[(0, None, "parse_tag"), (None, None, None)])
    p.action("pop1", [], [prim("pop", {"type": "header_stack", "value": "tags"}, hexstr(1)),
                          assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.run("ingress", "pop1")
    sw = switch_for(p)
    tags = bytes([1, 0, 2, 0, 3, 1])
    [(_port, out)] = sw.process(1, frame(ether_type=0x9999, payload=tags + b"pl"))
    assert out == frame(ether_type=0x9999, payload=bytes([2, 0, 3, 1]) + b"pl")


def test_tables_chain_with_hit_miss_next_tables():
    p = ethernet_program()
    p.action("set_src", [("v", 48)], [assign(field("ethernet", "src"), rt(0))])
    p.table("ingress", "first", [("exact", ["ethernet", "dst"])], ["set_src", "NoAction"],
            default=("NoAction", []), next_tables={"__HIT__": "hit_tbl", "__MISS__": "miss_tbl"})
    p.table("ingress", "hit_tbl", [], ["forward"], default=("forward", [1]))
    p.table("ingress", "miss_tbl", [], ["forward"], default=("forward", [3]))
    sw = switch_for(p)
    sw.table_add("first", [exact(0xB2)], ActionCall("set_src", (0x77,)))
    [(port, out)] = sw.process(2, frame())
    assert port == 1 and out[11] == 0x77
    assert sw.process(2, frame(dst=5))[0][0] == 3


def test_process_without_a_program_is_an_error():
    from p4switch.runtime_api import DataplaneError

    sw = Switch({1: "p1"})
    with pytest.raises(DataplaneError, match="no program loaded"):
        sw.process(1, frame())


def test_ipv4_checksum_update_and_verify():
    p = ethernet_program()
    p.calculation("ipv4_csum", "csum16", [field("ipv4", n) for n, _w in IPV4ISH if n != "csum"])
    p.j["checksums"] = [
        {"name": "cks_v", "id": 0, "target": ["ipv4", "csum"], "type": "generic",
         "calculation": "ipv4_csum", "verify": True, "update": False,
         "if_cond": expr("d2b", None, field("ipv4", "$valid$"))},
        {"name": "cks_u", "id": 1, "target": ["ipv4", "csum"], "type": "generic",
         "calculation": "ipv4_csum", "verify": False, "update": True,
         "if_cond": expr("d2b", None, field("ipv4", "$valid$"))}]
    p.action("dec_ttl", [], [
        assign(field("ipv4", "ttl"), expr("&", expr("-", field("ipv4", "ttl"), hexstr(1)),
                                          hexstr(0xFF))),
        assign(field("ethernet", "src"), field("standard_metadata", "checksum_error")),
        assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.run("ingress", "dec_ttl")
    sw = switch_for(p)
    [(_p, out)] = sw.process(1, frame(ipv4={"csum": 0x1234}))
    assert out[11] == 1  # bad checksum seen by verify
    ip = out[14:34]
    s = sum(int.from_bytes(ip[i:i + 2], "big") for i in range(0, 20, 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    assert s == 0xFFFF and ip[8] == 63  # updated checksum is valid after the TTL change
    [(_p, out2)] = sw.process(1, out)
    assert out2[11] == 0


def test_ethernet_layout_matches_declaration():
    assert sum(w for _n, w in ETHERNET) == 112


def test_meter_colours_packets_beyond_the_burst_red():
    p = ethernet_program().scalar("colour", 8)
    p.j["meter_arrays"].append({"name": "m", "id": 0, "type": "packets", "rate_count": 2,
                                "size": 4, "is_direct": False})
    p.action("police", [], [
        prim("execute_meter", {"type": "meter_array", "value": "m"}, hexstr(1),
             field("scalars", "colour")),
        assign(field("ethernet", "src"), field("scalars", "colour")),
        assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.run("ingress", "police")
    sw = switch_for(p)
    assert sw.process(1, frame())[0][1][11] == 0  # unconfigured: GREEN
    # 1 packet/s committed with burst 2, peak 1 packet/s with burst 3.
    sw.meter_set("m", 1, [(1e-6, 2), (1e-6, 3)])
    colours = [sw.process(1, frame())[0][1][11] for _ in range(4)]
    assert colours == [0, 0, 1, 2]  # GREEN, GREEN, YELLOW, RED
    assert sw.meter_get("m", 1) == [(1e-6, 2), (1e-6, 3)]
    # a committed rate above the peak rate: refused as bmv2 refuses it, the old rates kept
    from p4switch.switch import DataplaneError
    with pytest.raises(DataplaneError, match="INVALID_INFO_RATE_VALUE"):
        sw.meter_set("m", 1, [(2e-6, 2), (1e-6, 3)])
    assert sw.meter_get("m", 1) == [(1e-6, 2), (1e-6, 3)]


def _ecmp_switch():
    """An ethernet program whose table `ecmp` sits behind a crc16 action selector."""
    p = ethernet_program()
    p.table("ingress", "ecmp", [("exact", ["ethernet", "ether_type"])], ["forward", "drop"],
            default=("drop", []), type="indirect_ws", action_profile="ecmp_ap")
    p._pipeline("ingress")["action_profiles"].append({
        "name": "ecmp_ap", "id": 0, "max_size": 16,
        "selector": {"algo": "crc16", "input": [field("ipv4", "src"), field("ipv4", "dst")]}})
    sw = switch_for(p)
    return sw


def test_action_selector_group_spreads_flows_over_members():
    sw = _ecmp_switch()
    sw.act_prof_add_member("ecmp_ap", 1, fwd(1))
    sw.act_prof_add_member("ecmp_ap", 2, fwd(3))
    sw.act_prof_set_group("ecmp_ap", 10, [1, 2])
    from p4switch.runtime_api import IndirectTarget
    sw.table_add("ecmp", [exact(0x0800)], IndirectTarget(group=10))
    ports = {sw.process(2, frame(ipv4={"src": s}))[0][0] for s in range(32)}
    assert ports == {1, 3}
    # The same flow always takes the same member.
    assert len({sw.process(2, frame(ipv4={"src": 7}))[0][0] for _ in range(5)}) == 1
    sw.table_add("ecmp", [exact(0x0801)], IndirectTarget(member=2))
    assert sw.process(2, frame(ether_type=0x0801))[0][0] == 3


def test_an_entry_naming_a_member_or_group_that_does_not_exist_is_refused():
    """bmv2 refuses it (INVALID_MBR_HANDLE, INVALID_GRP_HANDLE): such an entry would
    point nowhere, and a member made later under that id must not start matching."""
    from p4switch.runtime_api import IndirectTarget
    from p4switch.switch import DataplaneError
    sw = _ecmp_switch()
    sw.act_prof_add_member("ecmp_ap", 1, fwd(1))
    for target, code in ((IndirectTarget(member=2), "INVALID_MBR_HANDLE"),
                         (IndirectTarget(group=10), "INVALID_GRP_HANDLE")):
        with pytest.raises(DataplaneError, match=code):
            sw.table_add("ecmp", [exact(0x0800)], target)
        with pytest.raises(DataplaneError, match=code):
            sw.table_set_default("ecmp", target)
    assert sw.table_add("ecmp", [exact(0x0800)], IndirectTarget(member=1)) is not None
    assert sw.process(2, frame(ipv4={}))[0][0] == 1
    # a group with no member: simple_switch_CLI's table_indirect_add_with_group refuses
    # it (EMPTY_GRP, checked with real bmv2)
    sw.act_prof_set_group("ecmp_ap", 7, [])
    with pytest.raises(DataplaneError, match="EMPTY_GRP"):
        sw.table_add("ecmp", [exact(0x0801)], IndirectTarget(group=7))


def test_a_group_orders_its_members_as_bmv2_numbers_them():
    """bmv2 keeps a group's members ordered by member handle (the lowest free one when
    the member was made) and picks the member at hash % size in that order; the
    order members joined the group in does not count."""
    sw = _ecmp_switch()
    for member, port in ((30, 1), (20, 2), (10, 3)):   # bmv2 handles 0, 1, 2
        sw.act_prof_add_member("ecmp_ap", member, fwd(port))
    sw.act_prof_delete_member("ecmp_ap", 20)
    sw.act_prof_add_member("ecmp_ap", 40, fwd(4))      # takes the freed handle 1
    sw.act_prof_set_group("ecmp_ap", 1, [10, 40, 30])
    assert sw._prog().profiles["ecmp_ap"].groups[1] == [30, 40, 10]


def test_log_console_traces_tables_and_ports(tmp_path):
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["forward", "drop"],
            default=("drop", []))
    log = tmp_path / "switch.log"
    sw = Switch({1: "p1", 2: "p2"}, log_file=str(log))
    sw.load_program(p.build())
    sw.table_add("fwd", [exact(0xB2)], fwd(2))
    sw.process(1, frame(ipv4={}))
    sw.process(1, frame(dst=3))
    text = log.read_text()
    # bmv2's wording (simple_switch --log-console), line by line.
    for line in ("[0.0] [cxt 0] Processing packet received on port 1",
                 "Parser 'parser': start", "Parser 'parser' entering state 'parse_ipv4'",
                 "Extracting header 'ipv4'", "Parser 'parser': end",
                 "Pipeline 'ingress': start", "Applying table 'fwd'",
                 "Table 'fwd': hit with handle 0", "Action entry is forward - 2,",
                 "Pipeline 'ingress': end", "Egress port is 2", "Pipeline 'egress': start",
                 "Deparser 'deparser': start", "Transmitting packet of size",
                 "[1.0] [cxt 0] Processing packet received on port 1", "Table 'fwd': miss",
                 "Dropping packet at the end of ingress"):
        assert line in text


def test_writing_one_field_keeps_every_other_byte_of_the_header():
    p = ethernet_program()
    p.action("set_ttl", [], [assign(field("ipv4", "ttl"), hexstr(7)),
                             assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.run("ingress", "set_ttl")
    sw = switch_for(p)
    f = frame(ipv4={"src": 0x01020304, "dst": 0x05060708, "id": 0xBEEF, "csum": 0xCAFE},
              payload=b"tail")
    [(_port, out)] = sw.process(1, f)
    assert out == f[:14 + 8] + bytes([7]) + f[14 + 9:]


def test_removing_a_header_and_modifying_another_repacks_the_frame():
    p = ethernet_program()
    p.action("decap", [], [prim("remove_header", {"type": "header", "value": "ipv4"}),
                           assign(field("ethernet", "ether_type"), hexstr(0x88B5)),
                           assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.run("ingress", "decap")
    sw = switch_for(p)
    f = frame(ipv4={}, payload=b"inner")
    [(_port, out)] = sw.process(1, f)
    assert out == f[:12] + b"\x88\xb5" + b"inner"


def test_assert_on_a_bare_condition_is_refused_as_bmv2_aborts():
    p = ethernet_program()
    p.action("check", [], [prim("assert", expr("==", field("ethernet", "ether_type"),
                                               hexstr(0x0800)))])
    p.run("ingress", "check")
    with pytest.raises(ProgramError, match="must be data, not a boolean"):
        switch_for(p)


DIGESTS_P4 = v1model_program(
    declarations="struct learn_t { bit<8> x; bit<8> y; }",
    h_fields="bit<8> a; bit<8> b; bit<8> c; bit<8> d;",
    ingress="""
        sm.egress_spec = 1;
        if (hdr.h.a == 1) { digest<learn_t>(1, {hdr.h.a, hdr.h.b}); }
        else if (hdr.h.a == 2) { digest<learn_t>(1, {hdr.h.c, hdr.h.d}); }
        else { digest<learn_t>(1, {8w7, hdr.h.b + 8w1}); }
    """)


def test_each_digest_call_reports_its_own_values():
    """Two digests of one type from different fields, and one of a constant and an
    expression (copied into temporaries: bmv2 learn lists hold fields only)."""
    from p4compiler.compiler import compile_text

    j = compile_text(DIGESTS_P4, "digests.p4").json
    assert all(el["type"] == "field" for ll in j["learn_lists"] for el in ll["elements"])
    sw = Switch({0: "p0", 1: "p1"})
    sw.load_program(j)
    got = []
    sw.set_digest_handler(lambda name, vals: got.append((name, vals)))
    for a in (1, 2, 3):
        sw.process(0, bytes([a, 0x10, 0x20, 0x30]))
    assert got == [("learn_t", (1, 0x10)), ("learn_t", (0x20, 0x30)), ("learn_t", (7, 0x11))]


def test_entry_handles_reuse_the_lowest_free_slot_with_a_version_as_bmv2():
    """bmv2 gives an entry the lowest free slot of its table and versions the handle
    (version << 24 | slot): the entry reusing a freed slot gets 1 << 24 | slot, a handle
    kept past its entry's deletion is refused (EXPIRED_HANDLE), and the entry's direct
    counter is read and written by slot, whatever the version."""
    from p4switch.switch import DataplaneError
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["forward", "drop"],
            default=("drop", []))
    sw = switch_for(p)
    assert [sw.table_add("fwd", [exact(d)], fwd(2)) for d in (0xB1, 0xB2, 0xB3)] == [0, 1, 2]
    sw.table_delete("fwd", 1)
    sw.table_delete("fwd", 0)
    assert sw.table_add("fwd", [exact(0xB4)], fwd(3)) == 1 << 24        # slot 0, again
    assert sw.table_add("fwd", [exact(0xB5)], fwd(3)) == 1 << 24 | 1    # slot 1
    assert sw.table_add("fwd", [exact(0xB6)], fwd(3)) == 3              # a new slot
    for stale in (0, 1):
        with pytest.raises(DataplaneError, match="EXPIRED_HANDLE"):
            sw.table_modify("fwd", stale, fwd(1))
        with pytest.raises(DataplaneError, match="EXPIRED_HANDLE"):
            sw.table_delete("fwd", stale)
    with pytest.raises(DataplaneError, match="no entry with handle 7"):
        sw.table_delete("fwd", 7)
    sw.table_delete("fwd", 1 << 24)
    assert sw.table_add("fwd", [exact(0xB7)], fwd(3)) == 2 << 24        # slot 0's third
    # a refused add takes no slot
    with pytest.raises(DataplaneError, match="duplicate"):
        sw.table_add("fwd", [exact(0xB7)], fwd(3))
    assert sw.table_add("fwd", [exact(0xB8)], fwd(3)) == 4


def test_ternary_entries_of_equal_priority_match_in_slot_order():
    """bmv2 scans ternary entries by slot: at equal priority the entry in the lower slot
    wins, even when it was added later (into a slot a deleted entry freed)."""
    p = ethernet_program()
    p.table("ingress", "acl", [("ternary", ["ethernet", "dst"])], ["forward", "drop"],
            default=("drop", []))
    sw = switch_for(p)
    anything = MatchParam(MatchKind.TERNARY, 0, 0)
    first = sw.table_add("acl", [anything], fwd(1), priority=5)
    sw.table_add("acl", [MatchParam(MatchKind.TERNARY, 0xB2, 0xFF)], fwd(2), priority=5)
    f = frame(ipv4={})
    assert sw.process(1, f) == [(1, f)]
    sw.table_delete("acl", first)
    sw.table_add("acl", [anything], fwd(3), priority=5)     # slot 0 again: before slot 1
    assert sw.process(1, f) == [(3, f)]
    sw.table_add("acl", [MatchParam(MatchKind.TERNARY, 0xB2, 0xFF)], fwd(4), priority=6)
    assert sw.process(1, f) == [(4, f)]                     # a higher priority still wins


def test_a_range_whose_start_is_past_its_end_is_refused():
    """simple_switch_CLI refuses `table_add ... 9->3` ("Invalid match key"), and
    P4Runtime a range with low > high (INVALID_ARGUMENT): such an entry could never
    match."""
    from p4switch.switch import DataplaneError
    p = ethernet_program()
    p.table("ingress", "by_type", [("range", ["ethernet", "ether_type"])],
            ["forward", "drop"], default=("drop", []))
    sw = switch_for(p)
    with pytest.raises(DataplaneError, match="range start 0x900 is past its end 0x800"):
        sw.table_add("by_type", [MatchParam(MatchKind.RANGE, 0x900, high=0x800)], fwd(2),
                     priority=1)
    sw.table_add("by_type", [MatchParam(MatchKind.RANGE, 0x800, high=0x800)], fwd(2),
                 priority=1)
    f = frame(ipv4={})
    assert sw.process(1, f) == [(2, f)]


def test_key_values_and_action_data_wider_than_their_fields_are_refused():
    """simple_switch_CLI refuses both ("Parameter is too large", checked with real
    bmv2); the switch truncated action data and kept a key that could never match."""
    from p4switch.switch import DataplaneError
    p = ethernet_program()
    p.table("ingress", "by_type", [("exact", ["ethernet", "ether_type"])],
            ["forward", "drop"], default=("drop", []))
    sw = switch_for(p)
    with pytest.raises(DataplaneError, match="does not fit its 16 bits"):
        sw.table_add("by_type", [exact(0x10800)], fwd(2))
    with pytest.raises(DataplaneError, match=r"argument 0 \(0x202\) does not fit its 9 bits"):
        sw.table_add("by_type", [exact(0x0800)], fwd(0x202))
    with pytest.raises(DataplaneError, match="does not fit its 9 bits"):
        sw.table_set_default("by_type", fwd(0x202))
    sw.table_add("by_type", [exact(0x0800)], fwd(2))
    f = frame(ipv4={})
    assert sw.process(1, f) == [(2, f)]
