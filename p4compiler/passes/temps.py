"""Compiler-generated locals for the mid-end passes (`<base>_<n>`, unique program-wide),
the walk into inlined sub-control bodies every pass shares, and the rewrite of every
body of a program that the tree-rewriting passes share."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .. import ir
from ..errors import Location
from ..typecheck_entities import TypedBlock, TypedProgram, VarEntity
from ..typecheck_tree import _rewrite


class Temps:
    """Hands out fresh locals of one block, named as p4c names its temporaries."""

    def __init__(self, program: TypedProgram):
        self.used: set[str] = {v.unique for b in program.blocks.values() for v in b.variables}
        self.block: TypedBlock | None = None

    def new(self, base: str, t: ir.Type, loc: Location) -> ir.Name:
        assert self.block is not None, "temporaries belong to a block"
        if isinstance(t, ir.InfInt):
            t = ir.Bits(32)
        i = 0
        while f"{base}_{i}" in self.used:
            i += 1
        unique = f"{base}_{i}"
        self.used.add(unique)
        ent = VarEntity(base, t, unique)
        self.block.variables.append(ent)
        return ir.Name(unique, loc, t, ent)

    @staticmethod
    def decl(name: ir.Name, init: ir.Expr | None, loc: Location) -> ir.Stmt:
        assert isinstance(name.ref, VarEntity)
        return ir.VarDecl(ir.TypeRef("name", name=str(name.type)), name.ref.unique, init, (),
                          loc, name.type)


def into_sub_controls(x: Any, fn: Callable[[Any], Any]) -> Any:
    """For the call of an inlined sub-control (`c.apply(...)`, target `control_apply`),
    the same call with `fn` applied to its body and its copy-out statements (the type
    checker keeps them in the call's target, where tree rewrites do not look); else None."""
    if not (isinstance(x, ir.Call) and x.target and x.target[0] == "control_apply"):
        return None
    kind, prefix, body, *rest = x.target
    post = tuple(fn(s) for s in rest[0]) if rest else None
    target = (kind, prefix, fn(body)) + ((post,) if rest else ())
    return dataclasses.replace(x, target=target)


def rewrite_bodies(program: TypedProgram, fn: Callable[[Any], Any]) -> None:
    """Rewrite every body of the program in place with `fn` (typecheck's `_rewrite`
    rule: a replacement node, or None to look inside): apply blocks, parser states,
    actions and tables' actions, and the bodies of inlined sub-controls, into which
    `fn` is carried wherever it returns None for their call."""

    def walk(x: Any) -> Any:
        out = fn(x)
        if out is not None:
            return out
        return into_sub_controls(x, lambda body: _rewrite(body, walk))

    for b in program.blocks.values():
        if b.body is not None:
            b.body = _rewrite(b.body, walk)
        b.states = [_rewrite(s, walk) for s in b.states]
        for a in b.actions:
            a.body = _rewrite(a.body, walk)
        for t in b.tables:
            for r in t.actions:
                r.action.body = _rewrite(r.action.body, walk)
