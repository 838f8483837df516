"""The lab VM's definition and the shell scripts, checked as far as is possible offline."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = [ROOT / "scripts" / "setup.sh", ROOT / "scripts" / "provision-lab-vm.sh",
           ROOT / ".ci" / "run"]


@pytest.mark.skipif(shutil.which("vagrant") is None, reason="vagrant not installed")
def test_vagrantfile_validates_without_a_vm_provider():
    # A fresh machine has vagrant (setup.sh installs it) but no VM provider: plain
    # `vagrant validate` then exits 1 ("No usable default provider"). The offline
    # check of the file itself ignores the provider's section.
    proc = subprocess.run(["vagrant", "validate", "--ignore-provider"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_shell_scripts_pass_shellcheck():
    proc = subprocess.run(["shellcheck", *map(str, SCRIPTS)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme.split("\n## ")[0], "the README's first screen names make test"
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_vm_provisioning_reuses_the_project_setup():
    text = (ROOT / "scripts" / "provision-lab-vm.sh").read_text()
    assert "scripts/setup.sh" in text
    assert "simple_switch_grpc" in text and "p4c" in text


def _clean_clone(tmp_path: Path) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True,
                   capture_output=True, timeout=120)
    return clone


@pytest.mark.slow
def test_readme_test_command_works_in_a_clean_clone(tmp_path):
    """What a new user runs, on what is committed: `make test` in a fresh clone (here with
    this checkout's venv, so setup is not repeated, on the project's own offline tests)."""
    clone = _clean_clone(tmp_path)
    venv = ROOT / ".venv"
    if not (venv / "bin" / "python").exists():
        pytest.skip("no venv to lend the clone")
    proc = subprocess.run(
        # -o setup: the lent venv must not be re-installed from the clone (an editable
        # install pointing at a directory deleted after the test)
        ["make", "-o", "setup", "test", f"VENV={venv}",
         "PYTEST_ARGS=-q -p no:cacheprovider tests/project -k 'not clean_clone'"],
        cwd=clone, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "FABRICLAB_VENV": str(venv)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout


def test_run_topology_passes_only_the_variables_given(tmp_path):
    """`make run-topology` with any subset of TOPO/SCENARIO/FC/TARGET; the scenario's own
    settings stay unless given (make predefines FC as the Fortran compiler)."""
    def dry_run(*assignments: str) -> str:
        proc = subprocess.run(["make", "-s", "-n", "-o", "setup", "run-topology", *assignments],
                              cwd=ROOT, capture_output=True, text=True, check=True,
                              env={k: v for k, v in os.environ.items()
                                   if k not in ("TOPO", "SCENARIO", "FC", "TARGET")})
        return " ".join(proc.stdout.split())

    bare = dry_run()
    assert "--fc" not in bare and "--topo" not in bare and "--scenario" not in bare
    given = dry_run("FC=pfc", "TOPO=line:3")
    assert "--fc 'pfc'" in given and "--topo 'line:3'" in given and "--scenario" not in given
    assert "--scenario 'incast'" in dry_run("SCENARIO=incast")
