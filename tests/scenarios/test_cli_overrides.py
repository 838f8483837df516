"""Command-line options refused before anything starts: `--topo/--fc` on a scenario that
sweeps that very field (every point would run on the one value while its label says
another), a `--results` folder that cannot be made, a `--program` that does not exist."""

from __future__ import annotations

import pytest

from fabriclab import cli


@pytest.mark.parametrize("option, sweep", [
    (["--fc", "pfc"], 'parameter = "flow_control"\nvalues = ["lossy", "credit"]\n'),
    (["--topo", "line:3"], 'parameter = "topology"\nvalues = ["line:2", "ring:3"]\n'),
])
def test_an_override_of_the_swept_field_is_one_error(tmp_path, capsys, option, sweep):
    toml = tmp_path / "swept.toml"
    toml.write_text(f'name = "swept"\n[sweep]\n{sweep}')
    code = cli.main(["run", "--scenario", str(toml), *option,
                     "--results", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"fabriclab: error: {option[0]} would run every point of ")
    assert not (tmp_path / "results").exists(), "nothing started, nothing written"


@pytest.mark.parametrize("command", [["run", "--scenario", "incast"],
                                     ["bringup", "--topo", "line:2"]])
def test_a_results_folder_that_cannot_be_made_is_one_error_before_anything_starts(
        tmp_path, capsys, command):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code = cli.main([*command, "--results", str(blocker / "results")])
    err = capsys.readouterr().err
    assert code == 2, err  # was a FileNotFoundError/NotADirectoryError traceback
    assert err.startswith(f"fabriclab: error: --results {blocker / 'results'}: cannot be made")


def test_a_missing_program_is_one_error_before_anything_starts(tmp_path, capsys):
    code = cli.main(["run", "--scenario", "incast", "--program", str(tmp_path / "no.p4"),
                     "--results", str(tmp_path / "results")])
    assert code == 2
    assert capsys.readouterr().err == f"fabriclab: error: --program {tmp_path / 'no.p4'}: " \
                                      "no such file\n"
    assert not (tmp_path / "results").exists(), "no result folder for a run that never was"
