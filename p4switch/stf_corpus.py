"""Run a whole directory of STF tests: every PROGRAM.p4 with a PROGRAM.stf beside it.

    fabriclab-stf --corpus DIR [--pattern GLOB] [--switch embedded|bmv2|both]
                  [--json FILE] [--baseline FILE] [-j N]

For a corpus such as p4c's testdata/p4_16_samples (`--pattern '*-bmv2.p4'`: its
v1model programs with their .stf) or one's own programs: each program is compiled by
the embedded compiler and its script run on the embedded switch, on real simple_switch
(the same JSON), or on both. With `both`, the two switches' verdicts are compared too: a
program that passes on one and fails on the other is a fidelity difference of the
embedded switch (or a JSON that real bmv2 reads differently), worth a report.

Each program runs in a worker process (stf_runner.run_program) with a time limit, so a
program that hangs or exhausts memory costs only its own verdict. The workers are forked
from a fresh server process (forkserver), never from the caller: a caller with threads
(a test session, a GUI) may hold a lock at the moment of a fork, and the child then
waits for it forever. A worker that answers neither within its program's limit nor a
grace after it is killed and its programs get `timeout`, so the run always ends. A
status line shows progress; the summary counts verdicts (pass, mismatch, compile error,
run error, timeout) per switch and lists every program that did not pass, with its
first line of detail.

`--baseline FILE` (the `--json` of an earlier run, e.g. before a compiler change) lists
what changed against it: each program and switch that passed there and does not now (a
regression), and each that passes now and did not. The exit code is then 1 only for a
regression, so a corpus with known failures still checks a change.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

VERDICTS = ("pass", "mismatch", "compile-error", "run-error", "timeout")


@dataclass
class ProgramResult:
    name: str
    verdicts: dict[str, str] = field(default_factory=dict)  # switch -> verdict
    details: dict[str, str] = field(default_factory=dict)   # switch -> first line

    @property
    def agree(self) -> bool:
        return len(set(self.verdicts.values())) <= 1


# (program path, switches, include dirs, timeout) -> verdicts; a module-level function,
# as it runs in a worker process (p4switch.stf_runner.run_program)
RunOne = Callable[[str, tuple[str, ...], list[str], float], ProgramResult]


def programs_in(directory: Path, pattern: str = "*.p4") -> list[Path]:
    """The corpus: every program of `directory` matching `pattern` with a .stf of the
    same stem."""
    return sorted(p for p in directory.glob(pattern)
                  if p.suffix == ".p4" and p.with_suffix(".stf").is_file())


# beyond its own time limit, what a worker may take to answer (start-up, compile, the
# switch's teardown) before it counts as hung
GRACE_S = 30.0


def run_corpus(directory: Path, switches: tuple[str, ...], includes: list[str],
               jobs: int, timeout: float, run_one: RunOne, status=None,
               pattern: str = "*.p4", grace: float = GRACE_S) -> list[ProgramResult]:
    """Every program of the corpus, in name order, each by `run_one` in a worker
    process; `status(done, total, result)` is called as each finishes. When no program
    finishes for `timeout` + `grace` s, the workers are hung: they are killed and every
    unfinished program gets `timeout`."""
    progs = programs_in(directory, pattern)
    out: dict[str, ProgramResult] = {}

    def record(p: Path, r: ProgramResult) -> None:
        out[p.stem] = r
        if status is not None:
            status(len(out), len(progs), r)

    ctx = multiprocessing.get_context("forkserver")
    workers = ctx.SimpleQueue()  # each worker's PID, put there as it starts
    pool = ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=ctx,
                               initializer=_started, initargs=(workers,))
    try:
        futures: dict[Future, Path] = {
            pool.submit(run_one, str(p), switches, includes, timeout): p for p in progs}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=timeout + grace,
                                 return_when=FIRST_COMPLETED)
            for f in sorted(done, key=lambda f: futures[f]):
                record(futures[f], _result(f, futures[f].stem, switches))
            if not done:
                _kill_workers(workers)
                why = (f"no answer from its worker within {timeout + grace:.0f} s "
                       "(the program's limit and a grace): the worker was killed")
                for f in sorted(pending, key=lambda f: futures[f]):
                    p = futures[f]
                    record(p, ProgramResult(p.stem, {s: "timeout" for s in switches},
                                            {s: why for s in switches}))
                pending = set()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [out[p.stem] for p in progs]


def _result(f: Future, name: str, switches: tuple[str, ...]) -> ProgramResult:
    try:
        return f.result()
    except Exception as e:  # noqa: BLE001 - a worker that died (memory, signal)
        return ProgramResult(name, {s: "run-error" for s in switches},
                             {s: f"worker died: {type(e).__name__}: {e}" for s in switches})


def _started(workers) -> None:
    """A worker's first act (the pool's initializer): say its PID."""
    workers.put(os.getpid())


def _kill_workers(workers) -> None:
    """SIGKILL the pool's worker processes, by the PIDs they gave as they started."""
    while not workers.empty():
        try:
            os.kill(workers.get(), signal.SIGKILL)
        except ProcessLookupError:
            pass  # it had ended


def summary(results: list[ProgramResult], switches: tuple[str, ...]) -> str:
    lines = []
    width = max([len(r.name) for r in results] + [8])
    for r in results:
        if all(v == "pass" for v in r.verdicts.values()):
            continue
        for s in switches:
            if r.verdicts.get(s) != "pass":
                lines.append(f"{r.name:<{width}}  {s:<8}  {r.verdicts.get(s):<13}  "
                             f"{r.details.get(s, '')[:160]}")
    lines.append("")
    header = f"{'switch':<8}  " + "  ".join(f"{v:>13}" for v in VERDICTS) + f"  {'total':>6}"
    lines.append(header)
    for s in switches:
        counts = [sum(1 for r in results if r.verdicts.get(s) == v) for v in VERDICTS]
        lines.append(f"{s:<8}  " + "  ".join(f"{c:>13}" for c in counts)
                     + f"  {len(results):>6}")
    if len(switches) > 1:
        differ = [r.name for r in results if not r.agree]
        lines.append(f"switches disagree on {len(differ)} of {len(results)}"
                     + (f": {', '.join(differ)}" if differ else ""))
    return "\n".join(lines)


def load_baseline(path: str) -> dict[tuple[str, str], str]:
    """(program, switch) -> verdict from an earlier run's --json; ValueError naming the
    problem if the file is not one."""
    try:
        rows = json.loads(Path(path).read_text())
        return {(r["name"], sw): v for r in rows for sw, v in r["verdicts"].items()}
    except OSError as e:
        raise ValueError(f"cannot read baseline {path}: {e.strerror}") from None
    except (ValueError, TypeError, KeyError, AttributeError):
        raise ValueError(f"baseline {path} is not the --json of a corpus run") from None


def against_baseline(results: list[ProgramResult], base: dict[tuple[str, str], str]
                     ) -> tuple[list[str], int]:
    """The summary lines of what changed against `base`, and how many (program, switch)
    pairs passed there and do not now."""
    worse, better = [], []
    for r in results:
        for sw, v in r.verdicts.items():
            old = base.get((r.name, sw))
            if old == "pass" and v != "pass":
                worse.append(f"  {r.name} ({sw}): pass -> {v}: {r.details.get(sw, '')}"[:200])
            elif old is not None and old != "pass" and v == "pass":
                better.append(f"  {r.name} ({sw}): {old} -> pass")
    lines = [f"against the baseline: {len(worse)} passed before and fail now, "
             f"{len(better)} pass now and did not before"] + worse + better
    return lines, len(worse)


def main_corpus(directory: str, switch: str, includes: list[str], jobs: int | None,
                timeout: float, json_out: str | None, run_one: RunOne,
                pattern: str = "*.p4", baseline: str | None = None) -> int:
    base = None
    if baseline is not None:
        try:
            base = load_baseline(baseline)
        except ValueError as e:
            print(f"fabriclab-stf: error: {e}", file=sys.stderr)
            return 2
    d = Path(directory)
    if not d.is_dir():
        print(f"fabriclab-stf: error: no such directory: {directory}", file=sys.stderr)
        return 2
    if not programs_in(d, pattern):
        print(f"fabriclab-stf: error: {directory} has no program matching {pattern} with "
              "a PROGRAM.stf beside it", file=sys.stderr)
        return 2
    switches = ("embedded", "bmv2") if switch == "both" else (switch,)
    if "bmv2" in switches:
        from p4switch.stf_bmv2 import find_tool
        if find_tool("simple_switch") is None or find_tool("simple_switch_CLI") is None:
            print("fabriclab-stf: error: --switch bmv2 needs simple_switch and "
                  "simple_switch_CLI on PATH", file=sys.stderr)
            return 2
    started = time.monotonic()
    tty = sys.stderr.isatty()

    def status(done: int, total: int, r: ProgramResult) -> None:
        line = (f"[{done}/{total}] {time.monotonic() - started:5.0f} s  {r.name}: "
                + ", ".join(f"{s} {v}" for s, v in r.verdicts.items()))
        print(("\r\033[K" if tty else "") + line, end="" if tty else "\n",
              file=sys.stderr, flush=True)

    results = run_corpus(d, switches, includes, jobs or os.cpu_count() or 1, timeout,
                         run_one, status, pattern)
    if tty:
        print(file=sys.stderr)
    print(summary(results, switches))
    if json_out:
        tmp = Path(json_out).with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n")
        os.replace(tmp, json_out)
    if base is not None:
        lines, regressions = against_baseline(results, base)
        print("\n".join(lines))
        return 1 if regressions else 0
    return 0 if all(v == "pass" for r in results for v in r.verdicts.values()) else 1
