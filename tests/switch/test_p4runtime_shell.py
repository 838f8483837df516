"""p4runtime-shell as a real client of the server (fake data plane, fixture program)."""

from __future__ import annotations

import json

import pytest
from test_p4runtime_support import BMV2_JSON, DEVICE_ID, P4INFO_TEXT, start_server

sh = pytest.importorskip("p4runtime_sh.shell")
from p4runtime_sh.p4runtime import P4RuntimeWriteException  # noqa: E402

from p4switch.runtime_api import ActionCall  # noqa: E402


@pytest.fixture
def shell(tmp_path):
    server, dp, addr = start_server()
    p4info_path, json_path = tmp_path / "p4info.txt", tmp_path / "program.json"
    p4info_path.write_text(P4INFO_TEXT)
    json_path.write_text(json.dumps(BMV2_JSON))
    sh.setup(device_id=DEVICE_ID, grpc_addr=addr, election_id=(0, 1),
             config=sh.FwdPipeConfig(str(p4info_path), str(json_path)), verbose=False)
    yield dp
    sh.teardown()
    server.stop(None)


def test_shell_inserts_reads_and_deletes_a_table_entry(shell):
    dp = shell
    te = sh.TableEntry("FabricIngress.dlid_route")(action="FabricIngress.forward")
    te.match["hdr.lrh.dlid"] = "2"
    te.action["port"] = "1"
    te.insert()
    [(_, target, _)] = dp.tables["FabricIngress.dlid_route"].values()
    assert target == ActionCall("FabricIngress.forward", (1,))
    got = list(sh.TableEntry("FabricIngress.dlid_route").read())
    assert len(got) == 1
    assert got[0].match["hdr.lrh.dlid"].exact.value == b"\x02"
    assert got[0].action["port"].value == b"\x01"
    with pytest.raises(P4RuntimeWriteException) as e:
        te.insert()
    assert "ALREADY_EXISTS" in str(e.value)
    te.delete()
    assert list(sh.TableEntry("FabricIngress.dlid_route").read()) == []


def test_shell_reads_counters_and_sets_the_default_entry(shell):
    dp = shell
    dp.counters[("FabricIngress.rx_port_counter", 2)] = (100, 1)
    c = sh.CounterEntry("FabricIngress.rx_port_counter")
    c.index = 2
    [got] = list(c.read())
    assert (got.data.byte_count, got.data.packet_count) == (100, 1)
    d = sh.TableEntry("FabricIngress.dlid_route")(is_default=True, action="FabricIngress.forward")
    d.action["port"] = "9"
    d.modify()
    assert dp.defaults["FabricIngress.dlid_route"] == ActionCall("FabricIngress.forward", (9,))


def test_shell_multicast_group(shell):
    dp = shell
    mcg = sh.MulticastGroupEntry(3).add(1, 0).add(2, 0)
    mcg.insert()
    assert sorted(r.egress_port for r in dp.mc_groups[3]) == [1, 2]
