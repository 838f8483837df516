"""STF names and values -> a bmv2 JSON program's tables, actions and key fields.

Resolution follows p4c's STF runner (backends/bmv2/bmv2stf.py): a table or
action is found by its full JSON name, else by a unique suffix (`t` finds
`ingress.t`); a key field by its JSON key name or target, with `$N` meaning
`[N]`, `.valid` / `$valid$` for validity keys, and suffixes after a dot.
Values follow bmv2stf's makeMask / makeLpm: a hex literal on a ternary key
masks the digits it spells (`*` digits are wildcards), on an lpm key its
spelled digits are the prefix; keys an entry leaves out match anything.
"""

from __future__ import annotations

import re

from p4compiler import stf
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam


class StfNameError(ValueError):
    """A name or value in the script that the program does not have."""


def _suffix_match(names: list[str], name: str) -> list[str]:
    exact = [n for n in names if n == name]
    if exact:
        return exact
    dotted = [n for n in names if n.endswith("." + name)]
    if dotted:
        return dotted
    return [n for n in names if n.endswith(name)]


class ProgramNames:
    """The tables, actions and header field widths of one bmv2 JSON program."""

    def __init__(self, j: dict):
        self.json = j
        self.tables = {t["name"]: t for p in j.get("pipelines", []) for t in p.get("tables", [])}
        self.actions = {a["id"]: a for a in j.get("actions", [])}
        types = {h["name"]: h for h in j.get("header_types", [])}
        self.widths: dict[str, dict[str, int]] = {}
        for h in j.get("headers", []):
            ht = types.get(h.get("header_type"), {})
            self.widths[h["name"]] = {f[0]: (f[1] if isinstance(f[1], int) else 0)
                                      for f in ht.get("fields", [])}
        self.registers = {r["name"]: r.get("size", 0) for r in j.get("register_arrays", [])}
        self.counters = {c["name"]: c.get("size", 0) for c in j.get("counter_arrays", [])}
        # a direct counter's cells are its table's entries (by handle): name -> table
        self.direct_counters = {c["name"]: c["binding"] for c in j.get("counter_arrays", [])
                                if c.get("is_direct") and c.get("binding")}
        self.meters = {m["name"]: m.get("size", 0) for m in j.get("meter_arrays", [])}
        # a direct meter's cells are its table's entries, as a direct counter's
        self.direct_meters = {m["name"]: m["binding"] for m in j.get("meter_arrays", [])
                              if m.get("is_direct") and m.get("binding")}
        self.value_sets = {v["name"]: v.get("compressed_bitwidth", 0)
                           for v in j.get("parse_vsets", [])}

    # ------------------------------------------------------------------ objects
    def _unique(self, kind: str, names: list[str], name: str, where: str) -> str:
        found = _suffix_match(names, name)
        if len(found) > 1:
            raise StfNameError(f"{where}: {kind} name {name!r} is ambiguous between "
                               f"{found[0]!r} and {found[1]!r}")
        if not found:
            known = ", ".join(sorted(names)[:12]) or "none"
            raise StfNameError(f"{where}: the program has no {kind} {name!r} ({kind}s: {known})")
        return found[0]

    def table(self, name: str, where: str) -> dict:
        if name not in self.tables and name.startswith("main.") and name.count(".") >= 2:
            return self.tables[self._unique("table", *self._through_package(name), where)]
        return self.tables[self._unique("table", list(self.tables), name, where)]

    def _through_package(self, name: str) -> tuple[list[str], str]:
        """`main.ig.t` (p4testgen's STFs name a table by its path from the package
        instance: V1Switch's `ig` / `eg` parameters): t among that pipeline's tables."""
        _, param, rest = name.split(".", 2)
        pipeline = {"ig": "ingress", "eg": "egress"}.get(param)
        names = [t["name"] for p in self.json.get("pipelines", []) for t in p.get("tables", [])
                 if pipeline is None or p.get("name") == pipeline]
        return names, rest

    def action(self, table: dict | None, name: str, where: str) -> dict:
        if table is not None:
            cands = [self.actions[i] for i in table.get("action_ids", []) if i in self.actions]
        else:
            cands = list(self.actions.values())
        by_name = {a["name"]: a for a in cands}
        where_t = f"{where}" if table is None else f"{where} (table {table['name']})"
        return by_name[self._unique("action", list(by_name), name, where_t)]

    def register(self, name: str, where: str) -> str:
        return self._unique("register", list(self.registers), name, where)

    def counter(self, name: str, where: str) -> str:
        return self._unique("counter", list(self.counters), name, where)

    def meter(self, name: str, where: str) -> str:
        return self._unique("meter", list(self.meters), name, where)

    def value_set(self, name: str, where: str) -> str:
        return self._unique("value set", list(self.value_sets), name, where)

    # ------------------------------------------------------------------ calls
    def call(self, table: dict | None, call: stf.ActionCall, where: str) -> ActionCall:
        a = self.action(table, call.name, where)
        given = dict(call.params)
        names = [rd["name"] for rd in a.get("runtime_data", [])]
        extra = [n for n in given if n not in names]
        if extra:
            raise StfNameError(f"{where}: action {a['name']} has no parameter {extra[0]!r} "
                               f"(parameters: {', '.join(names) or 'none'})")
        missing = [n for n in names if n not in given]
        if missing:
            raise StfNameError(f"{where}: action {a['name']} needs parameter {missing[0]!r}")
        return ActionCall(a["name"], tuple(given[n] for n in names))

    # ------------------------------------------------------------------ keys
    def key_fields(self, table: dict) -> list[tuple[str, str, int, str]]:
        """(name, match kind, width, target name) per key field, in key order."""
        out = []
        for k in table.get("key", []):
            target = k.get("target")
            tname = ".".join(target) if isinstance(target, list) else str(target)
            width = 1 if k["match_type"] == "valid" else self._width(target)
            out.append((k.get("name") or tname, k["match_type"], width, tname))
        return out

    def _width(self, target) -> int:
        if isinstance(target, list) and len(target) == 2:
            w = self.widths.get(target[0], {}).get(target[1])
            if w:
                return w
        return 128

    def _field_index(self, fields: list[tuple[str, str, int, str]], key: str,
                     where: str) -> int:
        m = re.fullmatch(r"(.*)\$([0-9]+)(.*)", key)
        if m:
            key = f"{m.group(1)}[{m.group(2)}]{m.group(3)}"
        # names compared without blanks: a key written `h.a & 0xff` may come as `h.a&0xff`
        names = [re.sub(r"\s+", "", f[0]) for f in fields]
        alts = [re.sub(r"\s+", "", f[3]) for f in fields]
        key = re.sub(r"\s+", "", key)
        # a validity key: `h.valid`, `h.$valid$`, `h.isValid()`, p4testgen's `h.isValid<>()`
        vm = re.fullmatch(r"(.+?)\.(?:valid|\$valid\$|isValid(?:<>)?\(\))", key)
        valid = (vm.group(1) + ".$valid$", vm.group(1) + ".isValid()") if vm else ()
        for cand in (key, key + "$", key + ".$valid$", *valid):
            for pool in (names, alts):
                if cand is not None and cand in pool:
                    return pool.index(cand)
        for pool in (names, alts):
            for i, n in enumerate(pool):
                if n.endswith("." + key) or n.endswith("." + key + "$"):
                    return i
                if key == "valid" and (n.endswith(".$valid$") or n == "$valid$"):
                    return i
        raise StfNameError(f"{where}: the table has no key field {key!r} "
                           f"(keys: {', '.join(names) or 'none'})")

    def match_key(self, table: dict, keys: tuple[stf.KeyMatch, ...],
                  where: str) -> list[MatchParam]:
        fields = self.key_fields(table)
        given: dict[int, stf.KeyMatch] = {}
        for km in keys:
            idx = self._field_index(fields, km.name, where)
            given[idx] = km
        return [_param(kind, width, given.get(i), where)
                for i, (_, kind, width, _) in enumerate(fields)]


def _param(kind: str, width: int, km: stf.KeyMatch | None, where: str) -> MatchParam:
    full = (1 << width) - 1
    if km is None:
        return {
            "ternary": MatchParam(MatchKind.TERNARY, 0, mask=0),
            "lpm": MatchParam(MatchKind.LPM, 0, prefix_len=0),
            "range": MatchParam(MatchKind.RANGE, 0, high=full),
            "optional": MatchParam(MatchKind.OPTIONAL, 0, wildcard=True),
            "valid": MatchParam(MatchKind.VALID, 0),
        }.get(kind, MatchParam(MatchKind.EXACT, 0))
    v = km.value
    if km.kind == "lpm":
        if kind == "lpm":
            return MatchParam(MatchKind.LPM, v, prefix_len=km.prefix_len)
        if kind == "ternary":
            plen = km.prefix_len or 0
            return MatchParam(MatchKind.TERNARY, v, mask=full ^ ((1 << (width - plen)) - 1))
    elif km.kind == "ternary":
        if kind == "ternary":
            return MatchParam(MatchKind.TERNARY, v, mask=km.mask)
        if kind == "optional":
            return MatchParam(MatchKind.OPTIONAL, v, wildcard=km.mask == 0)
    elif km.kind == "range":
        if kind == "range":
            return MatchParam(MatchKind.RANGE, v, high=km.high)
    elif km.kind in ("literal", "exact"):
        literal = km.kind == "literal"
        if kind == "ternary":
            return MatchParam(MatchKind.TERNARY, v, mask=(km.mask & full) if literal else full)
        if kind == "lpm":
            if literal:
                spelled = bin(km.mask).count("1") if km.mask else 0
                return MatchParam(MatchKind.LPM, v, prefix_len=min(spelled, width))
            return MatchParam(MatchKind.LPM, v, prefix_len=width)
        if kind == "range":
            return MatchParam(MatchKind.RANGE, v, high=v)
        if kind == "optional":
            return MatchParam(MatchKind.OPTIONAL, v)
        if kind == "valid":
            return MatchParam(MatchKind.VALID, v)
        return MatchParam(MatchKind.EXACT, v)
    raise StfNameError(f"{where}: key {km.name!r} is a {kind} field; "
                       f"a {km.kind} value does not fit it")
