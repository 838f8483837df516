"""A switch port's offloads are off before the switch opens it: libpcap (bmv2's intake)
sizes its receive ring by the largest frame the interface may deliver, 64 KiB with
offloads (32 frames in its 2 MiB ring, and bmv2 lost what overflowed it), the MTU
without (topologies/network.py, OFFLOADS_OFF)."""

from __future__ import annotations

import os
import subprocess

import pytest

from topologies import network
from topologies.ledger import Ledger


def test_a_missing_ethtool_is_named_not_a_traceback(monkeypatch):
    def no_ethtool(cmd, **_kw):
        raise FileNotFoundError(cmd[0])

    monkeypatch.setattr(network.subprocess, "run", no_ethtool)
    with pytest.raises(network.NetworkError, match="ethtool is not installed"):
        network._quiet_interface("fk3-s1-eth1")


def test_the_command_turns_off_what_libpcap_looks_at():
    cmd = network.offloads_off_command("fk3-s1-eth1")
    assert cmd[:3] == ["ethtool", "-K", "fk3-s1-eth1"]
    assert {"tso", "gso", "gro"} <= set(cmd[3::2]) and set(cmd[4::2]) == {"off"}


@pytest.mark.mininet
def test_a_quieted_port_offloads_nothing_and_has_no_ipv6(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (a veth pair)")
    ledger = Ledger.create("port-intake-test", tmp_path)
    a, b = f"{ledger.prefix}s1-eth1", f"{ledger.prefix}s1-eth2"
    ledger.add_interfaces([a, b])
    try:
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
        before = subprocess.run(["ethtool", "-k", a], capture_output=True, text=True).stdout
        assert "generic-segmentation-offload: on" in before  # veth's default
        network._quiet_interface(a)
        after = subprocess.run(["ethtool", "-k", a], capture_output=True, text=True).stdout
        for feature in ("tcp-segmentation-offload", "generic-segmentation-offload",
                        "generic-receive-offload"):
            assert f"{feature}: off" in after, after
        with open(f"/proc/sys/net/ipv6/conf/{a}/disable_ipv6") as knob:
            assert knob.read().strip() == "1"
    finally:
        assert Ledger.load(ledger.path).teardown() == []
