"""Parsing: preprocessed P4 text -> syntax tree (ir nodes without types).

The grammar (p4.lark) is LALR(1). Like p4c's lexer, a post-lexer pass tells
type names from other identifiers (TYPE_IDENT) and marks the angle brackets
of type arguments (L_ANGLE/R_ANGLE), which is what keeps the grammar LALR.
"""

from __future__ import annotations

import re
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from . import ir, loops
from .errors import CompileError
from .lexer import PostLex, scan_type_names
from .preprocessor import Source
from .syntax_ir import ToIR

GRAMMAR = Path(__file__).parent / "p4.lark"

_JUMP_WORD = re.compile(r"\b(?:break|continue)\b")
# `@pragma NAME body...` runs to the end of the line (P4_16 18.1: its body is
# unstructured tokens).
_PRAGMA = re.compile(r"@pragma[ \t]+([A-Za-z_]\w*)([^\n]*)")


def _pragma_as_annotation(m: re.Match[str]) -> str:
    """The pragma as the annotation `@NAME`; the body, which this compiler does not
    interpret, becomes spaces so that columns stay where they were."""
    return f"@{m.group(1)}" + " " * (len(m.group(0)) - len(m.group(1)) - 1)


_PARSER: Lark | None = None
_POSTLEX = PostLex()


def _parser() -> Lark:
    global _PARSER
    if _PARSER is None:
        # A cache file half-written by a concurrent compile is rebuilt by lark; keep its
        # log message (with a traceback) off our stderr.
        import logging

        logging.getLogger("lark").setLevel(logging.CRITICAL)
        _PARSER = Lark(
            GRAMMAR.read_text(), parser="lalr", lexer="basic", postlex=_POSTLEX,
            propagate_positions=True, maybe_placeholders=False, cache=_cache_path(),
        )
    return _PARSER


def _cache_path() -> str | bool:
    """A per-user cache of the LALR tables (building them costs ~0.5 s)."""
    import os
    import tempfile

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for d in (os.path.join(base, "fabriclab-p4c"), tempfile.gettempdir()):
        try:
            os.makedirs(d, exist_ok=True)
            probe = os.path.join(d, ".probe")
            with open(probe, "w"):
                pass
            os.remove(probe)
            import lark
            return os.path.join(d, f"p4-grammar-{lark.__version__}.cache")
        except OSError:
            continue
    return False


def parse(source: Source) -> ir.Program:
    """Parse preprocessed text into a syntax tree, or raise CompileError."""
    parser = _parser()
    text = _PRAGMA.sub(_pragma_as_annotation, source.text) if "@pragma" in source.text \
        else source.text
    _POSTLEX.type_names = scan_type_names(text)
    try:
        tree = parser.parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, source) from None
    try:
        program = ToIR(source).transform(tree)
    except VisitError as e:
        raise e.orig_exc from None
    if _JUMP_WORD.search(source.text):
        stray = loops.find_stray_jump(program)
        if stray is not None:
            word = "break" if isinstance(stray, ir.Break) else "continue"
            raise CompileError(stray.loc, f"{word} outside a for loop")
    return program


def _syntax_error(e: UnexpectedInput, source: Source) -> CompileError:
    loc = source.location(getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            return CompileError(loc, "syntax error: unexpected end of input")
        if tok.type == "LPAR" or str(tok) == "(":
            line = (source.text.splitlines() or [""])[max(getattr(e, "line", 1) - 1, 0)]
            before = line[:max(getattr(e, "column", 1) - 1, 0)]
            if re.search(r"\btable\s+\w+\s*$", before):  # P4_16 14.2: table name { ... }
                return CompileError(loc, "syntax error: a table declaration takes no "
                                    "parameter list (write 'table name { ... }')")
        return CompileError(loc, f"syntax error, unexpected {_describe(tok)}")
    if isinstance(e, UnexpectedCharacters):
        return CompileError(loc, f"syntax error, unexpected character {e.char!r}")
    if isinstance(e, UnexpectedEOF):
        return CompileError(loc, "syntax error: unexpected end of input")
    return CompileError(loc, "syntax error")


def _describe(tok: Token) -> str:
    if tok.type in ("IDENT", "TYPE_IDENT"):
        return f"identifier {tok.value}"
    return f"'{tok.value}'"


# ------------------------------------------------------------------ tree -> IR
