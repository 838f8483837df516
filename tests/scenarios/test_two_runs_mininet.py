"""Two runs on one machine at the same time both pass, and neither leaves anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fabriclab.runner import ROOT
from topologies.ledger import prefixed_names

pytestmark = [pytest.mark.mininet, pytest.mark.slow]


def test_two_runs_at_once_on_one_machine_both_pass(tmp_path):
    before = prefixed_names()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    runs = {name: subprocess.Popen(
        [sys.executable, "-m", "fabriclab.cli", "run", "--scenario", "stream",
         "--target", "embedded", "--results", str(tmp_path / name)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name in ("a", "b")}
    outputs = {name: proc.communicate(timeout=300)[0] for name, proc in runs.items()}
    metrics = {}
    for name, proc in runs.items():
        assert proc.returncode == 0, f"run {name} failed:\n{outputs[name][-3000:]}"
        [path] = (tmp_path / name).glob("*/metrics.json")
        metrics[name] = json.loads(path.read_text())
        assert metrics[name]["verdict"] == "pass"
        assert metrics[name]["lost"] == 0 and metrics[name]["received"] > 0
    assert metrics["a"]["run_prefix"] != metrics["b"]["run_prefix"]
    assert prefixed_names() - before == set(), "both runs removed what they created"
