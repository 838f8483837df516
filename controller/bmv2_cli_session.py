"""A persistent session with bmv2's runtime CLI, run by the toolchain's own Python.

Not imported by fabriclab: `controller/bmv2_runtime.py` starts it as
`python3 bmv2_cli_session.py LIB_DIR THRIFT_PORT` with the interpreter of
`simple_switch_CLI` (which has bmv2's Thrift bindings in LIB_DIR). It reads one
runtime-CLI command per line on stdin, runs it with bmv2's own command parser
(sswitch_CLI), and writes what it printed followed by a line holding only
END_MARK, so each command costs a Thrift round trip instead of a CLI start.
"""

import contextlib
import io
import sys

END_MARK = "\x1e-end-of-command"


def main() -> int:
    lib_dir, thrift_port = sys.argv[1], int(sys.argv[2])
    sys.path.append(lib_dir)
    import runtime_CLI
    import sswitch_CLI

    pre = runtime_CLI.PreType.SimplePreLAG
    services = runtime_CLI.RuntimeAPI.get_thrift_services(pre)
    services.extend(sswitch_CLI.SimpleSwitchAPI.get_thrift_services())
    standard, mc, sswitch = runtime_CLI.thrift_connect("127.0.0.1", thrift_port, services)
    try:
        runtime_CLI.load_json_config(standard, None)
    except Exception as exc:  # noqa: BLE001 - no pipeline yet: queue commands still work
        print(f"note: no P4 program loaded yet ({type(exc).__name__})")
    api = sswitch_CLI.SimpleSwitchAPI(pre, standard, mc, sswitch)
    print(END_MARK, flush=True)
    for line in sys.stdin:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                api.onecmd(line.strip())
            except Exception as exc:  # noqa: BLE001 - reported to the caller, session goes on
                print(f"Error: {type(exc).__name__}: {exc}")
        sys.stdout.write(out.getvalue())
        print(END_MARK, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
