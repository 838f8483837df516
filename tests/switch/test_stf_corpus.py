"""fabriclab-stf --corpus: a directory of programs with STF scripts, one verdict per
program and switch, a summary, JSON, and the exit code."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from p4switch.stf_bmv2 import find_tool
from p4switch.stf_runner import main

FIDELITY = Path(__file__).resolve().parent.parent / "compiler" / "programs" / "fidelity"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    d = tmp_path / "corpus"
    d.mkdir()
    for stem in ("varbit_too_long", "value_sets"):
        shutil.copy(FIDELITY / f"{stem}.p4", d)
        shutil.copy(FIDELITY / f"{stem}.stf", d)
    # the same program with an expectation it cannot meet
    shutil.copy(FIDELITY / "varbit_too_long.p4", d / "wrong_expect.p4")
    (d / "wrong_expect.stf").write_text("packet 0 02 00 abcd 99\nexpect 1 02 07 abcd 99\n")
    (d / "broken.p4").write_text("control c( { apply { } }\n")
    (d / "broken.stf").write_text("packet 0 00\n")
    (d / "no_script.p4").write_text("this is not run: it has no .stf\n")
    return d


def test_each_program_gets_a_verdict_and_the_summary_counts_them(corpus, tmp_path, capsys):
    out = tmp_path / "verdicts.json"
    assert main(["--corpus", str(corpus), "--json", str(out), "-j", "2"]) == 1
    text = capsys.readouterr().out
    assert "wrong_expect" in text and "broken" in text and "no_script" not in text
    row = next(line for line in text.splitlines() if line.startswith("embedded "))
    assert row.split()[1:] == ["2", "1", "1", "0", "0", "4"]
    got = {r["name"]: r["verdicts"]["embedded"] for r in json.loads(out.read_text())}
    assert got == {"broken": "compile-error", "value_sets": "pass",
                   "varbit_too_long": "pass", "wrong_expect": "mismatch"}


def test_a_corpus_that_passes_exits_0(corpus, capsys):
    for stem in ("wrong_expect", "broken"):
        (corpus / f"{stem}.stf").unlink()
    assert main(["--corpus", str(corpus)]) == 0
    assert "switches disagree" not in capsys.readouterr().out


def test_a_missing_directory_is_a_one_line_error(capsys):
    assert main(["--corpus", "/nonexistent-dir"]) == 2
    assert "no such directory: /nonexistent-dir" in capsys.readouterr().err


def test_both_switches_need_a_corpus(capsys):
    with pytest.raises(SystemExit):
        main(["--switch", "both", "a.p4", "a.stf"])
    assert "--switch both needs --corpus" in capsys.readouterr().err


def test_an_empty_directory_is_an_error(tmp_path, capsys):
    assert main(["--corpus", str(tmp_path)]) == 2
    assert "has no program matching *.p4 with a PROGRAM.stf" in capsys.readouterr().err


def test_a_pattern_selects_programs(corpus, capsys):
    assert main(["--corpus", str(corpus), "--pattern", "varbit*.p4"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("embedded "))
    assert row.split()[1:] == ["1", "0", "0", "0", "0", "1"]


def test_a_baseline_reports_what_changed_and_fails_only_on_a_regression(corpus, tmp_path,
                                                                         capsys):
    before = tmp_path / "before.json"
    assert main(["--corpus", str(corpus), "--json", str(before), "-j", "2"]) == 1
    capsys.readouterr()
    # known failures alone: nothing changed, exit 0
    assert main(["--corpus", str(corpus), "--baseline", str(before), "-j", "2"]) == 0
    assert "0 passed before and fail now, 0 pass now" in capsys.readouterr().out
    # value_sets now fails, wrong_expect now passes
    (corpus / "value_sets.stf").write_text("packet 0 00\nexpect 9 ff\n")
    (corpus / "wrong_expect.stf").write_text("packet 0 02 00 abcd 99\n")
    assert main(["--corpus", str(corpus), "--baseline", str(before), "-j", "2"]) == 1
    out = capsys.readouterr().out
    assert "1 passed before and fail now, 1 pass now and did not before" in out
    assert "value_sets (embedded): pass -> mismatch" in out
    assert "wrong_expect (embedded): mismatch -> pass" in out


@pytest.mark.parametrize("content", [None, "not json", '{"a": 1}', '[{"name": "x"}]'])
def test_a_baseline_that_is_not_a_corpus_run_is_a_one_line_error(corpus, tmp_path, capsys,
                                                                 content):
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    assert main(["--corpus", str(corpus), "--baseline", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "Traceback" not in err


@pytest.mark.skipif(find_tool("simple_switch") is None or find_tool("simple_switch_CLI") is None,
                    reason="real bmv2 simple_switch is not installed")
def test_both_switches_run_and_agree(corpus, capsys):
    assert main(["--corpus", str(corpus), "--switch", "both"]) == 1
    text = capsys.readouterr().out
    assert "switches disagree on 0 of 4" in text
    row = next(line for line in text.splitlines() if line.startswith("bmv2 "))
    assert row.split()[1:] == ["2", "1", "1", "0", "0", "4"]


def test_a_hung_worker_gets_timeout_and_the_run_ends(corpus):
    from p4switch.stf_corpus import run_corpus
    from tests.switch.corpus_workers import hang_on_hang
    (corpus / "hang.p4").write_text("")
    (corpus / "hang.stf").write_text("")
    started = time.monotonic()
    results = run_corpus(corpus, ("embedded",), [], 2, 0.5, hang_on_hang, grace=1.0)
    assert time.monotonic() - started < 30
    got = {r.name: r.verdicts["embedded"] for r in results}
    assert got.pop("hang") == "timeout"
    assert set(got.values()) == {"pass"} and len(got) == 4
    assert "worker was killed" in next(r for r in results if r.name == "hang").details["embedded"]


def test_workers_do_not_inherit_the_callers_threads(corpus):
    """A fork of a process with threads can inherit a lock held at that moment and wait
    for it forever (a suite run hung here): the workers come from a forkserver."""
    from p4switch.stf_corpus import run_corpus
    from tests.switch.corpus_workers import report_parent
    stop = threading.Event()
    busy = [threading.Thread(target=stop.wait, daemon=True) for _ in range(3)]
    for t in busy:
        t.start()
    try:
        results = run_corpus(corpus, ("embedded",), [], 2, 5.0, report_parent)
    finally:
        stop.set()
    parents = {int(r.details["embedded"].split()[1]) for r in results}
    assert os.getpid() not in parents, "a worker was forked from the caller, threads and all"
