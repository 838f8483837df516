"""Parser-local initialisers (`bit<16> port = incr(...);` among a parser's locals) become
assignments at the start of the parser, in declaration order, before sub-parsers are
inlined and before type checking, as p4c's MoveInitializers does: the spec initialises a
parser's locals each time the parser starts, so an inlined sub-parser gets them at each
of its applies, and a call in an initialiser is inlined like any other statement's.

Where a state transitions back to `start`, the initialisers go to a new start state that
moves on to the old one (renamed), so they run once, not at every loop.

Guarantees to the next pass: no parser-level variable has an initialiser.
"""

from __future__ import annotations

import dataclasses

from .. import ir


def move_parser_initializers(program: ir.Program) -> ir.Program:
    decls = tuple(_move(d) if isinstance(d, ir.ParserDecl) and not d.is_proto else d
                  for d in program.decls)
    return dataclasses.replace(program, decls=decls)


def _move(d: ir.ParserDecl) -> ir.ParserDecl:
    inits = [x for x in d.locals if isinstance(x, ir.VarDecl) and x.init is not None]
    start = next((s for s in d.states if s.name == "start"), None)
    if not inits or start is None:  # no start state: the type checker says so
        return d
    moved = tuple(ir.Assign(ir.Name(x.name, x.loc), x.init, x.loc) for x in inits)  # type: ignore[arg-type]
    local = tuple(dataclasses.replace(x, init=None) if isinstance(x, ir.VarDecl) else x
                  for x in d.locals)
    if not any(_targets(s.transition, "start") for s in d.states):
        states = tuple(dataclasses.replace(s, stmts=moved + s.stmts) if s is start else s
                       for s in d.states)
        return dataclasses.replace(d, locals=local, states=states)
    taken = {s.name for s in d.states}
    old = "start_0"
    while old in taken:
        old += "_"
    renamed = tuple(_rename(s, old) for s in d.states)
    entry = ir.ParserState("start", moved, ir.Transition(old, loc=start.loc), (), start.loc)
    return dataclasses.replace(d, locals=local, states=(entry,) + renamed)


def _targets(t: ir.Transition | None, name: str) -> bool:
    if t is None:
        return False
    return t.state == name or any(c.state == name for c in t.cases)


def _rename(s: ir.ParserState, old: str) -> ir.ParserState:
    """`s` with the state `start` called `old`, and its transitions to start going there."""
    def target(n: str) -> str:
        return old if n == "start" else n

    t = s.transition
    if t is not None:
        t = dataclasses.replace(t, state=target(t.state) if t.state else t.state,
                                cases=tuple(dataclasses.replace(c, state=target(c.state))
                                            for c in t.cases))
    return dataclasses.replace(s, name=target(s.name), transition=t)
