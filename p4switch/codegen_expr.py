"""The switch's program generator, references and expressions: bmv2 type-value
objects and expression trees as Python expressions over the per-packet state S
(with bmv2's semantics: header equality, stack dereferences, lookahead), and
calculations (hashes, checksums)."""

from __future__ import annotations

import re

from p4switch import externs
from p4switch.program_common import (
    Header,
    ProgramError,
    _hex,
)


def _all_ones(mask: int, width: int) -> bool:
    """Whether `mask` has all of the low `width` bits set (`v & mask == v` for v < 2**width)."""
    low = (1 << width) - 1
    return mask & low == low


# bmv2 binary operators -> Python's
_BINARY = {"+": "+", "-": "-", "*": "*", "<<": "<<", ">>": ">>", "==": "==", "!=": "!=",
           ">": ">", ">=": ">=", "<": "<", "<=": "<=", "&": "&", "|": "|", "^": "^",
           "and": "and", "or": "or", "/": "//", "%": "%"}

class ExpressionCodegen:
    """Mixin of Program (p4switch/program.py)."""

    # -- references and expressions ------------------------------------------
    def _hdr(self, name, where: str) -> Header:
        hd = self.headers.get(name)
        if hd is None:
            raise ProgramError(f"{where}: unknown header {name!r}")
        return hd

    def _field(self, ref, where: str) -> tuple[int, int, bool, Header, str]:
        """(slot, width, signed, header, field name)."""
        slot = self._field_slot(ref, where)
        hd = self.headers[ref[0]]
        if ref[1] == "$valid$":
            return slot, 1, False, hd, ref[1]
        for fname, w, signed in hd.fields:
            if fname == ref[1]:
                return slot, (w if w != "*" else 0), signed, hd, fname
        raise ProgramError(f"{where}: header {ref[0]!r} has no field {ref[1]!r}")

    def _stack_descs(self, stack: str, where: str) -> str:
        """Name of a tuple of member descriptors (valid, raw, field slots, field widths)."""
        members = self.stacks.get(stack)
        if members is None:
            raise ProgramError(f"{where}: unknown header stack {stack!r}")
        # A Python name for the stack: JSON names may hold dots ("hdr_0.h2") or brackets.
        key = self._stack_keys.get(stack)
        if key is None:
            key = f"_STK{len(self._stack_keys)}_{re.sub(r'[^0-9A-Za-z_]', '_', stack)}"
            self._stack_keys[stack] = key
            self.ns[key] = tuple(self._desc(h) for h in members)
        return key

    def _desc(self, hd: Header) -> tuple:
        return (hd.valid, hd.raw, tuple(hd.slots[f] for f, _w, _s in hd.fields),
                tuple(w if w != "*" else 0 for _f, w, _s in hd.fields), hd.dirty)

    def _width_of(self, code: str) -> int | None:
        """Known bit width of a generated non-negative int expression, or None."""
        if code.isdigit():
            return int(code).bit_length()
        return self._wid.get(code)

    def _known(self, code: str, width: int | None) -> str:
        if width is not None:
            self._wid[code] = width
        return code

    def expr(self, node, where: str, pre: list[str]) -> str:
        """Python expression for a bmv2 type-value object (an rvalue)."""
        if not isinstance(node, dict):
            raise ProgramError(f"{where}: expected a type-value object, found {node!r}")
        t, v = node.get("type"), node.get("value")
        if t == "field":
            slot, w, signed, _hd, _f = self._field(v, where)
            return self._known(f"S[{slot}]", None if signed or not w else w)
        if t == "hexstr":
            try:
                return str(_hex(v))
            except ValueError:
                raise ProgramError(f"{where}: bad hexstr {v!r}") from None
        if t == "bool":
            return "True" if v else "False"
        if t in ("runtime_data", "local"):
            if not isinstance(v, int):
                raise ProgramError(f"{where}: bad {t} index {v!r}")
            if self._const_args is not None:
                if v >= len(self._const_args):
                    raise ProgramError(f"{where}: action data index {v} out of range")
                return str(self._const_args[v])
            w = self._ad_widths[v] if v < len(self._ad_widths) else None
            return self._known(f"ad[{v}]", w)
        if t == "header":
            return f"S[{self._hdr(v, where).valid}]"
        if t == "stack_field":
            stk = self._stack_descs(v[0], where)
            idx = [f for f, _w, _s in self.stacks[v[0]][0].fields].index(v[1])
            nx = f"S[{self.stack_next[v[0]]}]"
            if getattr(self, "_in_parser", False):
                # an empty stack has no last element: an IndexError, which the parse
                # function turns into error.StackOutOfBounds (not element -1)
                n = len(self.stacks[v[0]])
                return f"S[{stk}[{nx} - 1 if {nx} else {n}][2][{idx}]]"
            return f"S[{stk}[{nx} - 1][2][{idx}]]"
        if t == "lookahead":
            return self._lookahead(v)
        if t == "union_stack_field":
            return self._union_stack_field(v, where)[0]
        if t == "register":
            reg = self.registers.get(v[0])
            if reg is None:
                raise ProgramError(f"{where}: unknown register {v[0]!r}")
            cells = self._name("R", reg.cells)
            return self._known(f"{cells}[{self.expr(v[1], where, pre)}]", reg.width)
        if t == "expression":
            return self._op(v, where, pre)
        if t == "string":
            return repr(v)
        raise ProgramError(f"{where}: unsupported operand type {t!r}")

    def _op(self, e, where: str, pre: list[str]) -> str:
        if not isinstance(e, dict) or "op" not in e:
            # p4c wraps expressions twice: {"type":"expression","value":{"type":...}}
            if isinstance(e, dict) and "type" in e:
                return self.expr(e, where, pre)
            raise ProgramError(f"{where}: bad expression {e!r}")
        op = e["op"]
        left, right = e.get("left"), e.get("right")

        def r():
            return self.expr(right, where, pre)

        def l():  # noqa: E743
            return self.expr(left, where, pre)

        if op in ("==", "!=") and (self._is_header_node(left) or self._is_header_node(right)):
            code = self._header_eq(left, right, where, pre)
            return code if op == "==" else f"(not {code})"
        if op in _BINARY:
            return self._binary(op, l(), r())
        if op == "not":
            return f"(not {r()})"
        if op == "~":
            return f"(~{r()})"
        if op == "d2b":
            return f"({r()} != 0)"
        if op == "b2d":
            c = r()
            if c in ("True", "False"):
                return "1" if c == "True" else "0"
            return self._known(f"(1 if {c} else 0)", 1)
        if op == "valid":
            return f"(S[{self._header_valid(right, where, pre)}] == 1)"
        if op == "valid_union":
            members = self.unions.get(right.get("value"))
            if members is None:
                raise ProgramError(f"{where}: unknown header union {right.get('value')!r}")
            return "(" + " or ".join(f"S[{h.valid}] == 1" for h in members) + ")"
        if op == "two_comp_mod":
            return f"_sx({l()}, {r()})"  # bmv2's two_comp_mod is a sign extension
        if op == "sat_cast":
            return f"_sat({l()}, {r()})"
        if op == "usat_cast":
            return f"_usat({l()}, {r()})"
        if op == "?":
            lc, rc = l(), r()
            wl, wr = self._width_of(lc), self._width_of(rc)
            code = f"({lc} if {self.expr(e.get('cond'), where, pre)} else {rc})"
            return self._known(code, max(wl, wr) if wl is not None and wr is not None else None)
        if op == "last_stack_index":
            return f"(S[{self._next_slot(right, where)}] - 1)"
        if op == "size_stack":
            return f"S[{self._next_slot(right, where)}]"
        if op == "access_field":
            desc = self._dyn_header(left, where, pre)
            return f"S[{desc}[2][{right}]]"
        if op == "dereference_header_stack":
            desc = self._dyn_header({"type": "expression", "value": e}, where, pre)
            return f"S[{desc}[0]]"
        raise ProgramError(f"{where}: unsupported expression op {op!r}")

    def _binary(self, op: str, lc: str, rc: str) -> str:
        """A binary operator on two operands' code, literals folded, and the width of
        the result noted where the operands' widths are known."""
        wl, wr = self._width_of(lc), self._width_of(rc)
        if op == "&":
            if lc.isdigit() and rc.isdigit():
                return str(int(lc) & int(rc))
            # p4c wraps arithmetic in `& mask`; drop it where the mask keeps every bit
            # the value may have (its low bits all ones), not merely where the mask is
            # as large: `x & 0x100` with an 8-bit x is 0, not x.
            if rc.isdigit() and wl is not None and _all_ones(int(rc), wl):
                return lc
            if lc.isdigit() and wr is not None and _all_ones(int(lc), wr):
                return rc
            known = [w for w in (wl, wr) if w is not None]
            return self._known(f"({lc} & {rc})", min(known) if known else None)
        code = f"({lc} {_BINARY[op]} {rc})"
        if op in ("<<", ">>") and not rc.isdigit():
            code = self._shift(op, lc, rc, wr)
        if lc.isdigit() and rc.isdigit() and op in ("+", "*", "<<", ">>", "|", "^"):
            return str(eval(code))  # constant folding of two literals
        if wl is not None and wr is not None:
            if op == "+":
                return self._known(code, max(wl, wr) + 1)
            if op == "*":
                return self._known(code, wl + wr)
            if op in ("|", "^"):
                return self._known(code, max(wl, wr))
            if op == "<<" and rc.isdigit():
                return self._known(code, wl + int(rc))
            if op == ">>":
                return self._known(code, wl)
        return code

    @staticmethod
    def _shift(op: str, lc: str, rc: str, wr: int | None) -> str:
        """A shift by a run-time amount as bmv2 computes it: the amount read as a 32-bit
        unsigned int; a left shift by a wide amount through `_shl`, which does not
        build a number of that many bits. Amounts of 16 bits or fewer shift directly."""
        if wr is not None and wr <= 16:
            return f"({lc} {op} {rc})"
        if op == "<<":
            return f"_shl({lc}, {rc})"
        return f"({lc} >> ({rc} & 0xFFFFFFFF))"

    @staticmethod
    def _is_header_node(node) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "header":
            return True
        e = node.get("value")
        return node.get("type") == "expression" and isinstance(e, dict) and \
            e.get("op") == "dereference_header_stack"

    def _header_eq(self, left, right, where: str, pre: list[str]) -> str:
        """bmv2's `==` on two headers (Header::cmp): same header type, both valid and
        every field equal. (Two invalid headers are NOT equal here: P4's header
        equality is what the compiler builds from this and the valid bits.)"""
        if not (self._is_header_node(left) and self._is_header_node(right)):
            raise ProgramError(f"{where}: a header compared with something that is not one")
        types = [self._header_type(n, where) for n in (left, right)]
        if types[0] != types[1]:
            return "False"
        a = self._dyn_header(left, where, pre)
        b = self._dyn_header(right, where, pre)
        return f"_hdr_eq(S, {a}, {b})"

    def _header_type(self, node, where: str) -> str:
        if node.get("type") == "header":
            return self._hdr(node["value"], where).type_name
        stack = self._stack_name(node["value"]["left"], where)
        return self.stacks[stack][0].type_name if self.stacks[stack] else ""

    def _next_slot(self, node, where: str) -> int:
        """The slot of a header stack's (or header union stack's) next index."""
        if isinstance(node, dict) and node.get("type") == "header_union_stack":
            if node.get("value") not in self.union_stacks:
                raise ProgramError(f"{where}: unknown header union stack {node.get('value')!r}")
            return self.stack_next[node["value"]]
        return self.stack_next[self._stack_name(node, where)]

    def _stack_name(self, node, where: str) -> str:
        name = node.get("value") if isinstance(node, dict) else None
        if name not in self.stacks:
            raise ProgramError(f"{where}: unknown header stack {name!r}")
        return name

    def _dyn_header(self, node, where: str, pre: list[str]) -> str:
        """Code for a runtime header descriptor (valid, raw, slots, widths)."""
        if node.get("type") == "header":
            hd = self._hdr(node["value"], where)
            return self._name("HD", self._desc(hd))
        e = node.get("value")
        if node.get("type") == "expression" and isinstance(e, dict) and "op" not in e:
            return self._dyn_header(e, where, pre)
        if node.get("type") == "expression" and e.get("op") == "dereference_header_stack":
            stk = self._stack_descs(self._stack_name(e["left"], where), where)
            t = self._tmp()
            pre.append(f"{t} = {stk}[{self.expr(e['right'], where, pre)}]")
            return t
        raise ProgramError(f"{where}: expected a header, found {node!r}")

    def _union_stack_field(self, v, where: str) -> tuple[str, int]:
        """Code reading `union_stack_field` [stack, member, field] (the field of member
        `member` of the stack's last element), and the field's width."""
        if not (isinstance(v, list) and len(v) == 3 and v[0] in self.union_stacks):
            raise ProgramError(f"{where}: bad union_stack_field {v!r}")
        stack, member, field = v
        hds = [self._hdr(f"{u}.{member}", where) for u in self.union_stacks[stack]]
        widths = {f: w for f, w, _s in hds[0].fields}
        if field not in widths:
            raise ProgramError(f"{where}: no field {field!r} in {stack}.{member}")
        idx = list(widths).index(field)
        descs = self._name("USF", tuple(self._desc(h) for h in hds))
        return f"S[{descs}[S[{self.stack_next[stack]}] - 1][2][{idx}]]", widths[field]

    def _header_valid(self, node, where: str, pre: list[str]) -> str:
        if isinstance(node, dict) and node.get("type") == "header":
            return str(self._hdr(node["value"], where).valid)
        return f"{self._dyn_header(node, where, pre)}[0]"

    def _lookahead(self, v) -> str:
        bit_off, width = v
        first = bit_off // 8
        last = (bit_off + width + 7) // 8
        shift = last * 8 - bit_off - width
        return (f"(int.from_bytes(pkt[off+{first}:off+{last}].ljust({last - first}, b'\\0'), "
                f"'big') >> {shift} & {(1 << width) - 1})")

    def _store(self, ref_node, value: str, where: str, pre: list[str]) -> list[str]:
        """Statements storing `value` into an lvalue, truncated to its width."""
        t = ref_node.get("type")
        if t == "field":
            slot, w, signed, hd, f = self._field(ref_node["value"], where)
            if f == "$valid$":
                raise ProgramError(f"{where}: {hd.name}.$valid$ is read-only")
            vw = self._width_of(value)
            if signed:
                val = f"_sf({value}, {w})"
            elif vw is not None and vw <= w:
                val = value
            else:
                val = f"({value}) & {(1 << w) - 1}"
            if hd.var_field == f:
                val = f"({value})"
            if hd.metadata:
                return [f"S[{slot}] = {val}"]
            # A header field: the header is dirty (the deparser re-packs it) only
            # if the value changes; rewriting a field with its own value, which
            # forwarding programs often do, leaves the frame as it is.
            lines = []
            if hd.name not in self.full_headers and self._undecoded(hd):
                lines = [f"if not S[{hd.dirty}]:", f"    {self._materialize(hd)}(S)"]
            if hd.var_field == f:  # its width may change too (assign_VL)
                return lines + [f"S[{slot}] = {val}", f"S[{hd.dirty}] = 1"]
            tmp = self._tmp()
            return lines + [f"{tmp} = {val}", f"if S[{slot}] != {tmp}:",
                            f"    S[{slot}] = {tmp}", f"    S[{hd.dirty}] = 1"]
        if t == "expression":
            e = ref_node["value"]
            if isinstance(e, dict) and "op" not in e:
                return self._store(e, value, where, pre)
            if e.get("op") == "access_field":
                desc = self._dyn_header(e["left"], where, pre)
                i = e["right"]
                return [f"S[{desc}[2][{i}]] = ({value}) & ((1 << {desc}[3][{i}]) - 1)",
                        f"S[{desc}[1]] = -1"]
        if t == "stack_field":
            stk = self._stack_descs(ref_node["value"][0], where)
            members = self.stacks[ref_node["value"][0]]
            idx = [f for f, _w, _s in members[0].fields].index(ref_node["value"][1])
            d = self._tmp()
            return [f"{d} = {stk}[S[{self.stack_next[ref_node['value'][0]]}] - 1]",
                    f"S[{d}[2][{idx}]] = ({value}) & ((1 << {d}[3][{idx}]) - 1)",
                    f"S[{d}[1]] = -1"]
        raise ProgramError(f"{where}: cannot assign to {ref_node!r}")

    def _undecoded(self, hd: Header) -> bool:
        """True if the parser leaves some field of `hd` undecoded."""
        return any(w != "*" and (hd.name, f) not in self.read_fields for f, w, _s in hd.fields)

    def _materialize(self, hd: Header) -> str:
        """Name of a function decoding the fields of `hd` the parser skipped."""
        name = f"_mat_{hd.index}"
        if name not in self.ns:
            lines = [f"def {name}(S):", "    pkt = S[0]", f"    off = S[{hd.raw}]",
                     "    if off < 0:", "        return"]
            bit = 0
            for f, w, signed in hd.fields:
                if (hd.name, f) not in self.read_fields:
                    o = f"off+{bit // 8}" if bit // 8 else "off"
                    val = self._read_bits("pkt", o, bit % 8, w)
                    if signed:
                        val = f"_sx({val}, {w})"
                    lines.append(f"    S[{hd.slots[f]}] = {val}")
                bit += w
            self._extra_source.append("\n".join(lines))
            self.ns[name] = None  # defined when the generated source runs
        return name

    # -- calculations ----------------------------------------------------------
    def _gen_calculation(self, name: str, c: dict, where: str) -> list[str]:
        fn = f"_calc{len(self._calc_names)}"
        self._calc_names[name] = fn
        algo = self._name("ALG", externs.HASH_ALGORITHMS[c["algo"]])
        lines = [f"def {fn}(S):", "    parts = []"]
        payload = False
        for ii, inp in enumerate(c.get("input", [])):
            iw = f"{where}.input[{ii}]"
            t = inp.get("type")
            if t == "field":
                slot, w, _s, hd, f = self._field(inp["value"], iw)
                if hd.var_field == f:  # a varbit field: its current width
                    w = f"S[{hd.var_width}]"
                # bmv2 leaves out a field of an invalid header (a header input too)
                guard = "" if hd.metadata or hd.valid < 0 else f"if S[{hd.valid}]: "
                lines.append(f"    {guard}parts.append((S[{slot}], {w}))")
            elif t == "hexstr":
                lines.append(f"    parts.append(({_hex(inp['value'])}, {int(inp['bitwidth'])}))")
            elif t == "header":
                hd = self._hdr(inp["value"], iw)
                lines.append(f"    if S[{hd.valid}]:")
                for f, w, _s in hd.fields:
                    if hd.var_field == f:
                        w = f"S[{hd.var_width}]"
                    lines.append(f"        parts.append((S[{hd.slots[f]}], {w}))")
            elif t == "payload":
                payload = True
            else:
                raise ProgramError(f"{iw}: unsupported calculation input type {t!r}")
        lines.append("    data = _pack_bits(parts)")
        if payload:
            lines.append("    data += S[0][S[1]:]")
        lines.append(f"    return {algo}(data)")
        return lines
