"""Configuration tables baked into the fused fast path (p4switch/specialisation.py,
Program.specialise, p4switch/codegen_fold.py).

A keyless table whose default action the controller sets runs that action on every
frame; the specialised fast path has the action's data as constants. These tests
hold it to the generic path: a default entry written at run time changes the very
next frame, baked or not (also in the middle of a receive batch), and the
specialised and generic functions give the same outputs on the same frames.
"""

from __future__ import annotations

import ast
import os
import random
import sys

import pytest
from bmv2json import assign, ethernet_program, expr, field, frame, hexstr, rt
from fastpath import CPU_PORT, fabric_frames, process_fast

from p4switch import builder as builder_module
from p4switch import specialisation as specialisation_module
from p4switch import switch as switch_module
from p4switch.builder import Builder, BuildError
from p4switch.codegen_fold import fold
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
from p4switch.switch import Switch


def config_program():
    """Ingress: the keyless table `cfg` (default set_cfg(2, 0)) sets the out port and a
    mode; mode 1 drops, any other mode forwards to the out port."""
    p = ethernet_program().scalar("out_port", 9).scalar("mode", 8)
    p.action("set_cfg", [("port", 9), ("mode", 8)], [
        assign(field("scalars", "out_port"), rt(0)), assign(field("scalars", "mode"), rt(1))])
    p.action("to_out", [], [assign(field("standard_metadata", "egress_spec"),
                                   field("scalars", "out_port"))])
    p.table("ingress", "cfg", [], ["set_cfg"], default=("set_cfg", [2, 0]), base_next="check")
    dropping = p.run("ingress", "drop")
    forwarding = p.run("ingress", "to_out")
    p.conditional("ingress", "check", expr("==", field("scalars", "mode"), hexstr(1)),
                  dropping, forwarding)
    j = p.build()
    for t in j["pipelines"][0]["tables"]:  # p4c's action calls: const defaults
        if t["name"] in (dropping, forwarding):
            t["default_entry"]["action_const"] = True
    return j


def config_switch() -> Switch:
    sw = Switch({1: "p1", 2: "p2", 3: "p3"})
    sw.load_program(config_program())
    return sw


def set_cfg(port: int, mode: int = 0) -> ActionCall:
    return ActionCall("set_cfg", (port, mode))


def test_the_keyless_table_is_a_configuration_table_and_is_baked():
    sw = config_switch()
    assert sw.program.configuration_tables() == ["cfg"]
    assert sw.specialise_now()
    assert set(sw.program.baked) == {"cfg"}
    assert sw.program.fused is not sw.program.fused_generic
    # its data are constants: no read of the table, no test of the mode left
    assert "default" not in sw.program.specialised_source
    assert "== 1" not in sw.program.specialised_source
    assert process_fast(sw, 1, frame()) == [(2, frame())]


def test_a_default_written_at_run_time_changes_the_next_frame():
    sw = config_switch()
    sw.specialise_now()
    assert process_fast(sw, 1, frame()) == [(2, frame())]
    sw.table_set_default("cfg", set_cfg(3))
    assert sw.program.baked == {}  # the generic function, at once
    assert process_fast(sw, 1, frame()) == [(3, frame())]
    sw.table_set_default("cfg", set_cfg(3, mode=1))
    assert process_fast(sw, 1, frame()) == []
    assert sw.specialise_now()  # baked again, with the new default
    assert process_fast(sw, 1, frame()) == []
    sw.table_set_default("cfg", None)  # the program's default again
    assert process_fast(sw, 1, frame()) == [(2, frame())]


def test_a_specialised_function_built_before_a_write_is_not_installed(monkeypatch):
    """The worker generates off the switch lock; a write that comes first wins."""
    sw = config_switch()
    prog = sw.program
    real = prog.specialise

    def write_meanwhile(tables):
        built = real(tables)
        sw.table_set_default("cfg", set_cfg(3))
        return built
    monkeypatch.setattr(prog, "specialise", write_meanwhile)
    assert not sw.specialise_now()
    assert prog.baked == {}
    assert process_fast(sw, 1, frame()) == [(3, frame())]


def test_a_write_in_the_middle_of_a_receive_batch_changes_the_next_frame():
    """The data-plane thread's batch loop lets a waiting write in between two frames;
    the frames after it go through the function the write left (the generic one)."""
    sw = config_switch()
    for port in (1, 2, 3):
        sw.tm.port(port)
    sent: list[tuple[int, bytes]] = []
    for port in (2, 3):
        sw.tm.ports[port].send = lambda f, port=port: sent.append((port, f))
    sw.specialise_now()

    def write_now():  # what Switch._yield_to_control lets happen, here on this thread
        sw._control_pending[0] = 0
        sw.table_set_default("cfg", set_cfg(3))
    sw._yield_to_control = write_now
    batch = sw._batch_path(sw.program)
    frames = [frame(payload=bytes([i])) for i in range(6)]

    def recv(_bufsize):
        if not frames:
            raise BlockingIOError
        f = frames.pop(0)
        if len(frames) == 3:
            sw._control_pending[0] = 1  # a writer is waiting after the third frame
        return f
    with sw._lock:
        batch(recv, 2048, 1, 0.0, 0, None)
    assert [p for p, _f in sent] == [2, 2, 2, 3, 3, 3]



def fabric_switch(j: dict) -> Switch:
    sw = Switch({1: "p1", 2: "p2", 3: "p3"}, cpu_port=CPU_PORT)
    sw.load_program(j)
    for dlid in range(1, 9):
        if dlid % 2:
            call = ActionCall("FabricIngress.forward", (1 + dlid % 3,))
        else:
            call = ActionCall("FabricIngress.forward_frr", (1 + dlid % 3, 1 + (dlid + 1) % 3))
        sw.table_add("FabricIngress.dlid_route", [MatchParam(MatchKind.EXACT, dlid)], call)
    return sw


# fabric.p4's configuration tables as an SM writes them (see tests/fabric/fabric_harness.py)
FABRIC_CONFIGS = {
    "defaults": {},
    "pfc": {"FabricIngress.fc_config": ("FabricIngress.set_fc_mode",
                                        (1, 6, 3, 4, 0, 1, 0, 0, 0)),
            "FabricIngress.tx_queues": ("FabricIngress.set_tx_queues", (1,))},
    "credit": {"FabricIngress.fc_config": ("FabricIngress.set_fc_mode",
                                           (2, 0, 0, 0, 8, 2, 5000, 0, 0)),
               "FabricIngress.port_liveness": ("FabricIngress.set_ports_down", (1 << 2,))},
    "partitions_notify_hold": {
        "FabricIngress.pkey_enforce": ("FabricIngress.set_pkey_ports", (1 << 1 | 1 << 3,)),
        "FabricIngress.notify_config": ("FabricIngress.set_notify", (1 << 2 | 1 << 3, 5, 0)),
        "FabricIngress.hold_loop_config": ("FabricIngress.set_hold_loop", (1,))},
}


@pytest.mark.parametrize("via", ["thread", "builder"])
@pytest.mark.parametrize("config", sorted(FABRIC_CONFIGS))
def test_specialised_and_generic_paths_agree_on_fabric_frames(fabric_json, config, via,
                                                              monkeypatch):
    """Three switches, one configuration: the general path, the generic fused
    function and the specialised one (built in this thread, or by a builder process
    as a running switch has it: its code must name this switch's tables, registers
    and counters) get the same frames and must put out the same frames and end with
    the same registers and counters."""
    clock = [1000.0]
    monkeypatch.setattr(switch_module.time, "monotonic", lambda: clock[0])
    general, generic, baked = (fabric_switch(fabric_json) for _ in range(3))
    for sw in (general, generic, baked):
        for table, (action, args) in FABRIC_CONFIGS[config].items():
            sw.table_set_default(table, ActionCall(action, args))
    if via == "builder":
        builder = Builder(baked.program, baked.program.json)
        try:
            assert baked.specialisation.bake(
                baked.program, baked.program.configuration_tables(), builder=builder)
        finally:
            builder.kill()
    else:
        assert baked.specialise_now()
    assert set(baked.program.baked) == set(baked.program.configuration_tables())
    assert generic.program.fused is generic.program.fused_generic
    for i, (port, f) in enumerate(fabric_frames(random.Random(7), 600)):
        clock[0] += 0.000037
        want = sorted(general.process(port, f))
        assert sorted(process_fast(generic, port, f)) == want, f"frame {i}: {f.hex()}"
        assert sorted(process_fast(baked, port, f)) == want, f"frame {i}: {f.hex()}"
    for name, r in general.program.registers.items():
        assert r.cells == baked.program.registers[name].cells, name
        assert r.cells == generic.program.registers[name].cells, name
    for name, c in general.program.counters.items():
        for other in (generic, baked):
            oc = other.program.counters[name]
            assert (c.npkts, c.nbytes) == (oc.npkts, oc.nbytes), name
    assert general.pipeline_errors == generic.pipeline_errors == baked.pipeline_errors


def test_fast_reroute_through_the_baked_port_liveness(fabric_json):
    """What the local agent does when a carrier drops: port_liveness's default marks
    the port down, and the next frame to a destination routed there takes its backup."""
    sw = fabric_switch(fabric_json)
    sw.specialise_now()
    assert "FabricIngress.port_liveness" in sw.program.baked
    data = bytes.fromhex("0000000000b2" "0000000000a1" "88b5") + \
        bytes([0x00, 1, 0, 2, 0, 7, 0, 24]) + bytes(8 + 24)  # DLID 2: port 3, backup 1
    assert [p for p, _f in process_fast(sw, 2, data)] == [3]
    sw.table_set_default("FabricIngress.port_liveness",
                         ActionCall("FabricIngress.set_ports_down", (1 << 3,)))
    assert [p for p, _f in process_fast(sw, 2, data)] == [1]
    sw.specialise_now()
    assert [p for p, _f in process_fast(sw, 2, data)] == [1]


# -- when the worker bakes (the policy) ---------------------------------------------------
class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_table_written_often_stays_a_table_read_and_the_others_stay_baked(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(specialisation_module.time, "monotonic", clock)
    p = ethernet_program().scalar("a", 8).scalar("b", 8)
    p.action("set_a", [("v", 8)], [assign(field("scalars", "a"), rt(0))])
    p.action("set_b", [("v", 8)], [assign(field("scalars", "b"), rt(0))])
    p.table("ingress", "ta", [], ["set_a"], default=("set_a", [0]), base_next="tb")
    p.table("ingress", "tb", [], ["set_b"], default=("set_b", [0]))
    sw = Switch({1: "p1"})
    sw.load_program(p.build())
    spec = sw.specialisation
    plan = spec._plan
    assert plan(clock.now) == (None, clock.now + specialisation_module.SETTLE_S)
    clock.now += specialisation_module.QUIET_S
    want, _again = plan(clock.now)
    assert want == {"ta", "tb"}
    assert sw.specialisation.bake(sw.program, want)
    assert plan(clock.now)[0] is None  # nothing more to do
    # ta written every 2.2 s for a minute; the worker looks whenever it would wake
    overturns, rebuilds, next_write = 0, 0, clock.now + 2.2
    for _ in range(1200):
        clock.now += 0.05
        if clock.now >= next_write:
            overturns += "ta" in sw.program.baked
            sw.table_set_default("ta", ActionCall("set_a", (1,)))
            next_write += 2.2
        want, _again = plan(clock.now)
        if want is not None:
            rebuilds += sw.specialisation.bake(sw.program, want)
    assert overturns == 2  # baked after 0.5 s of quiet, then after 2 s; 8 s never come
    assert spec.quiet_s("ta") == specialisation_module.QUIET_S * specialisation_module.QUIET_GROWTH ** 2
    assert rebuilds <= 4
    assert set(sw.program.baked) == {"tb"}


def test_a_table_with_no_action_to_bake_does_not_keep_the_worker_busy(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(specialisation_module.time, "monotonic", clock)
    j = config_program()
    del j["pipelines"][0]["tables"][0]["default_entry"]  # cfg: no action on a miss
    sw = Switch({1: "p1"})
    sw.load_program(j)
    clock.now += specialisation_module.QUIET_S
    assert sw.specialisation._plan(clock.now) == (None, None)
    sw.table_set_default("cfg", set_cfg(3))
    clock.now += specialisation_module.QUIET_S
    want, _again = sw.specialisation._plan(clock.now)
    assert want == {"cfg"}


def _until(done, timeout_s: float = 30.0) -> None:
    """Wait for `done()`: the builder runs at SCHED_IDLE, so on a busy machine (the suite's
    emulations beside this part) it may wait seconds for an idle CPU."""
    end = switch_module.time.monotonic() + timeout_s
    while not done() and switch_module.time.monotonic() < end:
        switch_module.time.sleep(0.01)


def test_the_worker_bakes_a_running_switch_after_the_quiet_time(monkeypatch):
    monkeypatch.setenv("P4SWITCH_SPECIALISE", "1")
    monkeypatch.setattr(specialisation_module, "QUIET_S", 0.05)
    monkeypatch.setattr(specialisation_module, "SETTLE_S", 0.01)
    sw = Switch({})
    sw.load_program(config_program())
    sw.start()
    try:
        _until(lambda: sw.program.baked)
        assert set(sw.program.baked) == {"cfg"}
        sw.table_set_default("cfg", set_cfg(3))
        assert sw.program.baked == {}
        _until(lambda: sw.program.baked)
        assert sw.program.baked["cfg"].args == (3, 0)
    finally:
        sw.stop()


def test_the_builder_is_another_process_at_the_lowest_priority():
    """The ~0.3 s of code generation never shares the switch's GIL, its memory or its
    share of the cores: a new process at SCHED_IDLE in a session of its own builds,
    the switch only loads the marshalled code."""
    sw = config_switch()
    prog = sw.program
    builder = Builder(prog, prog.json)
    pid, policy, sid = builder.probe()
    assert pid != os.getpid() and policy == os.SCHED_IDLE and sid == pid
    for args in ((3, 0), (4, 0)):
        sw.table_set_default("cfg", set_cfg(args[0]))
        built = builder.build(prog, prog.bakeable(["cfg"]))
        assert built.tables == ("cfg",) and "default" not in built.source
        assert sw.specialisation.bake(prog, ["cfg"], builder=builder)
        assert prog.baked["cfg"].args == args
        assert process_fast(sw, 1, frame()) == [(args[0], frame())]
    with pytest.raises(BuildError, match="another program"):
        builder.build(config_switch().program, prog.bakeable(["cfg"]))
    builder.kill()
    with pytest.raises(BuildError, match="stopped"):
        builder.build(prog, prog.bakeable(["cfg"]))


def test_builders_take_turns_on_the_machine(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.setattr(builder_module, "LOCK", tmp_path / "builder.lock")
    held = builder_module._one_at_a_time()
    assert held is not None
    other = os.open(tmp_path / "builder.lock", os.O_RDWR)
    with pytest.raises(BlockingIOError):  # a second builder would wait here
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(held)
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # its turn
    os.close(other)


def test_a_failed_build_is_reported_and_the_generic_function_stays():
    sw = config_switch()
    said: list[str] = []
    sw.specialisation._log = said.append
    broken = Builder(sw.program, {"actions": "not a list"})
    assert not sw.specialisation.bake(sw.program, ["cfg"], builder=broken)
    assert said and "fast path not specialised (cfg)" in said[0], said
    assert "BuildError" in said[0]
    assert sw.program.fused is sw.program.fused_generic
    assert process_fast(sw, 1, frame()) == [(2, frame())]


def test_code_naming_what_the_switch_does_not_have_is_not_loaded(fabric_json):
    sw = fabric_switch(fabric_json)
    prog = sw.program
    builder = Builder(prog, prog.json)
    tables = prog.configuration_tables()
    built = builder.build(prog, prog.bakeable(tables))  # fine
    assert built is not None
    named = sorted(n for n in builder_module._global_names(built)
                   if n.startswith("_") and n not in built.names
                   and isinstance(prog.ns.get(n), list | dict))
    assert named, "the code names some of the switch's own objects"
    prog.ns[named[0]] = "something else"
    with pytest.raises(BuildError, match="names"):
        builder.build(prog, prog.bakeable(tables))


def _builder_of(sw: Switch, prog) -> Builder:
    for _ in range(500):
        b = sw.specialisation._builder
        if b is not None and b.program is prog:
            return b
        switch_module.time.sleep(0.01)
    raise AssertionError("no builder for the program")


def test_a_started_switch_has_one_builder_per_program_and_none_after_stop(monkeypatch):
    monkeypatch.setenv("P4SWITCH_SPECIALISE", "1")
    sw = Switch({})
    sw.load_program(config_program())
    assert sw.specialisation._builder is None  # not started: no builder
    sw.start()
    try:
        first = _builder_of(sw, sw.program)
        sw.load_program(config_program())
        second = _builder_of(sw, sw.program)
        assert second is not first and first._killed
    finally:
        sw.stop()
    assert sw.specialisation._builder is None and second._killed


def test_the_worker_builds_only_while_no_frame_moves(monkeypatch):
    monkeypatch.setenv("P4SWITCH_SPECIALISE", "1")
    """Even at the lowest priority, builders busy in a CPU-bound run lengthen its
    recovery: a build is asked for only when the data plane has been idle IDLE_S."""
    monkeypatch.setattr(specialisation_module, "QUIET_S", 0.01)
    monkeypatch.setattr(specialisation_module, "SETTLE_S", 0.01)
    sw = Switch({})
    sw.load_program(config_program())
    busy = [True]
    sw.specialisation._idle_for = lambda: 0.0 if busy[0] else 1.0
    sw.start()
    try:
        _builder_of(sw, sw.program)
        switch_module.time.sleep(0.5)
        assert sw.program.baked == {}  # frames all along
        busy[0] = False
        _until(lambda: sw.program.baked)
        assert set(sw.program.baked) == {"cfg"}
    finally:
        sw.stop()


def test_a_switch_is_idle_only_with_no_frame_for_a_while_and_nothing_queued():
    sw = config_switch()
    sw._frames_at = switch_module.time.monotonic()
    assert sw._idle_for() < 0.05
    sw._frames_at -= 1.0
    assert sw._idle_for() >= 1.0
    sw.tm.timers.append((0.0, 0, 0, None))  # a packet in flight
    assert sw._idle_for() == 0.0
    sw.tm.timers.clear()


@pytest.mark.timing
def test_stopping_the_switch_ends_a_build_in_progress(monkeypatch):
    monkeypatch.setenv("P4SWITCH_SPECIALISE", "1")
    monkeypatch.setattr(specialisation_module, "QUIET_S", 0.01)
    monkeypatch.setattr(specialisation_module, "SETTLE_S", 0.01)
    monkeypatch.setattr(builder_module, "command",
                        lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    sw = Switch({})
    sw.load_program(config_program())
    sw.start()
    builder = _builder_of(sw, sw.program)
    for _ in range(300):
        if builder.pid is not None:
            break
        switch_module.time.sleep(0.01)
    assert builder.pid is not None  # the worker is waiting for the build
    started = switch_module.time.monotonic()
    sw.stop()
    assert switch_module.time.monotonic() - started < 2
    assert sw.program.fused is sw.program.fused_generic


# -- the folding itself ----------------------------------------------------------------------
TEMPLATE = [0] * 16  # every slot's initial value


def fused_source(body: str) -> str:
    lines = ["def fused(pkt, port, now_us, tm_ports):"]
    lines += ["    " + ln for ln in body.strip("\n").split("\n")]
    return "\n".join(lines) + "\n"


def test_a_constant_slot_is_folded_into_what_reads_it_and_its_store_goes():
    src, dropped = fold(fused_source("""
S_9 = pkt[0]
for _ in _ONCE:
    S_5 = 2
    if S_5 == 2 and S_9:
        S_7 = 1
    else:
        S_7 = 0
    S_8 = (1 if S_5 != 2 else 0)
return 1, _handback(locals())
"""), TEMPLATE)
    assert dropped == {5: 2, 8: 0}  # S_8 = 0 once S_5 is folded: the hand-back has both
    assert ast.unparse(ast.parse(src)) == ast.unparse(ast.parse(fused_source("""
S_9 = pkt[0]
for _ in _ONCE:
    if S_9:
        S_7 = 1
    else:
        S_7 = 0
return 1, _handback(locals())
""")))


def test_a_store_of_the_function_body_folds_too_and_stays_for_an_earlier_hand_back():
    """Folding goes on while it finds new constant stores (S_4, then S_5); a store
    with a hand-back before it stays unless it stores the template's value (S_6)."""
    src, dropped = fold(fused_source("""
S_1 = pkt[0]
if S_1:
    return 1, _handback(locals())
S_2 = S_3 = 5
S_6 = 0
for _ in _ONCE:
    S_4 = 1 if S_2 == 5 or S_3 == 2 else 0
    if S_4 and S_6 == 0:
        S_5 = 7
return S_5
"""), TEMPLATE)
    assert dropped == {6: 0}
    assert ast.unparse(ast.parse(src)) == ast.unparse(ast.parse(fused_source("""
S_1 = pkt[0]
if S_1:
    return 1, _handback(locals())
S_2 = S_3 = 5
for _ in _ONCE:
    S_4 = 1
    S_5 = 7
return 7
""")))


def test_what_would_fail_at_run_time_is_not_folded():
    template = [0] * 16
    template[1] = -2
    src, _ = fold(fused_source("""
S_2 = 3
return S_2 >> S_1, S_2 << S_1, S_2 >> 1, S_2 << 2, S_2 // 0
"""), template)
    assert src.endswith("return (3 >> -2, 3 << -2, 1, 12, 3 // 0)\n")


def test_a_slot_after_a_break_or_assigned_twice_is_not_folded():
    body = """
S_1 = pkt[0]
for _ in _ONCE:
    S_4 = 3
    S_4 = 5
    if S_1:
        break
    S_5 = 2
n = S_5 + S_4
"""
    src, dropped = fold(fused_source(body), TEMPLATE)
    assert dropped == {}
    assert ast.unparse(ast.parse(src)) == ast.unparse(ast.parse(fused_source(body)))


def test_a_slot_handed_back_before_its_store_keeps_the_store():
    src, dropped = fold(fused_source("""
for _ in _ONCE:
    _S = _handback(locals())
    S_5 = 2
if S_5:
    return 1
"""), TEMPLATE)
    assert dropped == {}
    assert "S_5 = 2" in src and "if S_5" not in src


def test_a_read_before_any_assignment_sees_the_initial_value():
    """S_7 and S_3 are read before any assignment (S_3's initial value is -1); S_5 is
    read before its assignment too, but in a loop that assigns it: left alone."""
    template = [0] * 16
    template[3] = -1
    src, dropped = fold(fused_source("""
S_1 = pkt[0]
for _ in _ONCE:
    if S_7 and S_1:
        S_8 = 1
    if S_1:
        S_4 = S_3
    S_7 = 1
    n = 0
    while n < 3:
        S_6 = S_5 + n
        S_5 = S_6
        n += 1
return S_4, S_5
"""), template)
    assert dropped == {7: 1}
    assert ast.unparse(ast.parse(src)) == ast.unparse(ast.parse(fused_source("""
S_1 = pkt[0]
for _ in _ONCE:
    if S_1:
        S_4 = -1
    n = 0
    while n < 3:
        S_6 = S_5 + n
        S_5 = S_6
        n += 1
return S_4, S_5
""")))


def test_the_join_dispatch_is_decided_where_n_is_known():
    src, _ = fold(fused_source("""
n = -1
S_1, S_3 = pkt[0], pkt[1]
for _ in _ONCE:
    if S_1:
        S_2 = 1
        n = 9
    else:
        n = 9
    if n == 9:
        if S_3:
            n = 12
        else:
            break
    if n == 11:
        S_4 = 1
    if n == 12:
        S_4 = 2
return S_4
"""), TEMPLATE)
    assert "n == " not in src
    assert "S_4 = 1" not in src
