"""The lab VM's definition and the shell scripts, checked as far as is possible offline."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = [ROOT / "scripts" / "setup.sh", ROOT / "scripts" / "provision-lab-vm.sh",
           ROOT / ".ci" / "run"]


@pytest.mark.skipif(shutil.which("vagrant") is None, reason="vagrant not installed")
def test_vagrantfile_validates():
    proc = subprocess.run(["vagrant", "validate"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
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
