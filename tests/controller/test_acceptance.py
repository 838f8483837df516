"""The SM's acceptance checks: programs read back by cookie and P4Info, switches that
refuse the pipeline or cannot be reached, and cabling findings naming both ends."""

from __future__ import annotations

import dataclasses
import socket
import time

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from p4runtime_fake import FakeP4RuntimeServer

from controller.acceptance import cabling_findings, check_pipelines, program
from controller.discovery import Discovery, FoundLink, PortRef
from controller.p4runtime_client import SwitchConnection
from controller.sm import FabricError, connect_switches
from topologies.generators import build


class PipelineSwitch(FakeP4RuntimeServer):
    """The fake switch, answering GetForwardingPipelineConfig; `refuse` makes it refuse
    every pipeline as a switch with another architecture would."""

    def __init__(self, refuse: bool = False) -> None:
        super().__init__(device_id=1)
        self.config = None
        self.refuse = refuse

    def SetForwardingPipelineConfig(self, request, context):  # noqa: N802
        if self.refuse:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "bmv2 JSON refused by the data plane: unknown architecture")
        return super().SetForwardingPipelineConfig(request, context)

    def GetForwardingPipelineConfig(self, request, context):  # noqa: N802
        if self.config is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline")
        return p4runtime_pb2.GetForwardingPipelineConfigResponse(config=self.config)


@pytest.fixture
def intended(p4info_path, tmp_path):
    device_config = tmp_path / "fabric.json"
    device_config.write_text('{"program": "fabric"}')
    return program(p4info_path, device_config)


def _connected(server: PipelineSwitch, name: str) -> SwitchConnection:
    return SwitchConnection(name, server.start(), 1, (2, 0), timeout=5)


def test_a_switch_without_a_program_gets_the_intended_one_and_it_reads_back(intended):
    server = PipelineSwitch()
    conn = _connected(server, "s1")
    try:
        check = check_pipelines({"s1": conn}, intended)["s1"]
    finally:
        conn.close()
        server.stop()
    assert (check.status, check.pushed, check.running) == ("ok", True, intended.id)
    assert server.config.cookie.cookie == intended.id.cookie


def test_a_switch_running_another_version_is_left_as_found_and_named(intended):
    from fabriclab.bringup_faults import old_program

    old = old_program(intended)
    server = PipelineSwitch()
    conn = _connected(server, "s2")
    try:
        conn.set_pipeline(old.p4info, old.bmv2_json, cookie=old.id.cookie)
        check = check_pipelines({"s2": conn}, intended)["s2"]
    finally:
        conn.close()
        server.stop()
    assert check.status == "differs" and not check.pushed
    assert check.running.version == "old" and check.running.cookie == old.id.cookie
    assert f"cookie {intended.id.cookie:#018x}" in check.detail
    assert "runs version old" in check.detail


def test_a_switch_that_refuses_the_pipeline_is_named_with_its_reason(intended):
    server = PipelineSwitch(refuse=True)
    conn = _connected(server, "s3")
    try:
        check = check_pipelines({"s3": conn}, intended)["s3"]
    finally:
        conn.close()
        server.stop()
    assert check.status == "refused"
    assert "refused the pipeline" in check.detail and "unknown architecture" in check.detail


@pytest.mark.timing
def test_an_unreachable_switch_is_named_within_the_timeout():
    fabric = build("line:2")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{sock.getsockname()[1]}"
    server = PipelineSwitch()
    addresses = {"s1": server.start(), "s2": dead}
    started = time.monotonic()
    try:
        with pytest.raises(FabricError) as info:
            connect_switches(fabric, addresses, timeout=1.0)
    finally:
        server.stop()
    assert time.monotonic() - started < 10
    assert set(info.value.errors) == {"s2"}
    assert "no P4Runtime server" in str(info.value.errors["s2"])


# --------------------------------------------------------------------------- cabling


def _found(fabric, drop=(), swap=None) -> Discovery:
    """What probes would find on `fabric`'s switch links, less `drop`, with `swap`."""
    links = set()
    for link in fabric.links:
        if fabric.node(link.a).kind.value == "host" or fabric.node(link.b).kind.value == "host":
            continue
        if {link.a, link.b} in [set(d) for d in drop]:
            continue
        a, b = PortRef(link.a, link.a_port), PortRef(link.b, link.b_port)
        links |= {FoundLink(a, b), FoundLink(b, a)}
    return Discovery(frozenset(links), (), 0)


def test_a_cabled_fabric_has_no_findings():
    fabric = build("leafspine:2,2,2")
    assert cabling_findings(fabric, _found(fabric)) == []


def test_a_missing_cable_is_one_finding_naming_both_ends():
    fabric = build("leafspine:2,2,2")
    findings = cabling_findings(fabric, _found(fabric, drop=[("s2", "s4")]))
    assert [(f.kind, f.link) for f in findings] == [("missing", "s2:4-s4:2")]
    assert "s2:4 <-> s4:2" in findings[0].text


def test_swapped_cables_are_two_miswired_findings_saying_where_each_end_goes():
    intended = build("leafspine:3,2,2")
    delivered = build("leafspine:3,2,2")
    links = list(delivered.links)
    i = next(k for k, lk in enumerate(links) if (lk.a, lk.b) == ("s1", "s4"))
    j = next(k for k, lk in enumerate(links) if (lk.a, lk.b) == ("s2", "s5"))
    links[i], links[j] = (dataclasses.replace(links[i], b="s5", b_port=links[j].b_port),
                          dataclasses.replace(links[j], b="s4", b_port=links[i].b_port))
    delivered = dataclasses.replace(delivered, links=tuple(links))
    findings = cabling_findings(intended, _found(delivered))
    assert [(f.kind, f.link) for f in findings] == [("miswired", "s1:3-s4:1"),
                                                    ("miswired", "s2:4-s5:2")]
    assert findings[0].text == ("miswired cable s1:3 <-> s4:1: s1:3 reaches s5:2, "
                                "s4:1 reaches s2:4")


def test_a_cable_on_a_host_port_that_reaches_a_switch_is_unexpected():
    fabric = build("leafspine:2,2,2")
    found = _found(fabric)
    extra = frozenset({FoundLink(PortRef("s1", 1), PortRef("s2", 1))})
    findings = cabling_findings(fabric, dataclasses.replace(found, links=found.links | extra))
    assert [(f.kind, f.text) for f in findings] == [
        ("unexpected", "unexpected cable s1:1 <-> s2:1: the intended fabric has no link "
                       "at s1:1")]
