"""P4Runtime conformance: Write and Read of every entity kind, with the spec's codes."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from test_p4runtime_support import (
    IDS,
    Client,
    acl_entry,
    p4info,
    route_entry,
    start_server,
    update,
    write_errors,
)

from p4switch.runtime_api import ActionCall, IndirectTarget, MatchKind, MatchParam, Replica

Entity = p4runtime_pb2.Entity
TE = p4runtime_pb2.TableEntry
WR = p4runtime_pb2.WriteRequest


@pytest.fixture
def sw():
    server, dp, addr = start_server()
    c = Client(addr)
    c.primary()
    c.set_pipeline()
    yield c, dp
    c.close()
    server.stop(None)


def error_code(c: Client, *updates, **kw) -> int:
    """The canonical code of the one failing update of a Write."""
    with pytest.raises(grpc.RpcError) as e:
        c.write(*updates, **kw)
    codes = [err.canonical_code for err in write_errors(e.value)]
    bad = [x for x in codes if x != code_pb2.OK]
    assert len(bad) == 1, codes
    return bad[0]


def read_tables(c: Client, **kw) -> list[TE]:
    return [e.table_entry for e in c.read(Entity(table_entry=TE(**kw)))]


# ---- table entries ----------------------------------------------------------------------
def test_insert_reaches_the_dataplane_and_reads_back_the_same(sw):
    c, dp = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x02", b"\x01")))
    [(key, target, prio)] = dp.tables["FabricIngress.dlid_route"].values()
    assert key == (MatchParam(MatchKind.EXACT, value=2),)
    assert target == ActionCall("FabricIngress.forward", (1,))
    assert read_tables(c, table_id=IDS["dlid_route"]) == [route_entry(b"\x02", b"\x01")]


def test_padded_byte_strings_are_accepted_and_read_back_canonical(sw):
    c, _ = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x00\x02", b"\x00\x01")))
    c.write(update("INSERT", table_entry=route_entry(b"\x00\x00\x03", b"\x00\x00\x01")))
    got = read_tables(c, table_id=IDS["dlid_route"])
    assert sorted(e.match[0].exact.value for e in got) == [b"\x02", b"\x03"]
    assert {e.action.action.params[0].value for e in got} == {b"\x01"}


@pytest.mark.parametrize("entry", [
    route_entry(b"\x01\x00\x00"),            # dlid is 16 bits
    route_entry(b"\x02", b"\x02\x00"),       # port is 9 bits
    route_entry(b""),                        # empty byte string
    route_entry(b"\x02", b""),
])
def test_values_wider_than_the_field_are_invalid_argument(sw, entry):
    c, _ = sw
    assert error_code(c, update("INSERT", table_entry=entry)) == code_pb2.INVALID_ARGUMENT


def test_duplicate_insert_is_already_exists(sw):
    c, _ = sw
    c.write(update("INSERT", table_entry=route_entry()))
    assert error_code(c, update("INSERT", table_entry=route_entry())) == code_pb2.ALREADY_EXISTS


def test_a_bad_action_is_invalid_argument_before_the_key_is_looked_up(sw):
    """As on simple_switch_grpc, which checks the whole entry before the table: an
    INSERT of an existing key or a MODIFY of a missing one with an action the table does
    not have is INVALID_ARGUMENT (the embedded switch said ALREADY_EXISTS / NOT_FOUND)."""
    c, _ = sw
    c.write(update("INSERT", table_entry=route_entry()))
    bad = route_entry(action="drop", port=None)
    assert error_code(c, update("INSERT", table_entry=bad)) == code_pb2.INVALID_ARGUMENT
    missing = route_entry(b"\x09", action="drop", port=None)
    assert error_code(c, update("MODIFY", table_entry=missing)) == code_pb2.INVALID_ARGUMENT


def test_a_modify_without_action_is_invalid_argument_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc: "'action' field must be set for non-default entries", for an
    entry that exists or not; the embedded switch kept the entry's action (or said
    NOT_FOUND)."""
    c, dp = sw
    c.write(update("INSERT", table_entry=route_entry()))
    for dlid in (b"\x02", b"\x09"):
        te = route_entry(dlid, action=None)
        te.counter_data.packet_count = 3
        assert error_code(c, update("MODIFY", table_entry=te)) == code_pb2.INVALID_ARGUMENT
    [h] = dp.tables["FabricIngress.dlid_route"]
    assert dp.direct_counters.get(("FabricIngress.dlid_route", h), (0, 0)) == (0, 0)


def test_modify_and_delete_of_a_missing_entry_are_not_found(sw):
    c, _ = sw
    assert error_code(c, update("MODIFY", table_entry=route_entry())) == code_pb2.NOT_FOUND
    assert error_code(c, update("DELETE", table_entry=route_entry())) == code_pb2.NOT_FOUND


def test_modify_and_delete(sw):
    c, dp = sw
    c.write(update("INSERT", table_entry=route_entry(port=b"\x01")))
    c.write(update("MODIFY", table_entry=route_entry(port=b"\x05")))
    [(_, target, _)] = dp.tables["FabricIngress.dlid_route"].values()
    assert target == ActionCall("FabricIngress.forward", (5,))
    assert read_tables(c, table_id=IDS["dlid_route"])[0].action.action.params[0].value == b"\x05"
    # DELETE looks only at the key: a nonsensical action is ignored
    c.write(update("DELETE", table_entry=route_entry(port=None, action="drop")))
    assert dp.tables["FabricIngress.dlid_route"] == {}
    assert read_tables(c, table_id=IDS["dlid_route"]) == []


def test_unknown_p4_ids_are_invalid_argument_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc (PI) answers 'Invalid P4 id' with INVALID_ARGUMENT for a table,
    counter, meter or action profile id the P4Info lacks, in writes and reads; the
    embedded switch answered NOT_FOUND. Digest ids stay NOT_FOUND, as there."""
    c, _ = sw
    te = route_entry()
    te.table_id = 12345
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.INVALID_ARGUMENT
    assert error_code(c, update("DELETE", table_entry=te)) == code_pb2.INVALID_ARGUMENT
    ce = p4runtime_pb2.CounterEntry(counter_id=12345, index=p4runtime_pb2.Index(index=1))
    assert error_code(c, update("MODIFY", counter_entry=ce)) == code_pb2.INVALID_ARGUMENT
    me = p4runtime_pb2.MeterEntry(meter_id=12345, index=p4runtime_pb2.Index(index=1))
    assert error_code(c, update("MODIFY", meter_entry=me)) == code_pb2.INVALID_ARGUMENT
    for query in (Entity(table_entry=TE(table_id=12345)), Entity(counter_entry=ce),
                  Entity(meter_entry=me),
                  Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(
                      action_profile_id=12345)),
                  Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(
                      table_entry=TE(table_id=12345)))):
        with pytest.raises(grpc.RpcError) as err:
            c.read(query)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, query


@pytest.mark.parametrize("mutate", [
    lambda te: setattr(te.match[0], "field_id", 9),                 # unknown match field
    lambda te: setattr(te.action.action, "action_id", IDS["drop"]),  # not an action of the table
    lambda te: setattr(te.action.action, "action_id", 999),         # no such action
    lambda te: te.action.action.ClearField("params"),                # missing parameter
    lambda te: te.action.action.params.add(param_id=7, value=b"\x01"),  # unknown parameter
    lambda te: te.ClearField("match"),                               # exact field missing
    lambda te: setattr(te, "priority", 3),                           # priority on an exact table
    lambda te: setattr(te, "is_const", True),
    lambda te: te.ClearField("action"),                              # INSERT without action
    lambda te: setattr(te.action, "action_profile_member_id", 1),    # indirect action, direct table
])
def test_malformed_entries_are_invalid_argument(sw, mutate):
    c, _ = sw
    te = route_entry()
    mutate(te)
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.INVALID_ARGUMENT


def test_idle_timeout_on_a_table_without_idle_timeout_is_invalid_argument(sw):
    """As on simple_switch_grpc (PI: 'idle_timeout_ns must be set to 0 for tables which do
    not support idle timeout'); the embedded switch used to store it and never age it."""
    c, dp = sw
    te = route_entry(idle_timeout_ns=1_000_000)
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.INVALID_ARGUMENT
    assert dp.tables.get("FabricIngress.dlid_route", {}) == {}
    c.write(update("INSERT", table_entry=route_entry()))
    assert error_code(c, update("MODIFY", table_entry=te)) == code_pb2.INVALID_ARGUMENT


def test_ternary_range_optional_entries(sw):
    c, dp = sw
    te = acl_entry(priority=10, mac=(b"\x0a", b"\xff"), slid=(b"\x01", b"\x10"), sl=b"\x02")
    c.write(update("INSERT", table_entry=te))
    [(key, target, prio)] = dp.tables["FabricIngress.acl"].values()
    assert prio == 10
    assert key == (
        MatchParam(MatchKind.TERNARY, value=0x0A, mask=0xFF),
        MatchParam(MatchKind.RANGE, value=1, high=0x10),
        MatchParam(MatchKind.OPTIONAL, value=2),
    )
    # don't care fields are omitted in P4Runtime and filled in for the data plane
    c.write(update("INSERT", table_entry=acl_entry(priority=5, mac=None)))
    keys = [k for k, _, p in dp.tables["FabricIngress.acl"].values() if p == 5]
    assert keys == [(
        MatchParam(MatchKind.TERNARY, value=0, mask=0),
        MatchParam(MatchKind.RANGE, value=0, high=0xFFFF),
        MatchParam(MatchKind.OPTIONAL, wildcard=True),
    )]
    assert read_tables(c, table_id=IDS["acl"], priority=10) == [te]


@pytest.mark.parametrize("entry", [
    acl_entry(priority=0),                                     # priority required
    acl_entry(mac=(b"\x0b", b"\x0a")),                         # value & ~mask != 0
    acl_entry(mac=(b"\x00", b"\x00")),                         # don't care must be omitted
    acl_entry(slid=(b"\x10", b"\x01")),                        # low > high
    acl_entry(slid=(b"\x00", b"\xff\xff")),                    # full range must be omitted
    acl_entry(sl=b"\x10"),                                     # sl is 4 bits
])
def test_bad_ternary_range_optional_are_invalid_argument(sw, entry):
    c, _ = sw
    assert error_code(c, update("INSERT", table_entry=entry)) == code_pb2.INVALID_ARGUMENT


def lpm_entry(value: bytes, plen: int) -> TE:
    te = TE(table_id=IDS["lpm_route"])
    fm = te.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = value, plen
    te.action.action.action_id = IDS["forward"]
    te.action.action.params.add(param_id=1, value=b"\x01")
    return te


def test_lpm_rules(sw):
    c, dp = sw
    c.write(update("INSERT", table_entry=lpm_entry(b"\x0a\x00\x00\x00", 8)))
    [(key, _, _)] = dp.tables["FabricIngress.lpm_route"].values()
    assert key == (MatchParam(MatchKind.LPM, value=0x0A000000, prefix_len=8),)
    for bad in (lpm_entry(b"\x0a\x01\x00\x00", 8), lpm_entry(b"\x00", 0), lpm_entry(b"\x01", 33)):
        assert error_code(c, update("INSERT", table_entry=bad)) == code_pb2.INVALID_ARGUMENT


def test_action_scopes_are_permission_denied(sw):
    c, _ = sw
    te = route_entry(action="NoAction", port=None)  # @defaultonly used in an entry
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.PERMISSION_DENIED
    d = TE(table_id=IDS["acl"], is_default_action=True)  # @tableonly used as default
    d.action.action.action_id = IDS["drop"]
    assert error_code(c, update("MODIFY", table_entry=d)) == code_pb2.PERMISSION_DENIED


def test_default_entry_modify_read_and_reset(sw):
    c, dp = sw
    [d] = read_tables(c, table_id=IDS["dlid_route"], is_default_action=True)
    assert d.is_default_action and d.action.action.action_id == IDS["no_route"]
    [d] = read_tables(c, table_id=IDS["lpm_route"], is_default_action=True)
    assert d.action.action.params[0].value == b"\x05"  # from the JSON's default_entry
    new = route_entry(action="forward", port=b"\x07")
    new.ClearField("match")
    new.is_default_action = True
    c.write(update("MODIFY", table_entry=new))
    assert dp.defaults["FabricIngress.dlid_route"] == ActionCall("FabricIngress.forward", (7,))
    assert read_tables(c, table_id=IDS["dlid_route"], is_default_action=True) == [new]
    c.write(update("MODIFY", table_entry=TE(table_id=IDS["dlid_route"], is_default_action=True)))
    assert dp.defaults["FabricIngress.dlid_route"] is None
    [d] = read_tables(c, table_id=IDS["dlid_route"], is_default_action=True)
    assert d.action.action.action_id == IDS["no_route"]
    # a wildcard read does not return default entries
    assert all(not e.is_default_action for e in read_tables(c))


def test_default_entry_insert_or_delete_is_invalid_argument(sw):
    c, _ = sw
    d = TE(table_id=IDS["dlid_route"], is_default_action=True)
    d.action.action.action_id = IDS["no_route"]
    assert error_code(c, update("INSERT", table_entry=d)) == code_pb2.INVALID_ARGUMENT
    assert error_code(c, update("DELETE", table_entry=d)) == code_pb2.INVALID_ARGUMENT
    d2 = route_entry(action="no_route", port=None, is_default_action=True)  # match not empty
    assert error_code(c, update("MODIFY", table_entry=d2)) == code_pb2.INVALID_ARGUMENT


def test_const_default_action_and_const_table_are_permission_denied(sw):
    c, _ = sw
    d = TE(table_id=IDS["ecmp"], is_default_action=True)
    d.action.action.action_id = IDS["NoAction"]
    assert error_code(c, update("MODIFY", table_entry=d)) == code_pb2.PERMISSION_DENIED
    te = TE(table_id=IDS["kind_class"])
    te.match.add(field_id=1).exact.value = b"\x04"
    te.action.action.action_id = IDS["NoAction"]
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.PERMISSION_DENIED
    [const] = read_tables(c, table_id=IDS["kind_class"])
    assert const.is_const and const.match[0].exact.value == b"\x03"
    assert const.action.action.params[0].value == b"\x0a"


def test_write_without_pipeline_is_failed_precondition():
    server, _, addr = start_server()
    c = Client(addr)
    try:
        c.primary()
        with pytest.raises(grpc.RpcError) as e:
            c.write(update("INSERT", table_entry=route_entry()))
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.RpcError) as e:
            c.read(Entity(table_entry=TE()))
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        c.close()
        server.stop(None)


def test_write_with_a_stale_election_id_is_permission_denied(sw):
    c, _ = sw
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("INSERT", table_entry=route_entry()), election_id=c.election_id + 1)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_write_to_another_device_is_not_found(sw):
    c, _ = sw
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("INSERT", table_entry=route_entry()), device_id=99)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


# ---- batches --------------------------------------------------------------------------------
def test_continue_on_error_applies_the_good_updates_and_reports_each(sw):
    c, dp = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x02")))
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("INSERT", table_entry=route_entry(b"\x01")),
                update("INSERT", table_entry=route_entry(b"\x02")),
                update("INSERT", table_entry=route_entry(b"\x03")))
    codes = [err.canonical_code for err in write_errors(e.value)]
    assert codes == [code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.OK]
    assert len(dp.tables["FabricIngress.dlid_route"]) == 3


def test_rollback_on_error_undoes_the_batch(sw):
    c, dp = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x02", b"\x01")))
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("INSERT", table_entry=route_entry(b"\x01")),
                update("MODIFY", table_entry=route_entry(b"\x02", b"\x09")),
                update("INSERT", table_entry=route_entry(b"\x02")),
                update("INSERT", table_entry=route_entry(b"\x04")),
                atomicity=WR.ROLLBACK_ON_ERROR)
    codes = [err.canonical_code for err in write_errors(e.value)]
    assert codes == [code_pb2.ABORTED, code_pb2.ABORTED, code_pb2.ALREADY_EXISTS, code_pb2.ABORTED]
    assert [(t.action.action.params[0].value) for t in read_tables(c, table_id=IDS["dlid_route"])] == [b"\x01"]
    [(key, target, _)] = dp.tables["FabricIngress.dlid_route"].values()
    assert target == ActionCall("FabricIngress.forward", (1,))


def test_dataplane_atomic_is_unimplemented(sw):
    c, _ = sw
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("INSERT", table_entry=route_entry()), atomicity=WR.DATAPLANE_ATOMIC)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_dataplane_failure_is_reported_not_fatal(sw):
    c, dp = sw
    dp.fail_next = "table_add"
    assert error_code(c, update("INSERT", table_entry=route_entry())) == code_pb2.INTERNAL
    assert read_tables(c, table_id=IDS["dlid_route"]) == []
    c.write(update("INSERT", table_entry=route_entry()))


# ---- action profiles ---------------------------------------------------------------------------
def member(mid: int, port: bytes = b"\x01") -> p4runtime_pb2.ActionProfileMember:
    m = p4runtime_pb2.ActionProfileMember(action_profile_id=IDS["ecmp_selector"], member_id=mid)
    m.action.action_id = IDS["forward"]
    m.action.params.add(param_id=1, value=port)
    return m


def group(gid: int, *mids: int, max_size=4) -> p4runtime_pb2.ActionProfileGroup:
    g = p4runtime_pb2.ActionProfileGroup(
        action_profile_id=IDS["ecmp_selector"], group_id=gid, max_size=max_size)
    for m in mids:
        g.members.add(member_id=m, weight=1)
    return g


def test_action_profile_members_groups_and_indirect_entries(sw):
    c, dp = sw
    c.write(update("INSERT", action_profile_member=member(1, b"\x01")),
            update("INSERT", action_profile_member=member(2, b"\x02")),
            update("INSERT", action_profile_group=group(10, 1, 2)))
    assert dp.groups[("FabricIngress.ecmp_selector", 10)] == [1, 2]
    te = TE(table_id=IDS["ecmp"])
    te.match.add(field_id=1).exact.value = b"\x05"
    te.action.action_profile_group_id = 10
    c.write(update("INSERT", table_entry=te))
    [(_, target, _)] = dp.tables["FabricIngress.ecmp"].values()
    assert target == IndirectTarget(group=10)
    got = c.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()))
    assert [e.action_profile_member.member_id for e in got] == [1, 2]
    got = c.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(
        action_profile_id=IDS["ecmp_selector"])))
    assert got[0].action_profile_group == group(10, 1, 2)
    c.write(update("DELETE", table_entry=te), update("DELETE", action_profile_group=group(10)),
            update("DELETE", action_profile_member=member(1)))
    assert ("FabricIngress.ecmp_selector", 1) not in dp.members


def test_a_member_may_call_a_defaultonly_action_as_on_simple_switch_grpc(sw):
    """PI does not check an action's scope for a member: real simple_switch_grpc takes a
    NoAction member on a table where NoAction is @defaultonly."""
    c, dp = sw
    m = p4runtime_pb2.ActionProfileMember(action_profile_id=IDS["ecmp_selector"], member_id=7)
    m.action.action_id = IDS["NoAction"]
    c.write(update("INSERT", action_profile_member=m))
    assert ("FabricIngress.ecmp_selector", 7) in dp.members


def test_deleting_a_member_or_group_still_in_use_is_unknown_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc passes the delete to bmv2, which refuses it (MBR_STILL_USED,
    GRP_STILL_USED), and PI answers UNKNOWN 'Error when deleting member on target'
    (seen on real simple_switch_grpc: a member an entry points at, a member of a group,
    a group an entry points at); once the entries are gone the deletes go through."""
    c, dp = sw
    c.write(update("INSERT", action_profile_member=member(1, b"\x01")),
            update("INSERT", action_profile_member=member(2, b"\x02")),
            update("INSERT", action_profile_group=group(10, 1)))
    by_member, by_group = TE(table_id=IDS["ecmp"]), TE(table_id=IDS["ecmp"])
    by_member.match.add(field_id=1).exact.value = b"\x05"
    by_member.action.action_profile_member_id = 2
    by_group.match.add(field_id=1).exact.value = b"\x06"
    by_group.action.action_profile_group_id = 10
    c.write(update("INSERT", table_entry=by_member), update("INSERT", table_entry=by_group))
    for still_used, target in ((member(2), "member"), (member(1), "member"),
                               (group(10), "group")):
        kind = "action_profile_member" if target == "member" else "action_profile_group"
        with pytest.raises(grpc.RpcError) as e:
            c.write(update("DELETE", **{kind: still_used}))
        [err] = write_errors(e.value)
        assert err.canonical_code == code_pb2.UNKNOWN
        assert err.message.startswith(f"Error when deleting {target} on target")
    assert ("FabricIngress.ecmp_selector", 2) in dp.members
    c.write(update("DELETE", table_entry=by_member), update("DELETE", table_entry=by_group),
            update("DELETE", action_profile_member=member(2)),
            update("DELETE", action_profile_group=group(10)),
            update("DELETE", action_profile_member=member(1)))
    assert not [k for k in dp.members if k[0] == "FabricIngress.ecmp_selector"]


def test_action_profile_errors(sw):
    c, _ = sw
    c.write(update("INSERT", action_profile_member=member(1)))
    assert error_code(c, update("INSERT", action_profile_member=member(1))) == code_pb2.ALREADY_EXISTS
    assert error_code(c, update("MODIFY", action_profile_member=member(9))) == code_pb2.NOT_FOUND
    assert error_code(c, update("INSERT", action_profile_group=group(10, 9))) == code_pb2.NOT_FOUND
    assert error_code(c, update("INSERT", action_profile_group=group(10, 1, max_size=8))) \
        == code_pb2.RESOURCE_EXHAUSTED
    bad = member(3)
    bad.action_profile_id = 4242
    assert error_code(c, update("INSERT", action_profile_member=bad)) == code_pb2.INVALID_ARGUMENT
    te = TE(table_id=IDS["ecmp"])
    te.match.add(field_id=1).exact.value = b"\x05"
    te.action.action_profile_member_id = 77  # simple_switch_grpc: 'Invalid member / group id'
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.INVALID_ARGUMENT
    te.action.action_profile_group_id = 77
    assert error_code(c, update("INSERT", table_entry=te)) == code_pb2.INVALID_ARGUMENT


def test_a_group_member_of_weight_0_is_invalid_argument_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc: 'Member weight must be a positive integer value'; the embedded
    switch took a weight of 0 as 1."""
    c, dp = sw
    c.write(update("INSERT", action_profile_member=member(1)))
    g = group(10, 1)
    g.members[0].weight = 0
    assert error_code(c, update("INSERT", action_profile_group=g)) == code_pb2.INVALID_ARGUMENT
    assert ("FabricIngress.ecmp_selector", 10) not in dp.groups


def test_the_default_entry_of_an_indirect_table_cannot_be_set_or_reset(sw):
    """simple_switch_grpc refuses both with INVALID_ARGUMENT ('Cannot set / reset default
    action for indirect table'); the embedded switch refused a set with
    PERMISSION_DENIED and took a reset. (A const default action is PERMISSION_DENIED
    first, as there.)"""
    c, _ = sw
    info = p4info()
    [ecmp] = [t for t in info.tables if t.preamble.id == IDS["ecmp"]]
    ecmp.const_default_action_id = 0
    c.set_pipeline(info=info)
    d = TE(table_id=IDS["ecmp"], is_default_action=True)
    assert error_code(c, update("MODIFY", table_entry=d)) == code_pb2.INVALID_ARGUMENT
    d.action.action.action_id = IDS["NoAction"]
    assert error_code(c, update("MODIFY", table_entry=d)) == code_pb2.INVALID_ARGUMENT


# ---- counters, meters, registers -----------------------------------------------------------------
def counter(cid: str, index: int | None = None, nbytes=0, packets=0) -> p4runtime_pb2.CounterEntry:
    ce = p4runtime_pb2.CounterEntry(counter_id=IDS[cid])
    if index is not None:
        ce.index.index = index
    ce.data.byte_count, ce.data.packet_count = nbytes, packets
    return ce


def test_counters_read_write_and_wildcards(sw):
    c, dp = sw
    dp.counters[("FabricIngress.rx_port_counter", 3)] = (1500, 3)
    [e] = c.read(Entity(counter_entry=counter("rx_port_counter", 3)))
    assert (e.counter_entry.data.byte_count, e.counter_entry.data.packet_count) == (1500, 3)
    assert len(c.read(Entity(counter_entry=counter("rx_port_counter")))) == 8
    assert len(c.read(Entity(counter_entry=p4runtime_pb2.CounterEntry()))) == 8 + 16
    [e] = c.read(Entity(counter_entry=counter("drop_counter", 0)))
    assert not e.counter_entry.data.byte_count  # a packets-only counter has no bytes
    c.write(update("MODIFY", counter_entry=counter("rx_port_counter", 3, 0, 0)))
    assert dp.counters[("FabricIngress.rx_port_counter", 3)] == (0, 0)
    assert error_code(c, update("INSERT", counter_entry=counter("rx_port_counter", 3))) \
        == code_pb2.INVALID_ARGUMENT
    assert error_code(c, update("MODIFY", counter_entry=counter("rx_port_counter", 8))) \
        == code_pb2.OUT_OF_RANGE
    with pytest.raises(grpc.RpcError) as err:
        c.read(Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=1)))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_read_of_all_counters_goes_in_the_p4info_s_order_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc answers counter_id 0 counter by counter in the P4Info's order
    (the embedded switch went by counter id); meters and registers likewise."""
    c, _ = sw
    info = p4info()
    counters = list(info.counters)[::-1]
    del info.counters[:]
    info.counters.extend(counters)
    c.set_pipeline(info=info)
    got = [e.counter_entry.counter_id for e in c.read(Entity(counter_entry=p4runtime_pb2.CounterEntry()))]
    assert got == [IDS["drop_counter"]] * 16 + [IDS["rx_port_counter"]] * 8


def test_direct_counter_in_table_entry_and_as_entity(sw):
    c, dp = sw
    te = route_entry()
    te.counter_data.packet_count = 4
    c.write(update("INSERT", table_entry=te))
    [h] = dp.tables["FabricIngress.dlid_route"]
    assert dp.direct_counters[("FabricIngress.dlid_route", h)] == (0, 4)
    dp.direct_counters[("FabricIngress.dlid_route", h)] = (640, 10)
    [e] = read_tables(c, table_id=IDS["dlid_route"])
    assert not e.HasField("counter_data")
    q = TE(table_id=IDS["dlid_route"])
    q.counter_data.SetInParent()
    [e] = read_tables(c, table_id=IDS["dlid_route"], counter_data=p4runtime_pb2.CounterData())
    assert (e.counter_data.byte_count, e.counter_data.packet_count) == (640, 10)
    [d] = c.read(Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(table_entry=TE())))
    assert d.direct_counter_entry.data.packet_count == 10
    dce = p4runtime_pb2.DirectCounterEntry(table_entry=route_entry(action=None))
    c.write(update("MODIFY", direct_counter_entry=dce))
    assert dp.direct_counters[("FabricIngress.dlid_route", h)] == (0, 0)
    missing = p4runtime_pb2.DirectCounterEntry(table_entry=route_entry(b"\x09", action=None))
    assert error_code(c, update("MODIFY", direct_counter_entry=missing)) == code_pb2.NOT_FOUND


def test_direct_reads_answer_with_the_entry_s_key_only_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc: the table_entry of a direct counter or meter read holds the
    key (table id, match, priority), not the action; a read without table_entry is
    INVALID_ARGUMENT, and so is one whose key names no entry."""
    c, _ = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x03")))
    te = acl_entry()
    te.meter_config.cir, te.meter_config.pir = 10, 20
    c.write(update("INSERT", table_entry=te))
    [d] = c.read(Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(
        table_entry=TE(table_id=IDS["dlid_route"]))))
    assert d.direct_counter_entry.table_entry == route_entry(b"\x03", action=None)
    [m] = c.read(Entity(direct_meter_entry=p4runtime_pb2.DirectMeterEntry(
        table_entry=TE(table_id=IDS["acl"]))))
    key = acl_entry()
    key.ClearField("action")
    assert m.direct_meter_entry.table_entry == key and m.direct_meter_entry.config.pir == 20
    for query in (Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry()),
                  Entity(direct_meter_entry=p4runtime_pb2.DirectMeterEntry()),
                  Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(
                      table_entry=route_entry(b"\x09", action=None)))):
        with pytest.raises(grpc.RpcError) as err:
            c.read(query)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_meters(sw):
    c, dp = sw
    me = p4runtime_pb2.MeterEntry(meter_id=IDS["port_meter"])
    me.index.index = 1
    me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 1000000, 100, 2000000, 200
    c.write(update("MODIFY", meter_entry=me))
    assert dp.meters[("FabricIngress.port_meter", 1)] == [(1.0, 100), (2.0, 200)]
    got = c.read(Entity(meter_entry=p4runtime_pb2.MeterEntry(meter_id=IDS["port_meter"])))
    assert len(got) == 4 and got[1].meter_entry == me and not got[0].meter_entry.HasField("config")
    reset = p4runtime_pb2.MeterEntry(meter_id=IDS["port_meter"])
    reset.index.index = 1
    c.write(update("MODIFY", meter_entry=reset))
    assert dp.meters[("FabricIngress.port_meter", 1)] == []
    bad = p4runtime_pb2.MeterEntry()
    bad.CopyFrom(me)
    bad.config.pir = 10
    assert error_code(c, update("MODIFY", meter_entry=bad)) == code_pb2.INVALID_ARGUMENT


def test_direct_meter_config_in_table_entry(sw):
    c, dp = sw
    te = acl_entry()
    te.meter_config.cir, te.meter_config.pir = 10, 20
    c.write(update("INSERT", table_entry=te))
    [h] = dp.tables["FabricIngress.acl"]
    assert dp.direct_meters[("FabricIngress.acl", h)][0][0] == pytest.approx(10e-6)
    [e] = read_tables(c, table_id=IDS["acl"], meter_config=p4runtime_pb2.MeterConfig())
    assert e.meter_config.pir == 20
    bad = route_entry()
    bad.meter_config.cir = 1
    assert error_code(c, update("INSERT", table_entry=bad)) == code_pb2.INVALID_ARGUMENT


def test_register_writes_are_unimplemented_as_on_bmv2_and_reads_come_from_the_data_plane(sw):
    c, dp = sw
    dp.registers[("FabricIngress.credit_reg", 2)] = 0x0102  # state the data plane wrote
    r = p4runtime_pb2.RegisterEntry(register_id=IDS["credit_reg"])
    r.index.index = 2
    r.data.bitstring = b"\x00\x01\x03"
    assert error_code(c, update("MODIFY", register_entry=r)) == code_pb2.UNIMPLEMENTED
    assert dp.registers[("FabricIngress.credit_reg", 2)] == 0x0102
    [e] = c.read(Entity(register_entry=p4runtime_pb2.RegisterEntry(
        register_id=IDS["credit_reg"], index=p4runtime_pb2.Index(index=2))))
    assert e.register_entry.data.bitstring == b"\x01\x02"
    assert len(c.read(Entity(register_entry=p4runtime_pb2.RegisterEntry()))) == 8


# ---- packet replication engine, digests -------------------------------------------------------
def mc_group(gid: int, *ports: int) -> p4runtime_pb2.PacketReplicationEngineEntry:
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = gid
    for i, p in enumerate(ports):
        pre.multicast_group_entry.replicas.add(egress_port=p, instance=i)
    return pre


def test_multicast_groups(sw):
    c, dp = sw
    c.write(update("INSERT", packet_replication_engine_entry=mc_group(5, 1, 2)))
    assert dp.mc_groups[5] == [Replica(1, 0), Replica(2, 1)]
    assert error_code(c, update("INSERT", packet_replication_engine_entry=mc_group(5, 1))) \
        == code_pb2.ALREADY_EXISTS
    assert error_code(c, update("MODIFY", packet_replication_engine_entry=mc_group(6, 1))) \
        == code_pb2.NOT_FOUND
    assert error_code(c, update("INSERT", packet_replication_engine_entry=mc_group(0, 1))) \
        == code_pb2.INVALID_ARGUMENT
    new_style = mc_group(7)
    new_style.multicast_group_entry.replicas.add(port=b"\x03", instance=0)
    c.write(update("INSERT", packet_replication_engine_entry=new_style))
    assert dp.mc_groups[7] == [Replica(3, 0)]
    got = c.read(Entity(packet_replication_engine_entry=mc_group(0)))
    assert [e.packet_replication_engine_entry for e in got] == [mc_group(5, 1, 2), new_style]
    c.write(update("DELETE", packet_replication_engine_entry=mc_group(5)))
    assert 5 not in dp.mc_groups


def test_clone_sessions(sw):
    c, dp = sw
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    s = pre.clone_session_entry
    s.session_id, s.class_of_service, s.packet_length_bytes = 100, 2, 128
    s.replicas.add(egress_port=64, instance=1)
    c.write(update("INSERT", packet_replication_engine_entry=pre))
    assert dp.clone_sessions[100] == ([Replica(64, 1)], 2, 128)
    q = p4runtime_pb2.PacketReplicationEngineEntry()
    q.clone_session_entry.SetInParent()
    [e] = c.read(Entity(packet_replication_engine_entry=q))
    assert e.packet_replication_engine_entry == pre
    c.write(update("DELETE", packet_replication_engine_entry=pre))
    assert dp.clone_sessions == {}


def test_reading_a_missing_multicast_group_or_clone_session_is_not_found(sw):
    """As on simple_switch_grpc ('Multicast group does not exist', 'Clone session id does
    not exist'); the embedded switch answered with nothing."""
    c, _ = sw
    c.write(update("INSERT", packet_replication_engine_entry=mc_group(5, 1)))
    missing_session = p4runtime_pb2.PacketReplicationEngineEntry()
    missing_session.clone_session_entry.session_id = 66
    for pre in (mc_group(66), missing_session):
        with pytest.raises(grpc.RpcError) as err:
            c.read(Entity(packet_replication_engine_entry=pre))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
    [got] = c.read(Entity(packet_replication_engine_entry=mc_group(5)))
    assert got.packet_replication_engine_entry == mc_group(5, 1)


def test_digest_entries(sw):
    c, _ = sw
    d = p4runtime_pb2.DigestEntry(digest_id=IDS["learn_t"])
    d.config.max_list_size = 1
    c.write(update("INSERT", digest_entry=d))
    assert error_code(c, update("INSERT", digest_entry=d)) == code_pb2.ALREADY_EXISTS
    [e] = c.read(Entity(digest_entry=p4runtime_pb2.DigestEntry()))
    assert e.digest_entry == d
    assert error_code(c, update("INSERT", digest_entry=p4runtime_pb2.DigestEntry(digest_id=5))) \
        == code_pb2.NOT_FOUND
    c.write(update("DELETE", digest_entry=d))
    assert c.read(Entity(digest_entry=p4runtime_pb2.DigestEntry())) == []


def test_wildcard_read_of_all_tables(sw):
    c, _ = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x01")),
            update("INSERT", table_entry=route_entry(b"\x02")),
            update("INSERT", table_entry=acl_entry()))
    got = read_tables(c)
    assert sorted(e.table_id for e in got) == sorted(
        [IDS["dlid_route"]] * 2 + [IDS["acl"], IDS["kind_class"]])
    [one] = read_tables(c, table_id=IDS["dlid_route"], match=route_entry(b"\x02").match)
    assert one.match[0].exact.value == b"\x02"


def test_a_read_of_all_tables_goes_in_the_p4info_s_order_as_on_simple_switch_grpc(sw):
    """simple_switch_grpc answers a table_id 0 read table by table in the P4Info's order
    (the embedded switch went by table id)."""
    c, _ = sw
    info = p4info()
    tables = list(info.tables)[::-1]
    del info.tables[:]
    info.tables.extend(tables)
    c.set_pipeline(info=info)
    c.write(update("INSERT", table_entry=route_entry(b"\x01")),
            update("INSERT", table_entry=acl_entry()))
    assert [e.table_id for e in read_tables(c)] == [
        IDS["kind_class"], IDS["acl"], IDS["dlid_route"]]
    defaults = read_tables(c, is_default_action=True)
    assert [e.table_id for e in defaults] == [t.preamble.id for t in tables]


def test_reconcile_and_commit_keeps_the_entries(sw):
    c, dp = sw
    c.write(update("INSERT", table_entry=route_entry(b"\x02", b"\x01")))
    c.set_pipeline(action=p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
    assert len(dp.programs) == 2
    assert [t.match[0].exact.value for t in read_tables(c, table_id=IDS["dlid_route"])] == [b"\x02"]
    assert len(dp.tables["FabricIngress.dlid_route"]) == 1
    c.set_pipeline()  # VERIFY_AND_COMMIT starts from scratch
    assert read_tables(c, table_id=IDS["dlid_route"]) == []
