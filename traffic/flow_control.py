"""The link-level flow-control vocabulary every part shares (DESIGN.md "Flow-control modes").

One enum for the mode (the scenario's `flow_control`, the NIC's `--mode`, the
SM's `set_fc_mode`), one set of PFC watermark defaults, and the 802.1Qbb pause
quantum at an emulated link rate. The P4 program's own encoding of the mode
(`FC_LOSSY`, `FC_PFC`, `FC_CREDIT` in p4src/include/headers.p4) is the
controller's business (controller/flow_control.py).
"""

from __future__ import annotations

import enum

from traffic.frames import DATA_HEADER_LEN


class FlowControl(enum.Enum):
    LOSSY = "lossy"  # no link-level flow control: the traffic manager tail-drops
    PFC = "pfc"  # 802.1Qbb pause frames at XOFF/XON watermarks
    CREDIT = "credit"  # InfiniBand-style absolute credits (FCCL/FCTBS)


# PFC watermarks in packets of one ingress port and priority: the scenario's defaults
# and the NIC emulator's, so a host and its switch pause alike unless told otherwise.
PFC_XOFF = 24
PFC_XON = 12
PFC_HEADROOM = 24

# InfiniBand-style credits, in packets: the receive buffer advertised per input port and
# VL, and how many drained packets a credit frame is returned after.
CREDIT_BUFFER = 32
CREDIT_COALESCE = 4

DEFAULT_FRAME_BYTES = DATA_HEADER_LEN + 64


def pause_quantum_ns(rate_pps: float, frame_bytes: int = DEFAULT_FRAME_BYTES) -> float:
    """One 802.1Qbb quantum (512 bit times) in ns at rate_pps frames of frame_bytes bytes."""
    return 512e9 / (rate_pps * 8 * frame_bytes)
