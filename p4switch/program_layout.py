"""The switch's program, its state layout: every header field, validity bit, stack
`next` index and standard metadata field gets a slot of the packet state list S, and
`template` holds a fresh packet's values. Slots 0..FIXED_SLOTS-1 are the packet's own
(program_common.py)."""

from __future__ import annotations

from p4switch.program_common import (
    CORE_ERRORS,
    FIXED_SLOTS,
    PAYLOAD,
    PKT,
    STANDARD_FIELDS,
    Header,
    ProgramError,
)


class LayoutMixin:
    """Mixin of Program (p4switch/program.py)."""

    def _layout(self) -> None:
        self.template: list = [b"", 0, -1, 0, 0, 0, None, 0, 0]
        assert len(self.template) == FIXED_SLOTS
        self._layout_headers(*self._header_types())
        self._layout_stacks()
        self._layout_unions()
        self._layout_standard_metadata()
        # bmv2's packet length register (simple_switch's PACKET_LENGTH_REG_IDX): the
        # length the packet came in with, plus the headers add_header made valid, less
        # those remove_header made invalid; egress starts with packet_length set from it
        self.len_reg = self._slot()
        self.nslots = len(self.template)
        # Slots a new packet instance keeps from its parent (E2E clone): headers.
        self.header_slots = [PKT, PAYLOAD]
        for hd in self.headers.values():
            if not hd.metadata:
                self.header_slots += [hd.valid, hd.raw, hd.dirty, *hd.slots.values()]
                if hd.var_width >= 0:
                    self.header_slots.append(hd.var_width)
        self.header_slots += list(self.stack_next.values())
        self.errors = dict(CORE_ERRORS)
        for i, e in enumerate(self._list("errors")):
            if not isinstance(e, list) or len(e) != 2:
                raise ProgramError(f"errors[{i}]: expected [name, value], found {e!r}")
            self.errors[e[0]] = e[1]

    def _slot(self, initial=0) -> int:
        """A new slot of S, `initial` in a fresh packet."""
        self.template.append(initial)
        return len(self.template) - 1

    def _header_types(self) -> tuple[dict[str, list], dict[str, int]]:
        """Header type name -> [(field, width or '*', signed)], and -> max_length."""
        types = {}
        max_lengths: dict[str, int] = {}
        for i, t in enumerate(self._list("header_types")):
            where = f"header_types[{i}]"
            try:
                fields = []
                for f in t["fields"]:
                    if not isinstance(f, list) or len(f) not in (2, 3):
                        raise ProgramError(f"{where} ({t.get('name')}): bad field {f!r}")
                    w = f[1]
                    if w != "*" and (not isinstance(w, int) or w < 0):
                        raise ProgramError(f"{where} ({t['name']}): bad width for field {f[0]!r}")
                    fields.append((f[0], w, bool(f[2]) if len(f) == 3 else False))
                types[t["name"]] = fields
                if isinstance(t.get("max_length"), int):
                    max_lengths[t["name"]] = t["max_length"]
            except (KeyError, TypeError) as e:
                raise ProgramError(f"{where}: missing or bad attribute {e}") from None
        return types, max_lengths

    def _layout_headers(self, types: dict[str, list], max_lengths: dict[str, int]) -> None:
        """Per header: valid, raw offset and dirty slots, then a slot per field (and
        one for a varbit field's current width)."""
        self.headers: dict[str, Header] = {}
        self.headers_by_id: dict[int, Header] = {}
        for i, h in enumerate(self._list("headers")):
            where = f"headers[{i}]"
            try:
                name, tname = h["name"], h["header_type"]
            except (KeyError, TypeError) as e:
                raise ProgramError(f"{where}: missing attribute {e}") from None
            if tname not in types:
                raise ProgramError(f"{where} ({name}): unknown header_type {tname!r}")
            hd = Header(name, tname, bool(h.get("metadata", False)), types[tname])
            hd.max_bytes = max_lengths.get(tname)
            if not hd.metadata and hd.nbits % 8:
                raise ProgramError(f"{where} ({name}): header width {hd.nbits} bits "
                                   "is not a multiple of 8")
            hd.valid = self._slot(1 if hd.metadata else 0)
            hd.raw, hd.dirty = self._slot(-1), self._slot()
            for fname, w, _signed in hd.fields:
                hd.slots[fname] = self._slot()
                if w == "*":
                    hd.var_field = fname
                    hd.var_width = self._slot()
            hd.index = len(self.headers)
            self.headers[name] = hd
            self.headers_by_id[h.get("id", i)] = hd

    def _layout_stacks(self) -> None:
        """Header stacks (their `next` index in a slot each)."""
        self.stacks: dict[str, list[Header]] = {}
        self.stack_next: dict[str, int] = {}
        for i, s in enumerate(self._list("header_stacks")):
            where = f"header_stacks[{i}]"
            try:
                members = [self.headers_by_id[x] for x in s["header_ids"]]
            except KeyError as e:
                raise ProgramError(f"{where} ({s.get('name')}): unknown header id {e}") from None
            self.stacks[s["name"]] = members
            self.stack_next[s["name"]] = self._slot()

    def _layout_unions(self) -> None:
        """Header unions (at most one member valid: validating one clears the rest) and
        stacks of them: their elements are the unions (constant indices, and `.next` in
        extract); other stack operations on them are refused where used."""
        self.unions = {}
        self.union_siblings: dict[str, list[Header]] = {}
        for u in self._list("header_unions"):
            try:
                members = [self.headers_by_id[x] for x in u["header_ids"]]
            except KeyError as e:
                raise ProgramError(f"header_unions ({u.get('name')}): unknown header id "
                                   f"{e}") from None
            self.unions[u["name"]] = members
            for m in members:
                self.union_siblings[m.name] = [x for x in members if x is not m]
        self.union_stacks: dict[str, list[str]] = {}
        by_id = {u.get("id"): u.get("name") for u in self._list("header_unions")}
        for i, s in enumerate(self._list("header_union_stacks")):
            try:
                self.union_stacks[s["name"]] = [by_id[x] for x in s["header_union_ids"]]
            except KeyError as e:
                raise ProgramError(f"header_union_stacks[{i}] ({s.get('name')}): unknown "
                                   f"union id {e}") from None
            self.stack_next[s["name"]] = self._slot()   # the element `.next` extracts into

    def _layout_standard_metadata(self) -> None:
        """Standard metadata, through field_aliases where the program renames it; a
        hidden slot for a field the program does not declare."""
        aliases = {}
        for a in self._list("field_aliases"):
            aliases[a[0]] = tuple(a[1])
        self.std: dict[str, int] = {}
        sm = self.headers.get("standard_metadata")
        for f in STANDARD_FIELDS:
            target = None
            for prefix in ("standard_metadata", "intrinsic_metadata", "queueing_metadata"):
                if f"{prefix}.{f}" in aliases:
                    target = aliases[f"{prefix}.{f}"]
            if target is not None and target[0] in self.headers and \
                    target[1] in self.headers[target[0]].slots:
                self.std[f] = self.headers[target[0]].slots[target[1]]
            elif sm is not None and f in sm.slots:
                self.std[f] = sm.slots[f]
            else:
                self.std[f] = self._slot()
