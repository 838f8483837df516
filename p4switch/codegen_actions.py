"""The switch's program generator, actions: bmv2 primitives (assignments, header and
stack operations, externs, clone/resubmit/recirculate, digests) as Python code."""

from __future__ import annotations

import re

from p4switch import externs
from p4switch.program_common import (
    CLONE,
    CLONE_FL,
    DIGESTS,
    DROP_PORT,
    RECIRC,
    RESUBMIT,
    SPECIAL,
    TRUNC,
    ProgramError,
    _indent,
)

MAX_ACTION_STEPS = 1 << 20  # primitives one action call may run
U64 = (1 << 64) - 1  # simple_switch reads hash() base and max as uint64


class ActionCodegen:
    """Mixin of Program (p4switch/program.py)."""

    # -- actions ----------------------------------------------------------------------
    def _action_body(self, aid: int, where: str) -> list[str]:
        a = self.actions[aid]
        self._ad_widths = tuple(rd.get("bitwidth") for rd in a.get("runtime_data", []))
        where = f"{where} ({a['name']})"
        prims = a.get("primitives", [])
        if any(p.get("op") in ("_jump", "_jump_if_zero") for p in prims):
            # Ifs inside an action, as the compilers lay them out (forward jumps only):
            # nested Python ifs again, as fast as the apply block's own.
            structured = self._structured(prims, 0, len(prims), where)
            if structured is not None:
                return structured
            # Anything else (run-time loops): a program-counter loop, stopped with an
            # error where bmv2 would spin for ever.
            lines = ["pc = 0", f"steps = {MAX_ACTION_STEPS}", "while True:",
                     "    steps -= 1",
                     "    if steps < 0:",
                     f"        raise RuntimeError({where!r} + ' ran {MAX_ACTION_STEPS} "
                     "primitives: a loop that does not end')"]
            for i, p in enumerate(prims):
                pw = f"{where}.primitives[{i}]"
                lines.append(f"    {'if' if i == 0 else 'elif'} pc == {i}:")
                op = p.get("op")
                params = p.get("parameters", [])
                if op == "_jump":
                    pre = []
                    tgt = self.expr(params[0], pw, pre)
                    lines += _indent(pre + [f"pc = {tgt}"], 2)
                elif op == "_jump_if_zero":
                    pre = []
                    c = self.expr(params[0], pw, pre)
                    tgt = self.expr(params[1], pw, pre)
                    lines += _indent(pre + [f"pc = {tgt} if {c} == 0 else {i + 1}"], 2)
                else:
                    lines += _indent(self._primitive(p, pw) + [f"pc = {i + 1}"], 2)
            lines += ["    else:", "        break"]
            return lines
        lines = []
        for i, p in enumerate(prims):
            lines += self._primitive(p, f"{where}.primitives[{i}]")
        return _unpack_action_data(lines, len(self._ad_widths))

    def _structured(self, prims: list[dict], lo: int, hi: int, where: str
                    ) -> list[str] | None:
        """prims[lo:hi] as nested ifs, or None where a jump does not fit that shape.

        `_jump_if_zero(c, t)` opens an if whose body is prims[i+1:t]; when that body
        ends with `_jump(e)` (t <= e <= hi), prims[t:e] is its else. Every jump must
        land inside the block it belongs to; a backward jump (a loop) or a jump out of
        the middle of a block gives None."""
        lines: list[str] = []
        i = lo
        while i < hi:
            p = prims[i]
            op = p.get("op")
            pw = f"{where}.primitives[{i}]"
            if op == "_jump":
                return None
            if op != "_jump_if_zero":
                lines += self._primitive(p, pw)
                i += 1
                continue
            params = p.get("parameters", [])
            t = _const_target(params)
            if t is None or not i < t <= hi:
                return None
            end, then_hi = t, t
            last = prims[t - 1] if t - 1 > i else None
            if last is not None and last.get("op") == "_jump":
                e = _const_target(last.get("parameters", []), 0)
                if e is None or not t <= e <= hi:
                    return None
                end, then_hi = e, t - 1
            then = self._structured(prims, i + 1, then_hi, where)
            other = self._structured(prims, t, end, where)
            if then is None or other is None:
                return None
            pre: list[str] = []
            c = self.expr(params[0], pw, pre)
            lines += pre + [f"if {c}:", *_indent(then or ["pass"])]
            if other:
                lines += ["else:", *_indent(other)]
            i = end
        return lines

    def _primitive(self, p: dict, where: str, in_parser: bool = False) -> list[str]:
        op = p.get("op")
        params = p.get("parameters", [])
        pre: list[str] = []
        std = self.std

        def need(n):
            if len(params) != n:
                raise ProgramError(f"{where}: {op} takes {n} parameters, got {len(params)}")

        def ex(i):
            return self.expr(params[i], where, pre)

        if op in ("assign", "modify_field", "assign_VL"):
            need(2)
            src = params[1]
            if src.get("type") in ("header",) and params[0].get("type") == "header":
                return self._primitive({"op": "assign_header", "parameters": params}, where)
            val = ex(1)
            lines = self._store(params[0], val, where, pre)
            if op == "assign_VL":
                dh = self.headers[params[0]["value"][0]]
                sh = self.headers[params[1]["value"][0]]
                lines.append(f"S[{dh.var_width}] = S[{sh.var_width}]")
            return pre + lines
        if op == "assign_header":
            need(2)
            if params[0].get("type") == "header" and params[1].get("type") == "header":
                dh, sh = self._hdr(params[0]["value"], where), self._hdr(params[1]["value"], where)
                lines = [f"S[{dh.slots[f]}] = S[{sh.slots[g]}]"
                         for (f, _w, _s), (g, _v, _t) in zip(dh.fields, sh.fields)]
                lines += [f"S[{dh.valid}] = S[{sh.valid}]", f"S[{dh.raw}] = S[{sh.raw}]",
                          f"S[{dh.dirty}] = S[{sh.dirty}]"]
                if dh.var_field is not None and sh.var_field is not None:
                    lines.append(f"S[{dh.var_width}] = S[{sh.var_width}]")  # varbit length
                siblings = self._invalidate_siblings(dh)  # bmv2: a union member made valid
                return lines + ([f"if S[{dh.valid}]:", *_indent(siblings)] if siblings else [])
            d = self._dyn_header(params[0], where, pre)
            s = self._dyn_header(params[1], where, pre)
            return pre + [f"for _d, _s in zip({d}[2], {s}[2]):", "    S[_d] = S[_s]",
                          f"S[{d}[0]] = S[{s}[0]]", f"S[{d}[1]] = S[{s}[1]]",
                          f"S[{d}[4]] = S[{s}[4]]"]
        if op == "assign_union":
            need(2)
            dm = self.unions[params[0]["value"]]
            sm = self.unions[params[1]["value"]]
            lines = []
            for dh, shd in zip(dm, sm):
                lines += self._primitive({"op": "assign_header", "parameters": [
                    {"type": "header", "value": dh.name},
                    {"type": "header", "value": shd.name}]}, where)
            return lines
        if op == "assign_header_stack":
            need(2)
            dn, sn = self._stack_name(params[0], where), self._stack_name(params[1], where)
            lines = []
            for dh, shd in zip(self.stacks[dn], self.stacks[sn]):
                lines += self._primitive({"op": "assign_header", "parameters": [
                    {"type": "header", "value": dh.name},
                    {"type": "header", "value": shd.name}]}, where)
            return lines + [f"S[{self.stack_next[dn]}] = S[{self.stack_next[sn]}]"]
        if op in ("add_header", "remove_header"):
            need(1)
            if params[0].get("type") == "header":
                hd = self._hdr(params[0]["value"], where)
                if op == "remove_header":
                    return [f"S[{hd.valid}] = 0"]
                return [f"if not S[{hd.valid}]:",
                        *[f"    S[{k}] = 0" for k in hd.slots.values()],
                        f"    S[{hd.valid}] = 1", f"    S[{hd.raw}] = -1",
                        f"    S[{hd.dirty}] = 1",
                        *_indent(self._invalidate_siblings(hd))]
            d = self._dyn_header(params[0], where, pre)
            if op == "remove_header":
                return pre + [f"S[{d}[0]] = 0"]
            # bmv2 zeroes the fields of a header that becomes valid.
            return pre + [f"if not S[{d}[0]]:", f"    for _d in {d}[2]:", "        S[_d] = 0",
                          f"    S[{d}[0]] = 1", f"    S[{d}[1]] = -1"]
        if op in ("push", "pop") and params and params[0].get("type") == "header_union_stack":
            need(2)
            un = params[0].get("value")
            if un not in self.union_stacks:
                raise ProgramError(f"{where}: unknown header union stack {un!r}")
            elems = self._name("USTK", tuple(tuple(self._desc(h) for h in self.unions[u])
                                             for u in self.union_stacks[un]))
            fn = "_union_stack_push" if op == "push" else "_union_stack_pop"
            return pre + [f"{fn}(S, {elems}, {self.stack_next[un]}, {ex(1)})"]
        if op in ("push", "pop"):
            need(2)
            sn = self._stack_name(params[0], where)
            stk = self._stack_descs(sn, where)
            fn = "_stack_push" if op == "push" else "_stack_pop"
            return pre + [f"{fn}(S, {stk}, {self.stack_next[sn]}, {ex(1)})"]
        if op in ("mark_to_drop", "drop"):
            return [f"S[{std['egress_spec']}] = {DROP_PORT}", f"S[{std['mcast_grp']}] = 0"]
        if op == "exit":
            if in_parser:
                raise ProgramError(f"{where}: exit in a parser")
            return ["return"]
        if op == "count":
            need(2)
            c = self._counter(params[0], where)
            cb = self._name("CB", c.nbytes)
            cp = self._name("CP", c.npkts)
            idx = ex(1)
            body = [f"{cp}[i] += 1", f"{cb}[i] += S[{std['packet_length']}]"]
            return pre + [f"i = {idx}"] + self._guard_index("i", idx, c.size, body)
        if op == "register_read":
            need(3)
            r = self._register(params[1], where)
            cells = self._name("R", r.cells)
            idx = ex(2)
            if self._index_fits(idx, r.size):
                value = self._known(f"{cells}[{idx}]", r.width)
                return pre + self._store(params[0], value, where, pre)
            # an index past the end leaves the destination as it was, as simple_switch
            # does (it refuses the read)
            i = self._tmp()
            store = self._store(params[0], self._known(f"{cells}[{i}]", r.width), where, pre)
            return pre + [f"{i} = {idx}", f"if 0 <= {i} < {r.size}:", *_indent(store)]
        if op == "register_write":
            need(3)
            r = self._register(params[0], where)
            cells = self._name("R", r.cells)
            idx = ex(1)
            v = ex(2)
            vw = self._width_of(v)
            val = v if vw is not None and vw <= r.width else f"({v}) & {(1 << r.width) - 1}"
            return pre + [f"i = {idx}"] + self._guard_index("i", idx, r.size,
                                                            [f"{cells}[i] = {val}"])
        if op == "execute_meter":
            need(3)
            name = params[0].get("value")
            m = self.meters.get(name)
            if m is None:
                raise ProgramError(f"{where}: unknown meter_array {name!r}")
            mn = self._name("M", m.meters)
            amount = f"S[{std['packet_length']}]" if m.count_bytes else "1"
            i = self._tmp()
            lines = [f"{i} = {ex(1)}"]
            return pre + lines + self._store(
                params[2], f"({mn}[{i}].execute({amount}, _now_us()) if 0 <= {i} < {m.size} "
                           f"else 0)", where, pre)
        if op == "modify_field_with_hash_based_offset":
            need(4)
            calc = params[2].get("value")
            if calc not in self._calc_names:
                raise ProgramError(f"{where}: unknown calculation {calc!r}")
            h, sz = self._tmp(), self._tmp()
            # simple_switch reads base and max as uint64 (their low 64 bits) and adds in
            # 64 bits; max = 0 gives base (not base + the whole hash)
            return pre + [f"{sz} = ({ex(3)}) & {U64}",
                          f"{h} = {self._calc_names[calc]}(S) % {sz} if {sz} else 0",
                          *self._store(params[0], f"(({ex(1)}) & {U64}) + {h} & {U64}",
                                       where, pre)]
        if op == "modify_field_rng_uniform":
            need(3)
            return pre + self._store(params[0], f"_random.randint({ex(1)}, {ex(2)})", where, pre)
        if op in ("clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress"):
            if not params:
                raise ProgramError(f"{where}: {op} needs a session id")
            fl = ex(1) if len(params) > 1 else "0"
            return pre + [f"S[{CLONE}] = {ex(0)}", f"S[{CLONE_FL}] = {fl}", f"S[{SPECIAL}] = 1"]
        if op in ("resubmit", "recirculate"):
            fl = ex(0) if params else "0"
            return pre + [f"S[{RESUBMIT if op == 'resubmit' else RECIRC}] = {fl} + 1",
                          f"S[{SPECIAL}] = 1"]
        if op == "generate_digest":
            lid = ex(1) if len(params) > 1 else ex(0)
            return pre + [f"if S[{DIGESTS}] is None:", f"    S[{DIGESTS}] = []",
                          f"S[{DIGESTS}].append({lid})", f"S[{SPECIAL}] = 1"]
        if op == "truncate":
            need(1)
            return pre + [f"S[{TRUNC}] = {ex(0)}"]
        if op == "log_msg":
            if not self.trace:
                return []
            fmt = params[0].get("value", "")
            vec = params[1].get("value", []) if len(params) > 1 else []
            vals = [self.expr(x, where, pre) for x in vec]
            return pre + [f"_log_msg({fmt!r}, [{', '.join(vals)}])"]
        if op in ("assert", "assume"):
            need(1)
            return pre + [f"if not {ex(0)}:",
                          f"    raise _PipelineAbort({(where + ': ' + op + ' failed')!r})"]
        if op in ("_jump", "_jump_if_zero"):
            raise ProgramError(f"{where}: {op} outside an action")
        raise ProgramError(f"{where}: unsupported primitive {op!r}")

    def _index_fits(self, idx: str, size: int) -> bool:
        w = self._width_of(idx)
        return w is not None and (1 << w) <= size

    def _guard_index(self, var: str, idx: str, size: int, body: list[str]) -> list[str]:
        """`body` (using `var`) if the index is in range; bmv2 ignores out-of-range
        extern indices (with an error log), so do we."""
        if self._index_fits(idx, size):
            return body
        return [f"if 0 <= {var} < {size}:", *_indent(body)]

    def _counter(self, param, where) -> externs.CounterArray:
        name = param.get("value")
        c = self.counters.get(name)
        if c is None:
            raise ProgramError(f"{where}: unknown counter_array {name!r}")
        return c

    def _register(self, param, where) -> externs.RegisterArray:
        name = param.get("value")
        r = self.registers.get(name)
        if r is None:
            raise ProgramError(f"{where}: unknown register_array {name!r}")
        return r

    def _log_msg(self, fmt: str, values: list[int]) -> None:
        for v in values:
            fmt = fmt.replace("{}", str(v), 1)
        if self.trace:
            self.trace(fmt)

    @staticmethod
    def _stack_push(S, descs, nx, count) -> None:
        n = len(descs)
        for i in range(n - 1, -1, -1):
            d = descs[i]
            if i >= count:
                s = descs[i - count]
                for a, b in zip(d[2], s[2]):
                    S[a] = S[b]
                S[d[0]], S[d[1]] = S[s[0]], -1
            else:
                S[d[0]] = 0
        S[nx] = min(n, S[nx] + count)

    @staticmethod
    def _stack_pop(S, descs, nx, count) -> None:
        n = len(descs)
        for i in range(n):
            d = descs[i]
            if i + count < n:
                s = descs[i + count]
                for a, b in zip(d[2], s[2]):
                    S[a] = S[b]
                S[d[0]], S[d[1]] = S[s[0]], -1
            else:
                S[d[0]] = 0
        S[nx] = max(0, S[nx] - count)


def _const_target(params: list, index: int = 1) -> int | None:
    """A jump's target when it is a hexstr constant, as the compilers write it."""
    if len(params) <= index or params[index].get("type") != "hexstr":
        return None
    try:
        return int(params[index]["value"], 16)
    except (TypeError, ValueError):
        return None


_AD_COPY = re.compile(r"^S\[(\d+)\] = ad\[(\d+)\]$")


def _unpack_action_data(lines: list[str], nargs: int) -> list[str]:
    """`S[a] = ad[0]`, `S[b] = ad[1]`, ... for every parameter, first in an action
    (how a configuration action copies its data): one tuple unpack instead."""
    if nargs < 2 or len(lines) < nargs:
        return lines
    slots = []
    for i, ln in enumerate(lines[:nargs]):
        m = _AD_COPY.match(ln)
        if m is None or int(m.group(2)) != i:
            return lines
        slots.append(m.group(1))
    if len(set(slots)) != nargs:
        return lines
    return [", ".join(f"S[{k}]" for k in slots) + " = ad"] + lines[nargs:]
