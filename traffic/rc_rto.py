"""The RC transport's retransmission timeout: adapted to the measured round trip.

InfiniBand configures the local ACK timeout per QP (4.096 us x 2^timeout) and
keeps it fixed; RNICs with adaptive retransmission (and TCP, RFC 6298) measure
the round trip instead. Ours takes that idea:

* a sample is the time from a frame's only transmission to the ACK that first
  covers it (Karn: a frame sent more than once gives no sample, its ACK could
  answer either copy). It includes the receiver's ACK coalescing
  (`rc_ack_every` frames or `rc_ack_delay_ms`), so the timeout never undercuts it;
* SRTT += (R - SRTT) / 8, RTTVAR += (|SRTT - R| - RTTVAR) / 4 (first sample:
  SRTT = R, RTTVAR = R / 2);
* RTO = clamp(SRTT + 4 x RTTVAR, floor, ceiling), then doubled for every timeout
  in a row up to 2^max_shift (the backoff: a receiver stalled for a second is
  waited for rather than given up on after a few short timeouts);
* before the first sample, RTO = the configured initial value (`rc_timeout_ms`).

With `adaptive=False` the timeout is the configured value (with the backoff), as
before.
"""

from __future__ import annotations

from dataclasses import dataclass

ALPHA_SHIFT = 3  # SRTT gain 1/8
BETA_SHIFT = 2  # RTTVAR gain 1/4
K = 4  # RTO = SRTT + K x RTTVAR


@dataclass
class RtoEstimator:
    """One flow's round-trip estimate and its retransmission timeout, in ns."""

    initial_ns: int
    floor_ns: int
    ceiling_ns: int
    max_shift: int = 3
    adaptive: bool = True
    srtt_ns: int | None = None
    rttvar_ns: int = 0
    samples: int = 0
    last_sample_ns: int | None = None
    min_sample_ns: int | None = None
    max_sample_ns: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.floor_ns <= self.ceiling_ns:
            raise ValueError(f"RTO floor {self.floor_ns} ns must be > 0 and <= the ceiling "
                             f"{self.ceiling_ns} ns")

    def sample(self, rtt_ns: int) -> None:
        """A measured round trip (a frame sent once, to the ACK that covered it)."""
        rtt_ns = max(0, int(rtt_ns))
        self.samples += 1
        self.last_sample_ns = rtt_ns
        self.min_sample_ns = rtt_ns if self.min_sample_ns is None else min(self.min_sample_ns,
                                                                           rtt_ns)
        self.max_sample_ns = rtt_ns if self.max_sample_ns is None else max(self.max_sample_ns,
                                                                           rtt_ns)
        if self.srtt_ns is None:
            self.srtt_ns, self.rttvar_ns = rtt_ns, rtt_ns // 2
            return
        self.rttvar_ns += (abs(self.srtt_ns - rtt_ns) - self.rttvar_ns) >> BETA_SHIFT
        self.srtt_ns += (rtt_ns - self.srtt_ns) >> ALPHA_SHIFT

    @property
    def base_ns(self) -> int:
        """The timeout before backoff."""
        if not self.adaptive or self.srtt_ns is None:
            return self.initial_ns
        return min(self.ceiling_ns, max(self.floor_ns, self.srtt_ns + K * self.rttvar_ns))

    def rto_ns(self, timeouts_in_a_row: int) -> int:
        return self.base_ns << min(timeouts_in_a_row, self.max_shift)

    def as_dict(self) -> dict:
        """The summary's view, in ms."""
        def ms(ns: int | None) -> float | None:
            return None if ns is None else round(ns / 1e6, 3)
        return {"adaptive": self.adaptive, "samples": self.samples, "srtt_ms": ms(self.srtt_ns),
                "rttvar_ms": ms(self.rttvar_ns if self.srtt_ns is not None else None),
                "rto_ms": ms(self.base_ns), "min_rtt_ms": ms(self.min_sample_ns),
                "max_rtt_ms": ms(self.max_sample_ns)}
