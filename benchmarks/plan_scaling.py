"""How plan time grows with the catalog: every example planned in-process over the built-in offers,
then over catalogs that copy every offer 10x and 100x (new ids, same rows: the shape a refreshed
real catalog of thousands of offers has). The copies go into a whole catalog folder (``base_dir``),
not an overlay: at 100x the offers file is ~28 MB, over the 16 MiB cap on a user's overlay.
Targets (issue 11): 10x <= 2x the 1x time, 100x <= 6x.

Usage: ``.venv/bin/python benchmarks/plan_scaling.py [--copies 1,10,100] [--repeat 3] [--examples a,b]``.
Prints the best in-process plan time per example and copy factor (catalog loading excluded, it is
cached after the first call; ``benchmarks/catalog_load.py`` measures it) and the ratios to 1x.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd

from infrafit.catalog import DATA_DIR, load_catalog
from infrafit.errors import NoFeasibleOption
from infrafit.search.planner import plan
from infrafit.workload.fleet import Fleet, load_spec_or_fleet
from infrafit.workload.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]


def write_catalog(folder: Path, copies: int, resellers: bool) -> Path:
    """A copy of the built-in catalog whose offers.csv also holds ``copies - 1`` extra copies of every
    offer: the same seller (``resellers=False``: dominated duplicates the planner prunes before any model
    runs) or another seller each (``resellers=True``: not dominated, so every copy is evaluated)."""
    shutil.copytree(DATA_DIR, folder)
    offers = pd.read_csv(DATA_DIR / "offers.csv", dtype=str, keep_default_na=False)
    extra = [offers.assign(id=offers["id"] + f"_copy{k}",
                           provider=offers["provider"] + (f" reseller {k}" if resellers else ""))
             for k in range(1, copies)]
    pd.concat([offers, *extra]).to_csv(folder / "offers.csv", index=False)
    return folder


def best_plan_s(spec: Path, base: Path | None, repeat: int) -> tuple[float, int]:
    catalog = load_catalog(base_dir=base)
    workload = load_spec(spec, catalog)
    times, n_offers = [], len(catalog.offers)
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            plan(workload, catalog, top=5)
        except NoFeasibleOption:
            pass
        times.append(time.perf_counter() - start)
    return min(times), n_offers


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", default="1,10,100")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--examples", default="")
    ap.add_argument("--resellers", action="store_true", help="copies from other sellers (not prunable)")
    args = ap.parse_args()
    copies = [int(c) for c in args.copies.split(",")]
    # a fleet spec (``workloads:``) is planned per workload; its items are single workloads like these
    specs = [s for s in sorted((ROOT / "examples").glob("*.yaml")) if not isinstance(load_spec_or_fleet(s), Fleet)]
    if args.examples:
        specs = [s for s in specs if s.stem in args.examples.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        overlays = {c: (write_catalog(Path(tmp) / f"x{c}", c, args.resellers) if c > 1 else None) for c in copies}
        print(f"{'example':26s} " + " ".join(f"{f'{c}x_s':>8s}" for c in copies) + "  ratios")
        for spec in specs:
            rows = {c: best_plan_s(spec, overlays[c], args.repeat) for c in copies}
            base = rows[copies[0]][0]
            ratios = " ".join(f"{rows[c][0] / base:5.2f}" for c in copies[1:])
            print(f"{spec.stem:26s} " + " ".join(f"{rows[c][0]:8.3f}" for c in copies) + f"  {ratios}")
        print("offers: " + ", ".join(f"{c}x = {best_plan_s(specs[0], overlays[c], 1)[1]:,}" for c in copies))


if __name__ == "__main__":
    main()
