"""C preprocessor macros: definition, expansion and `#if` arithmetic.

A faithful Python rendering of what cpp does (C11 6.10.3), so that programs
written for p4c (which runs cpp) preprocess the same way without cpp:

* object-like and function-like macros, arguments split on top-level commas
  (commas inside nested parentheses belong to the argument), `#` stringifies an
  argument, `##` pastes tokens, `...` / `__VA_ARGS__` (and GNU `name...` and
  `, ## __VA_ARGS__`), arguments fully expanded before substitution except
  next to `#`/`##`;
* rescanning with hide sets (Prosser's algorithm), so a macro never expands
  inside its own expansion while macros expanding to other macros do;
* `#if` expressions: `defined`, integer arithmetic with C precedence and `?:`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import CompileError, Location

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\f\v\r]+|//.*|/\*.*?\*/|/\*.*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<str>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)
  | (?P<punct>\.\.\.|\#\#|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||->|\+\+|--|[-+*/%&|^]=|.)
""", re.X | re.S)


MAX_EXPANSION_STEPS = 200_000  # per line; cpp has no limit, but a hang helps nobody


@dataclass(frozen=True)
class Tok:
    """A preprocessing token and the macros that may not expand it (its hide set)."""

    kind: str          # ws, ident, num, str, punct
    text: str
    hide: frozenset[str] = frozenset()


@dataclass
class Macro:
    name: str
    body: list[Tok]
    params: list[str] | None = None      # None: object-like
    variadic: bool = False               # last parameter collects the rest ("...")


@dataclass
class Incomplete(Exception):
    """A function-like macro invocation continues past the end of the text given."""

    name: str


def tokenize(text: str, in_comment: bool = False) -> list[Tok]:
    """Split one logical line into preprocessing tokens (comments become whitespace).

    `in_comment`: the line starts inside a /* comment left open by an earlier line.
    """
    toks: list[Tok] = []
    pos = 0
    if in_comment:
        end = text.find("*/")
        pos = len(text) if end < 0 else end + 2
        toks.append(Tok("ws", text[:pos]))
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None  # the last alternative matches any character
        kind = m.lastgroup or "punct"
        toks.append(Tok(kind, m.group(0)))
        pos = m.end()
    return toks


def parse_define(rest: str, loc: Location) -> Macro:
    """The macro a `#define` line (after the directive name) declares."""
    m = re.match(r"([A-Za-z_]\w*)(\()?", rest)
    if not m:
        raise CompileError(loc, "macro names must be identifiers")
    name = m.group(1)
    if not m.group(2):
        if rest[m.end():m.end() + 1] not in ("", " ", "\t"):
            raise CompileError(loc, f"missing whitespace after the macro name {name}")
        return Macro(name, [Tok("ws", " ") if t.kind == "ws" else t
                            for t in _trim(tokenize(rest[m.end():]))])
    close = rest.find(")", m.end())
    if close < 0:
        raise CompileError(loc, f"missing ')' in the parameter list of macro {name}")
    params, variadic = _parse_params(rest[m.end():close], name, loc)
    body = [Tok("ws", " ") if t.kind == "ws" else t for t in _trim(tokenize(rest[close + 1:]))]
    macro = Macro(name, body, params, variadic)
    _check_body(macro, loc)
    return macro


def _parse_params(text: str, name: str, loc: Location) -> tuple[list[str], bool]:
    params: list[str] = []
    variadic = False
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    for p in parts:
        if variadic:
            raise CompileError(loc, f"'...' must be the last parameter of macro {name}")
        if p == "...":
            params.append("__VA_ARGS__")
            variadic = True
        elif p.endswith("...") and re.fullmatch(r"[A-Za-z_]\w*\s*\.\.\.", p):
            params.append(p[:-3].strip())
            variadic = True
        elif re.fullmatch(r"[A-Za-z_]\w*", p):
            if p in params:
                raise CompileError(loc, f"duplicate macro parameter \"{p}\" in macro {name}")
            params.append(p)
        else:
            raise CompileError(loc, f"invalid parameter {p!r} in the definition of macro {name}")
    return params, variadic


def _check_body(macro: Macro, loc: Location) -> None:
    body = [t for t in macro.body if t.kind != "ws"]
    if body and (body[0].text == "##" or body[-1].text == "##"):
        raise CompileError(loc, f"'##' cannot appear at either end of macro {macro.name}")
    params = macro.params or []
    for i, t in enumerate(body):
        if t.text == "#" and (i + 1 >= len(body) or body[i + 1].text not in params):
            raise CompileError(loc, f"'#' is not followed by a macro parameter in {macro.name}")


def _trim(toks: list[Tok]) -> list[Tok]:
    start, end = 0, len(toks)
    while start < end and toks[start].kind == "ws":
        start += 1
    while end > start and toks[end - 1].kind == "ws":
        end -= 1
    return toks[start:end]


@dataclass
class Expander:
    """Expands macros in token lists; `macros` is shared with the preprocessor."""

    macros: dict[str, Macro] = field(default_factory=dict)
    loc: Location = Location("<input>", 0)

    def expand(self, toks: list[Tok], at_end: bool = True) -> list[Tok]:
        """Fully macro-expanded tokens.

        Raises Incomplete when a function-like invocation (or the '(' that would
        start one) may continue after the last token and `at_end` is false.
        """
        out: list[Tok] = []
        queue = list(reversed(toks))  # a stack: next token is queue[-1]
        steps = 0
        while queue:
            tok = queue.pop()
            steps += 1
            if steps > MAX_EXPANSION_STEPS:
                raise CompileError(self.loc, f"macro expansion exceeds {MAX_EXPANSION_STEPS} "
                                   "tokens (exponentially growing macros?)")
            macro = self.macros.get(tok.text) if tok.kind == "ident" else None
            if macro is None or tok.text in tok.hide:
                out.append(tok)
                continue
            if macro.params is None:
                hide = tok.hide | {tok.text}
                queue.extend(reversed(self._substitute(macro, [], hide)))
                continue
            j = len(queue) - 1
            while j >= 0 and queue[j].kind == "ws":
                j -= 1
            if j < 0 and not at_end:
                raise Incomplete(tok.text)
            if j < 0 or queue[j].text != "(":
                out.append(tok)
                continue
            del queue[j:]
            args, rparen = self._collect_args(macro, queue, at_end)
            hide = (tok.hide & rparen.hide) | {tok.text}
            queue.extend(reversed(self._substitute(macro, args, hide)))
        return out

    def _collect_args(self, macro: Macro, queue: list[Tok],
                      at_end: bool) -> tuple[list[list[Tok]], Tok]:
        args: list[list[Tok]] = [[]]
        depth = 0
        while queue:
            tok = queue.pop()
            if tok.text == "(":
                depth += 1
            elif tok.text == ")":
                if depth == 0:
                    return self._check_arity(macro, [_trim(a) for a in args]), tok
                depth -= 1
            elif tok.text == "," and depth == 0 and not (
                    macro.variadic and len(args) >= len(macro.params or [])):
                args.append([])
                continue
            args[-1].append(tok)
        if not at_end:
            raise Incomplete(macro.name)
        raise CompileError(self.loc, f"unterminated argument list invoking macro \"{macro.name}\"")

    def _check_arity(self, macro: Macro, args: list[list[Tok]]) -> list[list[Tok]]:
        params = macro.params or []
        if len(params) == 0 and args == [[]]:
            return []
        if macro.variadic and len(args) == len(params) - 1:
            return args + [[]]
        if len(args) != len(params):
            raise CompileError(
                self.loc, f"macro \"{macro.name}\" requires {len(params)} arguments, "
                f"but {len(args)} given")
        return args

    def _substitute(self, macro: Macro, args: list[list[Tok]], hide: frozenset[str]) -> list[Tok]:
        """The macro's body with arguments substituted, `#` and `##` applied."""
        params = {p: i for i, p in enumerate(macro.params or [])}
        body = macro.body
        out: list[Tok] = []
        expanded: dict[int, list[Tok]] = {}
        i = 0
        while i < len(body):
            t = body[i]
            nxt = _next_solid(body, i)
            if t.text == "#" and macro.params is not None and nxt is not None \
                    and body[nxt].text in params:
                out.append(Tok("str", _stringify(args[params[body[nxt].text]])))
                i = nxt + 1
                continue
            if t.text == "##":
                right = body[nxt] if nxt is not None else Tok("ws", "")
                if macro.variadic and right.text == (macro.params or [""])[-1] \
                        and _last_solid_text(out) == ",":
                    # GNU `, ## __VA_ARGS__`: the comma goes when the variadic part is empty.
                    rest = args[params[right.text]]
                    if not rest:
                        _pop_solid(out)
                    out.extend(rest)
                    i = nxt + 1 if nxt is not None else len(body)
                    continue
                rtoks = args[params[right.text]] if right.text in params else [right]
                self._paste(out, rtoks)
                i = (nxt if nxt is not None else len(body)) + 1
                continue
            if t.kind == "ident" and t.text in params:
                idx = params[t.text]
                if nxt is not None and body[nxt].text == "##":
                    out.extend(args[idx] or [Tok("ws", "")])
                else:
                    if idx not in expanded:
                        expanded[idx] = self.expand(args[idx])
                    out.extend(expanded[idx])
                i += 1
                continue
            out.append(t)
            i += 1
        return [Tok(t.kind, t.text, t.hide | hide) for t in out]

    def _paste(self, out: list[Tok], right: list[Tok]) -> None:
        while out and out[-1].kind == "ws" and out[-1].text:
            out.pop()
        left = out.pop() if out else Tok("ws", "")
        right = list(right)
        first = right.pop(0) if right else Tok("ws", "")
        text = left.text + first.text
        if text:
            pasted = tokenize(text)
            if len(pasted) != 1:
                raise CompileError(self.loc, f"pasting \"{left.text}\" and \"{first.text}\" "
                                   "does not give a valid preprocessing token")
            out.append(pasted[0])
        out.extend(right)


def _next_solid(body: list[Tok], i: int) -> int | None:
    j = i + 1
    while j < len(body) and body[j].kind == "ws":
        j += 1
    return j if j < len(body) else None


def _last_solid_text(out: list[Tok]) -> str:
    for t in reversed(out):
        if t.kind != "ws":
            return t.text
    return ""


def _pop_solid(out: list[Tok]) -> None:
    while out and out[-1].kind == "ws":
        out.pop()
    if out:
        out.pop()


def _stringify(arg: list[Tok]) -> str:
    parts: list[str] = []
    for t in arg:
        if t.kind == "ws":
            if t.text and parts and parts[-1] != " ":
                parts.append(" ")
            continue
        text = t.text
        if t.kind == "str":
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(text)
    return '"' + "".join(parts).strip() + '"'


def render(toks: list[Tok]) -> str:
    """Tokens back to text; a space keeps two tokens from an expansion from fusing."""
    parts: list[str] = []
    prev: Tok | None = None
    for t in toks:
        if t.kind == "ws":
            parts.append(t.text)
            prev = None
            continue
        if prev is not None and (t.hide or prev.hide) and _would_fuse(prev, t):
            parts.append(" ")
        parts.append(t.text)
        prev = t
    return "".join(parts)


def _would_fuse(a: Tok, b: Tok) -> bool:
    joined = tokenize(a.text + b.text)
    return len(joined) != 2 or joined[0].text != a.text


# -- #if expressions -----------------------------------------------------------------

_BINARY = [  # lowest precedence first
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
    ("<<", ">>"), ("+", "-"), ("*", "/", "%"),
]


def evaluate_if(toks: list[Tok], expander: Expander, loc: Location) -> bool:
    """The truth of a `#if`/`#elif` expression (C11 6.10.1)."""
    resolved: list[Tok] = []
    i = 0
    solid = [t for t in toks if t.kind != "ws"]
    while i < len(solid):
        t = solid[i]
        if t.text == "defined":
            if i + 1 < len(solid) and solid[i + 1].text == "(":
                ok = i + 3 < len(solid) and solid[i + 3].text == ")"
                name, i = (solid[i + 2] if ok else None), i + 4
            else:
                name, i = (solid[i + 1] if i + 1 < len(solid) else None), i + 2
            if name is None or name.kind != "ident":
                raise CompileError(loc, "operator \"defined\" requires an identifier")
            resolved.append(Tok("num", "1" if name.text in expander.macros else "0"))
            continue
        resolved.append(t)
        i += 1
    expander.loc = loc
    values = [t for t in expander.expand(resolved) if t.kind != "ws"]
    # As in C (p4c runs cpp in C mode): identifiers left after expansion, `true`
    # included, are 0.
    values = [Tok("num", "0") if t.kind == "ident" else t for t in values]
    if not values:
        raise CompileError(loc, "#if with no expression")
    parser = _IfParser(values, loc)
    value = parser.ternary()
    if parser.pos != len(values):
        raise CompileError(loc, f"missing binary operator before token \"{values[parser.pos].text}\"")
    return value != 0


class _IfParser:
    def __init__(self, toks: list[Tok], loc: Location):
        self.toks = toks
        self.pos = 0
        self.loc = loc

    def _peek(self) -> str | None:
        return self.toks[self.pos].text if self.pos < len(self.toks) else None

    def _take(self, text: str) -> None:
        if self._peek() != text:
            raise CompileError(self.loc, f"expected '{text}' in #if expression, found "
                               f"{self._peek() or 'end of line'!r}")
        self.pos += 1

    def ternary(self) -> int:
        cond = self.binary(0)
        if self._peek() != "?":
            return cond
        self.pos += 1
        a = self.ternary()
        self._take(":")
        b = self.ternary()
        return a if cond else b

    def binary(self, level: int) -> int:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self._peek() in _BINARY[level]:
            op = self.toks[self.pos].text
            self.pos += 1
            right = self.binary(level + 1)
            left = self._apply(op, left, right)
        return left

    def _apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%") and b == 0:
            raise CompileError(self.loc, "division by zero in #if")
        if op == "/":
            return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        if op == "%":
            return a - b * self._apply("/", a, b)
        return {
            "||": lambda: int(bool(a) or bool(b)), "&&": lambda: int(bool(a) and bool(b)),
            "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
            "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
            ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
            "<<": lambda: a << b if b >= 0 else a >> -b, ">>": lambda: a >> b if b >= 0 else a << -b,
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        }[op]()

    def unary(self) -> int:
        t = self._peek()
        if t in ("!", "~", "-", "+"):
            self.pos += 1
            v = self.unary()
            return {"!": int(not v), "~": ~v, "-": -v, "+": v}[t]
        if t == "(":
            self.pos += 1
            v = self.ternary()
            self._take(")")
            return v
        if t is None:
            raise CompileError(self.loc, "#if expression ends too early")
        tok = self.toks[self.pos]
        self.pos += 1
        if tok.kind == "num":
            return _c_integer(tok.text, self.loc)
        if tok.kind == "str" and tok.text.startswith("'"):
            body = tok.text[1:-1].encode().decode("unicode_escape")
            return ord(body[0]) if body else 0
        raise CompileError(self.loc, f"token \"{tok.text}\" is not valid in preprocessor expressions")


def _c_integer(text: str, loc: Location) -> int:
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uUlL]*", text)
    if not m:
        raise CompileError(loc, f"invalid integer \"{text}\" in #if expression")
    digits = m.group(1)
    if digits[:2] in ("0x", "0X", "0b", "0B"):
        return int(digits, 0)
    return int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)
