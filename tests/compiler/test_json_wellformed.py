"""Every JSON the corpus produces is internally consistent: what a bmv2 loader
checks (references to headers, fields, actions, tables, arrays) all resolve."""

from __future__ import annotations

from pathlib import Path

import pytest
from p4c_helpers import PROGRAMS, JsonChecker

from p4compiler.compiler import compile_file

CORPUS = sorted(p for p in PROGRAMS.glob("*.p4") if p.name != "common_headers.p4")
CORPUS.append(PROGRAMS / "fabric_snapshot" / "fabric.p4")

@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem if p.parent == PROGRAMS
                         else p.parent.name)
def test_json_references_resolve(path: Path) -> None:
    JsonChecker(compile_file(str(path)).json).check()
