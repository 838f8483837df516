"""The switch's program generator, parser: parse states as Python code (extract with
lazy field decoding, varbit limits, union membership, select transitions, parser
errors as bmv2 reports them)."""

from __future__ import annotations

from p4switch.program_common import (
    BYTE_ALIGNED_READERS,
    Header,
    ProgramError,
    _hex,
    _indent,
)


class ParserCodegen:
    """Mixin of Program (p4switch/program.py)."""

    # -- parser -------------------------------------------------------------------
    def _gen_parser(self) -> list[str]:
        parser = self._list("parsers")[0]
        where0 = "parsers[0]"
        states = {}
        for si, st in enumerate(parser.get("parse_states", [])):
            if "name" not in st:
                raise ProgramError(f"{where0}.parse_states[{si}]: missing name")
            states[st["name"]] = (si, st)
        init = parser.get("init_state")
        if init not in states:
            raise ProgramError(f"{where0}: init_state {init!r} is not a parse state")
        err = self.errors
        end = ["S[1] = off", "return"]

        def fail(code_name: str) -> list[str]:
            return [f"S[{self.std['parser_error']}] = {err.get(code_name, 0)}", *end]

        def succs(name):
            si, st = states[name]
            out = []
            for tr in st.get("transitions", []):
                nxt = tr.get("next_state")
                if nxt is not None and nxt not in states:
                    raise ProgramError(f"{where0}.parse_states[{si}] ({name}): unknown "
                                       f"next_state {nxt!r}")
                if nxt not in out:
                    out.append(nxt)
            return out

        def body(name, goto):
            si, st = states[name]
            where = f"{where0}.parse_states[{si}] ({name})"
            lines = []
            if self.trace:
                lines.append(f"_trace(\"Parser 'parser' entering state '{name}'\")")
            for oi, op in enumerate(st.get("parser_ops", [])):
                lines += self._parser_op(op, f"{where}.parser_ops[{oi}]", fail)
            lines += self._transition(st, where, goto, fail)
            return lines

        lines = ["def parse(S, pkt):", "    off = 0", "    plen = len(pkt)"]
        self._in_parser = True  # `.last` of an empty stack raises there (codegen_expr)
        try:
            graph = self._emit_graph(init, succs, body, end, "parser")
        finally:
            self._in_parser = False
        if self.stacks or self.union_stacks:
            # a stack element read past the end (`hs.next.f` in an expression once the
            # stack is full, `hs.last.f` while it is empty): error.StackOutOfBounds,
            # as P4_16 12.8.1 says (a try costs nothing until it raises)
            graph = ["try:", *_indent(graph), "except IndexError:",
                     *_indent(fail("StackOutOfBounds"))]
        lines += _indent(graph)
        verify = self._gen_checksums(verify=True)
        if verify:
            # Checksums are verified once the parser has stopped, with an error too,
            # as bmv2's Parser::parse does (a header the parser did not reach is
            # invalid, and a checksum field in it is not verified)
            lines = [ln.replace("def parse(", "def _parse_states(") for ln in lines[:1]] + lines[1:]
            lines += ["def parse(S, pkt):", "    _parse_states(S, pkt)"]
            lines += _indent(verify)
        return lines

    def _parser_op(self, op, where, fail) -> list[str]:
        kind = op.get("op")
        params = op.get("parameters", [])
        if kind in ("extract", "extract_VL"):
            if not params:
                raise ProgramError(f"{where}: extract needs a parameter")
            p = params[0]
            vl = None
            if kind == "extract_VL":
                pre = []
                vl = self.expr(params[1], where, pre)
                if pre:
                    raise ProgramError(f"{where}: unsupported extract_VL length expression")
            if p.get("type") == "regular":
                return self._extract(self._hdr(p.get("value"), where), vl, fail)
            if p.get("type") == "stack":
                name = p.get("value")
                if name not in self.stacks:
                    raise ProgramError(f"{where}: unknown header stack {name!r}")
                nx = self.stack_next[name]
                lines = []
                for i, hd in enumerate(self.stacks[name]):
                    lines.append(f"{'if' if i == 0 else 'elif'} S[{nx}] == {i}:")
                    lines += _indent(self._extract(hd, vl, fail))
                lines.append("else:")
                lines += _indent(fail("StackOutOfBounds"))
                lines.append(f"S[{nx}] += 1")
                return lines
            if p.get("type") == "union_stack":
                return self._extract_union_next(p.get("value"), vl, fail, where)
            raise ProgramError(f"{where}: unsupported extract target type {p.get('type')!r}")
        if kind == "set":
            if len(params) != 2:
                raise ProgramError(f"{where}: set takes 2 parameters")
            pre = []
            val = self.expr(params[1], where, pre)
            src = params[1] if isinstance(params[1], dict) else {}
            if src.get("type") == "lookahead":
                # bmv2 peeks for a set, and fails when the packet is too short (a
                # select key's lookahead reads zeros instead).
                bit_off, width = src["value"]
                pre += [f"if off + {(bit_off + width + 7) // 8} > plen:",
                        *_indent(fail("PacketTooShort"))]
                dst = params[0] if isinstance(params[0], dict) else {}
                if dst.get("type") == "field":
                    _slot, w, signed, _hd, _f = self._field(dst["value"], where)
                    if signed and w == width:
                        # bmv2 extracts the bytes into a field of the lookahead's
                        # width (sign and all); other widths are set as a number
                        val = f"_sx({val}, {w})"
            return pre + self._store(params[0], val, where, pre) + self._vl_width(params)
        if kind == "verify":
            if len(params) != 2:
                raise ProgramError(f"{where}: verify takes 2 parameters")
            pre = []
            cond = self.expr(params[0], where, pre)
            code = self.expr(params[1], where, pre)
            return pre + [f"if not {cond}:",
                          f"    S[{self.std['parser_error']}] = {code}", "    S[1] = off",
                          "    return"]
        if kind in ("advance", "shift"):
            pre = []
            n = self.expr(params[0], where, pre)
            t = self._tmp()
            if kind == "advance":
                # bmv2 advances whole bytes only: any other count is
                # error.ParserInvalidArgument, the cursor left where it was
                pre += [f"{t} = {n}", f"if {t} % 8:", *_indent(fail("ParserInvalidArgument")),
                        f"{t} //= 8"]
            else:
                pre += [f"{t} = {n}"]
            return pre + [f"if off + {t} > plen:", *_indent(fail("PacketTooShort")),
                          f"off += {t}"]
        if kind == "primitive":
            lines = []
            for pi, prim in enumerate(params):
                lines += self._primitive(prim, f"{where}.parameters[{pi}]", in_parser=True)
            return lines
        raise ProgramError(f"{where}: unknown parser op {kind!r}")

    def _vl_width(self, params: list) -> list[str]:
        """A `set` of one varbit field from another carries its current width too, as
        bmv2's parser does (p4c writes assign_VL; older JSON uses set)."""
        d, s = params
        if not (isinstance(d, dict) and isinstance(s, dict)
                and d.get("type") == "field" and s.get("type") == "field"):
            return []
        dh, sh = self.headers.get(d["value"][0]), self.headers.get(s["value"][0])
        if dh is None or sh is None or dh.var_field != d["value"][1] \
                or sh.var_field != s["value"][1]:
            return []
        return [f"S[{dh.var_width}] = S[{sh.var_width}]"]

    def _extract_union_next(self, v, vl, fail, where) -> list[str]:
        """`u.next.m` of a stack of unions: member m of the next element (bmv2's
        "union_stack" extract, [stack, member])."""
        if not (isinstance(v, list) and len(v) == 2 and v[0] in self.union_stacks):
            raise ProgramError(f"{where}: unknown header union stack {v!r}")
        name, member = v
        nx = self.stack_next[name]
        lines = []
        for i, uname in enumerate(self.union_stacks[name]):
            lines.append(f"{'if' if i == 0 else 'elif'} S[{nx}] == {i}:")
            lines += _indent(self._extract(self._hdr(f"{uname}.{member}", where), vl, fail))
        lines.append("else:")
        lines += _indent(fail("StackOutOfBounds"))
        lines.append(f"S[{nx}] += 1")
        return lines

    def _invalidate_siblings(self, hd: Header) -> list[str]:
        """A header union member just became valid: the other members become invalid."""
        return [f"S[{x.valid}] = 0" for x in self.union_siblings.get(hd.name, ())]

    def _extract(self, hd: Header, vl: str | None, fail) -> list[str]:
        if hd.metadata:
            raise ProgramError(f"cannot extract metadata instance {hd.name!r}")
        n = hd.fixed_bytes
        lines = []
        if hd.var_field is not None:
            if vl is None:
                raise ProgramError(f"header {hd.name!r} has a varbit field: needs extract_VL")
            # bmv2's order: a length that is not whole bytes, then too long for the
            # header type, then past the packet's end.
            lines += [f"vlw = {vl}", "if vlw % 8:", *_indent(fail("ParserInvalidArgument"))]
            if hd.max_bytes is not None:  # bmv2: longer than the header type's max_length
                lines += [f"if {n} + vlw // 8 > {hd.max_bytes}:",
                          *_indent(fail("HeaderTooShort"))]
            lines += [f"if off + {n} + vlw // 8 > plen:", *_indent(fail("PacketTooShort"))]
        else:
            lines += [f"if off + {n} > plen:", *_indent(fail("PacketTooShort"))]
        lines += [f"S[{hd.valid}] = 1", f"S[{hd.raw}] = off", f"S[{hd.dirty}] = 0"]
        lines += self._invalidate_siblings(hd)
        if self.trace:
            lines.append(f"_trace(\"Extracting header '{hd.name}'\")")
        full = hd.name in self.full_headers
        bit = 0
        var_seen = False
        for f, w, signed in hd.fields:
            if w == "*":
                lines += [f"S[{hd.var_width}] = vlw",
                          f"S[{hd.slots[f]}] = int.from_bytes(pkt[off+{bit // 8}:"
                          f"off+{bit // 8}+vlw//8], 'big')"]
                var_seen = True
                continue
            if full or (hd.name, f) in self.read_fields:
                if var_seen:
                    # Fields after a varbit field: offsets depend on vlw.
                    o = f"off+vlw//8+{bit // 8}"
                else:
                    o = f"off+{bit // 8}" if bit // 8 else "off"
                val = self._read_bits("pkt", o, bit % 8, w)
                if signed:
                    val = f"_sx({val}, {w})"
                lines.append(f"S[{hd.slots[f]}] = {val}")
            bit += w
        lines.append(f"off += {n}" + (" + vlw // 8" if hd.var_field else ""))
        return lines

    @staticmethod
    def _read_bits(p: str, o: str, bit_in_byte: int, w: int) -> str:
        if bit_in_byte == 0 and w in BYTE_ALIGNED_READERS:
            return BYTE_ALIGNED_READERS[w].format(p=p, o=o)
        nbytes = (bit_in_byte + w + 7) // 8
        shift = nbytes * 8 - bit_in_byte - w
        mask = (1 << w) - 1
        if nbytes == 1:
            base = f"{p}[{o}]"
        else:
            base = f"int.from_bytes({p}[{o}:{o}+{nbytes}], 'big')"
        if shift:
            base = f"({base} >> {shift})"
        if bit_in_byte:
            base = f"({base} & {mask})"
        return base

    def _transition(self, st, where, goto, fail) -> list[str]:
        trans = st.get("transitions", [])
        keys = st.get("transition_key", [])
        if not keys:
            # Only a default transition can apply.
            for tr in trans:
                if tr.get("type") == "default" or tr.get("value") is None:
                    return goto(tr.get("next_state"))
            return fail("NoMatch")
        pre: list[str] = []
        parts = []
        widths: list[int] = []
        raw_widths: list[int] = []
        for ki, k in enumerate(keys):
            kw = f"{where}.transition_key[{ki}]"
            signed = False
            if k.get("type") == "lookahead":
                w = k["value"][1]
            elif k.get("type") == "field":
                _slot, w, signed, _hd, _f = self._field(k["value"], kw)
            elif k.get("type") == "stack_field":
                members = self.stacks[k["value"][0]]
                w, signed = {f: (w, sg) for f, w, sg in members[0].fields}[k["value"][1]]
            elif k.get("type") == "union_stack_field":
                w = self._union_stack_field(k.get("value"), kw)[1]
            else:
                raise ProgramError(f"{kw}: unsupported transition key type {k.get('type')!r}")
            part = self.expr(k, kw, pre)
            # bmv2 matches a key's bytes: an int<W> -1 is 0xff..., never a negative number
            parts.append(f"({part} & {(1 << w) - 1})" if signed else part)
            raw_widths.append(w)
            widths.append((w + 7) // 8 * 8)
        key = parts[0]
        for p, w in zip(parts[1:], widths[1:]):
            key = f"({key} << {w} | {p})"
        lines = pre + [f"k = {key}"]
        first = True
        for ti, tr in enumerate(trans):
            t = tr.get("type")
            if t == "default" or (t is None and tr.get("value") is None):
                cond = None
            elif t == "hexstr":
                v = _hex(tr["value"])
                m = tr.get("mask")
                cond = f"(k & {_hex(m)}) == {v & _hex(m)}" if m is not None else f"k == {v}"
            elif t == "parse_vset":
                vs = self.parse_vsets.get(tr.get("value"))
                if vs is None:
                    raise ProgramError(f"{where}.transitions[{ti}]: unknown parse_vset "
                                       f"{tr.get('value')!r}")
                self.vset_key_widths.setdefault(tr["value"], raw_widths)
                vsn = self._name("VS", vs)
                m = tr.get("mask")
                # bmv2 ANDs the mask with the key and with each value of the set
                cond = (f"any((k & {_hex(m)}) == (v & {_hex(m)}) for v in {vsn})"
                        if m is not None else f"k in {vsn}")
            else:
                raise ProgramError(f"{where}.transitions[{ti}]: unknown transition type {t!r}")
            if cond is None:
                if first:
                    return lines + goto(tr.get("next_state"))
                lines.append("else:")
                lines += _indent(goto(tr.get("next_state")))
                return lines
            lines.append(f"{'if' if first else 'elif'} {cond}:")
            lines += _indent(goto(tr.get("next_state")))
            first = False
        if first:
            return lines + fail("NoMatch")
        lines.append("else:")
        lines += _indent(fail("NoMatch"))
        return lines
