"""`make test`'s two parts (scripts/test.sh, tests/conftest.py `--part`): every test in
exactly one, emulations and time measurements in the serial one, and the script's
exit status failing when a part fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FILES = ["tests/compiler/test_cli.py",            # one timing test, the rest parallel
         "tests/controller/test_agent.py",        # a timing module
         "tests/scenarios/test_bmv2_scenarios.py"]  # emulations


def _collected(part: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "--part", part, *FILES],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {line for line in proc.stdout.splitlines() if "::" in line}


def test_every_test_is_in_exactly_one_part_and_the_serial_one_holds_what_must_not_share():
    serial, parallel, everything = (_collected(p) for p in ("serial", "parallel", "all"))
    assert serial | parallel == everything and not serial & parallel
    assert "tests/compiler/test_cli.py::" \
        "test_fabric_compiles_to_json_and_p4info_in_under_two_seconds" in serial
    assert all(t.startswith(("tests/controller/test_agent.py", "tests/scenarios/",
                             "tests/compiler/test_cli.py::test_fabric_compiles"))
               for t in serial)
    assert {t.split("::")[0] for t in parallel} == {"tests/compiler/test_cli.py"}


def _script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable,
           "FABRICLAB_TEST_LOG": str(tmp_path / "parallel.log")}
    return subprocess.run(["bash", "scripts/test.sh", "-p", "no:cacheprovider", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)


def test_the_script_passes_when_one_part_has_nothing_to_run(tmp_path):
    # (not the timing test: this one runs in the parallel part of the suite, niced)
    proc = _script(tmp_path, "tests/compiler/test_cli.py", "-k", "not in_under_two_seconds")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "8 passed" in proc.stdout and "test: both parts passed" in proc.stdout


def test_the_script_fails_and_shows_the_parallel_log_when_a_part_fails(tmp_path):
    proc = _script(tmp_path, "tests/compiler/no_such_file.py")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no_such_file.py" in proc.stdout  # the parallel part's log, shown in full
    assert "test: FAILED" in proc.stdout
