"""Plan and estimate are one engine: for every example, every shown option is re-estimated with its
configuration, offer and operating point, and the figures must be identical. Prints the plan time,
the time of one option's estimate, and how many options matched (exit 1 on any mismatch).

Usage: ``.venv/bin/python benchmarks/plan_vs_estimate.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from infrafit.catalog import load_catalog
from infrafit.perf import Config, OperatingPoint, estimate
from infrafit.search.option import host_spec
from infrafit.search.planner import plan
from infrafit.search.types import Option
from infrafit.workload.fleet import Fleet, load_spec_or_fleet

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("throughput", "latency", "time_to_train_s")


def _estimate(workload, catalog, part: Option, serve: bool) -> dict:
    perf, lay = part.performance, part.performance["parallelism"]
    cfg = Config(part.accelerator, part.count, part.precision, None if part.stack == "default" else part.stack,
                 lay["tp"], lay["pp"], lay["dp"], lay["ep"], lay.get("cp", 1))
    point = perf.get("operating_point") or {}
    op = OperatingPoint(concurrency=point.get("concurrency"), batch=point.get("batch")) if serve else None
    row = catalog.offers[catalog.offers["id"] == part.offer_id].iloc[0].to_dict()
    host = host_spec(catalog, {**row, "instances_per_replica": part.server["instances_per_replica"]})
    view = workload.model_copy(update={"task": "inference"}) if serve else workload
    return estimate(view, cfg, catalog, point=op, host=host).to_json()


def main() -> int:
    catalog, bad = load_catalog(), 0
    print(f"{'example':26s} {'plan_s':>7s} {'estimate_s':>10s} options matched")
    specs = sorted((ROOT / "examples").glob("*.yaml")) + [ROOT / "tests" / "fixtures" / "specs" /
                                                          "deepseek-v3-chat.yaml"]
    for spec in specs:
        workload = load_spec_or_fleet(spec, catalog)
        if isinstance(workload, Fleet):  # a fleet: its workloads are plans of their own
            continue
        start = time.perf_counter()
        p = plan(workload, catalog, top=5)
        plan_s, est_s, matched, total = time.perf_counter() - start, 0.0, 0, 0
        for option in p.options:
            for part in option.parts or (option,):
                if not (catalog.offers["id"] == part.offer_id).any():  # the spec's own current platform
                    continue
                serve = part.part == "serve" or (not option.parts and workload.inference is not None
                                                 and not workload.is_training)
                t0 = time.perf_counter()
                got = _estimate(workload, catalog, part, serve)
                est_s = time.perf_counter() - t0
                total += 1
                matched += all(got[k] == part.performance[k] for k in KEYS)
        bad += total - matched
        print(f"{spec.stem:26s} {plan_s:7.3f} {est_s:10.4f} {matched}/{total}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
