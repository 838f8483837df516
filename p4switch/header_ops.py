"""Run-time helpers the switch's generated code calls for whole-header operations,
with bmv2's semantics (behavioral-model: Header, HeaderUnion).

A header descriptor is (valid slot, raw offset slot, field slots, field widths, dirty
slot), as Program._desc builds it."""

from __future__ import annotations


def header_eq(S: list, a: tuple, b: tuple) -> bool:
    """bmv2's Header::cmp: both valid and every field equal (the caller has checked
    that the two are of the same header type)."""
    if S[a[0]] != 1 or S[b[0]] != 1:
        return False
    return all(S[x] == S[y] for x, y in zip(a[2], b[2], strict=True))
