"""STF commands on action profiles and selectors -> member / group / entry steps.

A table with `implementation = action_profile(...)` or `action_selector(...)`
is indirect in bmv2: its entries point at a member (an action call kept in the
table's action profile) or, with a selector, at a group of members, one of
which the selector's hash picks per packet. bmv2 refuses `table_add` on such a
table. So `add TABLE KEYS ACTION(...)` becomes: create a member with that
action, then add the entry pointing at it (simple_switch_CLI's
`act_prof_create_member` + `table_indirect_add`); `setdefault` becomes a member
and `table_indirect_set_default`. The explicit act_prof_* / table_indirect_*
commands (p4compiler/stf.py) map one to one.

Handles are numbered as bmv2 numbers them: members and groups each count from
0 per action profile in creation order. Both runners (the embedded switch and
real simple_switch) take the same steps from `ProfileSteps.steps`, so the
handles mean the same on both. A group lists its members in ascending handle
order: bmv2 keeps a group's members as a sorted set and picks the member at
`hash % size` in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4compiler import stf
from p4switch.runtime_api import ActionCall, IndirectTarget, MatchParam
from p4switch.stf_names import ProgramNames, StfNameError


@dataclass(frozen=True)
class Member:
    profile: str
    handle: int
    call: ActionCall


@dataclass(frozen=True)
class Group:
    profile: str
    handle: int


@dataclass(frozen=True)
class GroupMember:
    profile: str
    member: int
    group: int
    members: tuple[int, ...]   # the group's members after this one joined, ascending


@dataclass(frozen=True)
class ModifyMember:
    profile: str
    handle: int
    call: ActionCall


@dataclass(frozen=True)
class DeleteMember:
    profile: str
    handle: int


@dataclass(frozen=True)
class GroupMemberRemoved:
    profile: str
    member: int
    group: int
    members: tuple[int, ...]   # the group's members after this one left, ascending


@dataclass(frozen=True)
class DeleteGroup:
    profile: str
    handle: int


@dataclass(frozen=True)
class IndirectEntry:
    table: dict
    key: list[MatchParam]
    target: IndirectTarget
    priority: int | None       # the STF's priority (None: not given)


@dataclass(frozen=True)
class IndirectDefault:
    table: dict
    target: IndirectTarget


Step = (Member | Group | GroupMember | IndirectEntry | IndirectDefault | ModifyMember
        | DeleteMember | GroupMemberRemoved | DeleteGroup)


def is_indirect(table: dict) -> bool:
    return table.get("type") in ("indirect", "indirect_ws")


class ProfileSteps:
    """The members and groups a script has created so far, per action profile."""

    def __init__(self, names: ProgramNames):
        self.names = names
        self.users: dict[str, list[dict]] = {}   # profile -> tables that use it
        for t in names.tables.values():
            if is_indirect(t) and t.get("action_profile"):
                self.users.setdefault(t["action_profile"], []).append(t)
        self.members: dict[str, set[int]] = {}           # profile -> live member handles
        self.groups: dict[str, list[list[int] | None]] = {}   # by handle; None: deleted

    def profile(self, name: str, where: str) -> str:
        """An action profile by name (or unique suffix), or the profile of a table."""
        if name in self.users:
            return name
        found = [p for p in self.users if p.endswith("." + name) or p.endswith(name)]
        if len(found) == 1:
            return found[0]
        t = self.names.table(name, where)
        if not is_indirect(t):
            raise StfNameError(f"{where}: table {t['name']} has no action profile or selector")
        return t["action_profile"]

    def _member(self, prof: str, call: stf.ActionCall, where: str) -> Member:
        table = self.users[prof][0]
        live = self.members.setdefault(prof, set())
        h = next(i for i in range(len(live) + 1) if i not in live)   # bmv2: lowest free
        live.add(h)
        return Member(prof, h, self.names.call(table, call, where))

    def _check(self, prof: str, kind: str, handle: int, where: str) -> None:
        if kind == "member":
            ok = handle in self.members.get(prof, set())
        else:
            groups = self.groups.get(prof, [])
            ok = 0 <= handle < len(groups) and groups[handle] is not None
        if not ok:
            raise StfNameError(f"{where}: action profile {prof} has no {kind} {handle}")

    def _indirect_table(self, name: str, where: str) -> dict:
        t = self.names.table(name, where)
        if not is_indirect(t):
            raise StfNameError(f"{where}: table {t['name']} has no action profile or selector")
        return t

    def steps(self, c, where: str) -> list[Step]:
        """The steps of an AddEntry / SetDefault on an indirect table, or of a
        ProfileCommand."""
        if isinstance(c, stf.AddEntry):
            t = self._indirect_table(c.table, where)
            m = self._member(t["action_profile"], c.action, where)
            key = self.names.match_key(t, c.keys, where)
            return [m, IndirectEntry(t, key, IndirectTarget(member=m.handle), c.priority)]
        if isinstance(c, stf.SetDefault):
            t = self._indirect_table(c.table, where)
            m = self._member(t["action_profile"], c.action, where)
            return [m, IndirectDefault(t, IndirectTarget(member=m.handle))]
        return self._command(c, where)

    def _command(self, c: stf.ProfileCommand, where: str) -> list[Step]:
        op = c.op
        if op == "act_prof_create_member":
            return [self._member(self.profile(c.target, where), c.call, where)]
        if op == "act_prof_create_group":
            prof = self.profile(c.target, where)
            if not self.users[prof][0].get("type") == "indirect_ws":
                raise StfNameError(f"{where}: action profile {prof} has no selector: "
                                   "no groups")
            groups = self.groups.setdefault(prof, [])
            h = next((i for i, g in enumerate(groups) if g is None), len(groups))
            if h == len(groups):
                groups.append([])
            groups[h] = []
            return [Group(prof, h)]
        if op == "act_prof_add_member_to_group":
            prof = self.profile(c.target, where)
            mbr, grp = c.handles
            self._check(prof, "member", mbr, where)
            self._check(prof, "group", grp, where)
            members = self.groups[prof][grp]
            if mbr in members:
                raise StfNameError(f"{where}: member {mbr} is already in group {grp}")
            members.append(mbr)
            members.sort()
            return [GroupMember(prof, mbr, grp, tuple(members))]
        if op.startswith("act_prof_"):
            return [self._change(op, self.profile(c.target, where), c, where)]
        t = self._indirect_table(c.target, where)
        prof = t["action_profile"]
        group = op.endswith("_with_group")
        self._check(prof, "group" if group else "member", c.handles[0], where)
        target = (IndirectTarget(group=c.handles[0]) if group
                  else IndirectTarget(member=c.handles[0]))
        if op.startswith("table_indirect_add"):
            key = self.names.match_key(t, c.keys, where)
            return [IndirectEntry(t, key, target, c.priority)]
        return [IndirectDefault(t, target)]

    def _change(self, op: str, prof: str, c: stf.ProfileCommand, where: str) -> Step:
        """act_prof_modify_member / _delete_member / _remove_member_from_group /
        _delete_group, with bmv2's checks on handles and use."""
        kind = "group" if op == "act_prof_delete_group" else "member"
        self._check(prof, kind, c.handles[0], where)
        h = c.handles[0]
        if op == "act_prof_modify_member":
            return ModifyMember(prof, h, self.names.call(self.users[prof][0], c.call, where))
        if op == "act_prof_delete_member":
            used = [g for g, ms in enumerate(self.groups.get(prof, [])) if ms and h in ms]
            if used:
                raise StfNameError(f"{where}: member {h} of {prof} is still in group "
                                   f"{used[0]} (bmv2: MBR_STILL_USED)")
            self.members[prof].discard(h)
            return DeleteMember(prof, h)
        if op == "act_prof_delete_group":
            self.groups[prof][h] = None
            return DeleteGroup(prof, h)
        grp = c.handles[1]
        self._check(prof, "group", grp, where)
        members = self.groups[prof][grp]
        if h not in members:
            raise StfNameError(f"{where}: member {h} is not in group {grp}")
        members.remove(h)
        return GroupMemberRemoved(prof, h, grp, tuple(members))
