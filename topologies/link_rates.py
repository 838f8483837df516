"""Link rates on real bmv2: applied at network start-up, and said in every run.

The embedded switch takes each port's rate, delay and queue depth on its command
line (`--port-params`). simple_switch_grpc has none of that; it is applied once
the switch runs, in order of fidelity:

1. bmv2's own egress queues, over its Thrift runtime API as p4-utils does
   (`set_queue_rate PPS PORT`, `set_queue_depth PACKETS PORT`): packets wait in
   the traffic manager before egress, as on the embedded switch, so fabric.p4's
   buffer accounting (egress_queued, fc_buffer) sees the backlog. Needs a
   simple_switch_grpc built with Thrift (`--with-thrift`).
2. Otherwise (p4ref's build has no Thrift: nothing listens on its Thrift
   port), tc `htb` on the switch's side of each link: a rate of rate_pps x
   COST_BYTES with `mpu COST_BYTES` charges every frame COST_BYTES whatever its
   length (all fabric frames are shorter), which makes the byte-rate shaper a
   packet-rate one; pause frames, CREDIT updates and fault notifications go in a
   class of their own, never queued behind data (u32 filters on the EtherType and
   the LRH), credit requests stay among the data (tc_commands says why). (This
   kernel has htb, tbf and pfifo, no prio or netem.) The rate holds, but the data
   backlog waits in the qdisc, after egress, where no P4 program sees it: pauses,
   credit stalls and LOSSY tail drops at that port do not happen on the switch
   (the qdisc's limit is the port's depth, so it does not drop either).

Propagation delay is not applied on bmv2 (no netem on this kernel).
"""

from __future__ import annotations

import re
import socket
import subprocess
from dataclasses import dataclass

from traffic.frames import ETHERTYPE_FABRIC, CreditOp, Kind

COST_BYTES = 2048  # htb mpu: what every frame is charged (longer than any fabric frame)


class LinkRateError(RuntimeError):
    """A link rate could not be applied to a switch."""


@dataclass(frozen=True)
class PortRate:
    port: int
    iface: str
    rate_pps: int
    depth: int  # packets


def parse_port_params(spec: str) -> dict[str, int]:
    """"rate_pps=2000,delay_us=0,depth=4096" -> {"rate_pps": 2000, ...}."""
    out = {}
    for item in filter(None, spec.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise LinkRateError(f"port parameters {spec!r}: {item!r} is not NAME=INTEGER")
        out[key.strip()] = int(value)
    return out


def port_rates(ports: dict[int, str], port_params: dict[int, str]) -> list[PortRate]:
    """The rated ports of one switch: {port: iface} and {port: "rate_pps=..,depth=.."}."""
    out = []
    for port, spec in sorted(port_params.items()):
        params = parse_port_params(spec)
        if port in ports and params.get("rate_pps"):
            out.append(PortRate(port, ports[port], params["rate_pps"], params.get("depth", 64)))
    return out


def thrift_listening(thrift_port: int, timeout: float = 0.5) -> bool:
    """Whether the switch serves its Thrift runtime API (called once gRPC answers: a
    build with Thrift listens by then; a build without it never does, and says nothing)."""
    try:
        with socket.create_connection(("127.0.0.1", thrift_port), timeout=timeout):
            return True
    except OSError:
        return False


def apply_with_thrift(thrift_port: int, rates: list[PortRate]) -> str:
    from controller.bmv2_runtime import Bmv2Runtime, Bmv2RuntimeError

    try:
        with Bmv2Runtime(thrift_port) as runtime:
            for r in rates:
                runtime.set_queue_rate(r.port, r.rate_pps)
                runtime.set_queue_depth(r.port, r.depth)
    except Bmv2RuntimeError as exc:
        raise LinkRateError(str(exc)) from None
    return "bmv2 set_queue_rate/set_queue_depth (Thrift)"


def tc_commands(rate: PortRate) -> list[list[str]]:
    """htb on one interface: data frames at rate_pps (every frame costs COST_BYTES:
    mpu), in a pfifo of the port's depth, with the credit requests among them; 802.1Qbb
    frames, CREDIT updates (LRH kind CREDIT, op 0: the kind is the LRH's second byte,
    the op the high nibble of its ninth) and fault notifications (kind NOTIFY) in a class
    of their own that is never held behind data.

    On a real link a flow-control frame goes out between two data frames: the backlog
    waits in the switch. Here up to a credit window of data waits in the qdisc, after
    the pipeline, and a CREDIT update queued behind it came back a window late: the
    credit loop took two backlogs and a CREDIT link carried half its rate (~140 of 300
    frames/s on bmv2, 2026-12-05). An update therefore overtakes the data, and the
    receiver does not resync ABR to its FCTBS, which counts frames still queued here
    (fabric.p4 `take_credit`, traffic/nic_fc.py); a request keeps its place among the
    data, so the receiver resyncs to it exactly."""
    dev = ["dev", rate.iface]
    bits = rate.rate_pps * COST_BYTES * 8
    control = ["u32", "match", "u32", "0", "0"]
    fabric = ["protocol", hex(ETHERTYPE_FABRIC)]
    credit_update = ["match", "u8", str(int(Kind.CREDIT)), "0xff", "at", "1",
                     "match", "u8", f"{int(CreditOp.NORMAL) << 4:#04x}", "0xf0", "at", "8"]
    return [
        ["tc", "qdisc", "replace", *dev, "root", "handle", "1:", "htb", "default", "2"],
        ["tc", "class", "add", *dev, "parent", "1:", "classid", "1:1", "htb",
         "rate", "1gbit", "prio", "0", "quantum", "2048"],
        ["tc", "class", "add", *dev, "parent", "1:", "classid", "1:2", "htb",
         "rate", f"{bits}bit", "ceil", f"{bits}bit", "burst", str(COST_BYTES),
         "cburst", str(COST_BYTES), "mpu", str(COST_BYTES), "prio", "1", "quantum", "2048"],
        ["tc", "qdisc", "add", *dev, "parent", "1:2", "pfifo", "limit", str(rate.depth)],
        ["tc", "filter", "add", *dev, "parent", "1:", "protocol", "0x8808", "prio", "1",
         *control, "flowid", "1:1"],
        ["tc", "filter", "add", *dev, "parent", "1:", *fabric, "prio", "2", "u32",
         "match", "u8", str(int(Kind.NOTIFY)), "0xff", "at", "1", "flowid", "1:1"],
        ["tc", "filter", "add", *dev, "parent", "1:", *fabric, "prio", "3", "u32",
         *credit_update, "flowid", "1:1"],
    ]


# The drop reason under which a run counts what a shaping qdisc dropped at a switch
# port (the switch's counters, controller/readout.py, give the others).
LINK_SHAPING_DROP = "link_shaping"

TC_SHAPED = "tc htb per switch interface (packet rate: every data frame costs mpu bytes)"


def after_pipeline(how: str) -> bool:
    """Whether links enforced `how` (apply's answer) wait after the pipeline, where the
    program does not see their backlog (tc): then PFC paces them in the program."""
    return how == TC_SHAPED


def qdisc_drops(iface: str) -> int | None:
    """Frames the qdiscs of an interface dropped so far: the root qdisc's `dropped`
    (`tc -s`; an htb root counts what the qdiscs under it dropped), None when tc cannot
    say."""
    proc = subprocess.run(["tc", "-s", "qdisc", "show", "dev", iface], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        return None
    return parse_root_drops(proc.stdout)


def parse_root_drops(tc_stats: str) -> int | None:
    """The root qdisc's `dropped` count in `tc -s qdisc show` output."""
    for block in re.split(r"\n(?=qdisc )", tc_stats.strip()):
        if re.match(r"qdisc \S+ \S+ root\b", block):
            found = re.search(r"\(dropped (\d+)", block)
            return int(found.group(1)) if found else None
    return None


def apply_with_tc(rates: list[PortRate]) -> str:
    for r in rates:
        for cmd in tc_commands(r):
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise LinkRateError(f"{' '.join(cmd)}: {proc.stderr.strip()}")
    return TC_SHAPED


def apply(thrift_port: int | None, rates: list[PortRate]) -> str:
    """Apply one bmv2 switch's link rates; returns how they are enforced."""
    if not rates:
        return "none (no rated ports)"
    if thrift_port is not None and thrift_listening(thrift_port):
        return apply_with_thrift(thrift_port, rates)
    return apply_with_tc(rates)
