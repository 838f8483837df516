"""`fabriclab report DIR`: a run's folder gets its report rewritten, even a run that
ended before its metrics (what it wrote is kept and the rest is "Left out"); a folder
that is no run's is refused and nothing is written into it."""

from __future__ import annotations

import json

from fabriclab import cli


def test_a_folder_that_is_no_run_is_refused_and_left_as_it_was(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} is not a result directory (it holds none of scenario.json" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert cli.main(["report", str(tmp_path / "missing")]) == 2


def test_a_run_that_ended_before_its_metrics_gets_a_report_of_what_it_wrote(tmp_path,
                                                                            capsys):
    (tmp_path / "scenario.json").write_text(json.dumps({"name": "x", "topology": "line:2"}))
    assert cli.main(["report", str(tmp_path)]) == 0
    assert "written: " in capsys.readouterr().out
    report = (tmp_path / "report.md").read_text()
    assert "Left out: " in report and "metrics.json: missing" in report
    assert json.loads((tmp_path / "scenario.json").read_text())["name"] == "x"  # kept


def test_a_corrupt_metrics_file_is_named_and_the_report_still_written(tmp_path, capsys):
    (tmp_path / "metrics.json").write_text("{not json")
    assert cli.main(["report", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "metrics.json" in captured.err and "Traceback" not in captured.err
    assert (tmp_path / "report.md").is_file()
    assert (tmp_path / "metrics.json").read_text() == "{not json"  # never overwritten
