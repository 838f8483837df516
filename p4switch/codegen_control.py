"""The switch's program generator, control flow: pipelines' tables and conditionals
as Python code (table lookups, hit/miss and action_run successors, default entries),
laid out as a graph."""

from __future__ import annotations

import heapq
import json

from p4switch import externs
from p4switch.program_common import (
    PKT,
    TAIL_DUPLICATION_LINES,
    ProgramError,
    _hex,
    _indent,
)

MAX_INLINED_CHAIN = 150  # nodes inlined one into the next before a join is made


class ControlCodegen:
    """Mixin of Program (p4switch/program.py)."""

    # -- control flow graphs ------------------------------------------------------
    def _emit_graph(self, init, succs, body, end: list[str], what: str) -> list[str]:
        """Structured code for a graph of nodes: nested where a node has one
        predecessor, and `n == K` blocks (in topological order) for join nodes;
        a `while` dispatch loop if the graph has a cycle (parser loops)."""
        order: list = []
        seen: set = set()
        onstack: set = set()
        cyclic = False
        preds: dict = {}
        stack = [(init, iter(succs(init)))]
        seen.add(init)
        onstack.add(init)
        preds[init] = 0
        while stack:
            node, it = stack[-1]
            for s in it:
                if s is None:
                    continue
                preds[s] = preds.get(s, 0) + 1
                if s in onstack:
                    cyclic = True
                if s not in seen:
                    seen.add(s)
                    onstack.add(s)
                    stack.append((s, iter(succs(s))))
                    break
            else:
                stack.pop()
                onstack.discard(node)
                order.append(node)
        order.reverse()  # topological order when acyclic
        index = {n: i for i, n in enumerate(order)}
        if cyclic:
            def goto(s):
                return list(end) if s is None else [f"n = {index[s]}", "continue"]
            lines = [f"n = {index[init]}", "while True:"]
            for i, node in enumerate(order):
                lines.append(f"    {'if' if i == 0 else 'elif'} n == {i}:")
                lines += _indent(body(node, goto), 2)
            return lines

        return self._emit_joined(order, index, preds, init, succs, body, end)

    @staticmethod
    def _emit_joined(order, index, preds, init, succs, body, end: list[str]) -> list[str]:
        """An acyclic graph as nested code, join nodes as `if n == K:` blocks after it."""
        # A join node whose code, inlined to the end of the graph, is short is
        # duplicated into each predecessor instead: straight-line code is
        # faster than `n == K` dispatch. Longer tails stay shared.
        own = {n: len(body(n, lambda s: [])) for n in order}
        tail: dict = {}
        for n in reversed(order):
            tail[n] = own[n] + sum(tail[s] for s in succs(n) if s is not None)
        joins = {n for n in order if preds.get(n, 0) > 1 and tail[n] > TAIL_DUPLICATION_LINES}
        # A node reached through MAX_INLINED_CHAIN nested inlinings (a chain of thousands
        # of hidden tables, e.g. an unrolled loop) becomes a join too: inlining it would
        # recurse once per node, past Python's recursion limit.
        pending = sorted(index[n] for n in joins)
        depth = 0

        def goto(s):
            nonlocal depth
            if s is None:
                return list(end)
            if s not in joins and depth >= MAX_INLINED_CHAIN:
                joins.add(s)
                heapq.heappush(pending, index[s])  # a descendant: after the current join
            if s in joins:
                return [f"n = {index[s]}"]
            depth += 1
            try:
                return body(s, goto)
            finally:
                depth -= 1

        lines = goto(init)
        emitted: set = set()
        while pending:  # in topological order: a join's code only sets later joins
            i = heapq.heappop(pending)
            if i in emitted:
                continue
            emitted.add(i)
            lines.append(f"if n == {i}:")
            lines += _indent(body(order[i], goto))
        if joins:
            lines = ["n = -1"] + lines
        lines += list(end)
        return lines

    def _gen_pipeline(self, pname: str, p: dict, where: str) -> list[str]:
        tables = {t["name"]: (i, t) for i, t in enumerate(p.get("tables", []))}
        conds = {c["name"]: (i, c) for i, c in enumerate(p.get("conditionals", []))}
        calls = {c["name"]: (i, c) for i, c in enumerate(p.get("action_calls", []))}

        def check(nxt, w):
            if nxt is not None and nxt not in tables and nxt not in conds and nxt not in calls:
                raise ProgramError(f"{w}: unknown next node {nxt!r}")
            return nxt

        def succs(name):
            if name in tables:
                i, t = tables[name]
                w = f"{where}.tables[{i}] ({name})"
                nt = t.get("next_tables", {})
                base = t.get("base_default_next")
                if "__HIT__" in nt or "__MISS__" in nt:
                    targets = [nt.get("__HIT__", base), nt.get("__MISS__", base)]
                else:
                    targets = [nt.get(n, base) for n in t.get("actions", [])] or [base]
                    if len(set(targets)) > 1:
                        targets.append(base)  # no action ran (dangling member)
                out = []
                for v in targets:
                    check(v, w)
                    if v not in out:
                        out.append(v)
                return out
            if name in conds:
                i, c = conds[name]
                w = f"{where}.conditionals[{i}] ({name})"
                out = [check(c.get("true_next"), w)]
                if c.get("false_next") != c.get("true_next"):
                    out.append(check(c.get("false_next"), w))
                return out
            i, c = calls[name]
            return [check(c.get("next_node"), f"{where}.action_calls[{i}] ({name})")]

        def body(name, goto):
            if name in tables:
                i, t = tables[name]
                return self._gen_table(t, f"{where}.tables[{i}] ({name})", goto)
            if name in conds:
                i, c = conds[name]
                w = f"{where}.conditionals[{i}] ({name})"
                pre = []
                e = self.expr(c.get("expression"), w, pre)
                if c.get("true_next") == c.get("false_next"):
                    return pre + goto(c.get("true_next"))
                lines = pre + [f"if {e}:"]
                frag = (c.get("source_info") or {}).get("source_fragment")
                cname = f"{json.dumps(frag)} ({name})" if frag else f"'{name}'"
                cname = cname.replace("\\", "\\\\").replace('"', '\\"')
                if self.trace:
                    lines.append(f"    _trace(\"Condition {cname} is true\")")
                lines += _indent(goto(c.get("true_next")) or ["pass"])
                lines.append("else:")
                if self.trace:
                    lines.append(f"    _trace(\"Condition {cname} is false\")")
                lines += _indent(goto(c.get("false_next")) or ["pass"])
                return lines
            i, c = calls[name]
            w = f"{where}.action_calls[{i}] ({name})"
            aid = c.get("action_id")
            if aid not in self.actions:
                raise ProgramError(f"{w}: unknown action id {aid}")
            return ["ad = ()"] + self._action_body(aid, w) + goto(c.get("next_node"))

        init = p.get("init_table")
        lines = [f"def {pname}(S):"]
        if init is None:
            return lines + ["    return"]
        check(init, f"{where}.init_table")
        lines += _indent(self._emit_graph(init, succs, body, ["return"], pname))
        return lines

    def _gen_table(self, t: dict, where: str, goto) -> list[str]:
        name = t["name"]
        table = self.tables[name]
        de = t.get("default_entry") or {}
        # A keyless table always runs its default action. The action inline, its data
        # as constants, where the control plane cannot change it (p4c's way of calling
        # an action from a control), or where it can and the fused function being
        # generated bakes in the current one (a configuration table, _specialised_fused).
        default = self._baked.get(name)
        if default is None and de.get("action_const"):
            default = table.default
        if not t.get("key") and default is not None and table.profile is None \
                and default.action in self.actions:
            return self._gen_inline_default(t, default, where, goto)
        lines: list[str] = []
        if self.trace:
            lines.append(f"_trace(\"Applying table '{name}'\")")
        nt = t.get("next_tables", {})
        hit_miss = "__HIT__" in nt or "__MISS__" in nt
        lines += self._gen_lookup(t, where, hit_miss or table.profile is not None or self.trace)
        lines += self._gen_resolve(t)
        if self.trace:
            lines.append(f"_trace(\"Table '{name}': \" + ('hit with handle ' + str(e.handle) "
                         f"if hit else 'miss'))")
        return lines + self._gen_dispatch(t, where, goto, hit_miss)

    def _gen_inline_default(self, t: dict, default, where: str, goto) -> list[str]:
        """A keyless table's default action, inline with its data as constants, and
        where the control goes next."""
        name = t["name"]
        aid = default.action
        lines = []
        if self.trace:
            lines.append(f"_trace(\"Applying table '{name}'\")")
            lines.append(f"_trace(\"Table '{name}': miss\")")
        self._const_args = tuple(default.args)
        try:
            lines += self._action_body(aid, f"{where} action {self.actions[aid]['name']}")
        finally:
            self._const_args = None
        nt = t.get("next_tables", {})
        base = t.get("base_default_next")
        if "__HIT__" in nt or "__MISS__" in nt:
            nxt = nt.get("__MISS__", base)
        else:
            an = next((n for n, i in zip(t.get("actions", []), t.get("action_ids") or [])
                       if i == aid), self.actions[aid]["name"])
            nxt = nt.get(an, base)
        return lines + goto(nxt)

    def _gen_lookup(self, t: dict, where: str, uses_hit: bool) -> list[str]:
        """The key, the lookup into `e` (the default on a miss; `hit` where used), and
        the entry's direct counter and meter."""
        name = t["name"]
        table = self.tables[name]
        tn = self._name("T", table)
        pre: list[str] = []
        kexprs = []
        for ki, k in enumerate(t.get("key", [])):
            kw = f"{where}.key[{ki}]"
            if k["match_type"] == "valid":
                target = k["target"] if isinstance(k["target"], str) else k["target"][0]
                e = f"S[{self.headers[target].valid}]"
            else:
                e = self.expr({"type": "field", "value": k["target"]}, kw, pre)
                _slot, w, signed, _hd, _f = self._field(k["target"], kw)
                if signed:  # bmv2 matches the field's bytes: an int<8> -1 is 0xff
                    e = f"({e} & {(1 << w) - 1})"
            if k.get("mask") is not None:
                e = f"({e} & {_hex(k['mask'])})"
            kexprs.append(e)
        lines = pre
        if not kexprs:
            return lines + [f"e = {tn}.default"] + (["hit = False"] if uses_hit else [])
        key = kexprs[0] if len(kexprs) == 1 else "(" + ", ".join(kexprs) + ",)"
        if table.mode == "exact":
            d = self._name("TD", table.exact)
            lines.append(f"e = {d}.get({key})")
        elif table.mode == "lpm":
            lines.append(f"e = {tn}.lookup_lpm({key})")
        else:
            lines.append(f"e = {tn}.lookup_ternary({key})")
        dm = self.direct_meters.get(name)
        if uses_hit:
            lines += ["if e is None:", f"    e = {tn}.default", "    hit = False",
                      "else:", "    hit = True"]
        elif table.with_counters or dm is not None:
            lines += ["if e is None:", f"    e = {tn}.default", "else:", "    pass"]
        else:
            lines += ["if e is None:", f"    e = {tn}.default"]
        if table.with_counters:
            lines += ["    e.npkts += 1", f"    e.nbytes += len(S[{PKT}])"]
        if dm is not None:
            slot, w, _s, hd, _f = self._field(dm["result_target"], where + ".direct_meter")
            amount = f"len(S[{PKT}])" if dm.get("type") == "bytes" else "1"
            lines += ["    if e.meter is not None:",
                      f"        S[{slot}] = e.meter.execute({amount}, _now_us())",
                      "    else:", f"        S[{slot}] = 0"]
            if not hd.metadata:
                lines.append(f"    S[{hd.dirty}] = 1")
        return lines

    def _gen_resolve(self, t: dict) -> list[str]:
        """The action and its data (`a`, `ad`) of entry `e`: through the action
        profile (a member, or a group's member picked by the selector's hash) where
        the table has one."""
        table = self.tables[t["name"]]
        if table.profile is None:
            return ["a = e.action", "ad = e.args"]
        ap = self._name("AP", table.profile)
        hexpr = "0"
        selector = self._profile_selector(t.get("action_profile"))
        if selector is not None:
            hexpr = selector
        # an entry, or a default set by table_indirect_set_default, names a member
        # or a group; a default set as an action call (P4Runtime) is direct
        return ["if e.member is not None or e.group is not None:",
                f"    a, ad = {ap}.resolve(e, {hexpr})", "else:",
                "    a = e.action", "    ad = e.args"]

    def _gen_dispatch(self, t: dict, where: str, goto, hit_miss: bool) -> list[str]:
        """Action `a`'s body, then where the control goes: by hit or miss, by the
        action that ran, or to the one next table every outcome leads to."""
        table = self.tables[t["name"]]
        nt = t.get("next_tables", {})
        base = t.get("base_default_next")
        targets = {} if hit_miss else {n: nt.get(n, base) for n in t.get("actions", [])}
        # A table with no default entry runs no action on a miss and goes on with
        # base_default_next (bmv2), which may not be where its only action leads.
        outcomes = set(targets.values()) | ({base} if table.initial_default.action not in
                                            self.actions else set())
        same_next = len(outcomes) <= 1
        names = t.get("actions", [])
        ids = t.get("action_ids") or [self.action_names[n] for n in names]
        lines: list[str] = []
        first = True
        for an, aid in zip(names, ids):
            body = self._action_body(aid, f"{where} action {an}")
            if self.trace:
                body = [f"_trace(\"Action entry is {an} - \" + "
                        "''.join(f'{x:x},' for x in ad))"] + body
            if not hit_miss and not same_next:
                body = body + goto(targets[an])
            if not body:
                body = ["pass"]
            lines.append(f"{'if' if first else 'elif'} a == {aid}:")
            lines += _indent(body)
            first = False
        if not hit_miss and not same_next:
            rest = goto(base)
            if rest:
                lines += (["else:"] + _indent(rest)) if not first else rest
        if hit_miss:
            lines.append("if hit:")
            lines += _indent(goto(nt.get("__HIT__", base)) or ["pass"])
            lines.append("else:")
            lines += _indent(goto(nt.get("__MISS__", base)) or ["pass"])
        elif same_next:
            nxt = next(iter(targets.values())) if targets else base
            lines += goto(nxt)
        return lines

    def _profile_selector(self, profile_name: str) -> str | None:
        for _pi, p in self.pipelines.values():
            for ap in p.get("action_profiles", []):
                if ap["name"] == profile_name and ap.get("selector"):
                    sel = ap["selector"]
                    algo = sel.get("algo")
                    if algo not in externs.HASH_ALGORITHMS:
                        raise ProgramError(f"action profile {profile_name}: unsupported "
                                           f"selector algo {algo!r}")
                    parts = []
                    for inp in sel.get("input", []):
                        slot, w, _s, _hd, _f = self._field(inp["value"],
                                                           f"action profile {profile_name}")
                        parts.append(f"(S[{slot}], {w})")
                    fn = self._name("ALG", externs.HASH_ALGORITHMS[algo])
                    return f"{fn}(_pack_bits([{', '.join(parts)}]))"
        return None
