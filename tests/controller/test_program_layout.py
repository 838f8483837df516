"""The pushed program's array layout comes from its own P4Info, not from copies of its constants."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.p4info import P4Info
from controller.program_layout import LayoutError, layout
from topologies.targets import Target, compile_program

ROOT = Path(__file__).resolve().parents[2]


def _p4info(sizes: dict[str, int]) -> P4Info:
    text = "".join(f'counters {{ preamble {{ id: {i} name: "{name}" }} spec {{ unit: PACKETS }} '
                   f"size: {size} }}\n" for i, (name, size) in enumerate(sizes.items(), 1))
    return P4Info.from_text(text)


def test_fabric_p4_has_512_ports_8_classes_and_8_drop_reasons_per_port():
    program = compile_program(Target.EMBEDDED, ROOT / "p4src" / "fabric.p4", ROOT / "build" / "p4")
    got = layout(P4Info.from_file(program.p4info))
    assert (got.num_ports, got.num_classes, got.drop_reasons) == (512, 8, 8)


def test_another_program_gets_its_own_layout():
    info = _p4info({"FabricIngress.rx_port_counter": 64, "class_tx": 256,
                    "FabricIngress.drop_counter": 1024})
    got = layout(info)
    assert (got.num_ports, got.num_classes, got.drop_reasons) == (64, 4, 16)


def test_arrays_that_are_not_whole_blocks_per_port_are_refused():
    info = _p4info({"FabricIngress.rx_port_counter": 64, "class_tx": 100,
                    "FabricIngress.drop_counter": 512})
    with pytest.raises(LayoutError, match=r"class_tx \(100\) .* not whole blocks per port"):
        layout(info)
