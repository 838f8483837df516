"""The switch's program generator, primitives: each bmv2 primitive of an action or a
parser operation (assignments, header and stack operations, externs,
clone/resubmit/recirculate, digests, debugging) as Python statements.

`_primitive` dispatches on the primitive's `op` to one method per family; each gets
a `_Call` holding the operands and the statements its operands need first (`pre`).
"""

from __future__ import annotations

from p4switch import externs
from p4switch.program_common import (
    CLONE,
    CLONE_FL,
    DIGESTS,
    DROP_PORT,
    PKT,
    RECIRC,
    RESUBMIT,
    SPECIAL,
    TRUNC,
    ProgramError,
    _indent,
)

U64 = (1 << 64) - 1  # simple_switch reads hash() base and max as uint64


class _Call:
    """One primitive being generated: its op, operands, place and the statements its
    operands need before it (`pre`, filled by `ex`)."""

    __slots__ = ("gen", "in_parser", "op", "params", "pre", "where")

    def __init__(self, gen, p: dict, where: str, in_parser: bool):
        self.gen = gen
        self.op = p.get("op")
        self.params = p.get("parameters", [])
        self.where = where
        self.in_parser = in_parser
        self.pre: list[str] = []

    def need(self, n: int) -> None:
        if len(self.params) != n:
            raise ProgramError(f"{self.where}: {self.op} takes {n} parameters, "
                               f"got {len(self.params)}")

    def ex(self, i: int) -> str:
        """Operand i as a Python expression."""
        return self.gen.expr(self.params[i], self.where, self.pre)

    def store(self, i: int, value: str) -> list[str]:
        """Statements storing `value` into operand i."""
        return self.gen._store(self.params[i], value, self.where, self.pre)


# op -> the PrimitiveCodegen method that generates it
_HANDLERS = {
    "assign": "_p_assign", "modify_field": "_p_assign", "assign_VL": "_p_assign",
    "assign_header": "_p_assign_header", "assign_union": "_p_assign_members",
    "assign_header_stack": "_p_assign_members",
    "add_header": "_p_validity", "remove_header": "_p_validity",
    "push": "_p_push_pop", "pop": "_p_push_pop",
    "mark_to_drop": "_p_drop", "drop": "_p_drop", "exit": "_p_exit",
    "count": "_p_count", "register_read": "_p_register_read",
    "register_write": "_p_register_write", "execute_meter": "_p_execute_meter",
    "modify_field_with_hash_based_offset": "_p_hash_offset",
    "modify_field_rng_uniform": "_p_random",
    "clone_ingress_pkt_to_egress": "_p_clone", "clone_egress_pkt_to_egress": "_p_clone",
    "resubmit": "_p_resubmit", "recirculate": "_p_resubmit",
    "generate_digest": "_p_digest", "truncate": "_p_truncate", "log_msg": "_p_log_msg",
    "assert": "_p_assert", "assume": "_p_assert",
}


class PrimitiveCodegen:
    """Mixin of Program (p4switch/program.py)."""

    def _primitive(self, p: dict, where: str, in_parser: bool = False) -> list[str]:
        c = _Call(self, p, where, in_parser)
        if c.op in ("_jump", "_jump_if_zero"):
            raise ProgramError(f"{where}: {c.op} outside an action")
        handler = _HANDLERS.get(c.op)
        if handler is None:
            raise ProgramError(f"{where}: unsupported primitive {c.op!r}")
        return getattr(self, handler)(c)

    # -- assignments --------------------------------------------------------------
    def _p_assign(self, c: _Call) -> list[str]:
        c.need(2)
        if c.params[1].get("type") == "header" and c.params[0].get("type") == "header":
            return self._primitive({"op": "assign_header", "parameters": c.params}, c.where)
        lines = c.store(0, c.ex(1))
        if c.op == "assign_VL":
            dh = self.headers[c.params[0]["value"][0]]
            sh = self.headers[c.params[1]["value"][0]]
            lines.append(f"S[{dh.var_width}] = S[{sh.var_width}]")
        return c.pre + lines

    def _p_assign_header(self, c: _Call) -> list[str]:
        c.need(2)
        dst, src = c.params
        if dst.get("type") == "header" and src.get("type") == "header":
            dh, sh = self._hdr(dst["value"], c.where), self._hdr(src["value"], c.where)
            lines = [f"S[{dh.slots[f]}] = S[{sh.slots[g]}]"
                     for (f, _w, _s), (g, _v, _t) in zip(dh.fields, sh.fields)]
            lines += [f"S[{dh.valid}] = S[{sh.valid}]", f"S[{dh.raw}] = S[{sh.raw}]",
                      f"S[{dh.dirty}] = S[{sh.dirty}]"]
            if dh.var_field is not None and sh.var_field is not None:
                lines.append(f"S[{dh.var_width}] = S[{sh.var_width}]")  # varbit length
            siblings = self._invalidate_siblings(dh)  # bmv2: a union member made valid
            return lines + ([f"if S[{dh.valid}]:", *_indent(siblings)] if siblings else [])
        d = self._dyn_header(dst, c.where, c.pre)
        s = self._dyn_header(src, c.where, c.pre)
        return c.pre + [f"for _d, _s in zip({d}[2], {s}[2]):", "    S[_d] = S[_s]",
                        f"S[{d}[0]] = S[{s}[0]]", f"S[{d}[1]] = S[{s}[1]]",
                        f"S[{d}[4]] = S[{s}[4]]"]

    def _p_assign_members(self, c: _Call) -> list[str]:
        """assign_union and assign_header_stack: header by header."""
        c.need(2)
        if c.op == "assign_union":
            pairs = zip(self.unions[c.params[0]["value"]], self.unions[c.params[1]["value"]])
            tail: list[str] = []
        else:
            dn = self._stack_name(c.params[0], c.where)
            sn = self._stack_name(c.params[1], c.where)
            pairs = zip(self.stacks[dn], self.stacks[sn])
            tail = [f"S[{self.stack_next[dn]}] = S[{self.stack_next[sn]}]"]
        lines: list[str] = []
        for dh, sh in pairs:
            lines += self._primitive({"op": "assign_header", "parameters": [
                {"type": "header", "value": dh.name},
                {"type": "header", "value": sh.name}]}, c.where)
        return lines + tail

    # -- headers and stacks -------------------------------------------------------
    def _p_validity(self, c: _Call) -> list[str]:
        """add_header (bmv2 zeroes the fields of a header that becomes valid) and
        remove_header. As simple_switch's primitives, each changes the packet length
        register by the header's size when it changes the header's validity."""
        c.need(1)
        lr = self.len_reg
        if c.params[0].get("type") == "header":
            hd = self._hdr(c.params[0]["value"], c.where)
            size = self._header_bytes(hd)
            if c.op == "remove_header":
                return [f"if S[{hd.valid}]:", f"    S[{hd.valid}] = 0", f"    S[{lr}] -= {size}"]
            return [f"if not S[{hd.valid}]:",
                    *[f"    S[{k}] = 0" for k in hd.slots.values()],
                    f"    S[{hd.valid}] = 1", f"    S[{hd.raw}] = -1",
                    f"    S[{hd.dirty}] = 1", f"    S[{lr}] += {size}",
                    *_indent(self._invalidate_siblings(hd))]
        d = self._dyn_header(c.params[0], c.where, c.pre)
        size = self._header_bytes(self._dyn_header_type(c.params[0], c.where))
        if c.op == "remove_header":
            return c.pre + [f"if S[{d}[0]]:", f"    S[{d}[0]] = 0", f"    S[{lr}] -= {size}"]
        return c.pre + [f"if not S[{d}[0]]:", f"    for _d in {d}[2]:", "        S[_d] = 0",
                        f"    S[{d}[0]] = 1", f"    S[{d}[1]] = -1", f"    S[{lr}] += {size}"]

    def _header_bytes(self, hd) -> str:
        """Code for the header's size in bytes (bmv2's get_nbytes_packet)."""
        if hd.var_field is None:
            return str(hd.fixed_bytes)
        return f"({hd.fixed_bytes} + S[{hd.var_width}] // 8)"

    def _dyn_header_type(self, node, where: str):
        """A header of the type `_dyn_header` reaches (a stack's first element)."""
        e = node.get("value")
        while node.get("type") == "expression" and isinstance(e, dict) and "op" not in e:
            node, e = e, e.get("value")
        if node.get("type") == "header":
            return self._hdr(node["value"], where)
        return self.stacks[self._stack_name(e["left"], where)][0]

    def _p_push_pop(self, c: _Call) -> list[str]:
        c.need(2)
        if c.params[0].get("type") == "header_union_stack":
            un = c.params[0].get("value")
            if un not in self.union_stacks:
                raise ProgramError(f"{c.where}: unknown header union stack {un!r}")
            elems = self._name("USTK", tuple(tuple(self._desc(h) for h in self.unions[u])
                                             for u in self.union_stacks[un]))
            fn = "_union_stack_push" if c.op == "push" else "_union_stack_pop"
            return c.pre + [f"{fn}(S, {elems}, {self.stack_next[un]}, {c.ex(1)})"]
        sn = self._stack_name(c.params[0], c.where)
        stk = self._stack_descs(sn, c.where)
        fn = "_stack_push" if c.op == "push" else "_stack_pop"
        return c.pre + [f"{fn}(S, {stk}, {self.stack_next[sn]}, {c.ex(1)})"]

    # -- control flow -------------------------------------------------------------
    def _p_drop(self, c: _Call) -> list[str]:
        std = self.std
        return [f"S[{std['egress_spec']}] = {DROP_PORT}", f"S[{std['mcast_grp']}] = 0"]

    def _p_exit(self, c: _Call) -> list[str]:
        if c.in_parser:
            raise ProgramError(f"{c.where}: exit in a parser")
        return ["return"]

    # -- counters, registers, meters ----------------------------------------------
    def _p_count(self, c: _Call) -> list[str]:
        c.need(2)
        ctr = self._counter(c.params[0], c.where)
        cb = self._name("CB", ctr.nbytes)
        cp = self._name("CP", ctr.npkts)
        idx = self._index32(c.ex(1))
        body = [f"{cp}[i] += 1", f"{cb}[i] += len(S[{PKT}])"]
        return c.pre + [f"i = {idx}"] + self._guard_index("i", idx, ctr.size, body)

    def _p_register_read(self, c: _Call) -> list[str]:
        c.need(3)
        r = self._register(c.params[1], c.where)
        cells = self._name("R", r.cells)
        idx = self._index32(c.ex(2))
        if self._index_fits(idx, r.size):
            return c.pre + c.store(0, self._known(f"{cells}[{idx}]", r.width))
        # an index past the end leaves the destination as it was, as simple_switch
        # does (it refuses the read)
        i = self._tmp()
        store = c.store(0, self._known(f"{cells}[{i}]", r.width))
        return c.pre + [f"{i} = {idx}", f"if 0 <= {i} < {r.size}:", *_indent(store)]

    def _p_register_write(self, c: _Call) -> list[str]:
        c.need(3)
        r = self._register(c.params[0], c.where)
        cells = self._name("R", r.cells)
        idx = self._index32(c.ex(1))
        v = c.ex(2)
        vw = self._width_of(v)
        val = v if vw is not None and vw <= r.width else f"({v}) & {(1 << r.width) - 1}"
        return c.pre + [f"i = {idx}"] + self._guard_index("i", idx, r.size,
                                                          [f"{cells}[i] = {val}"])

    def _p_execute_meter(self, c: _Call) -> list[str]:
        c.need(3)
        name = c.params[0].get("value")
        m = self.meters.get(name)
        if m is None:
            raise ProgramError(f"{c.where}: unknown meter_array {name!r}")
        mn = self._name("M", m.meters)
        amount = f"len(S[{PKT}])" if m.count_bytes else "1"
        idx = self._index32(c.ex(1))
        color = f"{mn}[{{}}].execute({amount}, _now_us())"
        if self._index_fits(idx, m.size):
            return c.pre + c.store(2, color.format(idx))
        # an index past the end updates no meter and leaves the destination as it
        # was, as simple_switch does
        i = self._tmp()
        store = c.store(2, color.format(i))
        return c.pre + [f"{i} = {idx}", f"if 0 <= {i} < {m.size}:", *_indent(store)]

    def _index32(self, idx: str) -> str:
        """An extern's index as simple_switch reads it (Data::get_uint(), an unsigned
        int): its low 32 bits, so 2^32 + 1 is index 1."""
        w = self._width_of(idx)
        return idx if w is not None and w <= 32 else f"(({idx}) & 0xFFFFFFFF)"

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
        return _named(self.counters, param, where, "counter_array")

    def _register(self, param, where) -> externs.RegisterArray:
        return _named(self.registers, param, where, "register_array")

    # -- hashing and random numbers -----------------------------------------------
    def _p_hash_offset(self, c: _Call) -> list[str]:
        c.need(4)
        calc = c.params[2].get("value")
        if calc not in self._calc_names:
            raise ProgramError(f"{c.where}: unknown calculation {calc!r}")
        h, sz = self._tmp(), self._tmp()
        # simple_switch reads base and max as uint64 (their low 64 bits) and adds in
        # 64 bits; max = 0 gives base (not base + the whole hash)
        return c.pre + [f"{sz} = ({c.ex(3)}) & {U64}",
                        f"{h} = {self._calc_names[calc]}(S) % {sz} if {sz} else 0",
                        *c.store(0, f"(({c.ex(1)}) & {U64}) + {h} & {U64}")]

    def _p_random(self, c: _Call) -> list[str]:
        c.need(3)
        return c.pre + c.store(0, f"_random.randint({c.ex(1)}, {c.ex(2)})")

    # -- packets the pipeline makes or ends ---------------------------------------
    def _p_clone(self, c: _Call) -> list[str]:
        if not c.params:
            raise ProgramError(f"{c.where}: {c.op} needs a session id")
        fl = c.ex(1) if len(c.params) > 1 else "0"
        return c.pre + [f"S[{CLONE}] = {c.ex(0)}", f"S[{CLONE_FL}] = {fl}",
                        f"S[{SPECIAL}] = 1"]

    def _p_resubmit(self, c: _Call) -> list[str]:
        fl = c.ex(0) if c.params else "0"
        return c.pre + [f"S[{RESUBMIT if c.op == 'resubmit' else RECIRC}] = {fl} + 1",
                        f"S[{SPECIAL}] = 1"]

    def _p_digest(self, c: _Call) -> list[str]:
        lid = c.ex(1) if len(c.params) > 1 else c.ex(0)
        return c.pre + [f"if S[{DIGESTS}] is None:", f"    S[{DIGESTS}] = []",
                        f"S[{DIGESTS}].append({lid})", f"S[{SPECIAL}] = 1"]

    def _p_truncate(self, c: _Call) -> list[str]:
        """The slot holds the length + 1 (0: no truncation); as bmv2's
        Packet::truncate, the smallest length of several calls wins."""
        c.need(1)
        n = f"({c.ex(0)}) + 1"
        return c.pre + [f"S[{TRUNC}] = min(S[{TRUNC}], {n}) if S[{TRUNC}] else {n}"]

    # -- debugging ----------------------------------------------------------------
    def _p_log_msg(self, c: _Call) -> list[str]:
        if not self.trace:
            return []
        fmt = c.params[0].get("value", "")
        vec = c.params[1].get("value", []) if len(c.params) > 1 else []
        vals = [self.expr(x, c.where, c.pre) for x in vec]
        return c.pre + [f"_log_msg({fmt!r}, [{', '.join(vals)}])"]

    def _p_assert(self, c: _Call) -> list[str]:
        c.need(1)
        return c.pre + [f"if not {c.ex(0)}:",
                        f"    raise _PipelineAbort({(c.where + ': ' + c.op + ' failed')!r})"]

    def _log_msg(self, fmt: str, values: list[int]) -> None:
        """log_msg at run time: the values into the format's `{}`, to the trace."""
        for v in values:
            fmt = fmt.replace("{}", str(v), 1)
        if self.trace:
            self.trace(fmt)


def _named(objects: dict, param: dict, where: str, kind: str):
    """The extern instance a primitive's operand names (a ProgramError if none)."""
    name = param.get("value")
    obj = objects.get(name)
    if obj is None:
        raise ProgramError(f"{where}: unknown {kind} {name!r}")
    return obj
