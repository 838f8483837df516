"""IR-to-IR passes over the type system and parsers, run between the type checker and
the bmv2 backend, in the order of `PASSES` (docs/compiler.md lists what each guarantees)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dontcare import dont_care_extracts
from .literals import fold_literal_members
from .lookahead import hoist_lookaheads
from .parser_locals import move_parser_initializers
from .subparser import inline_subparsers
from .tuples import split_tuples

__all__ = ["PASSES", "inline_subparsers", "move_parser_initializers", "run"]

# Each pass takes the checked program and rewrites its blocks in place.
PASSES: tuple[Callable[[Any], None], ...] = (
    fold_literal_members,
    split_tuples,
    dont_care_extracts,
    hoist_lookaheads,
)


def run(typed: Any) -> None:
    for p in PASSES:
        p(typed)
