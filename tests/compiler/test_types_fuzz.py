"""Mutated copies of the ty_* differential programs (a token deleted or duplicated)
end in a compile error or a compiled program, never in an internal error (bounded:
a fixed seed, 20 mutants per program, stops after 20 s)."""

from __future__ import annotations

import random
import re
import time

import pytest
from ty_stf_helpers import PROGRAMS

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError

STEMS = sorted(p.stem for p in PROGRAMS.glob("ty_*.p4"))


@pytest.mark.parametrize("stem", STEMS)
def test_mutants_never_crash_the_compiler(stem: str):
    lines = PROGRAMS.joinpath(f"{stem}.p4").read_text().splitlines()
    head = "\n".join(x for x in lines if x.startswith("#"))
    toks = re.findall(r"\w+|\S", "\n".join(x for x in lines if not x.startswith(("#", "//"))))
    rnd = random.Random(stem)
    deadline = time.monotonic() + 20
    for _ in range(20):
        if time.monotonic() > deadline:
            break
        t = list(toks)
        k = rnd.randrange(len(t))
        if rnd.random() < 0.5:
            del t[k]
        else:
            t.insert(k, t[rnd.randrange(len(t))])
        try:
            compile_text(head + "\n" + " ".join(t), f"{stem}_mutant.p4")
        except CompileError:
            pass
