"""The fabriclab-p4c command line: p4c-compatible flags, outputs, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4c_helpers import PROGRAMS, REPO

from p4compiler import cli

FABRIC = PROGRAMS / "fabric_snapshot" / "fabric.p4"
LIVE_FABRIC = REPO / "p4src" / "fabric.p4"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p4compiler.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.timing
def test_fabric_compiles_to_json_and_p4info_in_under_two_seconds(tmp_path: Path) -> None:
    start = time.monotonic()
    r = run_cli("--target", "bmv2", "--arch", "v1model", "-o", str(tmp_path), str(FABRIC))
    elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    assert elapsed < 2.0
    program = json.loads((tmp_path / "fabric.json").read_text())
    assert program["__meta__"]["version"] == [2, 23]
    info = text_format.Parse((tmp_path / "fabric.p4info.txtpb").read_text(),
                             p4info_pb2.P4Info())
    assert "FabricIngress.dlid_route" in [t.preamble.name for t in info.tables]


def test_project_fabric_program_compiles(tmp_path: Path) -> None:
    r = run_cli("--target", "bmv2", "--arch", "v1model", "-o", str(tmp_path),
                str(LIVE_FABRIC))
    assert r.returncode == 0, r.stderr


def test_p4runtime_files_names_the_p4info_output(tmp_path: Path) -> None:
    out = tmp_path / "x.p4info.txtpb"
    r = run_cli("--target", "bmv2", "--arch", "v1model", "-o", str(tmp_path),
                "--p4runtime-files", str(out), "--p4runtime-format", "text", str(FABRIC))
    assert r.returncode == 0, r.stderr
    assert out.exists()
    assert not (tmp_path / "fabric.p4info.txtpb").exists()


def test_syntax_error_gives_location_exit_1_and_no_output(tmp_path: Path) -> None:
    src = tmp_path / "bad.p4"
    src.write_text("#include <v1model.p4>\nheader h_t { bit<8> f }\n")
    r = run_cli("-o", str(tmp_path / "out"), str(src))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{src}:2:") or ":2:" in r.stderr.splitlines()[0]
    assert "error" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_missing_file_is_a_clean_error(tmp_path: Path) -> None:
    r = run_cli("-o", str(tmp_path), str(tmp_path / "nope.p4"))
    assert r.returncode == 1
    assert "cannot read" in r.stderr and "Traceback" not in r.stderr


def test_internal_error_prints_one_line_and_exits_2(monkeypatch, capsys) -> None:
    import p4compiler.compiler as compiler

    def boom(*a, **k):
        raise KeyError("kaboom")

    monkeypatch.setattr(compiler, "compile_file", boom)
    assert cli.main(["-o", "/tmp", str(FABRIC)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal compiler error" in err


def test_define_and_include_flags(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "extra.p4").write_text("const bit<8> EXTRA = WIDTH;\n")
    src = tmp_path / "prog.p4"
    src.write_text((REPO / "tests/compiler/programs/basic_ipv4.p4").read_text().replace(
        "#include <v1model.p4>", "#include <v1model.p4>\n#include <extra.p4>"))
    r = run_cli("-I", str(inc), "-D", "WIDTH=7", "-o", str(tmp_path), str(src))
    assert r.returncode == 0, r.stderr


def test_dump_ir_prints_the_typed_program(tmp_path: Path) -> None:
    r = run_cli("--dump-ir", "-o", str(tmp_path), str(FABRIC))
    assert r.returncode == 0, r.stderr
    ir = json.loads(r.stdout)
    ingress = ir["blocks"]["ig"]
    assert ingress["name"] == "FabricIngress"
    assert ingress["tables"][0]["keys"][0] == {
        "name": "hdr.lrh.dlid", "match_kind": "exact",
        "expr": ingress["tables"][0]["keys"][0]["expr"]}
    assert ingress["tables"][0]["keys"][0]["expr"]["type"] == "bit<16>"


def test_outputs_are_replaced_atomically(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    cli.write_atomic(target, b"new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
