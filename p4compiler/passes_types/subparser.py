"""InlineSubParsers (on the syntax tree, before type checking): a parser instantiated
in another parser (`Sub() s;`) and applied in one of its states (`s.apply(pkt, a, b);`)
is inlined as p4c's frontend does.

* the applying state is split: its statements before the call, then a transition to
  the sub-parser's `start`; a continuation state `<state>_after_<inst>` holds the
  statements after the call and the original transition;
* the sub-parser's states become `<inst>_<state>`; `accept` in them goes to the
  continuation state, `reject` stays `reject`;
* its directional parameters are bound as p4c's GeneralInliner binds them. Where every
  apply of the instance passes the same arguments and a parameter's argument (a
  variable, field, constant-index element or literal) shares no storage with another
  parameter's, the argument itself replaces the parameter (no copy: what a sub-parser
  that rejects extracted stays in the argument). Otherwise the parameter becomes a
  caller local `<inst>_<param>` (one per instance): at the call `in`/`inout` ones are
  assigned their arguments, and the continuation state starts by copying
  `out`/`inout` ones back (copy-out, in parameter order), so a sub-parser that rejects
  copies nothing out. Either way the headers of an `out` one are made invalid at the
  call (p4c's DoResetHeaders: an `out` argument's headers the sub-parser does not write
  come back invalid). Directionless parameters (`packet_in`) are replaced by their
  arguments. Named arguments go by name, left-out
  ones take the parameters' defaults. Its locals become caller locals `<inst>_<name>`;
* variables the applying state declares before the call become parser locals
  `<state>_<name>`, as the inlined states use them (a state entered again keeps the
  value of its previous visit instead of starting uninitialised: unspecified anyway,
  except that a header declared there is not made invalid again).

Guarantees to the type checker: no parser applies another parser.  Applied more than
once, each call gets its own copy (`<inst>_<k>_...`).  Unsupported forms (constructor
parameters, a call nested in an expression or block, a non-lvalue argument) are clear
compile errors at the call or instantiation.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..errors import CompileError
from ..typecheck_exprs import with_defaults
from ..typecheck_tree import _equiv


def _map_names(node: Any, names: dict[str, Any], states: dict[str, str] | None) -> Any:
    """`node` with Names in `names` replaced (by an expression or a new name) and, when
    `states` is given, transition targets renamed."""
    if isinstance(node, tuple):
        return tuple(_map_names(x, names, states) for x in node)
    if isinstance(node, ir.Name) and node.name in names:
        new = names[node.name]
        return dataclasses.replace(node, name=new) if isinstance(new, str) else new
    if not (dataclasses.is_dataclass(node) and isinstance(node, ir.Node)):
        return node
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(node):
        if f.name in ("loc", "type", "annotations"):
            continue
        old = getattr(node, f.name)
        if states is not None and f.name == "state" and isinstance(
                node, (ir.Transition, ir.SelectCase)) and isinstance(old, str):
            new = states.get(old, old)
        else:
            new = _map_names(old, names, states)
        if new is not old:
            changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def _is_lvalue(e: Any) -> bool:
    if isinstance(e, ir.Name):
        return True
    if isinstance(e, ir.Member):
        return _is_lvalue(e.expr)
    if isinstance(e, ir.Index):
        return _is_lvalue(e.expr) and isinstance(e.index, ir.Lit)
    return False


def _apply_target(s: Any, subs: dict[str, ir.ParserDecl]) -> str | None:
    if not (isinstance(s, ir.CallStmt) and isinstance(s.call.callee, ir.Member)
            and s.call.callee.member == "apply"
            and isinstance(s.call.callee.expr, ir.Name)):
        return None
    name = s.call.callee.expr.name
    return name if name in subs else None


class _Inliner:
    def __init__(self, parsers: dict[str, ir.ParserDecl], types: dict[str, Any]) -> None:
        self.parsers = parsers
        self.types = types

    def parser(self, d: ir.ParserDecl, depth: int = 0) -> ir.ParserDecl:
        if depth > 16:
            raise CompileError(d.loc, f"{d.name}: sub-parsers nested too deeply (recursion?)")
        subs: dict[str, ir.ParserDecl] = {}
        targs: dict[str, tuple[ir.TypeRef, ...]] = {}
        new_locals: list[ir.Stmt] = []
        for loc_decl in d.locals:
            t = loc_decl.tref if isinstance(loc_decl, ir.Instantiation) else None
            if t is not None and t.kind == "name" and t.name in self.parsers:
                sub = self.parsers[t.name]
                if sub.ctor_params or loc_decl.args:
                    raise CompileError(loc_decl.loc, f"{loc_decl.name}: sub-parsers with "
                                       "constructor parameters are not supported")
                subs[loc_decl.name] = self.parser(sub, depth + 1)
                targs[loc_decl.name] = t.args
            else:
                new_locals.append(loc_decl)
        if not subs:
            return d
        taken = {s.name for s in d.states}
        taken_vars = {p.name for p in d.params} | {
            n for x in d.locals if isinstance(n := getattr(x, "name", None), str)}
        states: list[ir.ParserState] = []
        uses: dict[str, int] = {}
        temps: dict[str, dict[str, str]] = {}
        direct: dict[str, dict[str, ir.TypeRef]] = {}
        work = list(d.states)
        while work:
            st = work.pop(0)
            at = next((i for i, s in enumerate(st.stmts) if _apply_target(s, subs)), None)
            if at is None:
                self.check_no_nested_apply(st, subs)
                states.append(st)
                continue
            st, at, hoisted = _hoist_state_locals(st, at, taken_vars)
            new_locals.extend(hoisted)
            call = st.stmts[at]
            inst = _apply_target(call, subs)
            assert inst is not None
            k = uses.get(inst, 0)
            uses[inst] = k + 1
            prefix = f"{inst}_" if k == 0 else f"{inst}_{k}_"
            if inst not in temps:
                temps[inst], direct[inst] = {}, {}
                by_arg = _direct_params(subs[inst], _applies(d.states, inst))
                for p in subs[inst].params:
                    tref = _bind_type(p.tref, subs[inst].type_params, targs[inst])
                    if not p.direction or tref is None:
                        continue
                    if p.name in by_arg:
                        direct[inst][p.name] = tref
                        continue
                    nm = self.fresh(f"{inst}_{p.name}", taken_vars)
                    temps[inst][p.name] = nm
                    new_locals.append(ir.VarDecl(tref, nm, None, loc=p.loc))
            cont = self.fresh(f"{st.name}_after_{inst}", taken)
            sub_states, sub_locals, copy_in, copy_out = self.copy(
                subs[inst], call, prefix, cont, taken, temps[inst], direct[inst])
            states.append(dataclasses.replace(
                st, stmts=st.stmts[:at] + copy_in,
                transition=ir.Transition(prefix + "start", loc=call.loc)))
            states.extend(sub_states)
            new_locals.extend(sub_locals)
            work.insert(0, ir.ParserState(cont, copy_out + st.stmts[at + 1:],
                                          st.transition, loc=st.loc))
        return dataclasses.replace(d, locals=tuple(new_locals), states=tuple(states))

    @staticmethod
    def fresh(name: str, taken: set[str]) -> str:
        n, out = 0, name
        while out in taken:
            n += 1
            out = f"{name}_{n}"
        taken.add(out)
        return out

    @staticmethod
    def check_no_nested_apply(st: ir.ParserState, subs: dict[str, Any]) -> None:
        def walk(x: Any) -> None:
            if isinstance(x, ir.Call) and isinstance(x.callee, ir.Member) \
                    and x.callee.member == "apply" and isinstance(x.callee.expr, ir.Name) \
                    and x.callee.expr.name in subs:
                raise CompileError(x.loc, f"{x.callee.expr.name}.apply: a sub-parser can "
                                   "only be applied as a statement of a parser state")
            if isinstance(x, tuple):
                for y in x:
                    walk(y)
            elif dataclasses.is_dataclass(x) and isinstance(x, ir.Node):
                for f in dataclasses.fields(x):
                    walk(getattr(x, f.name))
        walk(st.stmts)

    def copy(self, sub: ir.ParserDecl, call: ir.CallStmt, prefix: str, cont: str,
             taken: set[str], temps: dict[str, str], direct: dict[str, ir.TypeRef]
             ) -> tuple[list[ir.ParserState], list[ir.Stmt], tuple[ir.Stmt, ...],
                        tuple[ir.Stmt, ...]]:
        args = _bind_args(sub, call)
        names: dict[str, Any] = {}
        copy_in: list[ir.Stmt] = []
        copy_out: list[ir.Stmt] = []
        for p, a in zip(sub.params, args, strict=True):
            discard = a.value is None and p.direction == "out"
            if not discard and (a.value is None or p.direction in ("out", "inout")
                                and not _is_lvalue(a.value)):
                raise CompileError(a.loc, f"{sub.name}.apply: argument for {p.name} must be "
                                   "a variable, field or header here")
            if p.name not in temps:
                # the argument itself: bound directly (p4c's GeneralInliner, no
                # aliasing), directionless (packet_in), or typed by a type parameter
                # the instantiation does not give
                names[p.name] = a.value
                if p.name in direct and p.direction == "out" and a.value is not None:
                    copy_in.extend(_resets(direct[p.name], a.value, self.types, a.loc))
                continue
            names[p.name] = temps[p.name]
            tmp = ir.Name(temps[p.name], loc=a.loc)
            if p.direction == "out":
                copy_in.extend(_resets(p.tref, tmp, self.types, a.loc))
            else:
                copy_in.append(ir.Assign(tmp, a.value, loc=a.loc))
            if p.direction != "in" and not discard:
                copy_out.append(ir.Assign(a.value, tmp, loc=a.loc))
        sub_locals = []
        for loc_decl in sub.locals:
            nm = getattr(loc_decl, "name", None)
            if isinstance(nm, str):
                names[nm] = prefix + nm
        for loc_decl in sub.locals:
            nm = getattr(loc_decl, "name", None)
            renamed = _map_names(loc_decl, names, None)
            if isinstance(nm, str):
                renamed = dataclasses.replace(renamed, name=prefix + nm)
            sub_locals.append(renamed)
        smap = {s.name: self.fresh(prefix + s.name, taken) for s in sub.states}
        smap["accept"] = cont
        out = [dataclasses.replace(_map_names(s, names, smap), name=smap[s.name])
               for s in sub.states]
        return out, sub_locals, tuple(copy_in), tuple(copy_out)


def _applies(states: tuple[ir.ParserState, ...], inst: str) -> list[ir.CallStmt]:
    """The statements of `states` that apply sub-parser instance `inst`."""
    return [s for st in states for s in st.stmts
            if isinstance(s, ir.CallStmt) and isinstance(s.call.callee, ir.Member)
            and s.call.callee.member == "apply" and isinstance(s.call.callee.expr, ir.Name)
            and s.call.callee.expr.name == inst]


def _storage(e: ir.Expr | None) -> tuple[Any, ...] | None:
    """The storage path an argument names (`hdr.vec[1].f` -> ('hdr', 'vec', 1, 'f')), or
    None where it is not one p4c's FindLocationSets can follow without a copy."""
    if isinstance(e, ir.Name):
        return (e.name,)
    if isinstance(e, ir.Member):
        base = _storage(e.expr)
        if base is None:
            return None
        # a stack's next/last can be any element: the whole stack
        return base if e.member in ("next", "last") else base + (e.member,)
    if isinstance(e, ir.Index):
        base = _storage(e.expr)
        return None if base is None or not isinstance(e.index, ir.Lit) \
            else base + (e.index.value,)
    return None


def _declared_names(x: Any, out: set[str]) -> set[str]:
    if isinstance(x, tuple):
        for y in x:
            _declared_names(y, out)
    elif dataclasses.is_dataclass(x) and isinstance(x, ir.Node):
        if isinstance(x, ir.VarDecl):
            out.add(x.name)
        for f in dataclasses.fields(x):
            if f.name not in ("loc", "type", "annotations"):
                _declared_names(getattr(x, f.name), out)
    return out


def _direct_params(sub: ir.ParserDecl, calls: list[ir.CallStmt]) -> set[str]:
    """The directional parameters of `sub` that p4c's GeneralInliner binds to their
    argument instead of a copy: every apply passes the same arguments, the argument is
    storage (or, for `in`, a literal), and it overlaps no other parameter's argument
    (p4c frontends/p4/inlining.cpp, inline_subst). A name the sub-parser itself
    declares in a state would capture the argument: those get a copy too."""
    if not calls or any(not _equiv(c.call, calls[0].call) for c in calls[1:]):
        return set()
    args = _bind_args(sub, calls[0])
    paths = {p.name: _storage(a.value) for p, a in zip(sub.params, args, strict=True)
             if p.direction}
    inner = _declared_names(sub.states, set())
    out: set[str] = set()
    for p, a in zip(sub.params, args, strict=True):
        if not p.direction or a.value is None:
            continue
        path = paths[p.name]
        if path is None:
            if p.direction == "in" and isinstance(a.value, ir.Lit):
                out.add(p.name)
            continue
        if path[0] in inner or any(
                q != p.name and o is not None and o[:len(path)] == path[:len(o)]
                for q, o in paths.items()):
            continue
        out.add(p.name)
    return out


def _bind_type(tref: ir.TypeRef, params: tuple[str, ...], args: tuple[ir.TypeRef, ...]
               ) -> ir.TypeRef | None:
    """`tref` with the sub-parser's type parameters replaced by the instantiation's type
    arguments; None when it names a type parameter left to inference."""
    if tref.kind == "name" and tref.name in params:
        i = params.index(tref.name)
        return args[i] if i < len(args) else None
    parts = {}
    if tref.elem is not None:
        elem = _bind_type(tref.elem, params, args)
        if elem is None:
            return None
        parts["elem"] = elem
    if tref.args:
        bound = [_bind_type(a, params, args) for a in tref.args]
        if any(b is None for b in bound):
            return None
        parts["args"] = tuple(b for b in bound if b is not None)
    return dataclasses.replace(tref, **parts) if parts else tref


def _resets(tref: ir.TypeRef, expr: ir.Expr, types: dict[str, Any], loc: Any,
            depth: int = 0) -> list[ir.Stmt]:
    """`expr.setInvalid();` for every header within a value of type `tref` (struct and
    header-union fields, stack elements), as p4c's DoResetHeaders::generateResets."""
    if depth > 32:
        return []
    if tref.kind == "stack" and tref.elem is not None and isinstance(tref.width, ir.Lit):
        return [r for i in range(tref.width.value)
                for r in _resets(tref.elem, ir.Index(expr, ir.Lit(i, loc=loc), loc=loc),
                                 types, loc, depth + 1)]
    d = types.get(tref.name) if tref.kind == "name" else None
    if isinstance(d, ir.TypedefDecl):
        return _resets(d.tref, expr, types, loc, depth + 1)
    if not isinstance(d, ir.StructDecl):
        return []
    if d.kind == "header":
        return [ir.CallStmt(ir.Call(ir.Member(expr, "setInvalid", loc=loc), (), loc=loc),
                            loc=loc)]
    return [r for f in d.fields
            for r in _resets(f.tref, ir.Member(expr, f.name, loc=loc), types, loc, depth + 1)]


def _bind_args(sub: ir.ParserDecl, call: ir.CallStmt) -> tuple[ir.Arg, ...]:
    """The call's arguments in parameter order, named ones placed by name and left-out
    parameters given their default values (P4_16 6.8.2, as for any other call)."""
    args = with_defaults(call.call.args, sub.params)
    if any(a.name for a in args):
        by_name = {a.name: a for a in args}
        if set(by_name) != {p.name for p in sub.params} or len(by_name) != len(args):
            raise CompileError(call.loc, f"{sub.name}.apply: the named arguments do not "
                               "match its parameters")
        args = tuple(by_name[p.name] for p in sub.params)
    if len(args) != len(sub.params):
        raise CompileError(call.loc, f"{sub.name}.apply: expects {len(sub.params)} "
                           f"arguments, got {len(args)}")
    return args


def _hoist_state_locals(st: ir.ParserState, at: int, taken: set[str]
                        ) -> tuple[ir.ParserState, int, list[ir.Stmt]]:
    """The variables `st` declares before its sub-parser call become parser locals (a
    fresh name `<state>_<name>`; an initialiser stays where it was, as an assignment),
    since the inlined sub-parser's states and the continuation state use them too."""
    renames: dict[str, str] = {}
    hoisted: list[ir.Stmt] = []
    stmts: list[ir.Stmt] = []
    for s in st.stmts[:at]:
        if not isinstance(s, ir.VarDecl):
            stmts.append(_map_names(s, renames, None))
            continue
        new = _Inliner.fresh(f"{st.name}_{s.name}", taken)
        init = _map_names(s.init, renames, None)
        renames[s.name] = new
        hoisted.append(dataclasses.replace(s, name=new, init=None))
        if init is not None:
            stmts.append(ir.Assign(ir.Name(new, loc=s.loc), init, loc=s.loc))
    if not renames:
        return st, at, []
    rest = _map_names(st.stmts[at:], renames, None)
    transition = _map_names(st.transition, renames, None)
    return dataclasses.replace(st, stmts=tuple(stmts) + rest,
                               transition=transition), len(stmts), hoisted


def inline_subparsers(program: ir.Program) -> ir.Program:
    parsers = {d.name: d for d in program.decls if isinstance(d, ir.ParserDecl)}
    if not any(isinstance(x, ir.Instantiation) and x.tref.kind == "name"
               and x.tref.name in parsers for d in parsers.values() for x in d.locals):
        return program
    types = {d.name: d for d in program.decls
             if isinstance(d, (ir.StructDecl, ir.TypedefDecl))}
    inl = _Inliner(parsers, types)
    decls = tuple(inl.parser(d) if isinstance(d, ir.ParserDecl) else d
                  for d in program.decls)
    return dataclasses.replace(program, decls=decls)
