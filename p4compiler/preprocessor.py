"""A C-style preprocessor for P4 sources, as p4c runs cpp before parsing.

Supports #include "..." and <...> (with the shipped core.p4 and v1model.p4),
object-like and function-like #define (macros.py: expansion as cpp does it),
#undef, #ifdef/#ifndef/#if/#elif/#else/#endif with `defined` and C arithmetic,
#error, #warning, #line (renumbers the lines that follow, as p4c honours cpp's
line markers) and #pragma (`#pragma once` as cpp; others ignored, as p4c's
lexer does). Lines end as in cpp (CR LF, a lone CR or LF) and a UTF-8 byte
order mark at the start of a file is skipped, as cpp does. Every output line
remembers the file and line it came from, so later errors point into the
original sources. A macro invocation whose arguments span several lines is
expanded onto its first line; the lines it consumed stay as empty lines.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CompileError, Location
from .macros import Expander, Incomplete, Macro, evaluate_if, parse_define, render, tokenize

SYSTEM_INCLUDE_DIR = Path(__file__).parent / "p4include"

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$", re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_BUILTIN = ("__LINE__", "__FILE__")

# Macros every program sees, as p4c-bm2-ss appends -D__TARGET_BMV2__ to cpp's options
# ("for compatibility with the previous compiler"); cpp defines a bare -D as 1. -D options
# come after them, so a -D of the same name replaces one, and #undef removes it.
PREDEFINED = {"__TARGET_BMV2__": "1"}


@dataclass
class Source:
    """Preprocessed text and, for each of its lines, where it came from."""

    text: str
    origins: list[Location] = field(default_factory=list)

    def location(self, line: int, col: int) -> Location:
        """Map a 1-based line/column of the preprocessed text to the original file."""
        if 1 <= line <= len(self.origins):
            origin = self.origins[line - 1]
            return Location(origin.file, origin.line, col)
        return Location("<input>", line, col)


class Preprocessor:
    def __init__(self, include_dirs: list[str] | None = None,
                 defines: dict[str, str] | None = None):
        self.include_dirs = [Path(d) for d in include_dirs or []]
        self.expander = Expander()
        self.macros: dict[str, Macro] = self.expander.macros
        for name, value in {**PREDEFINED, **(defines or {})}.items():
            self.macros[_name_of(name)] = parse_define(
                f"{name} {value}", Location("<command line>", 0))
        self.warnings: list[str] = []
        self._lines: list[str] = []
        self._origins: list[Location] = []
        self._depth = 0
        self._files: list[Path] = []   # the files being included, innermost last
        self._once: set[Path] = set()  # files that said `#pragma once`

    def run(self, path: str) -> Source:
        self._include(Path(path), Location("<command line>", 0))
        return Source("\n".join(self._lines) + "\n", self._origins)

    def run_text(self, text: str, filename: str = "<string>") -> Source:
        self._process(_cpp_lines(text), filename, Path(filename).parent)
        return Source("\n".join(self._lines) + "\n", self._origins)

    # -- files -----------------------------------------------------------------

    def _include(self, path: Path, loc: Location) -> None:
        real = path.resolve()
        if real in self._once:  # cpp: a `#pragma once` file is read once
            return
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CompileError(loc, f"cannot read {path}: {e.strerror}") from None
        name = self._display_name(path)
        text = decode_source(data, name)
        self._depth += 1
        if self._depth > 64:
            raise CompileError(loc, "#include nested too deeply (recursive include?)")
        self._files.append(real)
        self._process(text, name, path.parent)
        self._files.pop()
        self._depth -= 1

    @staticmethod
    def _display_name(path: Path) -> str:
        try:
            return os.path.relpath(path)
        except ValueError:
            return str(path)

    def _resolve(self, name: str, system: bool, here: Path, loc: Location) -> Path:
        candidates = [] if system else [here]
        candidates += self.include_dirs + [SYSTEM_INCLUDE_DIR]
        for d in candidates:
            p = d / name
            if p.is_file():
                return p
        raise CompileError(loc, f"#include file not found: {name}")

    # -- lines -----------------------------------------------------------------

    def _process(self, text: str, filename: str, here: Path) -> None:
        raw = text.split("\n")
        # Each entry: (is_active_branch_taken, currently_active, parent_active)
        stack: list[list[bool]] = []
        active = True
        in_comment = False
        renumber = _Renumber(filename)
        i = 0
        while i < len(raw):
            line, consumed = _logical_line(raw, i)
            loc = renumber.at(i + 1)
            m = None if in_comment else _DIRECTIVE.match(line)
            if m:
                directive, rest = m.group(1), m.group(2)
                if directive == "line" and active:
                    renumber.directive(_strip_comments(rest).strip(), i + consumed, loc)
                else:
                    active = self._directive(directive, rest, loc, stack, active, here)
                self._emit("", loc)
            elif active:
                line, consumed = self._expand_lines(raw, i, line, consumed, in_comment, loc)
                in_comment = _ends_in_comment(line, in_comment)
                self._emit(line, loc)
            else:
                self._emit("", loc)
            for k in range(1, consumed):
                self._emit("", renumber.at(i + 1 + k))
            i += consumed
        if stack:
            raise CompileError(renumber.at(len(raw)), "unterminated #if/#ifdef")

    def _expand_lines(self, raw: list[str], i: int, line: str, consumed: int,
                      in_comment: bool, loc: Location) -> tuple[str, int]:
        """The line with macros expanded, joining lines while an invocation continues."""
        if not any(w in self.macros or w in _BUILTIN for w in _IDENT.findall(line)):
            return line, consumed
        self.expander.loc = loc
        self.macros["__LINE__"] = Macro("__LINE__", [tokenize(str(loc.line))[0]])
        self.macros["__FILE__"] = Macro("__FILE__", tokenize(f'"{loc.file}"'))
        try:
            while True:
                at_end = i + consumed >= len(raw) or _DIRECTIVE.match(raw[i + consumed])
                try:
                    toks = self.expander.expand(tokenize(line, in_comment), bool(at_end))
                    return render(toks), consumed
                except Incomplete:
                    more, n = _logical_line(raw, i + consumed)
                    line, consumed = line + " " + more, consumed + n
        finally:
            del self.macros["__LINE__"], self.macros["__FILE__"]

    def _emit(self, text: str, loc: Location) -> None:
        self._lines.append(text)
        self._origins.append(loc)

    def _directive(self, d: str, rest: str, loc: Location, stack: list[list[bool]],
                   active: bool, here: Path) -> bool:
        if d in ("ifdef", "ifndef", "if", "elif", "else", "endif"):
            return self._conditional(d, _strip_comments(rest).strip(), loc, stack, active)
        if not active:
            return False
        if d == "define":
            macro = parse_define(rest.strip(), loc)
            if macro.name == "defined":
                raise CompileError(loc, "\"defined\" cannot be used as a macro name")
            self.macros[macro.name] = macro
            return True
        rest = _strip_comments(rest).strip()
        if d == "undef":
            self.macros.pop(rest.split()[0] if rest else "", None)
        elif d == "include":
            if rest[:1] not in ('"', "<"):  # computed include: #include MACRO
                self.expander.loc = loc
                rest = render(self.expander.expand(tokenize(rest))).strip()
            m = re.match(r'"([^"]+)"|<([^>]+)>', rest)
            if not m:
                raise CompileError(loc, '#include expects "FILE" or <FILE>')
            name = m.group(1) or m.group(2)
            self._include(self._resolve(name, m.group(2) is not None, here, loc), loc)
        elif d == "error":
            raise CompileError(loc, f"#error {rest}")
        elif d == "warning":
            self.warnings.append(f"{loc}: warning: {rest}")
        elif d == "pragma":
            if rest == "once" and self._files:
                self._once.add(self._files[-1])
        else:
            raise CompileError(loc, f"unknown preprocessor directive #{d}")
        return True

    def _conditional(self, d: str, rest: str, loc: Location, stack: list[list[bool]],
                     active: bool) -> bool:
        if d in ("ifdef", "ifndef", "if"):
            if not active:
                stack.append([True, False, False])
                return False
            if d == "if":
                cond = self._eval(rest, loc)
            else:
                name = rest.split()[0] if rest.split() else ""
                if not name:
                    raise CompileError(loc, f"#{d} needs a macro name")
                cond = (name in self.macros) == (d == "ifdef")
            stack.append([cond, cond, True])
            return cond
        if not stack:
            raise CompileError(loc, f"#{d} without #if")
        entry = stack[-1]
        taken, _, parent = entry
        if d == "endif":
            stack.pop()
            return parent
        if d == "else":
            entry[1] = parent and not taken
        else:
            entry[1] = parent and not taken and self._eval(rest, loc)
        entry[0] = taken or entry[1]
        return entry[1]

    def _eval(self, expr: str, loc: Location) -> bool:
        return evaluate_if(tokenize(expr), self.expander, loc)


class _Renumber:
    """Where line N of a file came from, after any #line directives in it."""

    def __init__(self, filename: str):
        self.filename = filename
        self.delta = 0

    def at(self, lineno: int) -> Location:
        return Location(self.filename, lineno + self.delta)

    def directive(self, rest: str, last_line: int, loc: Location) -> None:
        m = re.fullmatch(r'(\d+)(?:\s+"((?:[^"\\]|\\.)*)")?', rest)
        if not m:
            raise CompileError(loc, f'#line expects a line number and an optional "file", '
                               f'found "{rest}"')
        # The line after the directive gets the number given.
        self.delta = int(m.group(1)) - (last_line + 1)
        if m.group(2) is not None:
            self.filename = m.group(2)


def _name_of(define: str) -> str:
    return re.split(r"[(\s]", define, maxsplit=1)[0]


def _logical_line(raw: list[str], i: int) -> tuple[str, int]:
    """Physical line i joined with its backslash continuations; how many lines it spans."""
    line = raw[i]
    n = 1
    while line.endswith("\\") and i + n < len(raw):
        line = line[:-1] + raw[i + n]
        n += 1
    return line, n


def decode_source(data: bytes, name: str) -> str:
    """Source bytes as text; a file that is not UTF-8 text is a user error."""
    for offset, byte in enumerate(data[:4096]):
        if byte == 0:
            raise CompileError(Location(name, 1 + data.count(b"\n", 0, offset)),
                               f"not a text file (byte 0x00 at offset {offset})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = 1 + data.count(b"\n", 0, e.start)
        raise CompileError(Location(name, line),
                           f"not a text file (byte 0x{data[e.start]:02x} at offset {e.start}: "
                           "sources must be UTF-8)") from None
    return _cpp_lines(text)


def _cpp_lines(text: str) -> str:
    """As cpp reads a file: a leading byte order mark is no text, and CR LF or a
    lone CR end a line like LF (so a `\\` before CR LF continues the line)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text)
    return text.split("//")[0]


def _ends_in_comment(line: str, in_comment: bool) -> bool:
    """Whether a /* comment is still open at the end of this line."""
    i = 0
    n = len(line)
    while i < n:
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return True
            in_comment = False
            i = j + 2
        else:
            c = line[i]
            if c == '"':
                j = i + 1
                while j < n and line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                i = j + 1
            elif line.startswith("//", i):
                return False
            elif line.startswith("/*", i):
                in_comment = True
                i += 2
            else:
                i += 1
    return in_comment
