"""Reading what a link's shaping qdisc dropped (topologies/link_rates.py)."""

from __future__ import annotations

from topologies.link_rates import parse_root_drops

STATS = """qdisc htb 1: root refcnt 3 r2q 10 default 0x2 direct_packets_stat 0 direct_qlen 1000
 Sent 120 bytes 2 pkt (dropped 14, overlimits 1 requeues 0)
 backlog 240b 4p requeues 0
qdisc pfifo 818b: parent 1:2 limit 4p
 Sent 120 bytes 2 pkt (dropped 14, overlimits 0 requeues 0)
 backlog 240b 4p requeues 0
"""


def test_the_root_qdisc_counts_the_drops_once():
    # the pfifo's drops are the htb root's too: summing both would count them twice
    assert parse_root_drops(STATS) == 14


def test_no_root_qdisc_or_no_count_is_unknown():
    assert parse_root_drops("") is None
    assert parse_root_drops(STATS.split("qdisc pfifo")[0].replace("(dropped 14, ", "(")) \
        is None
