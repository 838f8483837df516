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


def stack_push(S: list, descs: tuple, nx: int, count: int) -> None:
    """push_front on a header stack: element i takes element i - count's fields from
    the top down (repacked at deparse); the first `count` become invalid."""
    n = len(descs)
    for i in range(n - 1, -1, -1):
        d = descs[i]
        if i >= count:
            s = descs[i - count]
            for a, b in zip(d[2], s[2]):
                S[a] = S[b]
            S[d[0]], S[d[1]] = S[s[0]], -1
        else:
            S[d[0]] = 0
    S[nx] = min(n, S[nx] + count)


def stack_pop(S: list, descs: tuple, nx: int, count: int) -> None:
    """pop_front on a header stack: element i takes element i + count's fields; the
    last `count` become invalid."""
    n = len(descs)
    for i in range(n):
        d = descs[i]
        if i + count < n:
            s = descs[i + count]
            for a, b in zip(d[2], s[2]):
                S[a] = S[b]
            S[d[0]], S[d[1]] = S[s[0]], -1
        else:
            S[d[0]] = 0
    S[nx] = max(0, S[nx] - count)


def _swap_unions(S: list, a: tuple, b: tuple) -> None:
    """bmv2's HeaderUnion::swap_values: every member's fields and validity change
    places; both are repacked at deparse (their bytes no longer sit at `raw`)."""
    for x, y in zip(a, b, strict=True):
        for p, q in zip(x[2], y[2], strict=True):
            S[p], S[q] = S[q], S[p]
        S[x[0]], S[y[0]] = S[y[0]], S[x[0]]
        S[x[1]] = S[y[1]] = -1
        S[x[4]] = S[y[4]] = 1


def union_stack_push(S: list, elems: tuple, nx: int, count: int) -> None:
    """bmv2's push_front on a stack of header unions (StackP4_16<HeaderUnion>): element
    i swaps with i - count from the top down. A union's mark_invalid is a no-op in
    bmv2, so the first `count` elements keep what was swapped into them (the elements
    pushed off the end) instead of becoming invalid as the P4_16 spec says."""
    n = len(elems)
    for i in range(n - 1, count - 1, -1):
        _swap_unions(S, elems[i], elems[i - count])
    S[nx] = min(n, S[nx] + count)


def union_stack_pop(S: list, elems: tuple, nx: int, count: int) -> None:
    """bmv2's pop_front on a stack of header unions: element i swaps with i + count;
    as for push, the last `count` elements are not invalidated."""
    n = len(elems)
    for i in range(n - count):
        _swap_unions(S, elems[i], elems[i + count])
    S[nx] = max(0, S[nx] - count)
