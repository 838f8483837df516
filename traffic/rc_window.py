"""The RC transport's window: how many unacknowledged frames a flow may have, following
the measured round trip instead of a fixed count (a delay target, as Swift and TIMELY do).

Why: with a fixed window of `rc_window` (128) frames and a fabric that forwards
fewer frames per second than the NICs offer (the emulation on a loaded machine),
every flow keeps its whole window standing in the switch buffers. Measured on
fattree:4 at 2000 frames/s (issue 16): one-way delays of 60 ms in one direction
of a ring AllReduce and 700-1000 ms in the other, where the forward direction's
ACKs and NAKs queue behind the reverse direction's data. After a link failure
the first frame on the new path then needed a whole one-way trip through such
queues before the receiver saw it (the recovery gap), and the receiver's NAK a
second before it reached the sender.

The rule, per flow, on every round-trip sample (rc_rto.py's samples: Karn, the
receiver's ACK coalescing included):

* target = TARGET_FACTOR x the smallest sample seen + the receiver's ACK delay
  (`rc_ack_delay_ms`: a sample may include it without any queue);
* a sample at or under the target: the window grows by one frame per window's
  worth of frames acknowledged (additive increase);
* over it: the window shrinks in proportion to the excess,
  x max(1 - BETA x (sample - target) / sample, MAX_DECREASE), at most once per
  smoothed round trip (the samples of one round trip tell one story);
* always between `floor` (twice `rc_ack_every`, so an ACK never waits for its
  delay timer because the window closed first) and `ceiling` (`rc_window`).

It starts at the ceiling, so a fast, empty path is not slowed at start.
`adaptive=False` is the fixed window (`rc_window_control` "fixed", the default).

Opt-in (`--rc-window-control delay`, `[traffic] rc_window_control = "delay"`):
five fattree:4 link-failure runs with it gave a largest gap of 14-590 ms (median
115) against 22.7-149 ms (median 103) with the fixed window, the same spread
within this machine's noise (docs/controller.md, "What the 20-switch gap is made
of"); it stays off until more runs show what it does.
"""

from __future__ import annotations

from dataclasses import dataclass

TARGET_FACTOR = 1.5  # the queueing delay allowed, as a share of the base round trip
BETA = 0.8  # the decrease per unit of relative excess delay
MAX_DECREASE = 0.5  # at most halved by one decrease


@dataclass
class DelayWindow:
    """One flow's window, in frames."""

    ceiling: int
    floor: int
    slack_ns: int = 0  # added to the target: the receiver's ACK delay
    adaptive: bool = True
    cwnd: float = 0.0
    min_rtt_ns: int | None = None
    last_decrease_ns: int | None = None
    decreases: int = 0
    smallest: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.floor <= self.ceiling:
            raise ValueError(f"window floor {self.floor} must be >= 1 and <= the ceiling "
                             f"{self.ceiling}")
        self.cwnd = self.smallest = float(self.ceiling)

    @property
    def frames(self) -> int:
        """The frames the flow may have unacknowledged now."""
        return int(self.cwnd) if self.adaptive else self.ceiling

    def target_ns(self) -> int | None:
        if self.min_rtt_ns is None:
            return None
        return int(self.min_rtt_ns * TARGET_FACTOR) + self.slack_ns

    def sample(self, rtt_ns: int, acked: int, now_ns: int, srtt_ns: int | None) -> None:
        """A round-trip sample, taken when an ACK covered `acked` more frames."""
        rtt_ns = max(1, int(rtt_ns))
        if self.min_rtt_ns is None or rtt_ns < self.min_rtt_ns:
            self.min_rtt_ns = rtt_ns
        if not self.adaptive:
            return
        target = self.target_ns()
        if rtt_ns <= target:
            self.cwnd = min(float(self.ceiling), self.cwnd + max(1, acked) / self.cwnd)
            return
        spacing = srtt_ns if srtt_ns is not None else rtt_ns
        if self.last_decrease_ns is not None and now_ns - self.last_decrease_ns < spacing:
            return
        factor = max(1 - BETA * (rtt_ns - target) / rtt_ns, MAX_DECREASE)
        self.cwnd = max(float(self.floor), self.cwnd * factor)
        self.smallest = min(self.smallest, self.cwnd)
        self.last_decrease_ns = now_ns
        self.decreases += 1

    def as_dict(self) -> dict:
        """The summary's view."""
        target = self.target_ns()
        return {"control": "delay" if self.adaptive else "fixed", "frames": self.frames,
                "ceiling": self.ceiling, "floor": self.floor, "smallest": int(self.smallest),
                "decreases": self.decreases,
                "target_ms": None if target is None else round(target / 1e6, 3)}
