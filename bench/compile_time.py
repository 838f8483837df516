"""Compile time of every program in p4src/ with the embedded compiler: the median of
RUNS compiles, each in a fresh process (as `fabriclab-p4c` runs). The parser's tables
come from the per-user cache `make setup` builds (p4compiler/syntax.py); without it the
first compile on a machine takes ~0.5 s more, once."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3


def main() -> dict[str, float]:
    figures = {}
    for source in sorted((ROOT / "p4src").glob("*.p4")):
        times = []
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as out:
                started = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target",
                                       "bmv2", "--arch", "v1model", "-o", out, str(source)],
                                      capture_output=True, text=True, check=False)
                times.append(time.perf_counter() - started)
            if proc.returncode != 0:
                raise RuntimeError(f"{source.name} did not compile: {proc.stderr.strip()}")
        seconds = sorted(times)[len(times) // 2]
        figures[f"compile_{source.stem}_s"] = round(seconds, 3)
        print(f"   {source.name}: {seconds:.2f} s (median of {RUNS}; "
              f"{', '.join(f'{t:.2f}' for t in times)})")
    return figures
