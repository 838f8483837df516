"""`make bench`: run every benchmark, print a table, write results/bench.json.

bench.json is a flat object of named figures so runs can be compared over time.
A benchmark that cannot run here (no root, a missing tool) is reported as
skipped with the reason, and the others still run.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module name -> what it measures; each module has main() -> dict[str, float]
BENCHMARKS = {
    "bench.compile_time": "embedded compiler: seconds to compile p4src/*.p4",
    "bench.switch_pps": "embedded switch vs a bare Python forwarder, packets/s",
    "bench.bmv2_pps": "real bmv2 (simple_switch_grpc) beside the embedded switch on fabric.p4, "
                      "packets/s (skipped without simple_switch_grpc)",
    "bench.idle_switches": "CPU use of idle embedded switches",
    "bench.analysis_rate": "trace analysis of 1M frames, frames/s, vs Scapy decoding alone",
    "bench.routing": "routing engines on k-ary fat trees to 110k hosts (s, peak MB) and "
                     "OpenSM's ftree under ibsim, as a ratio",
    "bench.switchover": "link failure on 4, 20 and 45 switches (Mininet): agents' detection and "
                        "switchover, receivers' outage per direction, global reroute",
    "bench.retransmission": "go-back-N against selective repeat after a link failure "
                            "(Mininet): data-plane and delivery gaps, frames retransmitted",
}


def main() -> int:
    figures: dict[str, float | str] = {}
    for module_name, what in BENCHMARKS.items():
        print(f"== {module_name}: {what}", flush=True)
        started = time.monotonic()
        try:
            module = importlib.import_module(module_name)
            result = module.main()
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            figures[f"{module_name.split('.')[-1]}_skipped"] = "not written yet"
            print("   skipped: not written yet")
            continue
        except Exception as exc:  # noqa: BLE001 - one failing benchmark must not hide the rest
            figures[f"{module_name.split('.')[-1]}_error"] = f"{type(exc).__name__}: {exc}"
            print(f"   error: {type(exc).__name__}: {exc}")
            continue
        figures.update(result)
        print(f"   ({time.monotonic() - started:.1f} s)")
    width = max(len(k) for k in figures) if figures else 0
    print("\n" + "\n".join(f"{k:<{width}}  {v:.4g}" if isinstance(v, float) else f"{k:<{width}}  {v}"
                           for k, v in figures.items()))
    out = ROOT / "results" / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, out)
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
