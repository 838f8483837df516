"""STF commands on action profiles and selectors, written over P4Runtime (the netns
harnesses): the same member / group / entry steps that p4switch/stf_profiles.py gives
fabriclab-stf's two runners, as ActionProfileMember, ActionProfileGroup and indirect
TableEntry writes.

P4Runtime member and group ids are the controller's: a step's handle h (bmv2's
numbering, 0, 1, ... per profile in creation order) is written as id h + 1. The
switch gives each member a handle of its own in the order the members are created,
the same order as simple_switch_CLI's, so a selector group picks the same member
(bmv2 keeps a group's members in ascending handle order).
"""

from __future__ import annotations

from p4switch.runtime_api import MatchKind
from p4switch.stf_names import ProgramNames
from p4switch.stf_profiles import (
    DeleteGroup,
    DeleteMember,
    Group,
    GroupMember,
    GroupMemberRemoved,
    IndirectDefault,
    IndirectEntry,
    Member,
    ModifyMember,
    ProfileSteps,
    is_indirect,
)


class NoStandIn(Exception):
    """A step P4Runtime cannot write: an indirect table's default entry. P4Runtime
    fixes it (simple_switch_grpc: 'Cannot set / reset default action for indirect
    table'; the embedded server refuses it too), where simple_switch_CLI has
    table_indirect_set_default."""


class P4RuntimeProfiles:
    """Turns a script's profile commands (and add / setdefault on an indirect table)
    into P4Runtime writes on `conn` (controller.p4runtime_client.SwitchConnection)."""

    def __init__(self, conn, program: dict):
        self.conn = conn
        self.names = ProgramNames(program)
        self.steps = ProfileSteps(self.names)

    def takes(self, c) -> bool:
        kind = type(c).__name__
        if kind == "ProfileCommand":
            return True
        if kind in ("AddEntry", "SetDefault"):
            return is_indirect(self.names.table(c.table, f"line {c.line}"))
        return False

    def apply(self, c, where: str, book=None) -> None:
        """The command's steps as P4Runtime writes; the entries go into `book`
        (stf_harness.EntryBook: `remove NAME`, handles)."""
        for s in self.steps.steps(c, where):
            if isinstance(s, IndirectDefault):
                raise NoStandIn(f"{where}: P4Runtime cannot set an indirect table's default "
                                "entry (table_indirect_set_default): checked by "
                                "fabriclab-stf --switch both")
            u = self._update(s)
            self.conn.write([u])
            if isinstance(s, IndirectEntry) and book is not None:
                book.add(u.entity.table_entry, getattr(c, "handle", None))

    # ------------------------------------------------------------------ updates
    def _update(self, s):
        from p4.v1 import p4runtime_pb2

        info = self.conn.p4info
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        if isinstance(s, (Member, ModifyMember, DeleteMember)):
            m = u.entity.action_profile_member
            m.action_profile_id = info.id("action_profiles", s.profile)
            m.member_id = s.handle + 1
            if isinstance(s, DeleteMember):
                u.type = p4runtime_pb2.Update.DELETE
            else:
                m.action.CopyFrom(self._action(s.call))
                if isinstance(s, ModifyMember):
                    u.type = p4runtime_pb2.Update.MODIFY
        elif isinstance(s, (Group, GroupMember, GroupMemberRemoved, DeleteGroup)):
            g = u.entity.action_profile_group
            g.action_profile_id = info.id("action_profiles", s.profile)
            if isinstance(s, (Group, DeleteGroup)):
                g.group_id = s.handle + 1
                if isinstance(s, DeleteGroup):
                    u.type = p4runtime_pb2.Update.DELETE
            else:
                u.type = p4runtime_pb2.Update.MODIFY   # the group with its members now
                g.group_id = s.group + 1
                for mbr in s.members:
                    g.members.add(member_id=mbr + 1, weight=1)
        else:
            te = u.entity.table_entry
            te.table_id = info.id("tables", s.table["name"])
            if s.target.group is not None:
                te.action.action_profile_group_id = s.target.group + 1
            else:
                te.action.action_profile_member_id = s.target.member + 1
            self._match(te, s)
        return u

    def _action(self, call):
        from p4.v1 import p4runtime_pb2

        from controller.p4info import encode

        a = self.conn.p4info.action(call.action)
        out = p4runtime_pb2.Action(action_id=a.id)
        for p, v in zip(a.params, call.args):
            out.params.add(param_id=p.id, value=encode(v, p.bitwidth))
        return out

    def _match(self, te, s: IndirectEntry) -> None:
        """The key in P4Runtime's form: fields that match anything are left out."""
        from controller.p4info import encode

        t = self.conn.p4info.table(s.table["name"])
        prioritised = False
        for f, p in zip(t.match_fields, s.key):
            w, full = f.bitwidth, (1 << f.bitwidth) - 1
            if p.kind in (MatchKind.TERNARY, MatchKind.RANGE, MatchKind.OPTIONAL):
                prioritised = True
            if p.kind == MatchKind.LPM and not p.prefix_len:
                continue
            if p.kind == MatchKind.TERNARY and not p.mask:
                continue
            if p.kind == MatchKind.RANGE and p.value == 0 and p.high == full:
                continue
            if p.kind == MatchKind.OPTIONAL and p.wildcard:
                continue
            fm = te.match.add(field_id=f.id)
            if p.kind == MatchKind.LPM:
                keep = full & ~((1 << (w - p.prefix_len)) - 1)
                fm.lpm.value, fm.lpm.prefix_len = encode(p.value & keep, w), p.prefix_len
            elif p.kind == MatchKind.TERNARY:
                fm.ternary.value = encode(p.value & p.mask, w)
                fm.ternary.mask = encode(p.mask, w)
            elif p.kind == MatchKind.RANGE:
                fm.range.low, fm.range.high = encode(p.value, w), encode(p.high, w)
            elif p.kind == MatchKind.OPTIONAL:
                fm.optional.value = encode(p.value, w)
            else:
                fm.exact.value = encode(p.value, w)
        if prioritised:   # as fabriclab-stf's embedded run: the STF's + 1, larger wins
            te.priority = (s.priority or 0) + 1
