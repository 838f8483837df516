"""Fixtures shared by the switch tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fabric_json() -> dict:
    """fabric.p4 compiled by the embedded compiler, once per test module."""
    try:
        from p4compiler.compiler import compile_file

        return compile_file(str(REPO / "p4src" / "fabric.p4")).json
    except Exception as e:  # noqa: BLE001 - the compiler is developed in parallel
        pytest.skip(f"embedded compiler cannot compile fabric.p4 yet: {e}")
