"""The embedded switch's P4Runtime server against simple_switch_grpc's: the same requests,
the same answers (status codes, each update's code, what a Read returns, in its order).

Both hold data/p4rt_fidelity.p4 (p4rt_differential.py). The differences that stay, where
simple_switch_grpc departs from the P4Runtime spec, are listed in DEVELOPERS.md ("What
differs on real bmv2") and checked in `test_the_documented_differences_remain`."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.bmv2
pytest.importorskip("p4.v1.p4runtime_pb2")

from p4.v1 import p4runtime_pb2  # noqa: E402
from p4rt_differential import (  # noqa: E402
    Requests,
    Target,
    clone_session,
    compare,
    compile_program,
    mc_group,
    outcome,
    read,
    write,
)
from test_p4runtime_support import update  # noqa: E402

TE = p4runtime_pb2.TableEntry
DCE = p4runtime_pb2.DirectCounterEntry


@pytest.fixture(scope="module")
def program():
    return compile_program()


@pytest.fixture(scope="module")
def targets(program):
    started = []
    try:
        started.append(Target.embedded())
        started.append(Target.bmv2())
        yield started
    finally:
        for t in started:
            t.close()


@pytest.fixture
def rig(targets, program):
    """(targets with the program freshly pushed, Requests)."""
    config, info = program
    for t in targets:
        t.push(config, info)
    return targets, Requests(info)


def ins(te):
    return update("INSERT", table_entry=te)


def with_counter(te):
    te.counter_data.packet_count, te.counter_data.byte_count = 5, 7
    return te


def with_meter(te):
    cfg = te.meter_config
    cfg.cir, cfg.cburst, cfg.pir, cfg.pburst = 10, 1, 20, 2
    return te


def table_writes(r: Requests):
    return [
        write(ins(r.exact())), write(ins(r.exact())),                       # ALREADY_EXISTS
        write(update("MODIFY", table_entry=r.exact(b"\x00\x09"))),
        write(update("DELETE", table_entry=r.exact(b"\x00\x09"))),
        write(ins(r.exact(b"\x00\x01")), ins(r.exact(b"\x00\x01")),         # per-update codes
              ins(r.exact(b"\x00\x02")), update("MODIFY", table_entry=r.exact(b"\x00\x0a"))),
        write(ins(r.exact()), election_id=5), write(ins(r.exact()), election_id=0),
        write(ins(r.exact(b"\x00\x00\x07"))), write(ins(r.exact(b"\x01\x00\x07"))),
        write(ins(r.exact(b"\x09", params=(b"\x00\x00\x02",)))),
        write(ins(r.exact(b"\x0a", params=(b"\x02\x00",)))),
        write(ins(r.exact(action="forward"))),                              # not the table's
        write(update("MODIFY", table_entry=r.exact(b"\x00\x0b", action="forward"))),
        write(update("MODIFY", table_entry=r.exact(action="forward"))),
        write(ins(with_meter(r.exact()))),
        write(ins(r.exact(b"\x00\x06", idle_timeout_ns=1_000_000))),
        write(ins(r.exact(priority=3))),
        read(table_entry=TE(table_id=r.ids["exact_t"])),
    ]


def match_kinds(r: Requests):
    return [
        write(ins(r.ternary(b"\x01", b"\xff", priority=0))),
        write(ins(r.ternary(b"\x00", b"\x00"))), write(ins(r.ternary(b"\x03", b"\x01"))),
        write(ins(r.ternary(b"\x01", b"\x01"))), write(ins(r.ternary(b"\x01", b"\x01", 11))),
        write(ins(r.lpm(b"\x0a\x00\x00\x00", 33))), write(ins(r.lpm(b"\x0a\x01\x00\x00", 8))),
        write(ins(r.lpm(b"\x00", 0))), write(ins(r.lpm(b"\x0a\x00\x00\x00", 8, priority=5))),
        write(ins(r.lpm(b"\x0a\x00\x00\x00", 8))),
        write(ins(r.range(b"\x00\x09", b"\x00\x05"))), write(ins(r.range(b"\x00\x00", b"\xff\xff"))),
        write(ins(r.range(b"\x00\x01", b"\x00\x05", priority=0))),
        write(ins(r.range(b"\x00\x01", b"\x00\x05"))), write(ins(r.range(None, None, b"\x01"))),
        read(table_entry=TE()),
    ]


def default_entries(r: Requests):
    return [
        read(table_entry=r.default("exact_t")), read(table_entry=r.default("lpm_t")),
        write(update("MODIFY", table_entry=r.default("exact_t", "drop"))),
        read(table_entry=r.default("exact_t")),
        write(update("MODIFY", table_entry=r.default("exact_t"))),
        write(update("DELETE", table_entry=r.default("exact_t"))),
        write(ins(r.default("exact_t", "drop"))),
        write(update("MODIFY", table_entry=r.default("const_default_t", "NoAction"))),
        write(update("MODIFY", table_entry=r.default("exact_t", "forward_counted", (b"\x01",)))),
        write(update("MODIFY", table_entry=r.default("ternary_t", "drop"))),
        read(table_entry=TE(is_default_action=True)),
    ]


def wildcard_reads(r: Requests):
    return [
        write(ins(r.exact(b"\x00\x02")), ins(r.exact(b"\x00\x01")),
              ins(r.lpm(b"\x0a\x00\x00\x00", 8)), ins(r.ternary(b"\x01", b"\xff"))),
        read(table_entry=TE()), read(table_entry=r.exact(b"\x00\x01", action=None)),
        read(table_entry=r.exact(b"\x00\x44", action=None)),
        read(table_entry=TE(table_id=r.ids["ternary_t"], priority=10)),
        read(table_entry=TE(table_id=4242)),
    ]


def direct_resources(r: Requests):
    return [
        write(ins(with_counter(r.exact(b"\x00\x03")))),
        read(table_entry=TE(table_id=r.ids["exact_t"], counter_data=p4runtime_pb2.CounterData())),
        write(ins(with_counter(r.lpm(b"\x0a\x00\x00\x00", 8)))),
        write(ins(with_meter(r.ternary(b"\x05", b"\xff")))),
        write(ins(with_meter(r.exact(b"\x00\x04")))),
        read(table_entry=TE(table_id=r.ids["ternary_t"], meter_config=p4runtime_pb2.MeterConfig())),
        read(direct_counter_entry=DCE(table_entry=TE(table_id=r.ids["exact_t"]))),
        read(direct_counter_entry=DCE()),
        read(direct_counter_entry=DCE(table_entry=r.exact(b"\x00\x44", action=None))),
        read(direct_counter_entry=DCE(table_entry=TE(table_id=r.ids["lpm_t"]))),
        read(direct_meter_entry=p4runtime_pb2.DirectMeterEntry(
            table_entry=TE(table_id=r.ids["ternary_t"]))),
    ]


def counters_and_meters(r: Requests):
    return [
        read(counter_entry=r.counter("port_counter", 3)), read(counter_entry=r.counter("port_counter")),
        read(counter_entry=r.counter()),
        write(update("INSERT", counter_entry=r.counter("port_counter", 1))),
        write(update("MODIFY", counter_entry=r.counter("port_counter", 1))),
        read(counter_entry=p4runtime_pb2.CounterEntry(counter_id=4242)),
        read(meter_entry=r.meter("port_meter", 1)), read(meter_entry=r.meter()),
        write(update("MODIFY", meter_entry=r.meter("port_meter", 1, (100, 10, 200, 20)))),
        read(meter_entry=r.meter("port_meter", 1)),
        write(update("INSERT", meter_entry=r.meter("port_meter", 1, (100, 10, 200, 20)))),
        write(update("MODIFY", meter_entry=r.meter("port_meter", 1))),
        read(meter_entry=p4runtime_pb2.MeterEntry(meter_id=4242)),
    ]


def replication(_r: Requests):
    pre = "packet_replication_engine_entry"
    return [
        write(update("INSERT", **{pre: mc_group(5, (1, 0), (2, 0))})),
        write(update("INSERT", **{pre: mc_group(5, (1, 0))})),
        write(update("MODIFY", **{pre: mc_group(6, (1, 0))})),
        write(update("DELETE", **{pre: mc_group(6)})),
        write(update("INSERT", **{pre: mc_group(7, (1, 0), (1, 0))})),
        write(update("INSERT", **{pre: mc_group(0, (1, 0))})),
        read(**{pre: mc_group(5)}), read(**{pre: mc_group(66)}),
        write(update("MODIFY", **{pre: mc_group(5, (3, 1))})), read(**{pre: mc_group(5)}),
        write(update("DELETE", **{pre: mc_group(5)})),
        write(update("INSERT", **{pre: clone_session(100, (1, 1))})),
        write(update("INSERT", **{pre: clone_session(100, (1, 1))})),
        write(update("MODIFY", **{pre: clone_session(101, (1, 1))})),
        write(update("INSERT", **{pre: clone_session(102, (1, 1), (1, 1))})),
        write(update("INSERT", **{pre: clone_session(0, (1, 1))})),
        read(**{pre: clone_session(100)}), read(**{pre: clone_session(66)}),
        write(update("DELETE", **{pre: clone_session(100)})),
        write(update("DELETE", **{pre: clone_session(102)})),
    ]


def indirect(r: Requests, table: str, key: bytes, member=None, group=None) -> TE:
    te = TE(table_id=r.ids[table])
    te.match.add(field_id=1).exact.value = key
    if member is not None:
        te.action.action_profile_member_id = member
    if group is not None:
        te.action.action_profile_group_id = group
    return te


def action_profiles(r: Requests):
    """Members read before any group has them, and one profile at a time: see
    `test_bmv2_repeats_weighted_members_and_keeps_failed_groups`."""
    def upd(kind, **entity):
        return write(update(kind, **entity))
    mem, grp = "action_profile_member", "action_profile_group"
    profile = r.ids["profile:ecmp_t"]
    weight_0 = r.group("ecmp_t", 14, 1)
    weight_0.members[0].weight = 0
    return [
        upd("INSERT", **{mem: r.member("ecmp_t", 1)}), upd("INSERT", **{mem: r.member("ecmp_t", 1)}),
        upd("MODIFY", **{mem: r.member("ecmp_t", 9)}), upd("DELETE", **{mem: r.member("ecmp_t", 9)}),
        upd("INSERT", **{mem: r.member("ecmp_t", 2, action="drop", params=())}),
        upd("INSERT", **{mem: r.member("ecmp_t", 3, action="NoAction", params=())}),
        upd("INSERT", **{mem: r.member("ecmp_t", 4, params=())}),
        upd("INSERT", **{mem: r.member("ecmp_t", 6, action=None)}),
        read(**{mem: p4runtime_pb2.ActionProfileMember(action_profile_id=profile)}),
        upd("INSERT", **{grp: r.group("ecmp_t", 10, 1)}), upd("INSERT", **{grp: r.group("ecmp_t", 10, 1)}),
        upd("INSERT", **{grp: r.group("ecmp_t", 11, 9)}),
        upd("INSERT", **{grp: r.group("ecmp_t", 12, 1, max_size=100)}),
        upd("INSERT", **{grp: r.group("ecmp_t", 13, 1, 1)}), upd("INSERT", **{grp: weight_0}),
        upd("INSERT", **{grp: r.group("ecmp_t", 15, 1, weight=3)}),
        upd("MODIFY", **{grp: r.group("ecmp_t", 99, 1)}),
        read(**{mem: p4runtime_pb2.ActionProfileMember(action_profile_id=profile, member_id=77)}),
        read(**{grp: p4runtime_pb2.ActionProfileGroup(action_profile_id=profile, group_id=10)}),
        read(**{grp: p4runtime_pb2.ActionProfileGroup(action_profile_id=profile, group_id=77)}),
        read(**{mem: p4runtime_pb2.ActionProfileMember(action_profile_id=4242)}),
        write(ins(indirect(r, "ecmp_t", b"\x01", member=1))),
        write(ins(indirect(r, "ecmp_t", b"\x02", group=10))),
        write(ins(indirect(r, "ecmp_t", b"\x03", member=77))),
        write(ins(indirect(r, "ecmp_t", b"\x04", group=77))),
        upd("INSERT", **{mem: r.member("profile_t", 1)}),
        write(ins(indirect(r, "profile_t", b"\x05", member=1))),
        read(table_entry=TE(table_id=r.ids["ecmp_t"])),
        upd("DELETE", **{mem: r.member("ecmp_t", 1)}), upd("DELETE", **{grp: r.group("ecmp_t", 10)}),
        upd("MODIFY", table_entry=r.default("ecmp_t", "NoAction")),
        upd("MODIFY", table_entry=r.default("ecmp_t")),
        read(table_entry=r.default("ecmp_t")), read(table_entry=r.default("profile_t")),
    ]


def pipeline_config(_r: Requests):
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest

    def get_config(response_type):
        def step(c):
            got = c.stub.GetForwardingPipelineConfig(get(device_id=c.device_id,
                                                         response_type=response_type))
            return [got.config.cookie, got.config.p4info.pkg_info,
                    p4runtime_pb2.Entity() if got.config.p4_device_config else TE()]
        return step

    def capabilities(c):
        c.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest())
        return []
    return [get_config(t) for t in range(4)] + [capabilities]


def direct_writes(r: Requests):
    def without_action(te):
        te.ClearField("action")
        return te

    def dce(te, nbytes, packets):
        e = DCE(table_entry=te)
        e.data.byte_count, e.data.packet_count = nbytes, packets
        return e
    dme = p4runtime_pb2.DirectMeterEntry
    configured = dme(table_entry=without_action(r.ternary(b"\x05", b"\xff")))
    cfg = configured.config
    cfg.cir, cfg.cburst, cfg.pir, cfg.pburst = 10, 1, 20, 2
    return [
        write(ins(r.exact())),
        write(update("MODIFY", table_entry=without_action(r.exact()))),
        write(update("MODIFY", table_entry=without_action(r.exact(b"\x00\x33")))),
        write(update("MODIFY", direct_counter_entry=dce(without_action(r.exact()), 3, 4))),
        read(direct_counter_entry=DCE(table_entry=TE(table_id=r.ids["exact_t"]))),
        write(update("INSERT", direct_counter_entry=dce(without_action(r.exact()), 3, 4))),
        write(update("MODIFY", direct_counter_entry=dce(TE(table_id=r.ids["exact_t"]), 3, 4))),
        write(ins(r.ternary(b"\x05", b"\xff"))),
        write(update("MODIFY", direct_meter_entry=configured)),
        read(direct_meter_entry=dme(table_entry=TE(table_id=r.ids["ternary_t"]))),
        write(update("MODIFY", direct_meter_entry=dme(
            table_entry=without_action(r.ternary(b"\x05", b"\xff"))))),
        read(direct_meter_entry=dme(table_entry=TE(table_id=r.ids["ternary_t"]))),
        write(update("MODIFY", counter_entry=r.counter("b_counter", 1))),
        read(counter_entry=r.counter("b_counter", 1)),
        write(update("DELETE", table_entry=r.ternary(b"\x05", b"\xff", priority=11))),
        write(update("DELETE", table_entry=without_action(r.exact()))),
        read(direct_counter_entry=DCE(table_entry=TE(table_id=r.ids["exact_t"]))),
    ]


CASES = [table_writes, match_kinds, default_entries, wildcard_reads, direct_resources,
         counters_and_meters, direct_writes, replication, action_profiles, pipeline_config]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_the_embedded_switch_answers_as_simple_switch_grpc(rig, case):
    targets, requests = rig
    assert compare(targets, case(requests)) == []


def documented_differences(r: Requests):
    """(request, the embedded switch's answer, simple_switch_grpc's): DEVELOPERS.md."""
    pre = "packet_replication_engine_entry"
    reg = p4runtime_pb2.RegisterEntry(register_id=r.ids["reg"], index=p4runtime_pb2.Index(index=1))
    return [
        (write(ins(r.exact()), device_id=99), ("NOT_FOUND",), ("PERMISSION_DENIED",)),
        (lambda c: c.read(p4runtime_pb2.Entity(table_entry=TE()), device_id=99),
         ("NOT_FOUND",), ("FAILED_PRECONDITION",)),
        (write(ins(r.exact(b""))), ("UNKNOWN", ("INVALID_ARGUMENT",)), ("OK",)),
        (write(ins(r.ternary(b"\x02", b"\xff", priority=-1))),
         ("UNKNOWN", ("INVALID_ARGUMENT",)), ("UNKNOWN", ("UNKNOWN",))),
        (read(counter_entry=r.counter("port_counter", 8)), ("OUT_OF_RANGE",), ("UNKNOWN", ())),
        (write(update("MODIFY", counter_entry=r.counter("port_counter", 8))),
         ("UNKNOWN", ("OUT_OF_RANGE",)), ("UNKNOWN", ("UNKNOWN",))),
        (write(update("MODIFY", meter_entry=r.meter("port_meter", 1, (300, 10, 200, 20)))),
         ("UNKNOWN", ("INVALID_ARGUMENT",)), ("UNKNOWN", ("UNKNOWN",))),
        (write(update("MODIFY", counter_entry=r.counter("port_counter"))),
         ("OK",), ("UNKNOWN", ("UNIMPLEMENTED",))),
        (read(direct_counter_entry=DCE(table_entry=TE())), ("OK", ()), ("UNIMPLEMENTED",)),
        (write(update("MODIFY", direct_counter_entry=DCE(table_entry=r.exact(b"\x00\x33",
                                                                             action=None)))),
         ("UNKNOWN", ("NOT_FOUND",)), ("UNKNOWN", ("INVALID_ARGUMENT",))),
        (write(update("MODIFY", meter_entry=r.meter("port_meter", 1, (100, 10, 0, 0)))),
         ("UNKNOWN", ("INVALID_ARGUMENT",)), ("UNKNOWN", ("UNKNOWN",))),
        (write(ins(r.exact(b"\x00\x01")), ins(r.exact(b"\x00\x01")),
               atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR),
         ("UNKNOWN", ("ABORTED", "ALREADY_EXISTS")), ("UNIMPLEMENTED",)),
        (write(update("INSERT")), ("UNKNOWN", ("INVALID_ARGUMENT",)), ("UNKNOWN", ("UNKNOWN",))),
        (lambda c: c.read(p4runtime_pb2.Entity()), ("INVALID_ARGUMENT",), ("UNKNOWN", ())),
        (write(*[ins(r.lpm(bytes([10, i, 0, 0]), 16)) for i in range(65)]),  # lpm_t holds 64
         ("UNKNOWN", ("OK",) * 64 + ("RESOURCE_EXHAUSTED",)), ("UNKNOWN", ("OK",) * 64 + ("UNKNOWN",))),
        (read(register_entry=reg), ("OK", (
            f"register_entry {{ register_id: {r.ids['reg']} index {{ index: 1 }} "
            'data { bitstring: "\\000" } }',)), ("UNIMPLEMENTED",)),
        (write(update("INSERT", **{pre: clone_session(103, (1, 1), class_of_service=3,
                                                      packet_length_bytes=64)})),
         ("OK",), ("UNKNOWN", ("UNIMPLEMENTED",))),
    ]


def test_the_documented_differences_remain(rig):
    targets, requests = rig
    by_name = {t.name: t for t in targets}
    changed = []
    for i, (step, embedded, bmv2) in enumerate(documented_differences(requests)):
        got = {name: outcome(lambda t=t, step=step: step(t.client))
               for name, t in by_name.items()}
        if got != {"embedded": embedded, "bmv2": bmv2}:
            changed.append((i, got))
    assert changed == []


def test_a_read_filters_by_action_where_bmv2_ignores_the_action(rig):
    """A table read whose entry names an action: the embedded switch returns the entries
    with that action only; simple_switch_grpc ignores the action and returns them all."""
    targets, r = rig
    answers = {}
    for t in targets:
        t.client.write(ins(r.exact()))
        query = TE(table_id=r.ids["exact_t"])
        query.action.action.action_id = r.ids["drop"]
        answers[t.name] = len(t.client.read(p4runtime_pb2.Entity(table_entry=query)))
    assert answers == {"embedded": 0, "bmv2": 1}


def test_bmv2_repeats_weighted_members_and_keeps_failed_groups(rig):
    """simple_switch_grpc lists a member of weight 3 in a group three times in a read of
    the profile's members (PI makes the copies the weight asks for and reads them back),
    and a group INSERT that fails (a missing member here) still leaves the group, empty;
    the embedded switch lists each member once and has no such group."""
    targets, r = rig
    answers = {}
    for t in targets:
        c = t.client
        c.write(update("INSERT", action_profile_member=r.member("ecmp_t", 1)))
        c.write(update("INSERT", action_profile_group=r.group("ecmp_t", 10, 1)),
                update("INSERT", action_profile_group=r.group("ecmp_t", 12, 1, weight=3)))
        failed = outcome(lambda c=c: c.write(update(
            "INSERT", action_profile_group=r.group("ecmp_t", 11, 9))))
        profile = r.ids["profile:ecmp_t"]
        members = c.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(
            action_profile_id=profile)))
        groups = c.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(
            action_profile_id=profile)))
        answers[t.name] = (failed, len(members), [g.action_profile_group.group_id for g in groups])
    assert answers == {"embedded": (("UNKNOWN", ("NOT_FOUND",)), 1, [10, 12]),
                       "bmv2": (("UNKNOWN", ("NOT_FOUND",)), 3, [10, 12, 11])}


def test_arbitration_differs_only_as_documented(rig):
    """Streams without election id: the embedded switch takes each as a backup;
    simple_switch_grpc takes one and ends the next with INVALID_ARGUMENT (it counts them
    as election id 0, a duplicate). A stream for another device: NOT_FOUND here, while
    simple_switch_grpc makes a device of it and answers OK."""
    from google.rpc import code_pb2
    from test_p4runtime_support import Client

    targets, _ = rig
    answers = {}
    for t in targets:
        other = Client(t.address)
        try:
            got = []
            for device_id in (other.device_id, other.device_id, 99):
                stream = other.stream()
                stream.arbitrate(device_id, election_id=None)
                msg = stream.next(timeout=3)
                got.append(code_pb2.Code.Name(msg.arbitration.status.code) if msg is not None
                           else stream.error.code().name)
            answers[t.name] = got
        finally:
            other.close()
    assert answers == {"embedded": ["ALREADY_EXISTS", "ALREADY_EXISTS", "NOT_FOUND"],
                       "bmv2": ["ALREADY_EXISTS", "INVALID_ARGUMENT", "OK"]}


def test_a_pipeline_push_clears_multicast_groups_and_clone_sessions_on_both(rig, program):
    """VERIFY_AND_COMMIT clears the forwarding state (spec), groups and sessions with it,
    on simple_switch_grpc as here (checked: a same-program push)."""
    targets, _ = rig
    config, info = program
    pre = "packet_replication_engine_entry"
    answers = {}
    for t in targets:
        t.client.write(update("INSERT", **{pre: mc_group(40, (1, 0))}),
                       update("INSERT", **{pre: clone_session(140, (1, 1))}))
        t.push(config, info)
        kept = [outcome(lambda t=t, q=q: t.client.read(p4runtime_pb2.Entity(**{pre: q})))[0]
                for q in (mc_group(40), clone_session(140))]
        for q in (mc_group(40), clone_session(140)):  # the next test starts without them
            outcome(lambda t=t, q=q: t.client.write(update("DELETE", **{pre: q})))
        answers[t.name] = kept
    assert answers == {"embedded": ["NOT_FOUND", "NOT_FOUND"], "bmv2": ["NOT_FOUND", "NOT_FOUND"]}


def test_pipeline_actions_differ_only_as_documented(targets, program):
    """COMMIT without a saved config and RECONCILE_AND_COMMIT: simple_switch_grpc answers
    UNKNOWN with no message; the embedded switch FAILED_PRECONDITION, and it reconciles.
    VERIFY of a JSON bmv2 cannot load: bmv2 says OK (PI verifies the P4Info only)."""
    config, info = program
    action = p4runtime_pb2.SetForwardingPipelineConfigRequest
    answers = {}
    for t in targets:
        t.push(config, info)
        c = t.client
        answers[t.name] = [
            outcome(lambda c=c: c.set_pipeline(action.COMMIT, with_config=False)),
            outcome(lambda c=c: c.set_pipeline(action.RECONCILE_AND_COMMIT, info=info,
                                               config=config)),
            outcome(lambda c=c: c.set_pipeline(action.VERIFY, info=info, config=b"{")),
        ]
    assert answers == {"embedded": [("FAILED_PRECONDITION",), ("OK",), ("INVALID_ARGUMENT",)],
                       "bmv2": [("UNKNOWN", ()), ("UNKNOWN", ()), ("OK",)]}
