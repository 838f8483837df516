"""Compile-time benchmark: `python -m p4compiler.bench [PROGRAM.p4 ...]`.

One line per program (default: p4src/*.p4), with fixed columns:
`program  lines  compile_s  cold_s  json_kb  tables  actions` (lines: after
preprocessing, includes and architecture files counted); compile_s is the best of
three in-process runs after the first (the first includes building or loading
the cached parser tables, reported as cold_s).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .compiler import compile_file
from .errors import CompileError
from .preprocessor import Preprocessor


def bench(path: Path) -> str:
    lines = len(Preprocessor().run(str(path)).origins)
    start = time.perf_counter()
    result = compile_file(str(path))
    cold = time.perf_counter() - start
    best = cold
    for _ in range(3):
        start = time.perf_counter()
        result = compile_file(str(path))
        best = min(best, time.perf_counter() - start)
    size = len(json.dumps(result.json)) / 1024
    tables = sum(len(p["tables"]) for p in result.json["pipelines"])
    return (f"{path.name:<24} {lines:>6} {best:>9.3f} {cold:>7.3f} {size:>8.1f} {tables:>6} "
            f"{len(result.json['actions']):>7}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths = [Path(a) for a in args] or sorted(Path("p4src").glob("*.p4"))
    print(f"{'program':<24} {'lines':>6} {'compile_s':>9} {'cold_s':>7} {'json_kb':>8} "
          f"{'tables':>6} {'actions':>7}")
    code = 0
    for p in paths:
        try:
            print(bench(p))
        except CompileError as e:
            print(f"{p.name:<24} error: {e}")
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
