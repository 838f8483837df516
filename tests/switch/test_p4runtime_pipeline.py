"""P4Runtime conformance: Capabilities, Set/GetForwardingPipelineConfig, arbitration."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from test_p4runtime_support import (
    DEVICE_ID,
    Client,
    device_config,
    p4info,
    start_server,
)

Set = p4runtime_pb2.SetForwardingPipelineConfigRequest
Get = p4runtime_pb2.GetForwardingPipelineConfigRequest


@pytest.fixture
def switch():
    server, dp, addr = start_server()
    clients: list[Client] = []

    def client(election_id=1, device_id=DEVICE_ID):
        c = Client(addr, device_id=device_id, election_id=election_id)
        clients.append(c)
        return c

    yield client, dp, server
    for c in clients:
        c.close()
    server.stop(None)


def test_capabilities_reports_api_version(switch):
    client, _, _ = switch
    resp = client().stub.Capabilities(p4runtime_pb2.CapabilitiesRequest())
    assert resp.p4runtime_api_version.startswith("1.4")


def test_verify_and_commit_loads_the_bmv2_json_into_the_dataplane(switch):
    client, dp, _ = switch
    c = client()
    c.primary()
    c.set_pipeline(cookie=42)
    assert dp.programs and dp.programs[-1]["pipelines"][0]["name"] == "ingress"
    resp = c.stub.GetForwardingPipelineConfig(Get(device_id=DEVICE_ID, response_type=Get.ALL))
    assert resp.config.p4info == p4info()
    assert resp.config.p4_device_config == device_config()
    assert resp.config.cookie.cookie == 42


@pytest.mark.parametrize("rtype, has_p4info, has_json", [
    (Get.COOKIE_ONLY, False, False),
    (Get.P4INFO_AND_COOKIE, True, False),
    (Get.DEVICE_CONFIG_AND_COOKIE, False, True),
])
def test_get_pipeline_response_types(switch, rtype, has_p4info, has_json):
    client, _, _ = switch
    c = client()
    c.primary()
    c.set_pipeline(cookie=5)
    resp = c.stub.GetForwardingPipelineConfig(Get(device_id=DEVICE_ID, response_type=rtype))
    assert resp.config.cookie.cookie == 5
    assert resp.config.HasField("p4info") == has_p4info
    assert bool(resp.config.p4_device_config) == has_json


def test_get_pipeline_before_any_is_failed_precondition(switch):
    client, _, _ = switch
    with pytest.raises(grpc.RpcError) as e:
        client().stub.GetForwardingPipelineConfig(Get(device_id=DEVICE_ID))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_verify_does_not_load(switch):
    client, dp, _ = switch
    c = client()
    c.primary()
    c.set_pipeline(action=Set.VERIFY)
    assert dp.programs == []


def test_verify_and_save_then_commit(switch):
    client, dp, _ = switch
    c = client()
    c.primary()
    c.set_pipeline(action=Set.VERIFY_AND_SAVE)
    assert dp.programs == []
    c.set_pipeline(action=Set.COMMIT, with_config=False)
    assert len(dp.programs) == 1


def test_commit_without_saved_config_is_failed_precondition(switch):
    client, _, _ = switch
    c = client()
    c.primary()
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(action=Set.COMMIT, with_config=False)
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_unspecified_action_is_invalid_argument(switch):
    client, _, _ = switch
    c = client()
    c.primary()
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(action=Set.UNSPECIFIED)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_bad_json_is_invalid_argument(switch):
    client, dp, _ = switch
    c = client()
    c.primary()
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(config=b"{not json")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dp.programs == []


def test_p4info_naming_an_object_missing_from_the_json_is_invalid_argument(switch):
    client, _, _ = switch
    c = client()
    c.primary()
    info = p4info()
    info.tables[0].preamble.name = "FabricIngress.nope"
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(info=info)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "FabricIngress.nope" in e.value.details()


def test_set_pipeline_needs_the_primary(switch):
    client, _, _ = switch
    c = client(election_id=5)
    c.primary()
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(election_id=4)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as e:
        client(election_id=9).set_pipeline()  # no stream at all
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_wrong_device_id_is_not_found_everywhere(switch):
    client, _, _ = switch
    c = client()
    c.primary()
    with pytest.raises(grpc.RpcError) as e:
        c.stub.GetForwardingPipelineConfig(Get(device_id=DEVICE_ID + 1))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    bad = client(device_id=DEVICE_ID + 1)
    with pytest.raises(grpc.RpcError) as e:
        bad.set_pipeline()
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    s = bad.stream()
    s.arbitrate(device_id=DEVICE_ID + 1)
    assert s.next() is None
    assert s.error.code() == grpc.StatusCode.NOT_FOUND


# ---- arbitration ----------------------------------------------------------------------
def test_highest_election_id_is_primary_and_everyone_is_told(switch):
    client, _, _ = switch
    a, b = client(election_id=10), client(election_id=20)
    sa = a.primary()
    sb = b.stream()
    sb.arbitrate(election_id=20)
    assert sb.next("arbitration").arbitration.status.code == code_pb2.OK
    note = sa.next("arbitration").arbitration
    assert note.status.code == code_pb2.ALREADY_EXISTS
    assert (note.election_id.high, note.election_id.low) == (0, 20)


def test_lower_election_id_is_backup_and_only_it_is_told(switch):
    client, _, _ = switch
    a, b = client(election_id=20), client(election_id=10)
    sa = a.primary()
    sb = b.stream()
    sb.arbitrate(election_id=10)
    note = sb.next("arbitration").arbitration
    assert note.status.code == code_pb2.ALREADY_EXISTS
    assert note.election_id.low == 20
    assert sa.nothing()


def test_duplicate_election_id_is_invalid_argument(switch):
    client, _, _ = switch
    client(election_id=3).primary()
    s = client(election_id=3).stream()
    s.arbitrate(election_id=3)
    assert s.next() is None
    assert s.error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_primary_leaving_tells_backups_there_is_no_primary(switch):
    client, _, _ = switch
    a, b = client(election_id=20), client(election_id=10)
    sa = a.primary()
    sb = b.stream()
    sb.arbitrate(election_id=10)
    sb.next("arbitration")
    sa.close()
    note = sb.next("arbitration").arbitration
    assert note.status.code == code_pb2.NOT_FOUND
    # a backup takes over by sending an id >= the highest seen
    sb.arbitrate(election_id=20)
    assert sb.next("arbitration").arbitration.status.code == code_pb2.OK
    b.election_id = 20
    b.set_pipeline()


def test_backup_writes_are_permission_denied(switch):
    client, _, _ = switch
    a, b = client(election_id=20), client(election_id=10)
    a.primary()
    a.set_pipeline()
    sb = b.stream()
    sb.arbitrate(election_id=10)
    sb.next("arbitration")
    with pytest.raises(grpc.RpcError) as e:
        b.write()
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # reads need no arbitration
    read = b.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))
    assert [e.table_entry.is_const for e in read] == [True]  # only the program's const entry


def test_primary_downgrading_itself_tells_everyone(switch):
    client, _, _ = switch
    a, b = client(election_id=20), client(election_id=10)
    sa = a.primary()
    sb = b.stream()
    sb.arbitrate(election_id=10)
    sb.next("arbitration")
    sa.arbitrate(election_id=5)
    assert sa.next("arbitration").arbitration.status.code == code_pb2.NOT_FOUND
    assert sb.next("arbitration").arbitration.status.code == code_pb2.NOT_FOUND


def test_changing_device_id_on_a_live_stream_is_failed_precondition(switch):
    client, _, _ = switch
    s = client().primary()
    s.arbitrate(device_id=DEVICE_ID + 1)
    assert s.next("nothing-matches") is None
    assert s.error.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_unset_election_id_is_a_backup_that_never_becomes_primary(switch):
    client, _, _ = switch
    s = client().stream()
    s.arbitrate(election_id=None)
    note = s.next("arbitration").arbitration
    assert note.status.code == code_pb2.NOT_FOUND
    assert not note.HasField("election_id")


def test_roles_are_arbitrated_separately(switch):
    client, _, _ = switch
    a = client(election_id=1).stream()
    a.arbitrate(election_id=1, role="sm")
    assert a.next("arbitration").arbitration.status.code == code_pb2.OK
    b = client(election_id=1).stream()
    b.arbitrate(election_id=1, role="agent")
    msg = b.next("arbitration").arbitration
    assert msg.status.code == code_pb2.OK and msg.role.name == "agent"


def test_an_unreferenced_p4info_action_missing_from_the_json_is_accepted(switch):
    """An action no table refers to (one only called from other actions, which
    compilers inline) may be absent from the JSON, as simple_switch_grpc allows;
    one a table refers to may not."""
    client, _, _ = switch
    c = client()
    c.primary()
    info = p4info()
    extra = info.actions.add()
    extra.preamble.id = 0x01FFFFFF
    extra.preamble.name = "FabricIngress.only_called_from_actions"
    extra.preamble.alias = "only_called_from_actions"
    c.set_pipeline(info=info)
    info.tables[0].action_refs.add(id=extra.preamble.id)
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(info=info)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "only_called_from_actions" in e.value.details()
