"""InlineActions (p4c's InlineActions + RemoveActionParameters, for directional parameters).

* A call of an action with `in`/`out`/`inout` parameters, from an apply block or from
  another action, is replaced by the action's body: copy-in temporaries `<param>_N` for
  the arguments (evaluated left to right before the body; constants for `in` parameters
  are substituted), the body with its `return`s removed, then copy-out of the `out` and
  `inout` temporaries to the arguments, in parameter order (P4_16 spec, 6.8 "Calling
  convention").
* A table action reference that binds the directional parameters (`actions = {
  setbyte(hdr.b); }`) gets its own copy of the action whose parameters are only the
  directionless ones (the control plane's action data), with the same copy-in/copy-out
  around the body. The copy keeps the action's name, so the P4Info does not change.

Guarantees to the next pass: no action that a table references or an apply block calls
has a directional parameter.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..errors import CompileError, Location, Unsupported
from ..typecheck_entities import (
    ActionEntity,
    ParamEntity,
    TableEntity,
    TypedActionRef,
    TypedBlock,
    TypedProgram,
)
from ..typecheck_stmts import StatementChecks
from ..typecheck_tree import (
    _children,
    _equiv,
    _inline_calls,
    _is_constant,
    _is_lvalue_path,
    _lvalue_root,
    _overlaps,
    _rewrite,
)
from .remove_returns import remove_returns
from .temps import Temps, into_sub_controls


def _directional(a: ActionEntity) -> int:
    return sum(1 for p in a.params if p.direction)


def _paths(x: Any, out: list[Any]) -> list[Any]:
    """The maximal variable/field paths that `x` reads or writes."""
    if isinstance(x, (ir.Member, ir.Index, ir.Name)) and isinstance(_lvalue_root(x), ir.Name):
        out.append(x)
        while isinstance(x, (ir.Member, ir.Index)):
            if isinstance(x, ir.Index):
                _paths(x.index, out)
            x = x.expr
        return out
    for c in _children(x):
        _paths(c, out)
    return out


def _may_overlap(x: Any, v: Any) -> bool:
    if not isinstance(_lvalue_root(x), ir.Name) or isinstance(_lvalue_root(x).ref, ParamEntity) \
            and _lvalue_root(x).ref.owner == "action":
        return False
    try:
        return _overlaps(x, v)
    except Exception:   # noqa: BLE001 - an expression key_name cannot name: assume aliasing
        return True


def _copy_out_before_exit(body: Any, copy_out: tuple[ir.Stmt, ...]) -> Any:
    """`body` (an inlined action's or sub-control's) with every `exit` in it, those of
    the sub-controls it applies included, preceded by `copy_out`: P4_16 12.5, the
    copy-out of the out/inout parameters of the enclosing action or control and of all
    its callers is still performed after an exit (p4c inserts it before the exit
    since #2351). Inner copy-outs, inserted first, stay before outer ones."""
    if not copy_out:
        return body

    def visit(x: Any) -> Any:
        if isinstance(x, ir.Exit):
            return ir.Block(tuple(copy_out) + (x,), x.loc)
        return into_sub_controls(x, lambda b: _rewrite(b, visit))
    return _rewrite(body, visit)


def _is_action_call(x: Any) -> bool:
    return isinstance(x, ir.CallStmt) and bool(x.call.target) \
        and x.call.target[0] == "action"


class _CallLifter(StatementChecks):
    """The type checker's inliner of function calls in expressions, with this pass's
    temporaries: an argument that a table's actions list binds to a directional parameter
    (`a2(bump(hdr.x))`) is evaluated when the action runs, at the start of its body (p4c's
    RemoveActionParameters), so the function calls in it are inlined there."""

    def __init__(self, temps: Temps):
        self.temps = temps

    def new_temp(self, base: str, t: ir.Type, loc: Location) -> ir.Name:
        return self.temps.new(base, t, loc)

    @staticmethod
    def temp_decl(name: ir.Name, init: ir.Expr | None, loc: Location) -> ir.Stmt:
        return Temps.decl(name, init, loc)


class InlineActions:
    name = "InlineActions"

    def __init__(self, temps: Temps):
        self.temps = temps
        self.inlined: set[int] = set()       # actions whose own bodies are already done

    def run(self, program: TypedProgram) -> None:
        for b in program.blocks.values():
            if b.kind != "control" or b.body is None:
                continue
            self.temps.block = b
            for a in b.actions:
                self.prepare(a)
            for t in b.tables:
                for r in t.actions:
                    self.prepare(r.action)
            b.body = self.inline_in(b.body)
            self.bind_tables(b)

    def prepare(self, a: ActionEntity) -> None:
        """Inline the directional calls inside `a`'s own body (once)."""
        if id(a) in self.inlined:
            return
        self.inlined.add(id(a))
        a.body = self.inline_in(a.body)

    def inline_in(self, body: ir.Block) -> Any:
        def visit(x: Any) -> Any:
            if _is_action_call(x) and _directional(x.call.target[1]):
                return self.expand(x.call.target[1], [a.value for a in x.call.args], x.loc)
            sub = into_sub_controls(x, self.inline_in)
            if sub is None or len(sub.target) < 4:
                return sub
            # its actions called from its apply block are inlined now: an exit in it
            # (or in them) copies the sub-control's out/inout temporaries back first
            kind, prefix, sbody, post = sub.target
            return dataclasses.replace(
                sub, target=(kind, prefix, _copy_out_before_exit(sbody, post), post))
        return _rewrite(body, visit)

    def copy_in_out(self, a: ActionEntity, params: tuple[ParamEntity, ...],
                    args: list[Any], loc: Location) -> list[ir.Stmt]:
        """The body of `a` with `params` bound to `args` through copy-in/copy-out."""
        self.prepare(a)
        pre: list[ir.Stmt] = []
        post: list[ir.Stmt] = []
        subst: dict[int, ir.Expr] = {}
        for p, v in zip(params, args, strict=True):
            direction = p.direction or "in"
            if _inline_calls(v):   # a table's bound argument `a(f(x))`: f runs here
                v = _CallLifter(self.temps).lift_expr(v, pre, False)
            if (direction == "in" and _is_constant(v)) or (
                    direction != "in" and self.unaliased(v, a, params, args)):
                subst[id(p)] = v
                continue
            tmp = self.temps.new(p.name, p.type, loc)
            subst[id(p)] = tmp
            pre.append(Temps.decl(tmp, v if direction != "out" else None, loc))
            if direction != "in" and v is not None:
                post.append(ir.Assign(v, tmp, loc))
        body = _rewrite(a.body, lambda x: subst.get(id(x.ref))
                        if isinstance(x, ir.Name) and isinstance(x.ref, ParamEntity) else None)
        body = _copy_out_before_exit(body, tuple(post))
        return pre + remove_returns(list(body.stmts), None, lambda: self.flag(loc)) + post

    def flag(self, loc: Location) -> tuple[ir.Name, ir.Stmt]:
        flag = self.temps.new("hasReturned", ir.Bool(), loc)
        return flag, Temps.decl(flag, ir.BoolLit(False, loc), loc)

    @staticmethod
    def unaliased(v: Any, a: ActionEntity, params: tuple[ParamEntity, ...],
                  args: list[Any]) -> bool:
        """An out/inout argument can stand for its parameter (no copy, as p4c's inliner
        does) when it is a plain lvalue that neither the body (other than through the
        parameter) nor another argument touches: then copy-in/copy-out is unobservable."""
        if not _is_lvalue_path(v):
            return False
        others = [w for p, w in zip(params, args, strict=True) if w is not v]
        return not any(_may_overlap(x, v) for x in others + _paths(a.body, []))

    def expand(self, a: ActionEntity, args: list[Any], loc: Location) -> ir.Block:
        return ir.Block(tuple(self.copy_in_out(a, a.params, args, loc)), loc)

    # ------------------------------------------------------------ table references

    def bind_tables(self, b: TypedBlock) -> None:
        self.bound: list[tuple[ActionEntity, tuple[Any, ...], ActionEntity]] = []
        for t in b.tables:
            self.bind_table(t)
        for orig, _, copy in self.bound:
            if orig in b.actions:
                b.actions.insert(b.actions.index(orig) + 1, copy)
        for orig, _, _ in self.bound:
            if orig in b.actions and not self.still_called(b, orig):
                b.actions.remove(orig)

    @staticmethod
    def still_called(b: TypedBlock, a: ActionEntity) -> bool:
        return any(r.action is a for t in b.tables for r in t.actions)

    def bind_table(self, t: TableEntity) -> None:
        t.actions = tuple(self.bind_ref(t, r) for r in t.actions)
        if t.default_action is not None:
            t.default_action = self.listed(t, self.bind_ref(t, t.default_action), t.loc)
        if t.entries is not None:
            t.entries = tuple(dataclasses.replace(
                e, action=self.listed(t, self.bind_ref(t, e.action), e.loc)) for e in t.entries)

    def listed(self, t: TableEntity, r: TypedActionRef, loc: Location) -> TypedActionRef:
        """A default action or entry binds directional parameters as the action list does."""
        copies = {id(c) for _, _, c in self.bound}
        if id(r.action) in copies and all(x.action is not r.action for x in t.actions):
            raise CompileError(loc, f"{t.name}: {r.action.name} must be given the same "
                               "directional arguments as in the table's actions list")
        return r

    def bind_ref(self, t: TableEntity, r: TypedActionRef) -> TypedActionRef:
        a = r.action
        n = _directional(a)
        if n == 0:
            return r
        if len(r.args) < n:
            raise Unsupported(t.loc, f"{t.name}: action {a.name} must be given its "
                              "directional arguments in the table's action list")
        bound, data = r.args[:n], r.args[n:]
        for orig, args, copy in self.bound:
            if orig is a and all(_equiv(x, y) for x, y in zip(args, bound, strict=True)):
                return TypedActionRef(copy, data, r.annotations)
        directional = a.params[:n]
        stmts = self.copy_in_out(a, directional, list(bound), a.loc)
        data_params = a.params[n:]
        copy = dataclasses.replace(a, params=data_params, body=ir.Block(tuple(stmts), a.loc))
        self.inlined.add(id(copy))
        self.bound.append((a, bound, copy))
        return TypedActionRef(copy, data, r.annotations)
