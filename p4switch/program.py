"""A loaded bmv2 JSON program: validated, laid out, and compiled to Python.

Per-packet state is one flat list `S` (the "PHV"): every header gets a validity
slot, a "raw" slot (the byte offset it was extracted from, or -1), a "dirty"
slot (set when the program writes to it) and one slot per field; metadata
instances get field slots. The deparser returns the input frame when nothing
changed, patches modified headers into a copy when the layout is unchanged,
and otherwise copies untouched headers as byte slices and packs the others. Fields no code ever reads are
not decoded at extract time.

The parser, both pipelines, the deparser and the checksums are compiled at
load time to Python source (see `Program.source`, printed by
`python -m p4switch.program --dump prog.json`) in which tables are dict
lookups, actions are inlined, and expressions are Python expressions on ints.
bmv2's infinite-precision arithmetic is Python's; values are truncated to the
field width when stored, as bmv2 does.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections.abc import Callable

from p4switch import externs, header_ops, json_checks
from p4switch.codegen_actions import ActionCodegen
from p4switch.codegen_control import ControlCodegen
from p4switch.codegen_expr import ExpressionCodegen
from p4switch.codegen_fused import FusedCodegen
from p4switch.codegen_parser import ParserCodegen
from p4switch.codegen_primitives import PrimitiveCodegen
from p4switch.program_common import (
    TRUNC,
    Header,
    PipelineAbort,
    ProgramError,
    _hex,
    _indent,
    _sat_cast,
    _shift_left,
    _sign_extend,
    _signed_field,
    _usat_cast,
    malformed,
)
from p4switch.program_layout import LayoutMixin
from p4switch.program_uses import UsesMixin
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
from p4switch.tables import ActionProfile, Entry, KeyField, Table


class Program(LayoutMixin, UsesMixin, ExpressionCodegen, ParserCodegen, ControlCodegen,
              ActionCodegen, PrimitiveCodegen, FusedCodegen):
    """A validated, compiled bmv2 JSON program and its run-time state."""

    def __init__(self, j: dict, trace: Callable[[str], None] | None = None,
                 clock_us: Callable[[], float] | None = None):
        if not isinstance(j, dict):
            raise ProgramError("bmv2 JSON: expected a JSON object at the top level")
        self.json = j
        self.trace = trace
        self.clock_us = clock_us or (lambda: time.monotonic() * 1e6)
        self.ns: dict = {"__builtins__": __builtins__}
        self._uid = 0
        self._named: dict[int, str] = {}  # id(object) -> its name in ns (see _name)
        self._const_args: tuple[int, ...] | None = None  # action data known at load time
        self._ad_widths: tuple = ()  # widths of the current action's parameters
        self._wid: dict[str, int] = {}  # generated expression -> known bit width
        self._extra_source: list[str] = []  # helper functions the generated code calls
        self._stack_keys: dict[str, str] = {}  # header stack -> its descriptors' name
        self._baked: dict[str, Entry] = {}  # tables generated with these default entries
        self._codegen_lock = threading.Lock()  # specialise() may run on any thread
        try:
            json_checks.check(j)
            self._layout()
            self._objects()
            self._scan_uses()
            self.source = self._generate()
        except json_checks.JsonRuleError as e:
            raise ProgramError(str(e)) from None
        except ProgramError:
            raise
        except (KeyError, IndexError, TypeError, AttributeError, ValueError,
                OverflowError) as e:
            raise malformed(e) from None
        try:
            code = compile(self.source, "<p4switch program>", "exec")
        except SyntaxError as e:  # a bug in the generator, not in the JSON
            raise ProgramError(f"internal code generation error: {e}") from e
        exec(code, self.ns)
        self.parse = self.ns["parse"]
        self.ingress = self.ns["ingress"]
        self.egress = self.ns["egress"]
        self.deparse = self.ns["deparse"]
        # parse + ingress + egress + deparse as one function on local variables
        # (see _gen_fused); None if this program cannot be fused.
        try:
            fused = None if trace else self._gen_fused()
        except (KeyError, IndexError, TypeError, AttributeError, ValueError,
                OverflowError) as e:
            raise malformed(e) from None
        self.fused_source = None
        self.fused = None
        if fused is not None:
            self.fused_source, extra = fused
            self.ns.update(extra)
            self.fused = self._compile_fused(self.fused_source, self.ns)
        # The fused function that reads every configuration table (keyless tables
        # whose default action the controller sets), and the tables baked into
        # `fused` (see specialise()): name -> the default entry it has as constants.
        self.fused_generic = self.fused
        self.baked: dict[str, Entry] = {}
        self.specialised_source: str | None = None  # the running `fused`'s, when baked

    # ------------------------------------------------------------------ layout
    def _list(self, key: str) -> list:
        v = self.json.get(key, [])
        if v is None:
            return []
        if not isinstance(v, list):
            raise ProgramError(f"{key}: expected a list, found {type(v).__name__}")
        return v

    # --------------------------------------------------------------- objects
    def _objects(self) -> None:
        self.actions: dict[int, dict] = {}
        self.action_names: dict[str, int] = {}
        for i, a in enumerate(self._list("actions")):
            if "id" not in a or "name" not in a:
                raise ProgramError(f"actions[{i}]: missing id or name")
            self.actions[a["id"]] = a
            self.action_names.setdefault(a["name"], a["id"])
        self.counters: dict[str, externs.CounterArray] = {}
        self.direct_counter_tables: dict[str, str] = {}
        for c in self._list("counter_arrays"):
            if c.get("is_direct"):
                self.direct_counter_tables[c["name"]] = c.get("binding")
                continue
            self.counters[c["name"]] = externs.CounterArray(c["name"], int(c.get("size", 0)))
        self.registers = {r["name"]: externs.RegisterArray(r["name"], int(r["size"]),
                                                           int(r["bitwidth"]))
                          for r in self._list("register_arrays")}
        self.meters: dict[str, externs.MeterArray] = {}
        self.direct_meters: dict[str, dict] = {}
        for m in self._list("meter_arrays"):
            if m.get("is_direct"):
                self.direct_meters[m.get("binding")] = m
            else:
                self.meters[m["name"]] = externs.MeterArray(
                    m["name"], int(m.get("size", 0)), m.get("type") == "bytes")
        self.field_lists: dict[int, tuple[int, ...]] = {}
        for i, fl in enumerate(self._list("field_lists")):
            slots = []
            for el in fl.get("elements", []):
                if el.get("type") == "field":
                    slots.append(self._field_slot(el["value"], f"field_lists[{i}]"))
            self.field_lists[fl["id"]] = tuple(slots)
        self.learn_lists: dict[int, tuple[str, tuple[int, ...]]] = {}
        for i, ll in enumerate(self._list("learn_lists")):
            slots = tuple(self._field_slot(el["value"], f"learn_lists[{i}]")
                          for el in ll.get("elements", []) if el.get("type") == "field")
            self.learn_lists[ll["id"]] = (ll["name"], slots)
        self.calculations = {c["name"]: (i, c) for i, c in enumerate(self._list("calculations"))}
        for name, (i, c) in self.calculations.items():
            if c.get("algo") not in externs.HASH_ALGORITHMS:
                raise ProgramError(f"calculations[{i}] ({name}): unsupported algo "
                                   f"{c.get('algo')!r}")
        self.parse_vsets = {v["name"]: set() for v in self._list("parse_vsets")}
        # the key field widths of the select that reads each value set (see value_set_add)
        self.vset_key_widths: dict[str, list[int]] = {}
        self.tables: dict[str, Table] = {}
        self.profiles: dict[str, ActionProfile] = {}
        pipelines = self._list("pipelines")
        self.pipelines = {}
        for pi, p in enumerate(pipelines):
            self.pipelines[p.get("name")] = (pi, p)
        for want in ("ingress", "egress"):
            if want not in self.pipelines:
                raise ProgramError(f"pipelines: no pipeline named {want!r} (v1model needs "
                                   "'ingress' and 'egress')")
        if not self._list("parsers"):
            raise ProgramError("parsers: the program has no parser")
        if not self._list("deparsers"):
            raise ProgramError("deparsers: the program has no deparser")
        arity = {aid: len(a.get("runtime_data", [])) for aid, a in self.actions.items()}
        widths = {aid: tuple(rd.get("bitwidth") for rd in a.get("runtime_data", []))
                  for aid, a in self.actions.items()}
        for pi, p in enumerate(pipelines):
            for ap in p.get("action_profiles", []):
                self.profiles[ap["name"]] = ActionProfile(
                    ap["name"], int(ap.get("max_size", 1 << 16)), {}, arity)
            for ti, t in enumerate(p.get("tables", [])):
                where = f"pipelines[{pi}].tables[{ti}]"
                self.tables[t.get("name")] = self._make_table(t, where, arity)
        # the control plane's action data must fit the parameters (the program's own
        # entries, made above, are taken as given)
        for obj in (*self.tables.values(), *self.profiles.values()):
            obj.param_widths = widths

    def _field_slot(self, ref, where: str) -> int:
        if not isinstance(ref, list) or len(ref) != 2:
            raise ProgramError(f"{where}: bad field reference {ref!r}")
        h, f = ref
        hd = self.headers.get(h)
        if hd is None:
            raise ProgramError(f"{where}: unknown header {h!r} in field {h}.{f}")
        if f == "$valid$":
            return hd.valid
        if f not in hd.slots:
            raise ProgramError(f"{where}: header {h!r} has no field {f!r}")
        return hd.slots[f]

    def _field_width(self, ref) -> int:
        h, f = ref
        if f == "$valid$":
            return 1
        for fname, w, _s in self.headers[h].fields:
            if fname == f:
                return w if w != "*" else 0
        return 0

    def _make_table(self, t: dict, where: str, arity: dict[int, int]) -> Table:
        name = t.get("name")
        if not isinstance(name, str):
            raise ProgramError(f"{where}: missing name")
        mt = t.get("match_type", "exact")
        if mt not in ("exact", "lpm", "ternary", "range"):
            raise ProgramError(f"{where}: unknown match_type {mt!r}")
        keys = self._table_keys(t, where)
        action_ids = self._table_actions(t, f"{where} ({name})")
        ttype = t.get("type", "simple")
        if ttype not in ("simple", "indirect", "indirect_ws"):
            raise ProgramError(f"{where} ({name}): unknown table type {ttype!r}")
        profile = None
        if ttype != "simple":
            profile = self.profiles.get(t.get("action_profile"))
            if profile is None:
                raise ProgramError(f"{where} ({name}): unknown action_profile "
                                   f"{t.get('action_profile')!r}")
            profile._action_ids.update(action_ids)
        de = t.get("default_entry")
        default = self._table_default(de, f"{where} ({name})", arity) if de else Entry(-1, ())
        table = Table(name, keys, action_ids, arity, int(t.get("max_size", 1024)), default,
                      profile, bool(t.get("with_counters", False)))
        table.default_const = bool(de and de.get("action_const"))
        for ei, ent in enumerate(t.get("entries", []) or []):
            self._const_entry(table, ent, f"{where}.entries[{ei}]")
        if t.get("entries"):
            table.const_entries = True
        return table

    def _table_keys(self, t: dict, where: str) -> list[KeyField]:
        keys = []
        for ki, k in enumerate(t.get("key", [])):
            kind = k.get("match_type")
            if kind not in ("exact", "lpm", "ternary", "range", "valid", "optional"):
                raise ProgramError(f"{where}.key[{ki}]: unknown match_type {kind!r}")
            if kind == "valid":
                target = k["target"] if isinstance(k["target"], str) else k["target"][0]
                if target not in self.headers:
                    raise ProgramError(f"{where}.key[{ki}]: unknown header {target!r}")
                width = 1
            else:
                self._field_slot(k.get("target"), f"{where}.key[{ki}]")
                width = self._field_width(k["target"])
            keys.append(KeyField(kind, width, k.get("name") or str(k.get("target"))))
        return keys

    def _table_actions(self, t: dict, where: str) -> dict[str, int]:
        """Action name -> id, by the full name and the unqualified one a controller may
        use."""
        names = t.get("actions", [])
        ids = t.get("action_ids")
        if ids is None:
            ids = []
            for n in names:
                if n not in self.action_names:
                    raise ProgramError(f"{where}: unknown action {n!r}")
                ids.append(self.action_names[n])
        action_ids = {}
        for n, aid in zip(names, ids):
            if aid not in self.actions:
                raise ProgramError(f"{where}: unknown action id {aid}")
            action_ids[n] = aid
            action_ids.setdefault(n.rsplit(".", 1)[-1], aid)
        return action_ids

    def _table_default(self, de: dict, where: str, arity: dict[int, int]) -> Entry:
        aid = de.get("action_id")
        if aid not in self.actions:
            raise ProgramError(f"{where}: default_entry: unknown action id {aid}")
        data = tuple(_hex(x) for x in de.get("action_data", []))
        if len(data) != arity[aid] and de.get("action_data") is not None:
            raise ProgramError(f"{where}: default_entry: action "
                               f"{self.actions[aid]['name']} takes {arity[aid]} "
                               f"arguments, got {len(data)}")
        return Entry(aid, data + (0,) * (arity[aid] - len(data)))

    def _const_entry(self, table: Table, ent: dict, where: str) -> None:
        """One of the program's own entries into `table`."""
        params = [_match_param(mk, where) for mk in ent.get("match_key", [])]
        ae = ent.get("action_entry", {})
        aid = ae.get("action_id")
        if aid not in self.actions:
            raise ProgramError(f"{where}: unknown action id {aid}")
        call = ActionCall(self.actions[aid]["name"],
                          tuple(_hex(x) for x in ae.get("action_data", [])))
        try:
            # bmv2: a lower value is a higher priority; ours: larger wins.
            table.add(params, call, -int(ent.get("priority", 0)), const=True)
        except Exception as e:
            raise ProgramError(f"{where}: {e}") from None

    # ------------------------------------------------------------ generation
    def _name(self, prefix: str, obj) -> str:
        """The generated code's global name for `obj`: the one it has if it has one (a
        table, a register's cells: one object, one name, so that code generated later,
        in a fork of the switch, refers to the switch's own objects by name; see
        FusedCodegen.build_specialised), else a new one."""
        known = self._named.get(id(obj))
        if known is not None:
            return known
        self._uid += 1
        n = f"_{prefix}{self._uid}"
        self.ns[n] = obj
        self._named[id(obj)] = n  # the object lives as long as ns holds it
        return n

    def _tmp(self) -> str:
        self._uid += 1
        return f"t{self._uid}"

    def _generate(self) -> str:
        ns = self.ns
        ns.update({
            "_PipelineAbort": PipelineAbort, "_random": random, "_now_us": self.clock_us,
            "_trace": self.trace or (lambda msg: None), "_sx": _sign_extend, "_sf": _signed_field,
            "_sat": _sat_cast, "_usat": _usat_cast, "_shl": _shift_left,
            "_hdr_eq": header_ops.header_eq,
            "_pack_bits": externs.pack_bits, "_HASH": externs.HASH_ALGORITHMS,
            "_stack_push": header_ops.stack_push, "_stack_pop": header_ops.stack_pop,
            "_union_stack_push": header_ops.union_stack_push,
            "_union_stack_pop": header_ops.union_stack_pop,
            "_log_msg": self._log_msg,
        })
        out = []
        self._calc_names: dict[str, str] = {}
        for name, (i, c) in self.calculations.items():
            out += self._gen_calculation(name, c, f"calculations[{i}]")
        out += self._gen_parser()
        for pname in ("ingress", "egress"):
            pi, p = self.pipelines[pname]
            out += self._gen_pipeline(pname, p, f"pipelines[{pi}]")
        out += self._gen_deparser()
        out += self._extra_source
        return "\n".join(out) + "\n"

    # -- checksums and deparser ---------------------------------------------------------
    def _gen_checksums(self, verify: bool) -> list[str]:
        lines = []
        for i, c in enumerate(self._list("checksums")):
            where = f"checksums[{i}] ({c.get('name')})"
            if not c.get("verify" if verify else "update", True):
                continue
            calc = c.get("calculation")
            if calc not in self._calc_names:
                raise ProgramError(f"{where}: unknown calculation {calc!r}")
            pre: list[str] = []
            slot, w, _s, hd, _f = self._field(c.get("target"), where)
            cond = "True"
            if c.get("if_cond") is not None:
                cond = self.expr(c["if_cond"], where, pre)
            if verify and not hd.metadata:
                # bmv2 skips the verification of a target field whose header is
                # invalid (Checksum::is_target_field_valid), condition or not
                cond = f"S[{hd.valid}] and ({cond})"
            lines += pre + [f"if {cond}:"]
            if verify:
                lines += [f"    if {self._calc_names[calc]}(S) & {(1 << w) - 1} != S[{slot}]:",
                          f"        S[{self.std['checksum_error']}] = 1"]
            else:
                lines += [f"    S[{slot}] = {self._calc_names[calc]}(S) & {(1 << w) - 1}",
                          f"    S[{hd.dirty}] = 1"]
        return lines

    def _pack_expr(self, hd: Header) -> str:
        if hd.var_field is None:
            terms = []
            shift = hd.nbits
            for f, w, _s in hd.fields:
                shift -= w
                v = f"(S[{hd.slots[f]}] & {(1 << w) - 1})" if _s else f"S[{hd.slots[f]}]"
                terms.append(f"{v} << {shift}" if shift else v)
            if not terms:
                return "b''"
            return f"({' | '.join(terms)}).to_bytes({hd.fixed_bytes}, 'big')"
        # Varbit header: the variable field's width comes from its width slot.
        acc = "0"
        for f, w, _s in hd.fields:
            if w == "*":
                acc = f"(({acc}) << S[{hd.var_width}] | S[{hd.slots[f]}])"
            else:
                acc = f"(({acc}) << {w} | S[{hd.slots[f]}])"
        return f"({acc}).to_bytes({hd.fixed_bytes} + S[{hd.var_width}] // 8, 'big')"

    def _gen_deparser(self) -> list[str]:
        dep = self._list("deparsers")[0]
        order = [self._hdr(name, f"deparsers[0].order[{i}]")
                 for i, name in enumerate(dep.get("order", []))]

        def size(hd: Header) -> str:
            return f"{hd.fixed_bytes}" if hd.var_field is None else \
                f"{hd.fixed_bytes} + S[{hd.var_width}] // 8"

        lines = ["def _deparse_slow(S):", "    pkt = S[0]", "    parts = []",
                 "    ap = parts.append"]
        for hd in order:
            lines += [f"    if S[{hd.valid}]:", f"        r = S[{hd.raw}]",
                      f"        ap(pkt[r:r + {size(hd)}] if r >= 0 and not S[{hd.dirty}] "
                      f"else {self._pack_expr(hd)})"]
        lines += ["    ap(pkt[S[1]:])", "    out = b''.join(parts)",
                  f"    if S[{TRUNC}]:", f"        out = out[:S[{TRUNC}] - 1]", "    return out"]
        # The common cases: the valid headers sit where the parser found them,
        # back to back from offset 0, and either none changed (the frame is the
        # input frame) or the changed ones are patched into a copy.
        lines += ["def deparse(S):"]
        lines += _indent(self._gen_checksums(verify=False))
        lines += [f"    if S[{TRUNC}]:", "        return _deparse_slow(S)", "    o = 0", "    d = 0"]
        for hd in order:
            lines += [f"    if S[{hd.valid}]:", f"        if S[{hd.raw}] != o:",
                      "            return _deparse_slow(S)", f"        o += {size(hd)}",
                      f"        d |= S[{hd.dirty}]"]
        lines += ["    if o != S[1]:", "        return _deparse_slow(S)", "    if not d:",
                  "        return S[0]", "    b = bytearray(S[0])"]
        for hd in order:
            lines.append(f"    if S[{hd.valid}] and S[{hd.dirty}]:")
            if hd.var_field is not None:
                lines.append("        return _deparse_slow(S)")
            else:
                lines += [f"        r = S[{hd.raw}]",
                          f"        b[r:r + {hd.fixed_bytes}] = {self._pack_expr(hd)}"]
        lines.append("    return bytes(b)")
        return lines

    # -- helpers for the switch --------------------------------------------------------
    def digest_values(self, lid: int, S: list) -> tuple[str, tuple[int, ...]] | None:
        ll = self.learn_lists.get(lid)
        if ll is None:
            return None
        name, slots = ll
        return name, tuple(S[k] for k in slots)


def _match_param(mk: dict, where: str) -> MatchParam:
    """A const entry's match_key element as a runtime match parameter."""
    kind = mk.get("match_type")
    if kind == "valid":
        return MatchParam(MatchKind.VALID, 1 if mk.get("key") else 0)
    if kind == "exact":
        return MatchParam(MatchKind.EXACT, _hex(mk["key"]))
    if kind == "lpm":
        return MatchParam(MatchKind.LPM, _hex(mk["key"]), prefix_len=mk["prefix_length"])
    if kind == "ternary":
        return MatchParam(MatchKind.TERNARY, _hex(mk["key"]), mask=_hex(mk["mask"]))
    if kind == "range":
        return MatchParam(MatchKind.RANGE, _hex(mk["start"]), high=_hex(mk["end"]))
    raise ProgramError(f"{where}: unknown match_type {kind!r}")


def load(path: str, **kw) -> Program:
    try:
        with open(path) as f:
            j = json.load(f)
    except json.JSONDecodeError as e:
        raise ProgramError(f"{path}: not valid JSON: {e}") from None
    return Program(j, **kw)


def main(argv: list[str] | None = None) -> int:
    """`python -m p4switch.program --dump prog.json`: print the generated Python."""
    import argparse
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("json")
    ap.add_argument("--dump", action="store_true")
    args = ap.parse_args(argv)
    try:
        prog = load(args.json)
    except ProgramError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.dump:
        print(prog.source)
        print("# -- the fused fast path (Program.fused) --")
        print(prog.fused_source or "# (none: this program uses the separate functions)")
        tables = prog.configuration_tables()
        built = prog.specialise(tables) if tables else None
        if built is not None and built[2]:
            print("# -- the fused fast path with the configuration tables' default entries "
                  f"baked in ({', '.join(sorted(built[2]))}; Program.specialise) --")
            print(built[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
