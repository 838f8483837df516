"""Action profile members and groups.

A mixin of store.PipelineState (p4switch/p4runtime/store.py): the state it reads and
writes is PipelineState's."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .errors import (
    already_exists,
    invalid,
    not_found,
    resource_exhausted,
    unknown,
)
from .store_common import (
    DELETE,
    INSERT,
    MODIFY,
    Undo,
    copy_msg,
    dp_call,
)
from .translate import (
    action_call,
    canonical_action,
)


class ProfileWrites:
    # action profiles ------------------------------------------------------------
    def _profile(self, profile_id: int):
        prof = self.info.action_profiles.get(profile_id)
        if prof is None:
            raise invalid(f"unknown action profile id {profile_id}")
        return prof

    def _profile_actions(self, prof) -> dict[int, int]:
        """The actions a member may call: those of the profile's tables, whatever their
        scope. simple_switch_grpc (PI) takes a member of a @defaultonly action (p4c's
        NoAction on an indirect table; ctl_selector_default_noaction), which may then
        serve as the table's default."""
        allowed: dict[int, int] = {}
        for tid in prof.table_ids:
            t = self.info.tables.get(tid)
            if t:
                allowed.update(dict.fromkeys(t.action_scopes,
                                             p4info_pb2.ActionRef.TABLE_AND_DEFAULT))
        return allowed

    def _write_member(self, kind: int, m: p4runtime_pb2.ActionProfileMember) -> Undo:
        prof = self._profile(m.action_profile_id)
        what = f"action profile '{prof.name}' member {m.member_id}"
        key = (prof.id, m.member_id)
        old = self.members.get(key)
        if kind == DELETE:
            if old is None:
                raise not_found(f"{what}: no such member")
            if self._refs.get(("m", prof.id, m.member_id)) or any(
                m.member_id in (x.member_id for x in g.members)
                for (pid, _), g in self.groups.items() if pid == prof.id
            ):
                # PI passes the delete on and bmv2 refuses it (MBR_STILL_USED)
                raise unknown(f"Error when deleting member on target ({what} is still used "
                              "by a group or a table entry)")
            dp_call(self.dp.act_prof_delete_member, prof.name, m.member_id)
            del self.members[key]
            return lambda: self._set_member(prof, old, insert=True)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind == MODIFY and old is None:
            raise not_found(f"{what}: no such member")
        proto, call = canonical_action(
            self.info, m.action, what, self._profile_actions(prof) or None
        )
        if kind == INSERT and prof.size and len(
            [k for k in self.members if k[0] == prof.id]
        ) >= prof.size:
            raise resource_exhausted(f"action profile '{prof.name}' is full")
        stored = p4runtime_pb2.ActionProfileMember(
            action_profile_id=prof.id, member_id=m.member_id, action=proto
        )
        if kind == INSERT:
            dp_call(self.dp.act_prof_add_member, prof.name, m.member_id, call)
        else:
            dp_call(self.dp.act_prof_modify_member, prof.name, m.member_id, call)
        self.members[key] = stored
        if kind == INSERT:
            return lambda: self._delete_member(prof, m.member_id)
        return lambda: self._set_member(prof, old, insert=False)

    def _set_member(self, prof, m, insert: bool) -> None:
        call = action_call(self.info, m.action)
        if insert:
            self.dp.act_prof_add_member(prof.name, m.member_id, call)
        else:
            self.dp.act_prof_modify_member(prof.name, m.member_id, call)
        self.members[(prof.id, m.member_id)] = m

    def _delete_member(self, prof, member_id: int) -> None:
        self.dp.act_prof_delete_member(prof.name, member_id)
        self.members.pop((prof.id, member_id), None)

    def _write_group(self, kind: int, g: p4runtime_pb2.ActionProfileGroup) -> Undo:
        prof = self._profile(g.action_profile_id)
        what = f"action profile '{prof.name}' group {g.group_id}"
        if not prof.with_selector:
            raise invalid(f"action profile '{prof.name}' has no selector: no groups")
        key = (prof.id, g.group_id)
        old = self.groups.get(key)
        if kind == DELETE:
            if old is None:
                raise not_found(f"{what}: no such group")
            if self._refs.get(("g", prof.id, g.group_id)):
                raise unknown(f"Error when deleting group on target ({what} is still used "
                              "by a table entry)")
            dp_call(self.dp.act_prof_delete_group, prof.name, g.group_id)
            del self.groups[key]
            return lambda: self._set_group(prof, old)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind == MODIFY and old is None:
            raise not_found(f"{what}: no such group")
        seen: set[int] = set()
        member_ids: list[int] = []
        for mem in g.members:
            if mem.member_id in seen:
                raise invalid(f"{what}: member {mem.member_id} listed twice")
            seen.add(mem.member_id)
            if (prof.id, mem.member_id) not in self.members:
                raise not_found(f"{what}: member {mem.member_id} does not exist")
            if mem.weight <= 0:  # simple_switch_grpc's words
                raise invalid(f"{what}: member {mem.member_id}: Member weight must be a "
                              "positive integer value")
            member_ids.extend([mem.member_id] * mem.weight)
        max_size = g.max_size if kind == INSERT else old.max_size
        if prof.max_group_size and max_size > prof.max_group_size:
            raise resource_exhausted(
                f"{what}: max_size {max_size} > the profile's {prof.max_group_size}"
            )
        if max_size and len(g.members) > max_size:
            raise resource_exhausted(f"{what}: {len(g.members)} members > max_size {max_size}")
        dp_call(self.dp.act_prof_set_group, prof.name, g.group_id, member_ids)
        stored = copy_msg(g)
        stored.max_size = max_size
        self.groups[key] = stored
        if old is None:
            return lambda: self._delete_group(prof, g.group_id)
        return lambda: self._set_group(prof, old)

    def _set_group(self, prof, g) -> None:
        ids = [m.member_id for m in g.members for _ in range(max(1, m.weight))]
        self.dp.act_prof_set_group(prof.name, g.group_id, ids)
        self.groups[(prof.id, g.group_id)] = g

    def _delete_group(self, prof, group_id: int) -> None:
        self.dp.act_prof_delete_group(prof.name, group_id)
        self.groups.pop((prof.id, group_id), None)

