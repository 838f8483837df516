"""How a compiled fabric program lays out its state, read from the program's own P4Info.

fabric.p4 indexes its per-port arrays as `port * NUM_CLASSES + class` (telemetry,
flow-control state) and `port * DROP_REASONS + reason` (the drop counter). P4
constants do not reach the compiled artifacts, but the arrays' sizes do: NUM_PORTS
is the size of a per-port counter, and each block size is an array's size over it.
(Counters, not registers: bmv2's P4Runtime server reads counters only.)
So the controller learns the layout of whatever program it pushed, not a copy of
fabric.p4's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.p4info import P4Info

PER_PORT_COUNTER = "FabricIngress.rx_port_counter"  # NUM_PORTS cells
PER_CLASS_COUNTER = "class_tx"  # NUM_PORTS * NUM_CLASSES cells
DROP_COUNTER = "FabricIngress.drop_counter"  # NUM_PORTS * DROP_REASONS cells


class LayoutError(ValueError):
    """A program whose arrays do not have the fabric layout."""


@dataclass(frozen=True)
class ProgramLayout:
    num_ports: int
    num_classes: int  # traffic classes (VLs / PFC priorities) per port
    drop_reasons: int  # cells per port in the drop counter


def layout(p4info: P4Info) -> ProgramLayout:
    ports = p4info.counter(PER_PORT_COUNTER).size
    classes = p4info.counter(PER_CLASS_COUNTER).size
    drops = p4info.counter(DROP_COUNTER).size
    if not ports or classes % ports or drops % ports:
        raise LayoutError(f"{PER_CLASS_COUNTER} ({classes}) and {DROP_COUNTER} ({drops}) "
                          f"are not whole blocks per port of {PER_PORT_COUNTER} ({ports})")
    return ProgramLayout(ports, classes // ports, drops // ports)
