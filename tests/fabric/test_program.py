"""fabric.p4 compiles with the embedded compiler and exposes what the SM needs."""

from __future__ import annotations

from controller import drop_reasons


def _names(entities) -> set[str]:
    return {e.preamble.name for e in entities}


def test_p4info_has_the_tables_the_sm_fills(compiled):
    _, info = compiled
    tables = {t.preamble.name: t for t in info.tables}
    for name in ("FabricIngress.dlid_route", "FabricIngress.sl_to_vl",
                 "FabricIngress.fc_config", "FabricIngress.port_config"):
        assert name in tables, name
    keys = [(m.name, m.match_type) for m in tables["FabricIngress.dlid_route"].match_fields]
    assert keys == [("hdr.lrh.dlid", 2)]  # EXACT
    assert not tables["FabricIngress.fc_config"].match_fields  # keyless: default action only


def test_p4info_actions_keep_their_parameters(compiled):
    _, info = compiled
    actions = {a.preamble.name: [p.name for p in a.params] for a in info.actions}
    assert actions["FabricIngress.forward"] == ["port"]
    assert actions["FabricIngress.forward_frr"] == ["primary", "backup"]
    assert actions["FabricIngress.set_vl"] == ["vl"]
    assert actions["FabricIngress.set_port"] == ["pause_quantum_ns"]
    assert actions["FabricEgress.set_pace"] == ["frame_ns", "bound_ns"]
    assert actions["FabricIngress.set_fc_mode"] == [
        "mode", "xoff", "xon", "headroom", "credit_limit", "credit_coalesce",
        "hoq_lifetime_us", "watchdog_detect_us", "watchdog_restore_us"]


def test_p4info_has_the_telemetry_and_state(compiled):
    _, info = compiled
    counters = _names(info.counters)
    assert {"FabricIngress.drop_counter", "class_rx", "class_tx", "pause_tx", "pause_rx",
            "credit_tx", "credit_rx"} <= counters
    registers = _names(info.registers)
    assert {"blocked_ns", "buffer_peak", "fc_buffer", "fc_fctbs", "fc_fccl",
            "fc_paused_until_ns"} <= registers
    assert "port_down" not in registers and "egress_limit" not in registers
    tables = _names(info.tables)
    assert {"FabricIngress.port_liveness", "FabricIngress.egress_config",
            "FabricEgress.egress_pace"} <= tables
    controller = {h.preamble.name for h in info.controller_packet_metadata}
    assert controller == {"packet_in", "packet_out"}


def test_drop_reasons_fit_the_counter_block(compiled):
    bmv2, _ = compiled
    (enum,) = [e for e in bmv2["enums"] if e["name"] == "DropReason"]
    codes = sorted(v for _, v in enum["entries"])
    per_port = drop_reasons.load().per_port
    assert codes == list(range(len(codes))) and max(codes) < per_port


def test_bmv2_json_preserves_hold_and_flow_control_field_lists(compiled):
    bmv2, _ = compiled
    # by the @field_list index in the name: JSON ids are numbered from 1 in use order
    lists = {fl["name"]: {e["value"][1] for e in fl["elements"]} for fl in bmv2["field_lists"]}
    hold = {f.split(".")[-1] for f in lists["field_list1"]}
    assert {"ticket", "has_ticket", "held", "arrival_ts", "out_port", "in_port", "cls",
            "in_cls", "verdict", "is_data"} <= hold
    fc = {f.split(".")[-1] for f in lists["field_list2"]}
    assert {"fc_op", "fc_cls", "fc_credit_limit"} <= fc
