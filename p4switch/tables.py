"""Match-action tables and action profiles of the loaded program, at run time.

Lookup structures are chosen per table for the hot path: a dict for all-exact
keys (one int for a one-field key, else a tuple), a dict per prefix length for
lpm, and a priority-sorted list for ternary / range / optional keys.

Priorities follow P4Runtime: a larger value wins. Const entries from the JSON
(where bmv2 uses "a lower value wins") are converted when loaded.

Entry handles are bmv2's: an entry takes the lowest free slot of its table, and its
handle carries the slot's version above bit 24 (bmv2's HANDLE_SET(version, slot)), one
more each time the slot was freed, so a handle kept past its entry's deletion is refused
(EXPIRED_HANDLE) instead of reaching the entry that reused the slot. Entries of equal
priority match in slot order, as bmv2 scans its ternary entries.
"""

from __future__ import annotations

import heapq
import itertools

from p4switch.runtime_api import ActionCall, DataplaneError, IndirectTarget, MatchParam


def check_widths(where: str, action: str, args: tuple, widths: tuple) -> None:
    """Each argument of an action call within its parameter's width, as bmv2 takes
    action data (simple_switch_CLI: "Parameter is too large"; P4Runtime checks the
    bytes it is given). `widths`: the parameters' bitwidths (empty: not known)."""
    for i, (v, w) in enumerate(zip(args, widths)):
        if w is not None and v >= 1 << w:
            raise DataplaneError(f"{where}: action {action}: argument {i} ({v:#x}) does not "
                                 f"fit its {w} bits (bmv2: Parameter is too large)")


class Entry:
    """One table entry (or a table's default entry, handle -1)."""

    __slots__ = ("action", "args", "handle", "key", "priority", "nbytes", "npkts",
                 "member", "group", "meter", "const", "match")

    def __init__(self, action: int, args: tuple[int, ...], handle: int = -1,
                 key: tuple = (), priority: int = 0):
        self.action = action
        self.args = args
        self.handle = handle
        self.key = key
        self.priority = priority
        self.nbytes = 0
        self.npkts = 0
        self.member: int | None = None
        self.group: int | None = None
        self.meter = None
        self.const = False
        self.match: tuple = ()


class KeyField:
    """One key field of a table: its match kind and width in bits."""

    __slots__ = ("kind", "width", "name")

    def __init__(self, kind: str, width: int, name: str):
        self.kind = kind
        self.width = width
        self.name = name


class ActionProfile:
    """Members (action calls) and groups of members; groups select a member by hash."""

    def __init__(self, name: str, max_size: int, action_ids: dict[str, int],
                 action_arity: dict[int, int]):
        self.name = name
        self.max_size = max_size
        self.members: dict[int, tuple[int, tuple[int, ...]]] = {}
        self.groups: dict[int, list[int]] = {}
        # bmv2's member handle per member id: the lowest free one when the member was
        # made. bmv2 keeps a group's members as a set ordered by handle and picks the
        # member at hash % size in that order, whatever order they joined in.
        self.handles: dict[int, int] = {}
        self.tables: list[Table] = []       # the tables whose entries point into it
        self._action_ids = action_ids
        self._arity = action_arity
        self.param_widths: dict[int, tuple] = {}  # action id -> its parameters' widths

    def _resolve_call(self, call: ActionCall) -> tuple[int, tuple[int, ...]]:
        aid = self._action_ids.get(call.action)
        if aid is None:
            raise DataplaneError(f"action profile {self.name}: unknown action {call.action!r}")
        if len(call.args) != self._arity[aid]:
            raise DataplaneError(
                f"action {call.action}: expected {self._arity[aid]} args, got {len(call.args)}")
        check_widths(f"action profile {self.name}", call.action, call.args,
                     self.param_widths.get(aid, ()))
        return aid, tuple(call.args)

    def add_member(self, member_id: int, call: ActionCall) -> None:
        if member_id in self.members:
            raise DataplaneError(f"action profile {self.name}: member {member_id} exists")
        self.members[member_id] = self._resolve_call(call)
        used = set(self.handles.values())
        self.handles[member_id] = next(h for h in itertools.count() if h not in used)

    def modify_member(self, member_id: int, call: ActionCall) -> None:
        if member_id not in self.members:
            raise DataplaneError(f"action profile {self.name}: no member {member_id}")
        self.members[member_id] = self._resolve_call(call)

    def delete_member(self, member_id: int) -> None:
        if member_id not in self.members:
            raise DataplaneError(f"action profile {self.name}: no member {member_id}")
        if any(member_id in members for members in self.groups.values()) or \
                self._used_by_entry("member", member_id):
            raise DataplaneError(f"action profile {self.name}: member {member_id} is still "
                                 "used by a group or a table entry (MBR_STILL_USED)")
        del self.members[member_id]
        self.handles.pop(member_id, None)

    def set_group(self, group_id: int, member_ids: list[int]) -> None:
        for m in member_ids:
            if m not in self.members:
                raise DataplaneError(f"action profile {self.name}: no member {m}")
        self.groups[group_id] = sorted(member_ids, key=self.handles.__getitem__)

    def delete_group(self, group_id: int) -> None:
        if group_id not in self.groups:
            raise DataplaneError(f"action profile {self.name}: no group {group_id}")
        if self._used_by_entry("group", group_id):
            raise DataplaneError(f"action profile {self.name}: group {group_id} is still "
                                 "used by a table entry (GRP_STILL_USED)")
        del self.groups[group_id]

    def _used_by_entry(self, kind: str, ref: int) -> bool:
        """Whether an entry (or a default entry) of a table of this profile points at
        the member or group: bmv2 refuses to delete it then (MBR_STILL_USED,
        GRP_STILL_USED), as simple_switch_CLI's act_prof_delete_member / _group show."""
        return any(getattr(e, kind) == ref for t in self.tables
                   for e in (*t.entries.values(), t.default))

    def resolve(self, entry: Entry, hash_value: int) -> tuple[int, tuple[int, ...]]:
        """(action id, args) for an indirect entry; (-1, ()) if it points nowhere."""
        if entry.member is not None:
            return self.members.get(entry.member, (-1, ()))
        members = self.groups.get(entry.group)
        if not members:
            return -1, ()
        return self.members.get(members[hash_value % len(members)], (-1, ()))


VERSION_SHIFT = 24  # bmv2: an entry handle is version << 24 | slot
SLOT_MASK = (1 << VERSION_SHIFT) - 1


class EntryHandles:
    """A table's entry handles as bmv2 gives them: the lowest free slot, with the
    slot's version (how often it was freed) above bit 24."""

    def __init__(self):
        self._free: list[int] = []            # freed slots (a heap)
        self._next = 0                        # the first slot never used
        self._version: dict[int, int] = {}    # slot -> version of its next entry
        self.live: dict[int, int] = {}        # slot -> handle of the entry in it

    def take(self) -> int:
        if self._free:
            slot = heapq.heappop(self._free)
        else:
            slot, self._next = self._next, self._next + 1
        handle = self._version.get(slot, 0) << VERSION_SHIFT | slot
        self.live[slot] = handle
        return handle

    def release(self, handle: int, used: bool = True) -> None:
        """Free `handle`'s slot; the slot's next entry gets a new version unless the
        handle was never `used` (an add the table refused)."""
        slot = handle & SLOT_MASK
        del self.live[slot]
        if used:
            self._version[slot] = (handle >> VERSION_SHIFT) + 1
        heapq.heappush(self._free, slot)

    def in_slot(self, handle: int) -> int | None:
        """The handle of the entry in `handle`'s slot, whatever its version (bmv2 reads
        and writes a direct counter or meter by slot), or None."""
        return self.live.get(handle & SLOT_MASK)


class Table:
    """A match-action table: entries by handle plus a lookup structure."""

    def __init__(self, name: str, keys: list[KeyField], action_ids: dict[str, int],
                 action_arity: dict[int, int], max_size: int, default: Entry,
                 profile: ActionProfile | None = None, with_counters: bool = False):
        self.name = name
        self.keys = keys
        self.action_ids = action_ids  # name -> JSON action id, for this table's actions
        self.action_arity = action_arity
        self.param_widths: dict[int, tuple] = {}  # action id -> its parameters' widths
        self.max_size = max_size
        self.profile = profile
        if profile is not None:
            profile.tables.append(self)
        self.with_counters = with_counters
        self.initial_default = default
        self.default = default
        self.default_const = False
        self.entries: dict[int, Entry] = {}
        self.const_entries = False
        self.entry_handles = EntryHandles()
        kinds = {k.kind for k in keys}
        if kinds <= {"exact", "valid"}:
            self.mode = "exact"
        elif kinds <= {"exact", "valid", "lpm"} and sum(k.kind == "lpm" for k in keys) == 1:
            self.mode = "lpm"
            self.lpm_index = next(i for i, k in enumerate(keys) if k.kind == "lpm")
        else:
            self.mode = "ternary"
        self.single = len(keys) == 1
        # Lookup structures; the generated code holds references to these objects,
        # so they are mutated in place, never replaced.
        self.exact: dict = {}
        self.lpm_levels: list[tuple[int, int, dict]] = []  # (prefix_len, mask, dict), longest first
        self.sorted: list[Entry] = []

    # -- lookups (the all-exact case is inlined by the generated code) --------
    def lookup_lpm(self, key):
        i = self.lpm_index
        if self.single:
            for _plen, mask, d in self.lpm_levels:
                e = d.get(key & mask)
                if e is not None:
                    return e
            return None
        for _plen, mask, d in self.lpm_levels:
            k = list(key)
            k[i] &= mask
            e = d.get(tuple(k))
            if e is not None:
                return e
        return None

    def lookup_ternary(self, key):
        if self.single:
            key = (key,)
        for e in self.sorted:
            for v, (lo, hi_or_mask, is_range) in zip(key, e.match):
                if is_range:
                    if v < lo or v > hi_or_mask:
                        break
                elif v & hi_or_mask != lo:
                    break
            else:
                return e
        return None

    # -- control plane --------------------------------------------------------
    def _check_key(self, key: list[MatchParam]) -> None:
        if len(key) != len(self.keys):
            raise DataplaneError(
                f"table {self.name}: expected {len(self.keys)} key fields, got {len(key)}")

    def _canonical(self, key: list[MatchParam], const: bool = False):
        """(lookup key, match tuple, lpm prefix length) for an entry's key. A range whose
        start is past its end is refused, as simple_switch_CLI refuses it (P4Runtime:
        INVALID_ARGUMENT); the program's own entries are taken as given."""
        self._check_key(key)
        values = []
        match = []
        plen = None
        for p, kf in zip(key, self.keys):
            full = (1 << kf.width) - 1
            kind = p.kind.value
            if not const and (p.value > full or (p.mask or 0) > full or (p.high or 0) > full):
                raise DataplaneError(f"table {self.name}: key field {kf.name}: a value does "
                                     f"not fit its {kf.width} bits (bmv2: Parameter is too "
                                     "large)")
            if kind == "lpm" or (kf.kind == "lpm"):
                pl = p.prefix_len if p.prefix_len is not None else kf.width
                if pl < 0 or pl > kf.width:
                    raise DataplaneError(f"table {self.name}: bad prefix length {pl}")
                mask = full ^ ((1 << (kf.width - pl)) - 1)
                values.append(p.value & mask)
                match.append((p.value & mask, mask, False))
                plen = pl
            elif kind == "ternary":
                mask = full if p.mask is None else p.mask & full
                values.append((p.value & mask, mask))
                match.append((p.value & mask, mask, False))
            elif kind == "range":
                hi = p.high if p.high is not None else full
                if p.value > hi and not const:
                    raise DataplaneError(f"table {self.name}: key field {kf.name}: range "
                                         f"start {p.value:#x} is past its end {hi:#x}")
                values.append((p.value, hi))
                match.append((p.value, hi, True))
            elif kind == "optional":
                mask = 0 if p.wildcard else full
                values.append((p.value & mask, mask))
                match.append((p.value & mask, mask, False))
            else:  # exact, valid
                values.append(p.value)
                match.append((p.value, full, False))
        lookup_key = values[0] if self.single else tuple(values)
        return lookup_key, tuple(match), plen

    def _make_entry(self, target: ActionCall | IndirectTarget, handle: int) -> Entry:
        if isinstance(target, IndirectTarget):
            if self.profile is None:
                raise DataplaneError(f"table {self.name} is not indirect")
            if target.member is not None and target.member not in self.profile.members:
                raise DataplaneError(f"table {self.name}: action profile {self.profile.name} "
                                     f"has no member {target.member} (INVALID_MBR_HANDLE)")
            if target.group is not None and target.group not in self.profile.groups:
                raise DataplaneError(f"table {self.name}: action profile {self.profile.name} "
                                     f"has no group {target.group} (INVALID_GRP_HANDLE)")
            if target.group is not None and not self.profile.groups[target.group]:
                raise DataplaneError(f"table {self.name}: group {target.group} of action "
                                     f"profile {self.profile.name} has no member (EMPTY_GRP)")
            e = Entry(-1, (), handle)
            e.member, e.group = target.member, target.group
            return e
        if self.profile is not None:
            raise DataplaneError(f"table {self.name} is indirect: needs a member or group")
        aid = self.action_ids.get(target.action)
        if aid is None:
            raise DataplaneError(f"table {self.name}: action {target.action!r} not allowed")
        if len(target.args) != self.action_arity[aid]:
            raise DataplaneError(
                f"table {self.name}: action {target.action} takes "
                f"{self.action_arity[aid]} args, got {len(target.args)}")
        check_widths(f"table {self.name}", target.action, target.args,
                     self.param_widths.get(aid, ()))
        return Entry(aid, tuple(target.args), handle)

    def add(self, key: list[MatchParam], target, priority: int = 0, const: bool = False) -> int:
        if self.const_entries and not const:
            raise DataplaneError(f"table {self.name} has entries from the program, so "
                                 "no others (as on bmv2: IMMUTABLE_TABLE_ENTRIES)")
        if not self.keys and not const:
            raise DataplaneError(f"table {self.name} has no key: it takes no entries, only a "
                                 "default (bmv2: NO_TABLE_KEY)")
        if len(self.entries) >= self.max_size:
            raise DataplaneError(f"table {self.name} is full ({self.max_size} entries)")
        lookup_key, match, plen = self._canonical(key, const)
        handle = self.entry_handles.take()
        try:
            e = self._make_entry(target, handle)
            e.key, e.match, e.priority, e.const = lookup_key, match, priority, const
            self._insert(e, plen)
        except DataplaneError:
            self.entry_handles.release(handle, used=False)  # refused: never used
            raise
        self.entries[handle] = e
        return handle

    def _insert(self, e: Entry, plen: int) -> None:
        """`e` into the lookup structure (DataplaneError: a duplicate)."""
        if self.mode == "exact":
            if e.key in self.exact:
                raise DataplaneError(f"table {self.name}: duplicate entry")
            self.exact[e.key] = e
        elif self.mode == "lpm":
            level = next((lv for lv in self.lpm_levels if lv[0] == plen), None)
            if level is None:
                w = self.keys[self.lpm_index].width
                mask = ((1 << w) - 1) ^ ((1 << (w - plen)) - 1)
                level = (plen, mask, {})
                self.lpm_levels.append(level)
                self.lpm_levels.sort(key=lambda lv: -lv[0])
            if e.key in level[2]:
                raise DataplaneError(f"table {self.name}: duplicate entry")
            level[2][e.key] = e
        else:
            if any(o.match == e.match and o.priority == e.priority for o in self.sorted):
                raise DataplaneError(f"table {self.name}: duplicate entry")
            # among equal priorities, the lower slot first (bmv2 scans by slot)
            slot = e.handle & SLOT_MASK
            i = len(self.sorted)
            while i > 0 and (self.sorted[i - 1].priority < e.priority or (
                    self.sorted[i - 1].priority == e.priority
                    and self.sorted[i - 1].handle & SLOT_MASK > slot)):
                i -= 1
            self.sorted.insert(i, e)

    def get(self, handle: int) -> Entry:
        e = self.entries.get(handle)
        if e is None:
            if self.entry_handles.in_slot(handle) is not None:
                now = self.entry_handles.in_slot(handle)
                raise DataplaneError(
                    f"table {self.name}: entry handle {handle} has expired (its entry was "
                    f"deleted; its slot now holds handle {now}): bmv2's EXPIRED_HANDLE")
            raise DataplaneError(f"table {self.name}: no entry with handle {handle}")
        return e

    def in_slot(self, handle: int) -> Entry:
        """The entry in `handle`'s slot, whatever the handle's version: how bmv2 reads
        and writes an entry's direct counter and meter."""
        current = self.entry_handles.in_slot(handle)
        if current is None:
            raise DataplaneError(f"table {self.name}: no entry with handle {handle}")
        return self.entries[current]

    def modify(self, handle: int, target) -> None:
        e = self.get(handle)
        if e.const:
            raise DataplaneError(f"table {self.name}: entry {handle} is const")
        new = self._make_entry(target, handle)
        # Mutate in place: the lookup structures hold this very object.
        e.action, e.args, e.member, e.group = new.action, new.args, new.member, new.group

    def delete(self, handle: int) -> None:
        e = self.get(handle)
        if e.const:
            raise DataplaneError(f"table {self.name}: entry {handle} is const")
        del self.entries[handle]
        self.entry_handles.release(handle)
        if self.mode == "exact":
            del self.exact[e.key]
        elif self.mode == "lpm":
            for lv in self.lpm_levels:
                if lv[2].get(e.key) is e:
                    del lv[2][e.key]
                    break
        else:
            self.sorted.remove(e)

    def clear(self) -> None:
        for handle, e in list(self.entries.items()):
            if not e.const:
                self.delete(handle)

    def set_default(self, target: ActionCall | None) -> None:
        if target is None:
            self.default = self.initial_default
            return
        if self.default_const:
            raise DataplaneError(f"table {self.name}: default action is const")
        if isinstance(target, IndirectTarget):
            # bmv2's table_indirect_set_default[_with_group]: a miss runs the member's action
            self.default = self._make_entry(target, -1)
            return
        aid = self.action_ids.get(target.action)
        if aid is None:
            raise DataplaneError(f"table {self.name}: action {target.action!r} not allowed")
        if len(target.args) != self.action_arity[aid]:
            raise DataplaneError(f"table {self.name}: action {target.action} takes "
                                 f"{self.action_arity[aid]} args, got {len(target.args)}")
        check_widths(f"table {self.name}", target.action, target.args,
                     self.param_widths.get(aid, ()))
        self.default = Entry(aid, tuple(target.args), -1)
