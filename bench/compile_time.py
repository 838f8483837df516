"""Compile time of every program in p4src/ with the embedded compiler (fresh process each)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> dict[str, float]:
    figures = {}
    for source in sorted((ROOT / "p4src").glob("*.p4")):
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target", "bmv2",
                                   "--arch", "v1model", "-o", out, str(source)],
                                  capture_output=True, text=True, check=False)
            seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"{source.name} did not compile: {proc.stderr.strip()}")
        figures[f"compile_{source.stem}_s"] = round(seconds, 3)
        print(f"   {source.name}: {seconds:.2f} s")
    return figures
