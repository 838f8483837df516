"""`fabriclab-p4c`: a p4c-compatible command line for the embedded compiler.

    fabriclab-p4c --target bmv2 --arch v1model -o OUTDIR \\
        [--p4runtime-files X.p4info.txtpb] [-I DIR] [-D NAME[=VAL]] prog.p4

Exit codes: 0 success, 1 errors in the program, 2 internal error or bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from .errors import CompileError


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="fabriclab-p4c",
        description="Compile a P4_16 v1model program to bmv2 JSON and P4Info "
                    "(a stand-in for p4c's bmv2 back end).")
    ap.add_argument("source", help="P4_16 program")
    ap.add_argument("--target", default="bmv2", help="only bmv2")
    ap.add_argument("--arch", default="v1model", help="only v1model")
    ap.add_argument("-b", dest="target_alias", default=None, help=argparse.SUPPRESS)
    ap.add_argument("-o", "--output", dest="outdir", default=".",
                    help="output directory (default: current directory)")
    ap.add_argument("--p4runtime-files", default=None,
                    help="comma-separated P4Info outputs (.txt/.txtpb text, .json, .bin)")
    ap.add_argument("--p4runtime-file", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--p4runtime-format", default="text", choices=["text", "json", "binary"],
                    help="format for --p4runtime-file (accepted for p4c compatibility)")
    ap.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]")
    ap.add_argument("--std", default="p4-16", help="only p4-16")
    ap.add_argument("--p4v", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--dump-ir", action="store_true",
                    help="print the typed IR as JSON on stdout")
    ap.add_argument("-v", "--verbose", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--Wdisable", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--emit-externs", action="store_true", help=argparse.SUPPRESS)
    return ap


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _p4info_bytes(result, path: Path, fmt: str) -> bytes:
    suffix = path.name
    if suffix.endswith(".json") or fmt == "json":
        from google.protobuf import json_format

        return json_format.MessageToJson(result.p4info).encode()
    if suffix.endswith(".bin") or fmt == "binary":
        return result.p4info.SerializeToString()
    return result.p4info_text().encode()


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    target = args.target_alias or args.target
    if target not in ("bmv2", "bmv2-ss", "bmv2-ss-p4org"):
        print(f"fabriclab-p4c: error: unsupported target {target} (only bmv2)", file=sys.stderr)
        return 2
    if args.arch != "v1model":
        print(f"fabriclab-p4c: error: unsupported architecture {args.arch} (only v1model)",
              file=sys.stderr)
        return 2
    defines = {}
    for d in args.defines:
        name, _, value = d.partition("=")
        defines[name] = value if _ else "1"

    from .compiler import compile_file, dump_ir

    result = compile_file(args.source, args.includes, defines)
    for w in result.warnings:
        print(w, file=sys.stderr)
    if args.dump_ir:
        json.dump(dump_ir(result.typed), sys.stdout, indent=2)
        sys.stdout.write("\n")
    outdir = Path(args.outdir)
    stem = Path(args.source).stem
    write_atomic(outdir / f"{stem}.json", (json.dumps(result.json, indent=2) + "\n").encode())
    p4info_paths: list[Path] = []
    if args.p4runtime_files:
        p4info_paths = [Path(p) for p in args.p4runtime_files.split(",") if p]
    elif args.p4runtime_file:
        p4info_paths = [Path(args.p4runtime_file)]
    else:
        p4info_paths = [outdir / f"{stem}.p4info.txtpb"]
    for p in p4info_paths:
        write_atomic(p, _p4info_bytes(result, p, args.p4runtime_format
                                      if args.p4runtime_file else "text"))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = run(argv)
    except CompileError as e:
        print(str(e), file=sys.stderr)
        code = 1
    except RecursionError:
        print("fabriclab-p4c: error: program nested too deeply", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 130
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    except Exception as e:  # noqa: BLE001 - the CLI promises one line, never a traceback
        print(f"fabriclab-p4c: internal compiler error: {type(e).__name__}: {e} "
              "(please report with the program)", file=sys.stderr)
        code = 2
    return code


if __name__ == "__main__":
    sys.exit(main())
