"""Fit the training efficiency profile (src/infrafit/catalog/data/perf_profiles_training.csv).

Re-runnable: ``.venv/bin/python scripts/fit_profiles_training.py [--data CSV] [--write] [--cv]``.

Method: every training row of the calibration CSV is reduced to a ``RowPlan`` (the layout the
search picks, its profile-free step terms, and how the metric follows from the step time); the
profile constants are then fitted by least squares on log(predicted / measured) with a weak ridge
pull toward the documented defaults (so a generation with two rows cannot run away), by Adam on
finite-difference gradients. Layouts are re-searched with the fitted profile and the fit repeated
(layout choice depends weakly on the constants). Keys are physical only: chip generation, model
class (transformer / cnn / diffusion). ``--cv`` reports leave-one-accelerator-family-out and
leave-one-workload-out MdAPE; a held-out generation takes the same physical prior as any unseen
generation at run time (``TrainingProfile.resolve_generation``: nearest fitted ancestor in the vendor
lineage, else the median of the same vendor and kind, else of CPUs or of accelerators), printed
beside each family.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from infrafit.catalog import load_catalog
from infrafit.perf.training.profile import (
    COLUMNS,
    COMPUTE_EFFICIENCY_MAX,
    COMPUTE_EFFICIENCY_MAX_SOURCE,
    DEFAULTS,
    PROFILE_FILE,
    TrainingProfile,
)
from infrafit.perf.training.step import Constants, combine
from infrafit.perf.types import SkipRow
from infrafit.perf.validate.training import RowPlan, plan_row, predict_with
from infrafit.workload.models import resolve_model

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "benchmarks" / "data" / "calibration.csv"
OUT = ROOT / "src" / "infrafit" / "catalog" / "data" / PROFILE_FILE
GLOBALS = ("gemm_half_width", "activation_traffic_factor", "tp_comm_exposed_fraction", "dp_overlap_fraction",
           "run_overhead_s")
ALL_CLASSES = ("transformer", "lora", "cnn", "diffusion")
FRACTIONS = {"tp_comm_exposed_fraction", "dp_overlap_fraction"}
RIDGE = 0.02
#: Starting point of the energy per dense bf16 FLOP: 2 pJ (H100 SXM: 700 W / 989 TFLOP/s = 0.71 pJ at
#: peak; board power also feeds HBM, I/O and leakage).
ENERGY_PRIOR_J = 2e-12


class Ctx:
    def __init__(self) -> None:
        self.catalog = load_catalog()

    def resolve_model(self, name: str):
        return resolve_model(name)


def training_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["task"] == "training"]


def make_plans(rows, ctx, profile):
    kept, plans, skipped = [], [], []
    for r in rows:
        try:
            plans.append(plan_row(r, ctx, profile))
            kept.append(r)
        except SkipRow as s:
            skipped.append((r["row_id"], s.reason))
    return kept, plans, skipped


class Problem:
    """Vectorised predictions of all plans as a function of a parameter vector."""

    def __init__(self, rows: list[dict[str, str]], plans: list[RowPlan]) -> None:
        self.meas = np.array([float(r["metric_value"]) for r in rows])
        self.gens = sorted({p.generation for p in plans})
        self.classes = ["lora", "cnn", "diffusion"]  # transformer is the reference class (1.0)
        self.all_idx = np.array([ALL_CLASSES.index(p.model_class) for p in plans])
        self.g_idx = np.array([self.gens.index(p.generation) for p in plans])
        self.c_idx = np.array([self.classes.index(p.model_class) if p.model_class in self.classes else -1
                               for p in plans])
        self.rate = np.array([p.form == "rate" for p in plans])
        self.a = np.array([p.a for p in plans])
        fields = plans[0].raw.__dataclass_fields__
        self.raw = type(plans[0].raw)(**{f: np.array([float(getattr(p.raw, f)) for p in plans]) for f in fields})
        self.n_g, self.n_c = len(self.gens), len(self.classes)
        # energy per FLOP is identifiable only where a generation has SKUs of different TDP per peak
        ratio = np.where(self.raw.power_unit_s > 0, self.raw.power_unit_s / self.raw.compute_unit_s, 0.0)
        self.e_gens = sorted(g for g in self.gens
                             if len({round(float(np.log(v)),
                                           3) for v in ratio[self.g_idx == self.gens.index(g)] if v > 0}) > 1)
        self.e_idx = np.array([self.e_gens.index(p.generation) if p.generation in self.e_gens else -1 for p in plans])

    def x0(self) -> np.ndarray:
        base = [_logit(DEFAULTS["compute_efficiency_generation"] / COMPUTE_EFFICIENCY_MAX)] * self.n_g
        base += [0.0] * self.n_c
        over = [np.log(DEFAULTS["step_overhead_s"])] * len(ALL_CLASSES)
        glob = [np.log(DEFAULTS[k]) if k not in FRACTIONS else _logit(DEFAULTS[k]) for k in GLOBALS]
        energy = [np.log(ENERGY_PRIOR_J)] * len(self.e_gens)
        return np.array(base + over + glob + energy)

    def unpack(self, x: np.ndarray):
        n = self.n_g + self.n_c
        e_gen = COMPUTE_EFFICIENCY_MAX * _sigmoid(x[: self.n_g])  # bounded by the physical ceiling
        e_cls = np.exp(x[self.n_g: n])
        over = np.exp(x[n: n + len(ALL_CLASSES)])
        n2 = n + len(ALL_CLASSES) + len(GLOBALS)
        glob = {k: (_sigmoid(v) if k in FRACTIONS else float(np.exp(v)))
                for k, v in zip(GLOBALS, x[n + len(ALL_CLASSES): n2], strict=True)}
        energy = np.exp(x[n2:])
        return e_gen, e_cls, over, glob, energy

    def energy_rows(self, energy: np.ndarray) -> np.ndarray:
        if not len(energy):
            return np.zeros(len(self.e_idx))
        return np.where(self.e_idx >= 0, energy[np.maximum(self.e_idx, 0)], float(np.min(energy)))

    def predict(self, x: np.ndarray) -> np.ndarray:
        e_gen, e_cls, over, g, energy = self.unpack(x)
        eff = e_gen[self.g_idx] * np.where(self.c_idx >= 0, e_cls[np.maximum(self.c_idx, 0)], 1.0)
        eff = np.minimum(eff, COMPUTE_EFFICIENCY_MAX)
        k = Constants(eff, g["gemm_half_width"], g["activation_traffic_factor"], g["tp_comm_exposed_fraction"],
                      g["dp_overlap_fraction"], over[self.all_idx], self.energy_rows(energy))
        step = combine(self.raw, k).total_s
        return np.where(self.rate, self.a / step, (g["run_overhead_s"] + self.a * step) / 60.0)

    def loss(self, x: np.ndarray, mask: np.ndarray | None = None) -> float:
        err = np.log(self.predict(x) / self.meas)
        if mask is not None:
            err = err[mask]
        return float(np.mean(err**2) + RIDGE * np.mean((x - self.x0()) ** 2))


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def _sigmoid(v):
    out = 1 / (1 + np.exp(-np.asarray(v, dtype=float)))
    return float(out) if out.ndim == 0 else out


def adam(f, x: np.ndarray, steps: int = 1500, lr: float = 0.05, h: float = 1e-4) -> np.ndarray:
    """Adam on central finite-difference gradients (the objective is cheap and vectorised)."""
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t in range(1, steps + 1):
        g = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        x = x - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return x


def to_profile(prob: Problem, x: np.ndarray) -> TrainingProfile:
    e_gen, e_cls, over, glob, energy = prob.unpack(x)
    seen = {ALL_CLASSES[i] for i in set(prob.all_idx.tolist())}
    values = {("compute_efficiency_generation", g, "*"): float(e) for g, e in zip(prob.gens, e_gen, strict=True)}
    values[("compute_efficiency_max", "*", "*")] = COMPUTE_EFFICIENCY_MAX
    values[("compute_efficiency_generation", "*", "*")] = float(np.median(e_gen))
    values[("compute_efficiency_class", "*", "transformer")] = 1.0
    values.update({("compute_efficiency_class", "*", c): float(e) for c, e in zip(prob.classes, e_cls, strict=True)
                   if c in seen})
    # an op class without calibration rows gets the median of the fitted classes (as generations do)
    values[("compute_efficiency_class", "*", "*")] = float(np.median(
        [values[("compute_efficiency_class", "*", c)] for c in ALL_CLASSES if c in seen]))
    values.update({(k, "*", "*"): v for k, v in glob.items()})
    values.update({("step_overhead_s", "*", c): float(o) for c, o in zip(ALL_CLASSES, over, strict=True)
                   if c in seen})
    values[("step_overhead_s", "*", "*")] = float(np.median([o for c, o in zip(ALL_CLASSES, over, strict=True)
                                                             if c in seen]))
    values.update({("energy_per_flop_j", g, "*"): float(e) for g, e in zip(prob.e_gens, energy, strict=True)})
    if len(energy):
        values[("energy_per_flop_j", "*", "*")] = float(np.min(energy))
    return TrainingProfile(values)


def fit(rows, ctx, rounds: int = 2, mask_fn=None):
    profile = TrainingProfile({})
    for _ in range(rounds):
        kept, plans, skipped = make_plans(rows, ctx, profile)
        prob = Problem(kept, plans)
        mask = mask_fn(kept) if mask_fn else None
        x = adam(lambda z, p=prob, mk=mask: p.loss(z, mk), prob.x0())
        profile = to_profile(prob, x)
    return profile, kept, skipped


def mdape_by_family(rows, ctx, profile):
    apes, by = [], defaultdict(list)
    for r in rows:
        try:
            p = predict_with(r, ctx, profile)
        except SkipRow:
            continue
        ape = abs(p - float(r["metric_value"])) / float(r["metric_value"])
        apes.append(ape)
        by[r["accelerator_family"]].append(ape)
    return float(np.median(apes)), {k: (len(v), float(np.median(v))) for k, v in sorted(by.items())}, len(apes)


def cross_validate(rows, ctx, key: str):
    """Hold out each group of ``key``; fit on the rest; MdAPE of the held-out rows."""
    out = {}
    rows, _, _ = make_plans(rows, ctx, TrainingProfile({}))  # groups with no predictable row are not held out
    for group in sorted({r[key] for r in rows}):
        train = [r for r in rows if r[key] != group]
        test = [r for r in rows if r[key] == group]
        profile, _, _ = fit(train, ctx, rounds=1)
        held = TrainingProfile({k: v for k, v in profile.values.items()})
        md, _, n = mdape_by_family(test, ctx, held)
        gens = sorted({r["accelerator_id"] for r in test})
        priors = sorted({f"{g}: {held.resolve_generation(g)[0]}"
                         for g in {str(ctx.catalog.accelerator(a).generation) for a in gens}
                         if not held.has_generation(g)})
        out[group] = (n, md, "; ".join(priors))
    return out


def write_csv(profile: TrainingProfile, n_rows: int, path: Path) -> None:
    today = dt.date.today().isoformat()
    src = ("fitted by scripts/fit_profiles_training.py to the training rows of benchmarks/data/calibration.csv "
           "(MLPerf Training v3.1-v4.1 results, NeMo/MaxText/Neuron/Gaudi tables, Llama 3, PaLM, Megatron papers); "
           "chip peaks, bandwidths and tdp_w from catalog/data/accelerators.csv")
    units = {"compute_efficiency_max": "fraction", "compute_efficiency_generation": "fraction",
             "compute_efficiency_class": "ratio",
             "gemm_half_width": "elements", "activation_traffic_factor": "ratio",
             "tp_comm_exposed_fraction": "fraction", "dp_overlap_fraction": "fraction", "step_overhead_s": "s",
             "run_overhead_s": "s", "energy_per_flop_j": "J"}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for (param, gen, cls), value in sorted(profile.values.items()):
            source = COMPUTE_EFFICIENCY_MAX_SOURCE if param == "compute_efficiency_max" else src
            w.writerow([param, gen, cls, f"{value:.6g}", units[param], today, n_rows, source, today])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    ap.add_argument("--cv", action="store_true", help="leave-one-family-out and leave-one-workload-out CV")
    ap.add_argument("--cv-keys", nargs="+", default=["accelerator_family", "workload"],
                    choices=["accelerator_family", "workload"], help="which cross-validations --cv runs")
    args = ap.parse_args(argv)
    ctx = Ctx()
    rows = training_rows(args.data)
    profile, kept, skipped = fit(rows, ctx)
    md, fam, n = mdape_by_family(rows, ctx, profile)
    print(f"rows {len(rows)}  predicted {n}  skipped {len(rows) - n}  MdAPE {md:.3f}")
    for f, (k, v) in fam.items():
        print(f"  {f:28s} rows {k:4d}  MdAPE {v:.3f}")
    for rid, why in skipped:
        print(f"  skipped {rid}: {why}")
    for (param, gen, cls), value in sorted(profile.values.items()):
        print(f"  {param:32s} {gen:16s} {cls:12s} {value:.4g}")
    if args.write:
        write_csv(profile, len(kept), OUT)
        print(f"wrote {OUT}")
    if args.cv:
        for key in args.cv_keys:
            print(f"leave-one-{key}-out:", flush=True)
            for g, (k, v, prior) in cross_validate(rows, ctx, key).items():
                print(f"  {g:32s} rows {k:4d}  MdAPE {v:.3f}  {prior}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
