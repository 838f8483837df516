"""Lexer feedback for the LALR grammar, as p4c's lexer does it for bison.

P4 needs to know which identifiers name types (`T x;` versus `a < b`), and which
`<` `>` bracket type arguments. Before parsing, `scan_type_names` finds every
declared type name; while lexing, `PostLex` retypes those identifiers to
TYPE_IDENT and the brackets of type arguments to L_ANGLE / R_ANGLE.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from lark import Token

_TYPE_DECL = re.compile(
    r"\b(?:header|header_union|struct|control|parser|package)\s+([A-Za-z_]\w*)"
    r"|\benum\s+(?:bit\s*<\s*\d+\s*>\s*|int\s*<\s*\d+\s*>\s*)?([A-Za-z_]\w*)"
    r"|\bextern\s+([A-Za-z_]\w*)\s*(?:<[^>{;]*>)?\s*\{"
    # `type` after a dot is a field (`h.eth.type : exact;`), not a declaration.
    r"|(?<!\.)(?<!\.\s)\b(?:typedef|type)\b[^;{}]*?\b([A-Za-z_]\w*)\s*;"
)
_TYPE_PARAMS = re.compile(r"\b[A-Za-z_]\w*\s*<\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*>\s*[({]")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:[^\"\\]|\\.)*\"", re.S)
_KEYWORDS = {
    "action", "apply", "bit", "bool", "const", "control", "default", "else", "enum", "error",
    "exit", "extern", "false", "header", "header_union", "if", "in", "inout", "int", "key",
    "match_kind", "out", "parser", "package", "return", "select", "state", "string", "struct",
    "switch", "table", "transition", "true", "tuple", "typedef", "type", "varbit", "void",
    "value_set", "actions", "entries", "default_action", "priority", "abstract",
    "for", "break", "continue", "list",
}
_NEVER = 1 << 62  # the offset of a name that is never declared as a type
_TYPE_START_VALUES = {"bit", "int", "varbit", "bool", "tuple", "list", "string", "error",
                      "void"}
_ANGLE_OPENERS = {"bit", "int", "varbit", "tuple", "list", "value_set"}
# Tokens that end an expression or a type name, so that a `.` after them selects
# a member (a leading `.` is the top-level scope prefix of a name instead).
_MEMBER_OWNER_END = {"IDENT", "TYPE_IDENT", "RPAR", "RSQB"}


def scan_type_names(text: str) -> dict[str, int]:
    """Every identifier the program declares as a type, with the offset in `text`
    of its first declaration, found before parsing.

    A name is a type only from its declaration on, as in p4c's lexer: v1model.p4's
    extern function `verify_checksum` stays a function although the program later
    declares a control of that name. Type parameters (`T` of `extract<T>`) are not
    among them: they name a type only inside their declaration, which `PostLex`
    finds on the tokens (`_scoped_params`).
    """
    text = _COMMENTS.sub(lambda m: " " * len(m.group(0)), text)
    names: dict[str, int] = {}
    for m in _TYPE_DECL.finditer(text):
        group = next(g for g in range(1, len(m.groups()) + 1) if m.group(g))
        name = m.group(group)
        if name not in _KEYWORDS:
            names.setdefault(name, m.start(group))
    return names


_OPEN = {"LPAR", "LBRACE", "LSQB"}
_CLOSE = {"RPAR", "RBRACE", "RSQB"}
_GENERIC_KEYWORDS = {"STRUCT", "HEADER", "HEADER_UNION", "CONTROL", "PARSER", "PACKAGE", "EXTERN"}


def _param_list(tokens: list[Token], k: int) -> tuple[list[str], int] | None:
    """`NAME < A, B > (` or `{` at k: the names A, B and the index of the `>`."""
    j = k + 1
    if j >= len(tokens) or tokens[j].type != "L_ANGLE_LT":
        return None
    params: list[str] = []
    j += 1
    while j < len(tokens) and tokens[j].type == "IDENT":
        params.append(str(tokens[j].value))
        j += 1
        if j < len(tokens) and tokens[j].type == "COMMA":
            j += 1
            continue
        break
    if (not params or j + 1 >= len(tokens) or tokens[j].type != "GT"
            or tokens[j + 1].type not in ("LPAR", "LBRACE")):
        return None
    return params, j


def _declaration_span(tokens: list[Token], k: int) -> tuple[int, int]:
    """The declaration (or statement) around token k: from the token after the
    previous `;`, `{` or `}` at its nesting level to its own `;` or closing `}`."""
    depth, start = 0, 0
    for j in range(k - 1, -1, -1):
        t = tokens[j].type
        if depth == 0 and t in ("SEMICOLON", "RBRACE", "LBRACE"):
            start = j + 1
            break
        depth += t in _CLOSE
        depth -= t in _OPEN
    depth, end = 0, len(tokens) - 1
    for j in range(k, len(tokens)):
        t = tokens[j].type
        depth += t in _OPEN
        depth -= t in _CLOSE
        if depth < 0 or (depth == 0 and t in ("SEMICOLON", "RBRACE")):
            end = j
            break
    return start, end


def _scoped_params(tokens: list[Token], declared: Mapping[str, int]) -> set[int]:
    """Indices of the tokens that name a type parameter inside its declaration.

    `declared` maps the program's type names to the offset of their declaration: a
    name declared only further on (v1model.p4's `hash<O, T, D, M>` in a program with
    a `struct M`) is still a type parameter here."""
    scoped: set[int] = set()
    for k, tok in enumerate(tokens):
        if tok.type not in ("IDENT", "TYPE_IDENT"):
            continue
        found = _param_list(tokens, k)
        if found is None:
            continue
        params, _ = found
        here = tok.start_pos or 0
        declares = k > 0 and tokens[k - 1].type in _GENERIC_KEYWORDS
        # `f<a>(x)` in an expression is rare but possible: short or capitalised names
        # only, unless a declaration keyword says these are type parameters.
        names = {n for n in params if declared.get(n, _NEVER) > here
                 and (declares or len(n) <= 2 or n[:1].isupper())} - _KEYWORDS
        if not names:
            continue
        start, end = _declaration_span(tokens, k)
        scoped.update(j for j in range(start, end + 1) if tokens[j].value in names)
    return scoped


# Objects that shadow a type name: p4c's lexer looks names up in its scoped symbol
# table, so a variable, constant or parameter named `counter` (v1model's extern) is
# no type inside its scope.
_TYPE_END = {"TYPE_IDENT", "R_ANGLE", "BOOL", "ERROR", "INT"}
_DECL_END = {"EQUAL", "SEMICOLON", "COMMA", "RPAR", "IN"}  # IN: `for (T x in ...)`


class _Shadows:
    """Names declared as objects in the enclosing scopes, as the token stream goes."""

    def __init__(self) -> None:
        self.active: list[tuple[int, str]] = []  # (brace depth, name)
        self.pending: list[str] = []             # parameters of the next block
        self.depth = 0
        self.parens = 0
        self.stmt_index = 0                      # where the statement starts in `out`
        self.fields: set[int] = set()            # depths of struct/header bodies

    def __contains__(self, name: str) -> bool:
        return any(n == name for _, n in self.active)

    def declares(self, out: list[Token], nxt: str | None) -> bool:
        """Whether the name after `out` (followed by `nxt`) is an object's
        declaration: a variable, constant or parameter (`bit<8> counter = 0;`),
        or an instance (`register<bit<8>>(4) counter;`)."""
        prev = out[-1].type if out else None
        start = _statement_head(out, self.stmt_index)
        if prev == "RPAR":
            return nxt == "SEMICOLON" and start == "TYPE_IDENT"
        return prev in _TYPE_END and nxt in _DECL_END and start not in ("TYPEDEF", "TYPE")

    def declare(self, name: str) -> None:
        if self.parens:
            self.pending.append(name)
        elif self.depth not in self.fields:  # a field is no object (p4c: no scope entry)
            self.active.append((self.depth, name))

    def step(self, ty: str, out: list[Token]) -> None:
        """Follow the nesting and statements up to a token of type `ty`."""
        if not out or out[-1].type in ("SEMICOLON", "LBRACE", "RBRACE"):
            self.stmt_index = len(out)
        if ty == "LPAR":
            self.parens += 1
        elif ty == "RPAR":
            self.parens = max(0, self.parens - 1)
        elif ty == "LBRACE":
            self.depth += 1
            self.active += [(self.depth, n) for n in self.pending]
            self.pending = []
            if _statement_head(out, self.stmt_index) in ("STRUCT", "HEADER", "HEADER_UNION"):
                self.fields.add(self.depth)
        elif ty == "RBRACE":
            self.fields.discard(self.depth)
            self.depth -= 1
            self.active = [(d, n) for d, n in self.active if d <= self.depth]
        elif ty == "SEMICOLON" and not self.parens:
            self.pending = []


def _statement_head(out: list[Token], i: int) -> str:
    """The type of the statement's first token after its annotations
    (`@name("x")`, `@p4runtime_translation(...)`, `@hidden`)."""
    n = len(out)
    while i < n and out[i].type == "AT":
        i += 2  # `@` and the annotation's name
        if i < n and out[i].type in ("LPAR", "LSQB"):
            depth = 0
            while i < n:
                depth += out[i].type in ("LPAR", "LSQB")
                depth -= out[i].type in ("RPAR", "RSQB")
                i += 1
                if not depth:
                    break
    return out[i].type if i < n else ""


class PostLex:
    """Retypes IDENT tokens naming types, and angle brackets of type arguments."""

    always_accept = ("IDENT",)

    def __init__(self) -> None:
        self.type_names: dict[str, int] = {}

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        tokens = list(stream)
        names = self.type_names
        scoped = _scoped_params(tokens, names)
        out: list[Token] = []
        depth = 0  # how many type-argument lists are open
        n = len(tokens)
        shadows = _Shadows()
        for i, tok in enumerate(tokens):
            ty = tok.type
            shadows.step(ty, out)
            if ty == "IDENT" and (i in scoped or (
                names.get(tok.value, _NEVER) <= (tok.start_pos or 0)
                and not self._object(shadows, tok, out, tokens[i + 1] if i + 1 < n else None)
            )):
                tok = Token.new_borrow_pos("TYPE_IDENT", tok.value, tok)
                ty = "TYPE_IDENT"
            if ty == "L_ANGLE_LT":
                prev = out[-1] if out else None
                nxt = tokens[i + 1] if i + 1 < n else None
                # A member name (`meta.counter < 5`) is no type even when it
                # spells one: it opens type arguments only as a method would.
                member = (len(out) >= 3 and out[-2].type == "DOT"
                          and out[-3].type in _MEMBER_OWNER_END)
                if prev is not None and (
                    (prev.type == "TYPE_IDENT" and not member)
                    or prev.value in _ANGLE_OPENERS
                    or (prev.type in ("IDENT", "TYPE_IDENT") and nxt is not None
                        and (nxt.value in _TYPE_START_VALUES or nxt.value in names
                             or i + 1 in scoped))
                ):
                    depth += 1
                    out.append(Token.new_borrow_pos("L_ANGLE", "<", tok))
                    continue
            elif depth and ty == "GT":
                depth -= 1
                out.append(Token.new_borrow_pos("R_ANGLE", ">", tok))
                continue
            elif depth and ty == "SHR":
                out.append(Token.new_borrow_pos("R_ANGLE", ">", tok))
                depth -= 1
                if depth:
                    depth -= 1
                    t2 = Token("R_ANGLE", ">", tok.start_pos, tok.line, (tok.column or 0) + 1,
                               tok.end_line, tok.end_column, tok.end_pos)
                    out.append(t2)
                else:
                    out.append(Token("GT", ">", tok.start_pos, tok.line, (tok.column or 0) + 1,
                                     tok.end_line, tok.end_column, tok.end_pos))
                continue
            out.append(tok)
        return iter(out)

    @staticmethod
    def _object(shadows: _Shadows, tok: Token, out: list[Token], nxt: Token | None) -> bool:
        """Whether this type-named identifier names an object here: its own
        declaration (`bit<8> counter = 0;`, a parameter `in bit<8> counter`) or a
        use in the scope of one."""
        if tok.value in shadows:
            return True
        if shadows.declares(out, nxt.type if nxt else None):
            shadows.declare(str(tok.value))
            return True
        return False
