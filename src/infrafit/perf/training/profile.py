"""The training efficiency profile: fitted constants, keyed only by physical quantities.

``catalog/data/perf_profiles_training.csv`` holds one row per constant: ``parameter``, the keys
``generation`` (chip generation, ``*`` = any) and ``model_class`` (``transformer`` GEMM-heavy,
``lora`` adapter fine-tuning of a transformer, ``cnn``, ``diffusion`` UNet; ``*`` = any), ``value`` with its ``unit``,
and provenance columns.
It is written by ``scripts/fit_profiles_training.py``; nothing here names a benchmark or a row.

Parameters (see docs/performance-training.md):
* ``compute_efficiency_generation`` (per generation) x ``compute_efficiency_class`` (per model
  class): achieved fraction of dense peak FLOP/s on large GEMM-heavy work, never above
  ``compute_efficiency_max``.
* ``compute_efficiency_max``: the physical ceiling of that product, ``COMPUTE_EFFICIENCY_MAX``
  (not fitted).
* ``gemm_half_width``: hidden width at which GEMM efficiency is half its large-shape value
  (efficiency x w / (w + w_half), w = hidden / sqrt(tp)).
* ``activation_traffic_factor``: HBM bytes moved per byte of stored activation (element-wise ops).
* ``tp_comm_exposed_fraction``: share of tensor/context/expert-parallel traffic not hidden.
* ``dp_overlap_fraction``: share of one micro-batch's compute the gradient sync can hide behind.
* ``step_overhead_s``: fixed time per optimizer step (launches, synchronisation, host work).
* ``run_overhead_s``: fixed on-the-clock time per MLPerf run (start-up beyond the allowance).
* ``energy_per_flop_j`` (per generation): board energy per dense bf16 FLOP; sustained FLOP/s is at
  most TDP / it (power-limited clocks). Fitted only for generations whose SKUs differ in TDP per
  peak FLOP/s (otherwise it is not identifiable); ``*`` = the lowest fitted value (an unseen
  generation is most likely a newer, more efficient process node); 0 = no cap.

Unseen generations (no ``compute_efficiency_generation`` row) take a physical prior instead of the
plain median (``resolve_generation``): the nearest fitted ancestor in the vendor's architecture
lineage (``catalog/data/perf_generation_lineage.csv``: B300 is Blackwell, MI355X (CDNA 4) -> CDNA 3,
Gaudi 3 -> Gaudi 2, Granite Rapids -> Emerald Rapids -> Sapphire Rapids; a generation with fitted
ancestor and successor takes the geometric mean of the two), else the median of the
fitted generations of the same vendor and chip kind, else of the same class of chip (CPUs apart from
accelerators: a CPU's matrix unit sits behind a cache hierarchy and DDR, not HBM), else ``*``.
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from infrafit.errors import CatalogError

PROFILE_FILE = "perf_profiles_training.csv"
LINEAGE_FILE = "perf_generation_lineage.csv"
COLUMNS = ("parameter", "generation", "model_class", "value", "unit", "fit_date", "fit_rows", "source",
           "retrieved_on")
MODEL_CLASSES = ("transformer", "lora", "cnn", "diffusion")

#: Ceiling of the achieved fraction of dense peak FLOP/s: the best maximum achievable matmul FLOP/s
#: (MAMF, large perfectly aligned bf16 GEMMs on one chip) measured on any accelerator, 267.9 of 312
#: TFLOP/s = 85.9 % on A100 SXM (GH200 83.0 %, A100 PCIe 82.2 %, H100 SXM lower); Bekman,
#: "Machine Learning Engineering", github.com/stas00/ml-engineering compute/accelerator/README.md,
#: "Maximum Achievable Matmul FLOPS comparison table". A training step also runs attention,
#: element-wise ops and collectives, so no whole-model efficiency can exceed it.
COMPUTE_EFFICIENCY_MAX = 0.859
COMPUTE_EFFICIENCY_MAX_SOURCE = ("maximum achievable matmul FLOPS (MAMF) table, best of all accelerators: A100 SXM "
                                 "267.9/312 TFLOP/s bf16 = 85.9%; github.com/stas00/ml-engineering "
                                 "compute/accelerator/README.md @744d01e")

#: Used only when the data file lacks a parameter; physically plausible, documented defaults.
DEFAULTS: dict[str, float] = {
    "compute_efficiency_max": COMPUTE_EFFICIENCY_MAX,
    "compute_efficiency_generation": 0.5,
    "compute_efficiency_class": 1.0,
    "gemm_half_width": 256.0,
    "activation_traffic_factor": 3.0,
    "tp_comm_exposed_fraction": 0.5,
    "dp_overlap_fraction": 0.8,
    "step_overhead_s": 0.005,
    "run_overhead_s": 60.0,
    "energy_per_flop_j": 0.0,
}


@dataclass(frozen=True)
class TrainingProfile:
    """Fitted constants; look-ups fall back from exact key to ``*`` to the documented default."""

    values: dict[tuple[str, str, str], float] = field(default_factory=dict)

    def get(self, parameter: str, generation: str = "*", model_class: str = "*") -> float:
        for key in ((parameter, generation, model_class), (parameter, generation, "*"),
                    (parameter, "*", model_class), (parameter, "*", "*")):
            if key in self.values:
                return self.values[key]
        return DEFAULTS[parameter]

    def has_generation(self, generation: str) -> bool:
        return ("compute_efficiency_generation", generation, "*") in self.values

    def fitted_generations(self) -> list[str]:
        return sorted(g for (p, g, _c) in self.values if p == "compute_efficiency_generation" and g != "*")

    def resolve_generation(self, generation: str) -> tuple[str, float]:
        """(how the efficiency of ``generation`` was found, the generation efficiency): the fitted
        row, else the lineage prior (module docstring)."""
        if self.has_generation(generation):
            return generation, self.get("compute_efficiency_generation", generation)
        return generation_prior(self, generation)

    def generation_efficiency(self, generation: str) -> float:
        return self.resolve_generation(generation)[1]

    def efficiency_bound(self) -> float:
        """The ceiling of any compute efficiency (at most ``COMPUTE_EFFICIENCY_MAX``)."""
        return min(self.get("compute_efficiency_max"), COMPUTE_EFFICIENCY_MAX)

    def compute_efficiency(self, generation: str, model_class: str) -> float:
        eff = self.generation_efficiency(generation) * self.get(
            "compute_efficiency_class", "*", model_class)
        return min(eff, self.efficiency_bound())

    def with_values(self, updates: dict[tuple[str, str, str], float]) -> TrainingProfile:
        merged = dict(self.values)
        merged.update(updates)
        return TrainingProfile(merged)


def _parse(rows: list[dict[str, str]], where: str) -> TrainingProfile:
    values: dict[tuple[str, str, str], float] = {}
    for i, row in enumerate(rows, start=2):
        missing = [c for c in COLUMNS if c not in row]
        if missing:
            raise CatalogError(f"{where}:{i}: missing columns {missing}", fix=f"use the header {','.join(COLUMNS)}")
        if row["parameter"] not in DEFAULTS:
            raise CatalogError(f"{where}:{i}: unknown parameter {row['parameter']!r}",
                               fix=f"use one of {', '.join(DEFAULTS)}")
        try:
            value = float(row["value"])
        except ValueError:
            raise CatalogError(f"{where}:{i}: value {row['value']!r} is not a number",
                               fix="write a plain decimal number") from None
        values[(row["parameter"], row["generation"] or "*", row["model_class"] or "*")] = value
    return TrainingProfile(values)


def read_profile(path: Path | str) -> TrainingProfile:
    with open(path, newline="", encoding="utf-8") as fh:
        return _parse(list(csv.DictReader(fh)), str(path))


@lru_cache(maxsize=1)
def load_profile() -> TrainingProfile:
    """The built-in profile (an empty profile, i.e. the defaults, when the file is absent)."""
    ref = resources.files("infrafit.catalog").joinpath("data", PROFILE_FILE)
    if not ref.is_file():
        return TrainingProfile({})
    return _parse(list(csv.DictReader(io.StringIO(ref.read_text(encoding="utf-8"), newline=""))), PROFILE_FILE)


@dataclass(frozen=True)
class Lineage:
    """One row of the lineage table: a generation, its vendor and chip kind, its predecessor."""

    generation: str
    vendor: str
    kind: str
    predecessor: str


def _read_lineage(rows: list[dict[str, str]]) -> dict[str, Lineage]:
    return {r["generation"]: Lineage(r["generation"], r["vendor"], r["kind"], r.get("predecessor") or "")
            for r in rows if r.get("generation")}


@lru_cache(maxsize=1)
def load_lineage() -> dict[str, Lineage]:
    """The built-in generation lineage (empty when the file is absent)."""
    ref = resources.files("infrafit.catalog").joinpath("data", LINEAGE_FILE)
    if not ref.is_file():
        return {}
    return _read_lineage(list(csv.DictReader(io.StringIO(ref.read_text(encoding="utf-8"), newline=""))))


def _is_cpu(entry: Lineage) -> bool:
    return entry.kind == "cpu"


def _nearest_fitted_ancestor(profile: TrainingProfile, generation: str, lineage: dict[str, Lineage]) -> str:
    seen, step = {generation}, lineage[generation].predecessor
    while step and step not in seen:
        if profile.has_generation(step):
            return step
        seen.add(step)
        step = lineage[step].predecessor if step in lineage else ""
    return ""


def _nearest_fitted_descendants(profile: TrainingProfile, generation: str,
                                lineage: dict[str, Lineage]) -> list[str]:
    """The fitted successors nearest to ``generation`` in the lineage (breadth-first, one level)."""
    level, seen = [generation], {generation}
    while level:
        level = [g for g, e in lineage.items() if e.predecessor in level and g not in seen]
        seen.update(level)
        hits = sorted(g for g in level if profile.has_generation(g))
        if hits:
            return hits
    return []


def generation_prior(profile: TrainingProfile, generation: str,
                     lineage: dict[str, Lineage] | None = None) -> tuple[str, float]:
    """Efficiency prior of a generation without a fitted row: between a fitted ancestor and fitted
    successors (a held-out middle generation) the geometric mean of both; else the nearest fitted ancestor, else the
    median over fitted generations of the same vendor and kind, else of the same class (CPU or
    accelerator), else the ``*`` row. Returns (a description of the prior, the efficiency)."""
    lineage = load_lineage() if lineage is None else lineage
    entry = lineage.get(generation)
    star = profile.get("compute_efficiency_generation")
    if entry is None:
        return "* (median of the fitted generations)", star
    ancestor = _nearest_fitted_ancestor(profile, generation, lineage)
    descendants = _nearest_fitted_descendants(profile, generation, lineage)
    if ancestor and descendants:  # between two fitted generations: the geometric mean of both sides
        effs = [profile.get("compute_efficiency_generation", g) for g in descendants]
        desc = float(np.exp(np.mean(np.log(effs))))
        eff = float(np.sqrt(profile.get("compute_efficiency_generation", ancestor) * desc))
        return f"{ancestor} and {'/'.join(descendants)} (lineage neighbours of {generation})", eff
    if ancestor:
        return f"{ancestor} (predecessor of {generation})", profile.get("compute_efficiency_generation", ancestor)
    fitted = [(g, lineage[g]) for g in profile.fitted_generations() if g in lineage]
    groups = ((f"{entry.vendor} {entry.kind}", lambda e: e.vendor == entry.vendor and e.kind == entry.kind),
              ("CPU" if _is_cpu(entry) else "accelerator", lambda e: _is_cpu(e) == _is_cpu(entry)))
    for label, same in groups:
        effs = [profile.get("compute_efficiency_generation", g) for g, e in fitted if same(e)]
        if effs:
            return f"median of fitted {label} generations", float(statistics.median(effs))
    return "* (median of the fitted generations)", star


def model_class_of(kind: str, method: str = "full") -> str:
    """Op class of a model kind: transformers are GEMM-heavy; adapter fine-tuning (LoRA/QLoRA) of a
    transformer mixes in small adapter GEMMs and frozen-weight paths; CNNs; diffusion UNets."""
    if method != "full" and kind not in ("cnn", "diffusion"):
        return "lora"
    if kind == "cnn":
        return "cnn"
    if kind == "diffusion":
        return "diffusion"
    return "transformer"
