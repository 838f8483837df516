"""Compile errors with a source location, printed as `file:line:col: error: message`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A point in an original source file (after undoing the preprocessor)."""

    file: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN = Location("<unknown>", 0, 0)


class CompileError(Exception):
    """A user error in the program being compiled (exit code 1)."""

    def __init__(self, loc: Location | None, message: str):
        super().__init__(message)
        self.loc = loc or UNKNOWN
        self.message = message

    def __str__(self) -> str:
        return f"{self.loc}: error: {self.message}"


class Unsupported(CompileError):
    """Valid P4 that this compiler (or the bmv2 target) does not handle."""


class Diagnostics:
    """Collects warnings, which p4c prints without failing the compile."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, loc: Location | None, message: str) -> None:
        self.warnings.append(f"{loc or UNKNOWN}: warning: {message}")
