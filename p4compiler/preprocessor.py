"""A C-style preprocessor for P4 sources, as p4c runs cpp before parsing.

Supports #include "..." and <...> (with the shipped core.p4 and v1model.p4),
object-like #define, #undef, #ifdef/#ifndef/#if/#elif/#else/#endif with
`defined`, #error and #warning. Every output line remembers the file and line
it came from, so later errors point into the original sources.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CompileError, Location

SYSTEM_INCLUDE_DIR = Path(__file__).parent / "p4include"

_IDENT = re.compile(r"\b[A-Za-z_]\w*")
_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")
# Strings and identifiers, so that macros are not expanded inside string literals.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_]\w*')


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
        self.macros: dict[str, str] = dict(defines or {})
        self.warnings: list[str] = []
        self._lines: list[str] = []
        self._origins: list[Location] = []
        self._depth = 0

    def run(self, path: str) -> Source:
        self._include(Path(path), Location("<command line>", 0))
        return Source("\n".join(self._lines) + "\n", self._origins)

    def run_text(self, text: str, filename: str = "<string>") -> Source:
        self._process(text, filename, Path(filename).parent)
        return Source("\n".join(self._lines) + "\n", self._origins)

    # -- files -----------------------------------------------------------------

    def _include(self, path: Path, loc: Location) -> None:
        try:
            text = path.read_text()
        except OSError as e:
            raise CompileError(loc, f"cannot read {path}: {e.strerror}") from None
        self._depth += 1
        if self._depth > 64:
            raise CompileError(loc, "#include nested too deeply (recursive include?)")
        self._process(text, self._display_name(path), path.parent)
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
        i = 0
        while i < len(raw):
            lineno = i + 1
            line = raw[i]
            extra = 0
            while line.endswith("\\") and i + 1 + extra < len(raw):
                extra += 1
                line = line[:-1] + raw[i + extra]
            i += 1 + extra
            loc = Location(filename, lineno)
            m = None if in_comment else _DIRECTIVE.match(line)
            if m:
                directive, rest = m.group(1), _strip_comments(m.group(2)).strip()
                active = self._directive(directive, rest, loc, stack, active, here)
                self._emit("", loc)
            elif active:
                in_comment = _ends_in_comment(line, in_comment)
                self._emit(self._expand(line), loc)
            else:
                self._emit("", loc)
            for _ in range(extra):
                self._emit("", Location(filename, lineno))
        if stack:
            raise CompileError(Location(filename, len(raw)), "unterminated #if/#ifdef")

    def _emit(self, text: str, loc: Location) -> None:
        self._lines.append(text)
        self._origins.append(loc)

    def _directive(self, d: str, rest: str, loc: Location, stack: list[list[bool]],
                   active: bool, here: Path) -> bool:
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
        if d in ("elif", "else", "endif"):
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
        if not active:
            return False
        if d == "define":
            m = re.match(r"([A-Za-z_]\w*)(\(.*?\))?\s*(.*)$", rest)
            if not m:
                raise CompileError(loc, "#define needs a macro name")
            if m.group(2):
                raise CompileError(loc, "function-like macros are not supported")
            self.macros[m.group(1)] = m.group(3).strip()
        elif d == "undef":
            self.macros.pop(rest.split()[0] if rest else "", None)
        elif d == "include":
            m = re.match(r'"([^"]+)"|<([^>]+)>', rest)
            if not m:
                raise CompileError(loc, '#include expects "FILE" or <FILE>')
            name = m.group(1) or m.group(2)
            self._include(self._resolve(name, m.group(2) is not None, here, loc), loc)
        elif d == "error":
            raise CompileError(loc, f"#error {rest}")
        elif d == "warning":
            self.warnings.append(f"{loc}: warning: {rest}")
        elif d in ("pragma", "line"):
            pass
        else:
            raise CompileError(loc, f"unknown preprocessor directive #{d}")
        return True

    def _expand(self, line: str, depth: int = 0) -> str:
        if not self.macros or depth > 32:
            return line

        def sub(m: re.Match[str]) -> str:
            tok = m.group(0)
            if tok in self.macros and tok[0] != '"':
                return self._expand(self.macros[tok], depth + 1)
            return tok

        return _TOKEN.sub(sub, line)

    def _eval(self, expr: str, loc: Location) -> bool:
        expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
                      lambda m: "1" if (m.group(1) or m.group(2)) in self.macros else "0", expr)
        expr = self._expand(expr)
        expr = _IDENT.sub(lambda m: "0" if not m.group(0).isdigit() else m.group(0), expr)
        expr = re.sub(r"(\d+)[uUlL]+", r"\1", expr)
        py = expr.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py)
        try:
            return bool(eval(py, {"__builtins__": {}}, {}))  # noqa: S307 - arithmetic only
        except Exception:
            raise CompileError(loc, f"cannot evaluate #if expression: {expr}") from None


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
