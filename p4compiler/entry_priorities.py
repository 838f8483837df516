"""Entry priorities of a table's `entries` (P4_16 14.2.1.4, p4c's EntryPriorities).

Without any `priority = N:` the entries rank in source order, the first highest,
whatever `largest_priority_wins` says. With some, the first entry must have one, an
entry without one gets the previous entry's priority minus `priority_delta` (plus it,
when `largest_priority_wins = false`), and a larger value wins unless
`largest_priority_wins = false`. `const entries` take no priorities.

bmv2 ranks the other way (the smallest value wins; equal values keep the order they
were added), so `bmv2_priorities` turns the P4 priorities into values bmv2 ranks the
same way. An `@priority(N)` annotation (p4c's older form) is bmv2's value as it is.
"""

from __future__ import annotations

from .errors import CompileError, Location


def p4_priorities(given: list[int | None], largest_wins: bool, delta: int,
                  const_table: bool, locs: list[Location], table: str) -> list[int] | None:
    """Every entry's P4 priority, or None when no entry gives one."""
    if all(p is None for p in given):
        return None
    if const_table:
        first = next(i for i, p in enumerate(given) if p is not None)
        raise CompileError(locs[first], f"{table}: a table with `const entries` cannot give "
                           "entry priorities (write `entries = { ... }`, with `const` on "
                           "the entries that must not change)")
    if given[0] is None:
        raise CompileError(locs[0], f"{table}: the first entry must have a priority when "
                           "others have one")
    if delta <= 0:
        raise CompileError(locs[0], f"{table}: priority_delta must be positive, not {delta}")
    out: list[int] = []
    current = 0
    for p, loc in zip(given, locs, strict=True):
        current = p if p is not None else current + (-delta if largest_wins else delta)
        if current < 0:
            raise CompileError(loc, f"{table}: this entry's priority would be {current}; "
                               "priorities are not negative (give it one, or a smaller "
                               "priority_delta)")
        out.append(current)
    return out


def bmv2_priorities(p4: list[int], largest_wins: bool) -> list[int]:
    """bmv2's values (smallest wins) ranking entries as the P4 priorities do."""
    if not largest_wins:
        return list(p4)
    top = max(p4)
    return [top - p + 1 for p in p4]
