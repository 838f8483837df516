"""bmv2 back end, controls: a control's apply block lowered to bmv2's control graph
(tables, hidden tables for code between them, conditionals, switch on action_run /
hit / miss), table JSON (keys, const entries, default entries, action profiles)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import ir
from .bmv2_common import (
    HASH_ALGOS,
    PIPELINE_NAMES,
    _calls,
    _const,
    _Env,
    _has_apply,
    _hit_miss,
    _is_constant,
    _Node,
    _source_info,
    _switch_to_ifs,
    _width,
    hexstr,
    mask,
)
from .errors import CompileError, Location, Unsupported
from .typecheck import (
    ActionEntity,
    TableEntity,
    TypedActionRef,
    TypedBlock,
)


def _as_action_data(call: ir.Call) -> bool:
    """Can a direct call of an action pass its arguments as action data (a hidden
    table with that default entry)? Only directionless parameters given constants."""
    a: ActionEntity = call.target[1]
    return all(not p.direction and _is_constant(arg.value)
               for p, arg in zip(a.params, call.args, strict=True))


class ControlConverter:
    """Mixin of Bmv2Backend: controls and tables."""

    # ------------------------------------------------------------ controls

    def convert_control(self, b: TypedBlock) -> dict[str, Any]:
        self.block = b
        self.nodes: dict[str, _Node] = {}
        self.applied: set[str] = set()
        self.action_ids: dict[str, int] = {}
        used = self.used_actions(b)
        for a in used:
            self.action_ids[self.action_key(a)] = self.convert_action(a)
        self.action_profiles: list[dict[str, Any]] = []
        self.profile_names: set[str] = set()
        self.selector_inputs: dict[str, list[Any]] = {}   # action selector -> its input
        assert b.body is not None
        init = self.lower(list(b.body.stmts), None, None)
        init, tables, conds = self.order_nodes(init)
        pipeline: dict[str, Any] = {"name": PIPELINE_NAMES[b.role], "id": 0 if b.role == "ig"
                                    else 1}
        if (si := _source_info(b.loc, b.name)):
            pipeline["source_info"] = si
        pipeline.update({"init_table": init, "tables": tables,
                         "action_profiles": self.action_profiles, "conditionals": conds})
        self.block = None
        return pipeline

    @staticmethod
    def action_key(a: ActionEntity) -> str:
        return f"{id(a)}"

    def used_actions(self, b: TypedBlock) -> list[ActionEntity]:
        """Actions p4c keeps after its mid end: global ones used here (e.g. NoAction) first,
        then the control's own, in declaration order; only those referenced by a table or
        called from the apply block with its arguments as action data. An action called
        only with other arguments is not kept: its body runs inline at each call (p4c
        makes a direct call's parameters locals), and its own body, which reads its
        parameters, is code bmv2 may not load (a parameter as a hash input)."""
        refs: list[ActionEntity] = []
        for t in b.tables:
            refs.extend(r.action for r in t.actions)
        assert b.body is not None
        for call in _calls(b.body):
            if call.target and call.target[0] == "action" and _as_action_data(call):
                refs.append(call.target[1])  # else its body runs inline (action_call_table)
        ids = {id(a) for a in refs}
        globals_ = []
        for a in refs:
            if a.control is None and a not in globals_:
                globals_.append(a)
        return globals_ + [a for a in b.actions if id(a) in ids]

    def lower(self, stmts: list[ir.Stmt], nxt: str | None, ret: str | None) -> str | None:
        """Build the control graph for `stmts` followed by node `nxt`; returns the entry.

        `ret` is where a `return` statement continues (the end of the control)."""
        node = nxt
        pending: list[ir.Stmt] = []
        i = len(stmts) - 1
        while i >= 0:
            s = stmts[i]
            i -= 1
            if self.is_simple(s):
                pending.insert(0, s)
                if isinstance(s, ir.Exit):
                    node = None
                    pending = [s]
                continue
            if pending:
                node = self.synth_table(pending, node)
                pending = []
            node = self.lower_stmt(s, node, ret)
        if pending:
            node = self.synth_table(pending, node)
        return node

    def is_simple(self, s: ir.Stmt) -> bool:
        if isinstance(s, ir.VarDecl) and s.init is not None and _has_apply(s.init):
            return False
        if isinstance(s, (ir.Assign, ir.VarDecl, ir.Empty, ir.Exit)):
            return not (isinstance(s, ir.Assign) and _has_apply(s.rhs))
        if isinstance(s, ir.CallStmt):
            return s.call.target[0] not in ("action", "apply", "control_apply")
        if isinstance(s, ir.Loop):  # runs inside a synthesized action, as in p4c
            return not any(isinstance(c, ir.Call) and c.target and c.target[0] in (
                "action", "apply", "control_apply") for c in _calls(s))
        return False

    def lower_stmt(self, s: ir.Stmt, nxt: str | None, ret: str | None) -> str | None:
        if isinstance(s, ir.Block):
            return self.lower(list(s.stmts), nxt, ret)
        if isinstance(s, ir.Return):
            return ret
        if isinstance(s, ir.VarDecl) and s.init is not None:
            ref = self._var_by_unique(s.name, s.type)
            s = ir.Assign(ir.Name(s.name, s.loc, s.type, ref), s.init, s.loc)
        if isinstance(s, ir.Assign):
            # `flag = t.apply().hit;`: the table's hit/miss edges set the flag.
            hm = _hit_miss(s.rhs)
            if hm is None:
                raise Unsupported(s.loc, "a table apply can only be assigned as "
                                  "t.apply().hit or .miss")
            table, positive = hm
            on_hit = self.synth_table([ir.Assign(s.lhs, ir.BoolLit(positive), s.loc)], nxt)
            on_miss = self.synth_table([ir.Assign(s.lhs, ir.BoolLit(not positive), s.loc)],
                                       nxt)
            return self.table_node(table, s.loc, {"__HIT__": on_hit, "__MISS__": on_miss},
                                   nxt)
        if isinstance(s, ir.CallStmt):
            tgt = s.call.target
            if tgt[0] == "apply":
                return self.table_node(tgt[1], s.call.loc, {}, nxt)
            if tgt[0] == "action":
                return self.action_call_table(s.call, nxt)
            if tgt[0] == "control_apply":
                # `return` inside the inlined control ends only that control (its
                # copy-out assignments, if any, still run).
                after = self.lower(list(tgt[3]), nxt, nxt) if len(tgt) > 3 else nxt
                return self.lower(list(tgt[2].stmts), after, after)
        if isinstance(s, ir.If) and isinstance(s.cond, ir.BoolLit):
            taken = s.then if s.cond.value else s.other
            return self.lower([taken], nxt, ret) if taken is not None else nxt
        if isinstance(s, ir.If):
            then = self.lower([s.then], nxt, ret)
            other = self.lower([s.other], nxt, ret) if s.other is not None else nxt
            hm = _hit_miss(s.cond)
            if hm is not None:
                table, positive = hm
                hit, miss = (then, other) if positive else (other, then)
                return self.table_node(table, s.loc, {"__HIT__": hit, "__MISS__": miss}, nxt)
            name = self.unique_name("cond")
            cond = {"name": name, "id": 0}
            if (si := _source_info(s.loc)):
                cond["source_info"] = si
            cond.update({"expression": self.cond_expr(s.cond, _Env()), "true_next": then,
                         "false_next": other})
            self.nodes[name] = _Node(name, "conditional", cond, [then, other])
            return name
        if isinstance(s, ir.Switch):
            if isinstance(s.expr.type, ir.ActionEnum):
                return self.switch_action_run(s, nxt, ret)
            return self.lower_stmt(_switch_to_ifs(s), nxt, ret)
        raise Unsupported(getattr(s, "loc", None), f"{type(s).__name__} is not supported in "
                          "an apply block on bmv2")

    def switch_action_run(self, s: ir.Switch, nxt: str | None, ret: str | None) -> str | None:
        member = s.expr
        assert isinstance(member, ir.Member) and isinstance(member.expr, ir.Call)
        table: TableEntity = member.expr.target[1]
        targets: dict[str, str | None] = {}
        default: str | None = nxt
        pending: list[ir.SwitchCase] = []
        for c in s.cases:
            pending.append(c)
            if c.body is None:
                continue
            entry = self.lower([c.body], nxt, ret)
            for pc in pending:
                if pc.label is None:
                    default = entry
                else:
                    assert isinstance(pc.label, ir.Name)
                    targets[pc.label.ref.qualified] = entry
            pending = []
        next_tables = {}
        for r in table.actions:
            next_tables[r.action.qualified] = targets.get(r.action.qualified, default)
        return self.table_node(table, s.loc, next_tables, nxt)

    def table_node(self, t: TableEntity, loc: Location, next_tables: dict[str, str | None],
                   nxt: str | None) -> str:
        if t.qualified in self.applied:
            # bmv2 keeps one successor map per table: a second apply is only possible
            # when it continues exactly like the first (p4c: "multiple successors").
            prev = self.nodes[t.qualified].json
            same = prev["base_default_next"] == nxt and (
                prev["next_tables"] == next_tables
                or (not next_tables and set(prev["next_tables"].values()) == {nxt}))
            if same:
                return t.qualified
            raise CompileError(loc, f"{t.qualified}: table is applied more than once with "
                               "different successors; bmv2 cannot implement this (p4c: "
                               "'has multiple successors'); apply it once")
        self.applied.add(t.qualified)
        self.used_names.add(t.qualified)
        key_prims: list[dict[str, Any]] = []
        keys = [self.table_key(t, k, _Env(), key_prims) for k in t.keys
                if k.match_kind != "selector"]
        # bmv2's precedence: any range key makes a range table, then ternary (optional
        # keys need priorities too), then lpm, else exact.
        kinds = {k["match_type"] for k in keys}
        match_type = "range" if "range" in kinds else \
            "ternary" if kinds & {"ternary", "optional"} else \
            "lpm" if "lpm" in kinds else "exact"
        if sum(1 for k in keys if k["match_type"] == "lpm") > 1:
            raise CompileError(t.loc, f"{t.name}: multiple LPM keys in table")
        action_names = [r.action.qualified for r in t.actions]
        action_ids = [self.action_ids[self.action_key(r.action)] for r in t.actions]
        table_type = "simple"
        j: dict[str, Any] = {"name": t.qualified, "id": 0}
        if (si := _source_info(t.loc, t.name)):
            j["source_info"] = si
        j.update({"key": keys, "match_type": match_type, "type": table_type,
                  "max_size": t.size if t.size is not None else 1024,
                  "with_counters": t.counters is not None,
                  "support_timeout": t.support_timeout,
                  "direct_meters": t.meters.qualified if t.meters is not None else None,
                  "action_ids": action_ids, "actions": action_names})
        if t.implementation is not None:
            self.action_profile(t, j)
        hit_miss = "__HIT__" in next_tables
        if not next_tables:
            next_tables = {n: nxt for n in action_names}
        j["base_default_next"] = None if hit_miss else nxt
        j["next_tables"] = next_tables
        if t.default_action is not None and t.implementation is not None:
            self.diags.warn(t.loc, f"target does not support default_action for {t.name} "
                            "(due to action profiles)")
        elif t.default_action is not None:
            j["default_entry"] = self.default_entry(t.default_action, t.default_const)
        if t.entries is not None:
            j["entries"] = self.const_entries(t, keys)
        self.nodes[t.qualified] = _Node(t.qualified, "table", j,
                                        [nxt] + list(next_tables.values()))
        if key_prims:
            aname = self.unique_name(f"key_{t.name}")
            aid = self.add_action(aname, [], key_prims, t.loc)
            return self.hidden_table(self.unique_name(f"tbl_{aname}"), aname, aid, [], t.loc,
                                     t.qualified)
        return t.qualified

    def table_key(self, t: TableEntity, k, env: _Env,
                  key_prims: list[dict[str, Any]]) -> dict[str, Any]:
        """One key field's JSON. A key that is not a field (an expression, a slice) is
        computed into a temporary by a primitive added to `key_prims`, as p4c's
        SimplifyKey does."""
        e = k.expr
        # bmv2 has no "optional" match type: p4c's backend writes an optional key as
        # ternary (an entry's value gets a full mask, `_` a zero mask).
        kind_json = "ternary" if k.match_kind == "optional" else k.match_kind
        entry: dict[str, Any] = {"match_type": kind_json, "name": k.name}
        msk = None
        if isinstance(e, ir.Binary) and e.op == "&" and isinstance(e.right, ir.Lit):
            msk = hexstr(e.right.value, _width(e.type))
            e = e.left
        if isinstance(e, ir.Call) and e.target and e.target[1:2] == ("isValid",) \
                and self.path(e.callee.expr, env)[0] == "header":  # type: ignore[union-attr]
            callee = e.callee
            assert isinstance(callee, ir.Member)
            entry["target"] = [self.header_name(callee.expr, env), "$valid$"]
            entry["match_type"] = "exact" if k.match_kind == "exact" else kind_json
        else:
            try:
                kind, v = self.path(e, env)
            except Unsupported:
                kind, v = "expr", None
            if kind != "field":
                # P4Runtime gives a slice key's value in the slice's width, which bmv2
                # cannot match against a masked whole field: a temporary too.
                v = self.temp(e.type if not isinstance(e.type, ir.Bool)  # type: ignore
                              else ir.Bits(1), "key")
                key_prims.append(self.prim("assign", [{"type": "field", "value": v},
                                                      self.operand(e, env)], k.loc
                                           if hasattr(k, "loc") else t.loc))
            entry["target"] = v
        entry["mask"] = msk
        return entry

    def action_profile(self, t: TableEntity, j: dict[str, Any]) -> None:
        inst = t.implementation
        assert inst is not None
        kind = inst.type.name
        j["action_profile"] = inst.qualified
        if kind == "action_selector":
            j["type"] = "indirect_ws"
        elif kind == "action_profile":
            j["type"] = "indirect"
        else:
            raise Unsupported(t.loc, f"{t.name}: implementation {kind} is not supported")
        if kind == "action_selector":
            env = _Env()
            inputs = [self.operand(k.expr, env) for k in t.keys if k.match_kind == "selector"]
            if self.selector_inputs.setdefault(inst.qualified, inputs) != inputs:
                # bmv2 hashes one input per selector (p4c's SharedActionSelectorCheck)
                raise CompileError(inst.decl.loc, f"Action selector {inst.name} is used by "
                                   "multiple tables with different selector inputs")
        if inst.qualified in self.profile_names:
            return
        self.profile_names.add(inst.qualified)
        prof: dict[str, Any] = {"name": inst.qualified, "id": len(self.action_profiles)}
        if (si := _source_info(inst.decl.loc, inst.name)):
            prof["source_info"] = si
        if kind == "action_selector":
            algo = inst.args[0]
            if not isinstance(algo, str):
                raise Unsupported(t.loc, "selector algorithm must be a HashAlgorithm constant")
            prof["max_size"] = inst.args[1]
            prof["selector"] = {"algo": HASH_ALGOS.get(algo, algo),
                                "input": self.selector_inputs[inst.qualified]}
        else:
            prof["max_size"] = inst.args[0]
        self.action_profiles.append(prof)

    def default_entry(self, r: TypedActionRef, const: bool) -> dict[str, Any]:
        return {"action_id": self.action_ids[self.action_key(r.action)],
                "action_const": const,
                "action_data": [hexstr(_const(a, None)) for a in r.args],
                "action_entry_const": const}

    def const_entries(self, t: TableEntity, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        assert t.entries is not None
        for i, en in enumerate(t.entries):
            mk = []
            for k, key, tk in zip(en.keys, keys, t.keys, strict=True):
                w = _width(tk.expr.type)
                mt = key["match_type"]
                if isinstance(k, ir.DefaultKey):
                    if mt == "ternary":
                        mk.append({"match_type": mt, "key": hexstr(0, w), "mask": hexstr(0, w)})
                    elif mt == "lpm":
                        mk.append({"match_type": mt, "key": hexstr(0, w), "prefix_length": 0})
                    elif mt == "range":
                        mk.append({"match_type": mt, "start": hexstr(0, w),
                                   "end": hexstr(mask(w), w)})
                    else:
                        raise CompileError(en.loc, "default/_ is not allowed for exact keys")
                elif isinstance(k, ir.MaskKey):
                    v = _const(k.value, en.loc, self.errors)
                    m = _const(k.mask, en.loc, self.errors)
                    if mt == "lpm":
                        plen = bin(m).count("1")
                        mk.append({"match_type": mt, "key": hexstr(v & m, w),
                                   "prefix_length": plen})
                    else:
                        mk.append({"match_type": mt, "key": hexstr(v & m, w),
                                   "mask": hexstr(m, w)})
                elif isinstance(k, ir.RangeKey):
                    lo, hi = (_const(x, en.loc, self.errors) for x in (k.lo, k.hi))
                    mk.append({"match_type": mt, "start": hexstr(lo, w), "end": hexstr(hi, w)})
                else:
                    v = _const(k, en.loc, self.errors)
                    if mt == "ternary":
                        mk.append({"match_type": mt, "key": hexstr(v, w),
                                   "mask": hexstr(mask(w), w)})
                    elif mt == "lpm":
                        mk.append({"match_type": mt, "key": hexstr(v, w), "prefix_length": w})
                    elif mt == "range":
                        mk.append({"match_type": mt, "start": hexstr(v, w), "end": hexstr(v, w)})
                    else:
                        mk.append({"match_type": mt, "key": hexstr(v, w)})
            entry: dict[str, Any] = {}
            if (si := _source_info(en.loc)):
                entry["source_info"] = si
            entry["match_key"] = mk
            entry["action_entry"] = {
                "action_id": self.action_ids[self.action_key(en.action.action)],
                "action_data": [hexstr(_const(a, en.loc, self.errors))
                                for a in en.action.args]}
            # p4c: earlier entries win; without @priority, priorities follow the order.
            entry["priority"] = en.priority if en.priority is not None else i + 1
            out.append(entry)
        return out

    def action_call_table(self, call: ir.Call, nxt: str | None) -> str:
        a: ActionEntity = call.target[1]
        if not _as_action_data(call):  # not expressible as action data: the body inline
            return self.synth_table([ir.CallStmt(call, call.loc)], nxt)  # type: ignore
        data = [hexstr(_const(arg.value, call.loc))  # type: ignore[arg-type]
                for arg in call.args]
        name = self.unique_name(f"tbl_{a.name}")
        aid = self.action_ids[self.action_key(a)]
        return self.hidden_table(name, a.qualified, aid, data, call.loc, nxt)

    def hidden_table(self, name: str, action: str, aid: int, data: list[str],
                     loc: Location | None, nxt: str | None) -> str:
        j: dict[str, Any] = {"name": name, "id": 0}
        if (si := _source_info(loc)):
            j["source_info"] = si
        j.update({"key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
                  "with_counters": False, "support_timeout": False, "direct_meters": None,
                  "action_ids": [aid], "actions": [action], "base_default_next": nxt,
                  "next_tables": {action: nxt},
                  "default_entry": {"action_id": aid, "action_const": True,
                                    "action_data": data, "action_entry_const": True}})
        self.nodes[name] = _Node(name, "table", j, [nxt])
        return name

    def synth_table(self, stmts: list[ir.Stmt], nxt: str | None) -> str | None:
        """Statements of an apply block run by a synthesized action in a hidden table."""
        stmts = [s for s in stmts if not isinstance(s, ir.Empty)
                 and not (isinstance(s, ir.VarDecl) and s.init is None)]
        if not stmts:
            return nxt
        loc = getattr(stmts[0], "loc", None)
        base = f"{Path(loc.file).stem}{loc.line}" if loc and loc.line else "act"
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base)
        aname = self.unique_name(base)
        prims: list[dict[str, Any]] = []
        self.action_body(tuple(stmts), _Env(), prims)
        aid = self.add_action(aname, [], prims, loc)
        return self.hidden_table(self.unique_name(f"tbl_{aname}"), aname, aid, [], loc, nxt)

    def order_nodes(self, init: str | None
                    ) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]]]:
        """Tables and conditionals in the order a forward walk meets them (as p4c lists them)."""
        seen: list[str] = []
        stack = [init]
        visited: set[str] = set()
        while stack:
            n = stack.pop(0)
            if n is None or n in visited:
                continue
            visited.add(n)
            seen.append(n)
            node = self.nodes[n]
            succ = [x for x in node.successors if x is not None]
            stack = [x for x in succ if x not in visited] + stack
        # Conditionals are named node_N in the order they are met, as p4c numbers them.
        rename: dict[str | None, str | None] = {None: None}
        for n in seen:
            rename[n] = n
        for n in seen:
            if self.nodes[n].kind == "conditional":
                new = f"node_{self.node_counter}"
                self.node_counter += 1
                rename[n] = new
        tables, conds = [], []
        for n in seen:
            node = self.nodes[n]
            j = node.json
            if node.kind == "table":
                j["id"] = len(tables)
                j["base_default_next"] = rename[j["base_default_next"]]
                j["next_tables"] = {k: rename[v] for k, v in j["next_tables"].items()}
                tables.append(j)
            else:
                j["id"] = len(conds)
                j["name"] = rename[n]
                j["true_next"] = rename[j["true_next"]]
                j["false_next"] = rename[j["false_next"]]
                conds.append(j)
        return rename[init], tables, conds


# ---------------------------------------------------------------- helpers
