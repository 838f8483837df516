"""[traffic] fields the scenario's pattern or transport does not use are named before
the run (`fabriclab: note: ...` on stderr), not ignored in silence: a `hosts` list on a
stream runs h1 -> h2 whatever it lists."""

from __future__ import annotations

import pytest

from fabriclab import cli
from fabriclab import scenario as sc


def _notes(tmp_path, traffic: str, extra: str = "") -> list[str]:
    toml = tmp_path / "s.toml"
    toml.write_text(f'name = "s"\ntopology = "line:3"\n[traffic]\n{traffic}\n{extra}')
    return sc.load_notes(str(toml))


@pytest.mark.parametrize("traffic, expected", [
    ('hosts = ["h1", "h3"]\nmessage_bytes = 4096',
     ["[traffic] hosts does not apply to pattern stream: ignored",
      "[traffic] message_bytes does not apply to pattern stream: ignored"]),
    ('pattern = "incast"\ndst = "h3"\nsrc = "h1"\nframes = 10',
     ["[traffic] src does not apply to pattern incast: ignored",
      "[traffic] frames does not apply to pattern incast: ignored"]),
    ('pattern = "alltoall"\ndst = "h3"', ["[traffic] dst does not apply to pattern alltoall: "
                                          "ignored"]),
    ('rc_window = 64\nrc_retry_limit = 3',
     ['[traffic] rc_window, rc_retry_limit apply only to transport "rc" (this one is '
      "'ud'): ignored"]),
    ('transport = "rc"\nrc_window = 64\nsrc = "h2"\ndst = "h3"\nframes = 10', []),
    ('pattern = "incast"\ndst = "h3"\nhosts = ["h1", "h2", "h3"]\nrepetitions = 2', []),
])
def test_fields_a_pattern_does_not_use_are_named(tmp_path, traffic, expected):
    assert _notes(tmp_path, traffic) == expected


def test_a_sweep_over_the_pattern_is_judged_point_by_point(tmp_path):
    # the file's own [traffic] (a stream) never runs: its hosts list is used by the incast
    sweep = '[sweep]\nparameter = "traffic.pattern"\nvalues = ["incast", "alltoall"]\n'
    assert _notes(tmp_path, 'dst = "h3"\nhosts = ["h1", "h2", "h3"]', sweep) == [
        "[traffic] dst does not apply to pattern alltoall: ignored"]


def test_no_shipped_scenario_sets_a_field_it_does_not_use():
    assert {name: sc.load_notes(name) for name in sc.available()
            if sc.load_notes(name)} == {}


def test_the_run_command_prints_the_notes_before_it_starts(tmp_path, capsys, monkeypatch):
    toml = tmp_path / "s.toml"
    toml.write_text('name = "s"\ntopology = "line:2"\n[traffic]\nhosts = ["h1", "h2"]\n')

    def stop(*_args):
        raise cli.TargetError("stopped after the plan (test)")

    monkeypatch.setattr(cli, "resolve", stop)
    code = cli.main(["run", "--scenario", str(toml), "--results", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "stopped after the plan" in err
    assert "fabriclab: note: [traffic] hosts does not apply to pattern stream: ignored" in err
