"""`fabriclab`: run scenarios, list what exists, show reports, clean up.

    fabriclab run [--scenario stream] [--topo line:2] [--fc lossy] [--target auto]
                  [--servers ns:3|HOST1,HOST2] [--placement block|random|group]
                  [--compiler embedded|p4c] [--switch embedded|bmv2] [--web PORT | --no-view]
    fabriclab bringup --topo fattree:4 [--fault KIND:TARGET ...] [--intended NETFILE]
    fabriclab list
    fabriclab report RUN_DIR
    fabriclab cleanup
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from fabriclab import scenario as scenarios
from fabriclab.results import ResultsError, check_results_root
from fabriclab.status import StatusLine
from fabriclab.view import ViewPortError
from topologies.generators import TopologyError
from topologies.generators import available as topologies_available
from topologies.ledger import cleanup_stale
from topologies.targets import TargetError, resolve
from traffic.metrics import MetricsSchemaError, RunMetrics

ROOT = Path(__file__).resolve().parent.parent
RESULT_MARKERS = ("scenario.json", "metrics.json", "sweep.json")


def _cmd_run(args: argparse.Namespace) -> int:
    from fabriclab.plan import plan
    from fabriclab.runner import IMPLEMENTED_FLOW_CONTROL, run
    from fabriclab.sweep import run_sweep, sweep_table
    from fabriclab.view import ViewOptions, check_port

    loaded = scenarios.load_points(args.scenario)
    swept = {label.split("=")[0].split(":")[0] for label, _s in loaded if label}
    for option, field in (("--topo", "topology"), ("--fc", "flow_control")):
        if getattr(args, option[2:]) and field in swept:
            raise scenarios.ScenarioError(f"{option} would run every point of {args.scenario}'s "
                                          f"sweep over `{field}` on the same value")
    for note in scenarios.load_notes(args.scenario):
        print(f"fabriclab: note: {note}", file=sys.stderr)
    points = [(label, s.with_overrides(args.topo, args.fc, args.servers, args.placement))
              for label, s in loaded]
    for _label, scenario in points:
        plan(scenario)  # a bad topology or fault target fails here, before anything starts
        if scenario.flow_control not in IMPLEMENTED_FLOW_CONTROL:
            raise scenarios.ScenarioError(
                f"flow control {scenario.flow_control.value!r} is not implemented in "
                f"p4src/fabric.p4 yet; available: "
                f"{', '.join(m.value for m in IMPLEMENTED_FLOW_CONTROL)}")
    if args.web is not None:
        check_port(args.web)  # before anything starts
    if not Path(args.program).is_file():
        raise scenarios.ScenarioError(f"--program {args.program}: no such file")
    check_results_root(Path(args.results))
    target = resolve(args.target, args.compiler, args.switch)
    first = points[0][1]
    print(f"fabriclab: scenario {first.name} on {first.topology}, "
          f"flow control {first.flow_control.value}, target {target.label} ({target.reason})"
          + (f", sweep over {len(points)} points" if len(points) > 1 else ""))
    if len(points) > 1:
        if args.web is not None:
            print("fabriclab: --web: a sweep's points are not served (run one point to watch "
                  "it live)", file=sys.stderr)
        with StatusLine() as status:
            sweep_dir, rows = run_sweep(points, target, Path(args.results), status,
                                        Path(args.program))
        print(sweep_table(rows))
        print(f"results: {sweep_dir}")
        return 0 if all(r["verdict"] not in ("error", None) for r in rows) else 1
    with StatusLine() as status:
        if first.compare:  # one run per fabric compared, one result directory
            from fabriclab.compare import run_compared

            result = run_compared(first, target, Path(args.results), status,
                                  Path(args.program))
        else:
            view = None if args.no_view else ViewOptions(web_port=args.web)
            result = run(first, target, Path(args.results), status, Path(args.program), view)
    _print_result(result.metrics)
    print(f"verdict: {result.metrics.verdict}   results: {result.run_dir}")
    return 0 if result.ok else 1


def _cmd_bringup(args: argparse.Namespace) -> int:
    """Bring a fabric up and judge it: acceptance.json/.md/.html (docs/run.md)."""
    from fabriclab.bringup import BringupSettings, bringup
    from fabriclab.plan import bringup_fault
    from topologies.generators import build

    settings = BringupSettings(
        topology=args.topo, faults=tuple(args.fault), intended=args.intended,
        flow_control=scenarios.FlowControl(args.fc), routing=args.routing,
        rate_pps=args.rate, round_s=args.round_s)
    fabric = build(args.topo)  # a bad topology or fault fails here, before anything starts
    for text in settings.faults:
        bringup_fault(text, fabric)
    check_results_root(Path(args.results))
    target = resolve(args.target, None, None)
    print(f"fabriclab: bring-up of {args.topo}, target {target.label}"
          + (f", faults {', '.join(settings.faults)}" if settings.faults else ""))
    with StatusLine() as status:
        run_dir, acc = bringup(settings, target, Path(args.results), status)
    data = acc.as_dict()
    print(f"links: {data['summary']['passed']} passed, {data['summary']['failed']} failed, "
          f"{data['summary']['untested']} untested; phases: " + ", ".join(
              f"{k} {data['phases'][k]:.1f}s" for k in data["phase_order"]))
    for reason in data["reasons"]:
        print(f"  {reason}")
    print(f"verdict: {data['verdict']} in {data['time_to_ready_s']:.1f}s   results: {run_dir}")
    return 0 if data["verdict"] == "ready" else 1


def _print_result(m: RunMetrics) -> None:
    from fabriclab.sweep import sweep_table
    from traffic.result_table import format_table

    if m.flows:
        print(format_table(m.to_json()))
    if m.compared:  # a comparison of fabrics: one line per fabric's run
        print(sweep_table([{"fabric": name, **figures} for name, figures in m.compared.items()],
                          first="fabric"))
    for name, check in m.checks.items():
        print(f"check {name}: {'ok' if check.ok else 'FAILED'} ("
              + ", ".join(f"{k}={v}" for k, v in check.__dict__.items() if k != "ok") + ")")
    if m.cct_ms is not None:
        print(f"collective: cct {m.cct_ms:.1f} ms, algbw {(m.algbw or 0) / 1e6:.3f} "
              f"MB/s, busbw {(m.busbw or 0) / 1e6:.3f} MB/s")
    if m.pause_frames or m.credit_frames:
        print(f"flow control frames captured at hosts: pause {m.pause_frames}, "
              f"credit {m.credit_frames}")
    if m.drops_by_reason:
        print("switch drops by reason: " + ", ".join(
            f"{k}={v}" for k, v in sorted(m.drops_by_reason.items())))
    if m.recovery_gap_ms is not None:
        protected = m.recovery_gap_protected_ms
        print(f"recovery gap after the link failure: {m.recovery_gap_ms:.1f} ms "
              "(frames reaching the receivers; flows whose switch holds a backup port: "
              + ("-" if protected is None else f"{protected:.1f} ms") + ")")
    from traffic import report_sections

    line = report_sections.transport_line(m)
    if line:
        print(line)
    if m.training:
        print(_table(report_sections.TRAINING_COLUMNS,
                     report_sections.training_rows(m.training)))
        for note in report_sections.training_notes(m.training):
            print(note)
    for problem in m.problems:  # as the report's notes; a partial verdict's are its reasons
        if problem not in m.verdict_reasons:
            print(f"problem: {problem}")
    for reason in m.verdict_reasons:
        print(f"verdict {m.verdict}: {reason}")
    if m.error:
        print(f"fabriclab: run failed: {m.error}", file=sys.stderr)


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths))
                     for row in [headers, *rows])


def _cmd_list(_args: argparse.Namespace) -> int:
    print("scenarios:")
    for name in scenarios.available():
        s = scenarios.load(name)
        print(f"  {name:<28} {s.description}")
    print("topologies:")
    for _name, usage in topologies_available().items():
        print(f"  {usage}")
    print("flow control: lossy, pfc, credit    targets: embedded, bmv2, auto    "
          "compilers: embedded, p4c    switches: embedded, bmv2")
    print("servers: --servers ns:N (namespace servers) | ssh:ns:N (driven like real ones) | "
          "HOST1,HOST2    "
          "placements: block, random, group (docs/cluster.md)")
    _print_server_sizes()
    return 0


def _print_server_sizes() -> None:
    """How many servers of C cores forward each fabric at the default link rate."""
    from topologies import capacity
    from topologies.generators import build

    cores = (2, 16, 64)
    print("servers needed at full link rate (default [link] rate_pps), by cores per server:")
    print("  " + f"{'topology':<18}" + "".join(f"{c:>6} cores" for c in cores))
    for topo in ("leafspine:2,2,2", "fattree:4", "leafspine:8,4,4", "fattree:8"):
        fabric = build(topo)
        print("  " + f"{topo:<18}" + "".join(
            f"{capacity.servers_needed(fabric, c):>12}" for c in cores))


def _cmd_report(args: argparse.Namespace) -> int:
    """(Re)write a run's or a sweep's report.md/report.html and print the run's summary."""
    from traffic.report import write

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        print(f"fabriclab: {run_dir} is not a result directory", file=sys.stderr)
        return 2
    # a run writes scenario.json before anything starts, a sweep sweep.json after a point:
    # a folder with neither (nor metrics.json) is no run's, and gets no report written
    if not any((run_dir / name).is_file() for name in RESULT_MARKERS):
        print(f"fabriclab: {run_dir} is not a result directory (it holds none of "
              f"{', '.join(RESULT_MARKERS)})", file=sys.stderr)
        return 2
    metrics_path = run_dir / "metrics.json"
    if metrics_path.exists():
        try:
            metrics = RunMetrics.read(metrics_path)
        except MetricsSchemaError as exc:
            print(f"fabriclab: {exc}", file=sys.stderr)
            metrics = None
        if metrics is not None:
            _print_result(metrics)
            print(f"verdict: {metrics.verdict}")
    from fabriclab.view import write_replay

    replay = write_replay(run_dir)
    if replay is not None:
        print(f"written: {replay}")
    for path in write(run_dir):
        print(f"written: {path}")
    return 0


def _cmd_cleanup(_args: argparse.Namespace) -> int:
    lines = cleanup_stale()
    for line in lines:
        print(line)
    if not lines:
        print("nothing to clean up")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fabriclab", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run a scenario")
    p_run.add_argument("--scenario", default="stream")
    p_run.add_argument("--topo", help="override the scenario's topology, e.g. fattree:4")
    p_run.add_argument("--fc", help="override the flow-control mode: lossy, pfc, credit")
    p_run.add_argument("--servers", help="spread the fabric over servers: ns:N (N namespace "
                       "servers made by the run), ssh:ns:N (the same, every process through a "
                       "supervisor over SSH as on real servers) or HOST1,HOST2,... (real "
                       "servers over SSH; docs/cluster.md)")
    p_run.add_argument("--placement", help="which server runs which node: block, random "
                       "or group (default: keeps pods and leaf groups together)")
    p_run.add_argument("--target", default="auto",
                       help="embedded, bmv2 (real simple_switch_grpc; with p4c where installed) "
                            "or auto (bmv2 where p4c and simple_switch_grpc are installed)")
    p_run.add_argument("--compiler", default=None,
                       help="embedded or p4c (default: p4c for the bmv2 switch where installed)")
    p_run.add_argument("--switch", default=None, help="embedded or bmv2 (default: from --target)")
    p_run.add_argument("--results", default=str(ROOT / "results"))
    p_run.add_argument("--program", default=str(ROOT / "p4src" / "fabric.p4"),
                       help="the P4 program the SM pushes (default p4src/fabric.p4)")
    view = p_run.add_mutually_exclusive_group()
    view.add_argument("--web", type=int, metavar="PORT",
                      help="serve the live view on http://127.0.0.1:PORT/ while the run lasts "
                           "(0: any free port; the URL is printed)")
    view.add_argument("--no-view", action="store_true",
                      help="do not record the live view (no replay in the report); by default "
                           "the SM samples every switch once a second (docs/liveview.md)")
    p_run.set_defaults(func=_cmd_run)
    p_up = sub.add_parser("bringup", help="bring a fabric up and judge it (acceptance test)")
    p_up.add_argument("--topo", required=True, help="the fabric, e.g. fattree:4 or netfile:PATH")
    p_up.add_argument("--fault", action="append", default=[], metavar="KIND:TARGET",
                      help="miswire:LINK,LINK  missing:LINK  lossy:LINK@F  slow:LINK@F  "
                           "old_program:SWITCH  unreachable:SWITCH (repeatable)")
    p_up.add_argument("--intended", help="a net-file of the intended fabric (default: --topo)")
    p_up.add_argument("--fc", default="lossy", choices=[m.value for m in scenarios.FlowControl])
    p_up.add_argument("--routing", default="ftree")
    p_up.add_argument("--rate", type=int, default=1000, help="every link's rate, packets/s")
    p_up.add_argument("--round-s", type=float, default=1.5, help="seconds per stress round")
    p_up.add_argument("--target", default="auto")
    p_up.add_argument("--results", default=str(ROOT / "results"))
    p_up.set_defaults(func=_cmd_bringup)
    sub.add_parser("list", help="scenarios and topologies").set_defaults(func=_cmd_list)
    p_rep = sub.add_parser("report", help="show a run's results")
    p_rep.add_argument("run_dir")
    p_rep.set_defaults(func=_cmd_report)
    sub.add_parser("cleanup", help="remove what interrupted runs left").set_defaults(
        func=_cmd_cleanup)
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the run's teardown happens.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return args.func(args)
    except (scenarios.ScenarioError, TopologyError, TargetError, ViewPortError,
            ResultsError) as exc:
        print(f"fabriclab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fabriclab: interrupted; everything the run created was removed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
