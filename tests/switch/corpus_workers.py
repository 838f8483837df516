"""Workers for tests/switch/test_stf_corpus.py: module-level, as the corpus runs them in
processes of its own."""

from __future__ import annotations

import os
import time
from pathlib import Path

from p4switch.stf_corpus import ProgramResult


def hang_on_hang(p4: str, switches, includes, timeout) -> ProgramResult:
    """`hang.p4` never answers (a worker stuck in a lock); the others pass."""
    name = Path(p4).stem
    if name == "hang":
        time.sleep(3600)
    return ProgramResult(name, {s: "pass" for s in switches}, {s: "" for s in switches})


def report_parent(p4: str, switches, includes, timeout) -> ProgramResult:
    """Passes, saying in its detail which process forked the worker."""
    return ProgramResult(Path(p4).stem, {s: "pass" for s in switches},
                         {s: f"parent {os.getppid()}" for s in switches})
