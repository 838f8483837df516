"""Shared pytest fixtures and markers for fabriclab's tests."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _can_emulate() -> str | None:
    """None if Mininet tests can run here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("mnexec") is None:
        return "needs Mininet (apt-get install mininet)"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, check=False)
    if probe.returncode != 0:
        return "needs network namespaces (ip netns)"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _can_emulate()
    bmv2 = shutil.which("simple_switch_grpc") and shutil.which("p4c")
    for item in items:
        if reason and "mininet" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=f"Mininet test: {reason}"))
        if not bmv2 and "bmv2" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="needs simple_switch_grpc and p4c on PATH"))
