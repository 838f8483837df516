"""Compiler and switch as two choices; bmv2 link rates as tc commands; no processes."""

from __future__ import annotations

import pytest

from topologies import link_rates, targets
from topologies.targets import Compiler, SwitchKind, TargetError, resolve


@pytest.fixture
def tools(monkeypatch):
    """Pretend which of p4c / simple_switch_grpc are on PATH."""
    present: set[str] = set()
    monkeypatch.setattr(targets.shutil, "which",
                        lambda name: f"/opt/{name}" if name in present else None)
    return present


def test_auto_is_embedded_unless_the_whole_reference_toolchain_is_there(tools):
    assert resolve("auto").switch is SwitchKind.EMBEDDED
    tools.add("simple_switch_grpc")  # CI with ../shared/p4ref before p4c is added
    auto = resolve("auto")
    assert (auto.compiler, auto.switch) == (Compiler.EMBEDDED, SwitchKind.EMBEDDED)
    assert "p4c is not on PATH" in auto.reason
    tools.add("p4c")  # the lab VM
    assert (resolve("auto").compiler, resolve("auto").switch) == (Compiler.P4C, SwitchKind.BMV2)


def test_bmv2_uses_p4c_where_installed_else_the_embedded_compiler_and_says_why(tools):
    tools.add("simple_switch_grpc")
    t = resolve("bmv2")
    assert (t.compiler, t.switch, t.value) == (Compiler.EMBEDDED, SwitchKind.BMV2, "bmv2")
    assert t.reason == "--target bmv2; embedded compiler: p4c is not on PATH"
    versions = t.versions()
    assert (versions["compiler"], versions["switch"]) == ("embedded", "bmv2")
    assert "tc htb" in versions["link_rate_enforcement"]
    tools.add("p4c")
    assert resolve("bmv2").compiler is Compiler.P4C


def test_each_part_can_be_chosen_alone(tools):
    tools.update({"simple_switch_grpc", "p4c"})
    mixed = resolve("embedded", compiler="p4c")
    assert (mixed.compiler, mixed.switch) == (Compiler.P4C, SwitchKind.EMBEDDED)
    other = resolve("auto", compiler="embedded", switch="bmv2")
    assert (other.compiler, other.switch) == (Compiler.EMBEDDED, SwitchKind.BMV2)
    assert other.label == "bmv2 switch, embedded compiler"


def test_missing_tools_and_unknown_names_are_clear_errors(tools):
    with pytest.raises(TargetError, match="simple_switch_grpc on PATH"):
        resolve("bmv2")
    with pytest.raises(TargetError, match="p4c on PATH"):
        resolve("embedded", compiler="p4c")
    with pytest.raises(TargetError, match="unknown switch 'tofino'"):
        resolve("auto", switch="tofino")
    with pytest.raises(TargetError, match="unknown target 'x'"):
        resolve("x")


def test_bmv2_switch_command_gets_a_thrift_port_and_no_port_params():
    t = targets.Target(Compiler.EMBEDDED, SwitchKind.BMV2)
    cmd = targets.switch_command(t, 3, {1: "s3-eth1"}, "127.0.0.1:5000",
                                 port_params={1: "rate_pps=100"}, thrift_port=9191,
                                 cpu_port=510)
    assert cmd[:6] == ["simple_switch_grpc", "--device-id", "3", "-i", "1@s3-eth1", "--no-p4"]
    assert "--thrift-port" in cmd and "--port-params" not in cmd
    embedded = targets.switch_command(targets.Target.EMBEDDED, 3, {1: "s3-eth1"}, "a:1",
                                      port_params={1: "rate_pps=100"}, cpu_port=510)
    assert "--port-params" in embedded and "--thrift-port" not in embedded


def test_tc_makes_a_packet_rate_shaper_with_pause_frames_apart():
    [rate] = link_rates.port_rates({2: "s1-eth2", 3: "s1-eth3"},
                                   {2: "rate_pps=300,delay_us=0,depth=64"})
    assert rate == link_rates.PortRate(2, "s1-eth2", 300, 64)
    cmds = [" ".join(c) for c in link_rates.tc_commands(rate)]
    bits = 300 * link_rates.COST_BYTES * 8
    assert any(f"classid 1:2 htb rate {bits}bit ceil {bits}bit" in c
               and f"mpu {link_rates.COST_BYTES}" in c for c in cmds)
    assert any("protocol 0x8808" in c and "flowid 1:1" in c for c in cmds)
    # of the fabric's frames NOTIFY (LRH kind 6, byte 1) and CREDIT updates (kind 2 with
    # op 0, the high nibble of byte 8) go in the control class; requests stay with data
    fabric = [c for c in cmds if "protocol 0x88b5" in c]
    assert fabric == ["tc filter add dev s1-eth2 parent 1: protocol 0x88b5 prio 2 u32 "
                      "match u8 6 0xff at 1 flowid 1:1",
                      "tc filter add dev s1-eth2 parent 1: protocol 0x88b5 prio 3 u32 "
                      "match u8 2 0xff at 1 match u8 0x00 0xf0 at 8 flowid 1:1"]
    assert any("parent 1:2 pfifo limit 64" in c for c in cmds)


def test_port_params_that_are_not_integers_are_refused():
    with pytest.raises(link_rates.LinkRateError, match="'rate_pps=fast' is not NAME=INTEGER"):
        link_rates.parse_port_params("rate_pps=fast")
