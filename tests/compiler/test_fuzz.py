"""Mutated corpus programs never crash the compiler: every run is a clean compile or a
clean user error with a real location (exit 0/1), never a traceback or an internal error.

Mutations (fixed seed, so a failure reproduces): delete, duplicate, swap or replace
tokens (replace: by another token of the same program, which reaches the type checker
and the back end), insert random bytes, truncate. Bounded to a time budget so the
test stays fast.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p4compiler.cli import main
from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted((ROOT / "compiler" / "programs").glob("*.p4")) + \
    sorted((ROOT / "differential" / "programs").glob("*.p4"))
INCLUDES = [str(ROOT / "compiler" / "programs")]
TOKEN = re.compile(r"[A-Za-z_]\w*|\d\w*|\S")
SEED = 18
BUDGET_S = 12.0
MAX_MUTANTS = 400


def mutate(text: str, rng: random.Random) -> str:
    spans = [m.span() for m in TOKEN.finditer(text)]
    kind = rng.choice(["delete", "duplicate", "swap", "replace", "replace", "bytes",
                       "truncate"])
    if kind == "truncate":
        return text[:rng.randrange(len(text))]
    if kind == "bytes":
        at = rng.randrange(len(text))
        junk = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x2000)]))
                       for _ in range(rng.randrange(1, 4)))
        return text[:at] + junk + text[at:]
    i = rng.randrange(len(spans) - 1)
    (a, b), (c, d) = spans[i], spans[i + 1]
    if kind == "delete":
        return text[:a] + text[b:]
    if kind == "replace":  # another token of the same program: type-level mistakes
        x, y = rng.choice(spans)
        return text[:a] + text[x:y] + text[b:]
    if kind == "duplicate":
        return text[:b] + " " + text[a:b] + text[b:]
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


def check_one(text: str, name: str) -> str | None:
    """None if the compiler behaved; else what went wrong."""
    try:
        compile_text(text, name, include_dirs=INCLUDES)
    except CompileError as e:
        if e.loc.line <= 0 or e.loc.file.startswith("<unknown"):
            return f"error without a location: {e}"
    except RecursionError:
        pass  # the CLI reports "program nested too deeply"
    except Exception as e:  # noqa: BLE001 - exactly what the test looks for
        return f"internal error {type(e).__name__}: {e}"
    return None


def test_mutated_programs_give_clean_errors() -> None:
    rng = random.Random(SEED)
    sources = [(p.name, p.read_text()) for p in CORPUS]
    deadline = time.monotonic() + BUDGET_S
    failures: list[str] = []
    runs = 0
    while runs < MAX_MUTANTS and time.monotonic() < deadline:
        name, text = rng.choice(sources)
        mutant = mutate(text, rng)
        runs += 1
        problem = check_one(mutant, name)
        if problem:
            failures.append(f"{name} mutant {runs}: {problem}")
    assert runs >= 20
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("data,byte", [
    (b"\x00\x01\x02\x03binary", "0x00"),
    (b"control c() { apply { } }\n\xc3\x28\n", "0xc3"),
])
def test_binary_input_is_a_user_error(tmp_path, capsys, data: bytes, byte: str) -> None:
    src = tmp_path / "prog.p4"
    src.write_bytes(data)
    assert main([str(src), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"error: not a text file (byte {byte} at offset" in err
    assert "internal" not in err and "Traceback" not in err


def test_mutants_through_the_command_line_exit_0_or_1(tmp_path) -> None:
    """A few mutants end to end: the real exit code and stderr of fabriclab-p4c."""
    rng = random.Random(SEED + 1)
    sources = [(p.name, p.read_text()) for p in CORPUS]
    for n in range(4):
        name, text = rng.choice(sources)
        src = tmp_path / f"m{n}_{name}"
        src.write_bytes(mutate(text, rng).encode("utf-8", "surrogatepass"))
        run = subprocess.run([sys.executable, "-m", "p4compiler.cli", str(src), "-o",
                              str(tmp_path), *[f"-I{d}" for d in INCLUDES]],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode in (0, 1), run.stderr
        assert "Traceback" not in run.stderr and "internal compiler error" not in run.stderr
        if run.returncode == 1:
            assert re.match(r"\S+:\d+:\d+: error: ", run.stderr.splitlines()[-1]), run.stderr
