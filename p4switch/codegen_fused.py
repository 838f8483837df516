"""The switch's program generator, the fused per-packet function: parse, ingress,
egress and deparse inlined into one function on local variables where possible."""

from __future__ import annotations

import marshal
import types
from collections.abc import Callable
from dataclasses import dataclass

from p4switch.codegen_assigned import slots_to_load
from p4switch.codegen_fold import fold
from p4switch.program_common import (
    _MAT_RE,
    _S_RE,
    _SLOT_RE,
    DROP_PORT,
    PKT,
    SPECIAL,
    ProgramError,
    _indent,
)


@dataclass(frozen=True)
class SpecialisedBuild:
    """A fused function with configuration tables baked in, as build_specialised()
    makes it: source, marshalled code objects and the constants its globals need."""
    source: str
    code: bytes
    helpers_code: bytes | None
    tpl: tuple
    handback_template: tuple
    tables: tuple[str, ...]
    names: dict  # the new globals the code refers to (constants)


class FusedCodegen:
    """Mixin of Program (p4switch/program.py)."""

    # -- configuration tables baked in ----------------------------------------------------
    def configuration_tables(self) -> list[str]:
        """Keyless tables whose default action the control plane sets (not const, no
        action profile): the tables specialise() can bake into the fused function."""
        return [name for name, t in self.tables.items()
                if not t.keys and not t.default_const and t.profile is None]

    def bakeable(self, names) -> dict:
        """The current default entries of the configuration tables among `names` that
        have an action to bake (name -> Entry)."""
        config = set(self.configuration_tables())
        return {n: self.tables[n].default for n in names
                if n in config and self.tables[n].default.action in self.actions}

    def build_specialised(self, baked: dict) -> SpecialisedBuild | None:
        """Generate and compile a fused function with the default entries `baked`
        (name -> Entry, from bakeable()) as constants: their action inline, its data
        folded into what reads it. The result holds only bytes and plain data, so a
        child process can build it (p4switch/specialisation.py) and the switch load it
        with load_specialised(). None if the program has no fused function or there
        is nothing to bake. The running code is not touched (the globals
        it names are added to the program's namespace, and travel in the result)."""
        if self.fused_generic is None or not baked:
            return None
        names_before = set(self.ns)
        self._baked = baked
        helpers_at = len(self._extra_source)
        try:
            lines: list[str] = []
            for pname in ("ingress", "egress"):
                pi, p = self.pipelines[pname]
                lines += self._gen_pipeline(pname, p, f"pipelines[{pi}]")
            fused = self._gen_fused("\n".join(lines))
        finally:
            self._baked = {}
            helpers = self._extra_source[helpers_at:]
            del self._extra_source[helpers_at:]
        if fused is None:
            return None
        src, extra = fused
        try:
            code = compile(src, "<p4switch fused>", "exec")
        except SyntaxError as e:  # a bug in the generator, not in the JSON
            raise ProgramError(f"internal code generation error (fused): {e}") from e
        helpers_code = compile("\n".join(helpers), "<p4switch helpers>", "exec") \
            if helpers else None
        # Globals the generation named (the switch's own objects already have names:
        # Program._name): constants, which travel by value.
        new = {k: self.ns[k] for k in self.ns.keys() - names_before}
        for k, v in new.items():
            if not _plain(v):
                raise ProgramError(f"internal code generation error (specialised): {k} "
                                   f"is a {type(v).__name__} the switch does not have")
        return SpecialisedBuild(
            src, marshal.dumps(code),
            None if helpers_code is None else marshal.dumps(helpers_code),
            extra["_TPL"], extra["_handback_template"], tuple(sorted(baked)), new)

    def load_specialised(self, built: SpecialisedBuild) -> Callable:
        """The function of a build_specialised() result, with its own globals (the
        generic function's stay as they are). Quick: nothing is compiled here."""
        namespace = dict(self.ns)
        namespace.update(built.names)
        if built.helpers_code is not None:
            exec(marshal.loads(built.helpers_code), namespace)
        namespace.update(_ONCE=(None,), _TPL=built.tpl,
                         _handback=_handback_from(built.handback_template))
        exec(marshal.loads(built.code), namespace)
        return namespace["fused"]

    def specialise(self, names) -> tuple[Callable, str, dict] | None:
        """In this process and thread: a fused function with the current default
        entries of the configuration tables `names` baked in (see
        build_specialised), its source, and the entries it baked (name -> Entry); not
        installed. A table with no action to run is left as a read. None if the
        program has no fused function."""
        if self.fused_generic is None:
            return None
        with self._codegen_lock:
            baked = self.bakeable(names)
            if not baked:
                return self.fused_generic, self.fused_source, {}
            built = self.build_specialised(baked)
        if built is None:
            return None
        return self.load_specialised(built), built.source, baked

    def _compile_fused(self, src: str, namespace: dict) -> Callable:
        try:
            exec(compile(src, "<p4switch fused>", "exec"), namespace)
        except SyntaxError as e:  # a bug in the generator, not in the JSON
            raise ProgramError(f"internal code generation error (fused): {e}") from e
        return namespace["fused"]

    # -- the fused per-packet function --------------------------------------------------
    def _function_body(self, name: str, source: str | None = None) -> list[str] | None:
        """The body lines (one indentation level removed) of a generated function
        (in `source`, default the program's)."""
        lines = (source or self.source).split("\n")
        head = f"def {name}("
        for i, ln in enumerate(lines):
            if ln.startswith(head):
                body = []
                for b in lines[i + 1:]:
                    if b and not b.startswith(" "):
                        break
                    body.append(b[4:])
                return body
        return None

    def _mat_inline(self, index: int) -> list[str] | None:
        """The body of `_mat_<index>` on the fused function's locals."""
        hd = next((h for h in self.headers.values() if h.index == index), None)
        if hd is None or hd.var_field is not None:
            return None
        # `_mo`, not `off`: inlined into a parser state, `off` is the parser's cursor.
        lines = [f"if S_{hd.raw} >= 0:", f"    _mo = S_{hd.raw}"]
        bit = 0
        for f, w, signed in hd.fields:
            if (hd.name, f) not in self.read_fields:
                o = f"_mo+{bit // 8}" if bit // 8 else "_mo"
                val = self._read_bits(f"S_{PKT}", o, bit % 8, w)
                if signed:
                    val = f"_sx({val}, {w})"
                lines.append(f"    S_{hd.slots[f]} = {val}")
            bit += w
        return lines

    def _localize(self, body: list[str], result: str | None, nslots: int) -> list[str] | None:
        """A function body rewritten for the fused function, or None if it cannot be.

        `S[k]` becomes the local `S_k`; `return` leaves the enclosing
        `for _ in _ONCE:` (`return X` first stores X in `result`); a statement that
        uses the state list another way (a helper such as `_mat_3(S)` or
        `_deparse_slow(S)`, a computed index) gets the list rebuilt from the locals
        before it and the locals reloaded after it."""
        allv = ", ".join(f"S_{k}" for k in range(nslots))
        loops: list[int] = []  # indentation of enclosing for/while headers
        out = []
        for ln in body:
            st = ln.lstrip()
            if not st:
                continue
            ind = ln[:len(ln) - len(st)]
            while loops and len(ind) <= loops[-1]:
                loops.pop()
            if st.startswith(("for ", "while ")):
                loops.append(len(ind))
            m = _MAT_RE.match(st)
            if m is not None:
                inline = self._mat_inline(int(m.group(1)))
                if inline is not None:
                    out += [ind + x for x in inline]
                    continue
            uses_list = _S_RE.search(_SLOT_RE.sub("", st)) is not None
            if uses_list:  # on the rebuilt list `_S`, slots included
                if st.endswith(":") and not st.startswith("if "):
                    return None  # no place for the rebuild before an elif/else/loop
                out.append(f"{ind}_S = @STATE@")
                st = _S_RE.sub("_S", st)
            else:
                st = _SLOT_RE.sub(r"S_\1", st)
            if st == "return" or st.startswith("return "):
                if loops:
                    return None  # `break` would leave the wrong loop
                if st != "return":
                    if result is None:
                        return None
                    out.append(f"{ind}{result} = {st[7:]}")
                out.append(f"{ind}break")
                continue
            out.append(ind + st)
            if uses_list and not st.endswith(":"):
                out.append(f"{ind}{allv} = _S")
                self._fused_reloads = True
        return out

    def _gen_fused(self, pipelines: str | None = None) -> tuple[str, dict] | None:
        """One function for the switch's fast path: a new packet through parser,
        ingress, an idle unlimited egress port, egress and deparser, with the
        per-packet state in local variables instead of a list.

            fused(pkt, port, now_us, tm_ports) ->
                None                  dropped at the end of ingress, or sent (through
                                      the port queue's `send`, the socket's send)
                (PortQueue, frame)    the frame to transmit on that port, which has
                                      no `send` (pcap, a lossy cable, process())
                (1, S)                ingress done, something special to do (clone,
                                      digest, resubmit, multicast): the caller goes on
                (2, S)                ingress done, the packet must be queued
                (3, S)                egress done, something special (or a drop)

        Same semantics as the separate functions (its pieces are their bodies,
        rewritten by _localize); None when the program uses what that cannot
        rewrite (parser loops, `exit` inside a loop, ...). Returns the source and
        the globals it needs beside the program's namespace. `pipelines`: the
        source to take `ingress` and `egress` from instead of the program's (one
        with configuration tables baked in, see _specialised_fused)."""
        n = self.nslots
        self._fused_reloads = False
        parse = self._fused_parse()
        ib = self._localize(self._function_body("ingress", pipelines) or [], None, n)
        eb = self._localize(self._function_body("egress", pipelines) or [], None, n)
        db = self._localize(self._function_body("deparse") or [], "out", n)
        if parse is None or ib is None or eb is None or db is None:
            return None
        # A helper that writes into a rebuilt list needs every slot as a local;
        # otherwise the hand-backs read the locals through locals(), and the
        # prologue loads only the slots the function reads (see _slots_read).
        state = f"[{', '.join(f'S_{k}' for k in range(n))}]" if self._fused_reloads \
            else "_handback(locals())"
        return self._fused_source(self._fused_lines(parse, ib, eb, db), state)

    def _fused_parse(self) -> list[str] | None:
        """The parser's part of the fused function (None: it cannot be rewritten); a
        parser loop (header stacks) runs the parser function on the list instead."""
        n = self.nslots
        sb = self._function_body("_parse_states")
        if sb is not None:
            wrapper = self._function_body("parse")
            parse = self._localize(sb, None, n)
            verify = self._localize(wrapper[1:], None, n) if wrapper else None
            if parse is None or verify is None:
                return None
            return ["for _ in _ONCE:"] + _indent(parse) + verify
        pb = self._localize(self._function_body("parse") or [], None, n)
        if pb is None:
            allv = ", ".join(f"S_{k}" for k in range(n))
            self._fused_reloads = True
            return ["_S = @STATE@", "parse(_S, pkt)", f"{allv} = _S"]
        return ["for _ in _ONCE:"] + _indent(pb or ["pass"])

    def _fused_lines(self, parse: list[str], ib: list[str], eb: list[str],
                     db: list[str]) -> list[str]:
        """The fused function: parser, ingress, the idle port's traffic manager, egress,
        deparser and the send, with `@STATE@` where the state is handed back."""
        std = self.std

        def v(name):
            return f"S_{std[name]}"
        lines = ["def fused(pkt, port, now_us, tm_ports):",
                 f"    S_{PKT} = pkt", f"    {v('ingress_port')} = port",
                 f"    {v('packet_length')} = S_{self.len_reg} = _ilen = len(pkt)",
                 f"    {v('ingress_global_timestamp')} = now_us"]
        lines += _indent(parse)
        lines += _indent(["for _ in _ONCE:"] + _indent(ib or ["pass"]))
        lines += [f"    if S_{SPECIAL} or {v('mcast_grp')}:", "        return 1, @STATE@",
                  f"    spec = {v('egress_spec')}", f"    if spec == {DROP_PORT}:",
                  "        return None", f"    {v('instance_type')} = 0",
                  "    pq = tm_ports.get(spec)",
                  f"    if pq is None or not pq.fast or pq.scheduled or {v('priority')}:",
                  "        return 2, @STATE@",  # (a priority: the TM checks it)
                  f"    {v('enq_timestamp')} = {v('egress_global_timestamp')} = now_us",
                  f"    {v('enq_qdepth')} = {v('deq_qdepth')} = {v('deq_timedelta')} = 0",
                  f"    {v('egress_port')} = spec",
                  f"    {v('egress_spec')} = {DROP_PORT + 1}",
                  f"    {v('packet_length')} = S_{self.len_reg}"]
        lines += _indent(["for _ in _ONCE:"] + _indent(eb or ["pass"]))
        lines += [f"    if S_{SPECIAL} or {v('egress_spec')} == {DROP_PORT}:",
                  "        return 3, @STATE@", "    out = None"]
        lines += _indent(["for _ in _ONCE:"] + _indent(db or ["pass"]))
        # The frame goes out here: no tuple back to the caller and no test there.
        return lines + ["    send = pq.send", "    if send is None:", "        return pq, out",
                        "    try:", "        send(out)", "    except OSError:",
                        "        pq.drops.tx_error += 1"]

    def _fused_source(self, lines: list[str], state: str) -> tuple[str, dict]:
        """The fused function's source, constants folded and the slots it reads loaded
        from the template in its prologue, with the globals it needs."""
        n = self.nslots
        src = "\n".join(ln.replace("@STATE@", state) for ln in lines) + "\n"
        # counters and byte meters count the ingress length, len(S[PKT]) in the general
        # code: the frame is `pkt` throughout this function, measured once
        head, body = src.split("\n", 1)
        src = head + "\n" + body.replace(f"len(S_{PKT})", "_ilen")
        src, dropped = fold(src, self.template)
        template = list(self.template)
        for k, value in dropped.items():  # assigned before every hand-back: from here
            template[k] = value
        used = set(range(n))
        if not self._fused_reloads:
            used = slots_to_load(src, {k for k in range(n) if not self.template[k]})
        order = sorted(used)
        # The slots are loaded as default arguments: the call fills them in C, which
        # costs less than unpacking a tuple in the body (fabric.p4: 86 slots, about
        # 0.08 us of 3.0 us a frame). Nobody passes more than the four arguments.
        head, body = src.split("\n", 1)
        assert head.endswith("):"), head
        defaults = "".join(f", S_{k}=_TPL[{i}]" for i, k in enumerate(order))
        return f"{head[:-2]}{defaults}):\n{body}", {
            "_ONCE": (None,), "_TPL": tuple(self.template[k] for k in order),
            "_handback": _handback_from(tuple(template)),
            "_handback_template": tuple(template)}


def _plain(v) -> bool:
    """A constant that means the same by value in another process: no object whose
    identity the generated code relies on (a table, a register's cells)."""
    if v is None or isinstance(v, bool | int | float | str | bytes):
        return True
    if isinstance(v, tuple | frozenset):
        return all(_plain(x) for x in v)
    return isinstance(v, types.FunctionType | types.BuiltinFunctionType) and \
        "<" not in v.__qualname__  # a module-level function: pickled by reference


def _handback_from(template: tuple) -> Callable[[dict], list]:
    """The fused function's hand-back of its state: the list of every slot, from
    its locals where assigned (locals() leaves out the unassigned ones) and the
    template elsewhere. Off the fast path only."""
    slot_of = {f"S_{k}": k for k in range(len(template))}

    def handback(local_vars: dict) -> list:
        S = list(template)
        for name, value in local_vars.items():
            k = slot_of.get(name)
            if k is not None:
                S[k] = value
        return S
    return handback
