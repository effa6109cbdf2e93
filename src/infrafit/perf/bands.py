"""Uncertainty bands: how far the truth may be from each prediction, from cross-validated residuals.

``catalog/data/perf_profiles_bands.csv`` (written by ``scripts/fit_bands.py``, see ``perf.fit.bands``) holds,
per task kind (``llm``, ``nonllm``, ``training``) x metric class (``ttft``, ``tpot``, ``latency``,
``throughput``, ``time_to_train``) x regime, the 10th, 50th and 90th percentiles of ``measured /
predicted``. The regime is ``in_fit`` when both the model and the chip were in the fit that made the
profiles (``perf_profiles_members.csv``), else ``unseen``, whose band comes from held-out predictions. A
prediction ``v`` then carries ``{p10: v r10, p50: v r50, p90: v r90}``: an 80 % interval of what will be
measured (``validate`` reports how often that holds: ``band_coverage``).

The planner checks SLOs at a chosen risk (``inference.slo.risk`` / ``plan --risk``): ``p90`` (default)
requires the band's p90 of each latency within its limit, i.e. a configuration passes only if the
latency is under the SLO in 9 cases out of 10 of the model's error; ``p50`` checks the prediction itself
(the band's median within a few per cent).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from infrafit.errors import CatalogError

BANDS_FILE = "perf_profiles_bands.csv"
MEMBERS_FILE = "perf_profiles_members.csv"
RISKS = ("p50", "p90")
DEFAULT_RISK = "p90"
#: The metric class of each figure a prediction reports.
FIGURE_METRIC = {"ttft_p99_s": "ttft", "tpot_p99_s": "tpot", "e2e_p99_s": "latency", "latency_p99_s": "latency",
                 "time_to_train_s": "time_to_train", "output_tokens_per_s": "throughput",
                 "requests_per_s": "throughput", "samples_per_s": "throughput", "tokens_per_s": "throughput"}

#: The band's metric class of a calibration set's ``metric_kind`` (rates and fractions are throughput).
METRIC_CLASS = {"ttft_s": "ttft", "tpot_s": "tpot", "per_token_latency_s": "tpot", "e2e_latency_s": "latency",
                "latency_p99_s": "latency", "time_to_train_min": "time_to_train", "time_to_train_s": "time_to_train"}


def metric_class(metric_kind: str) -> str:
    return METRIC_CLASS.get(metric_kind, "throughput")


@dataclass(frozen=True)
class Band:
    task_kind: str
    metric: str
    regime: str
    p10_ratio: float
    p50_ratio: float
    p90_ratio: float
    rows: int
    source: str

    def ratio(self, risk: str) -> float:
        """What a prediction is multiplied by before an SLO check at ``risk``: the band's p90 ratio for
        ``p90``; 1 for ``p50`` (the prediction itself: the fit centres it, band medians are 0.94-1.08, and
        a figure shown over its SLO must not pass it)."""
        return self.p90_ratio if risk == "p90" else 1.0


def _data(name: str) -> Path:
    return Path(str(resources.files("infrafit.catalog") / "data" / name))


@lru_cache(maxsize=1)
def bands() -> dict[tuple[str, str, str], Band]:
    path = _data(BANDS_FILE)
    out = {}
    with path.open(newline="") as fh:
        for line, r in enumerate(csv.DictReader(fh), start=2):
            try:
                b = Band(r["task_kind"], r["metric"], r["regime"], float(r["p10_ratio"]), float(r["p50_ratio"]),
                         float(r["p90_ratio"]), int(r["rows_count"]), r["source"])
            except (KeyError, ValueError) as exc:
                raise CatalogError(f"{path}:{line}: not a band row ({exc})",
                                   fix="regenerate it with scripts/fit_bands.py") from None
            out[(b.task_kind, b.metric, b.regime)] = b
    return out


@lru_cache(maxsize=1)
def members() -> dict[tuple[str, str], frozenset[str]]:
    """(task kind, ``model`` | ``accelerator``) -> the ids that were in that fit."""
    found: dict[tuple[str, str], set[str]] = {}
    with _data(MEMBERS_FILE).open(newline="") as fh:
        for r in csv.DictReader(fh):
            found.setdefault((r["task_kind"], r["member"]), set()).add(r["id"])
    return {k: frozenset(v) for k, v in found.items()}


def in_fit(task_kind: str, model_id: str, accelerator_id: str) -> tuple[bool, bool]:
    m = members()
    return (model_id in m.get((task_kind, "model"), frozenset()),
            accelerator_id in m.get((task_kind, "accelerator"), frozenset()))


def regime(task_kind: str, model_id: str, accelerator_id: str) -> str:
    return "in_fit" if all(in_fit(task_kind, model_id, accelerator_id)) else "unseen"


def band(task_kind: str, metric: str, regime_name: str) -> Band:
    """The band of the regime, falling back to the task kind's all-metric band, then all task kinds.

    A latency with no band of its own whose task kind has a throughput band takes that band's reciprocal
    (``latency_band``): one step serves ``batch`` samples in ``batch / rate`` seconds, so a rate measured
    ``r`` x the prediction is a step ``1 / r`` x as long (the all-metric band would say the opposite)."""
    table = bands()
    if metric == "latency" and (task_kind, metric, regime_name) not in table \
            and (task_kind, "throughput", regime_name) in table:
        return latency_band(table[(task_kind, "throughput", regime_name)])
    for key in ((task_kind, metric, regime_name), (task_kind, "*", regime_name), ("*", "*", regime_name)):
        if key in table:
            return table[key]
    raise CatalogError(f"no uncertainty band for {task_kind}/{metric}/{regime_name}",
                       fix="regenerate perf_profiles_bands.csv with scripts/fit_bands.py")


def latency_band(throughput: Band) -> Band:
    """The latency band of a throughput band: p10/p50/p90 of ``measured / predicted`` step time are the
    reciprocals of the rate's p90/p50/p10."""
    return Band(throughput.task_kind, "latency", throughput.regime, 1.0 / throughput.p90_ratio,
                1.0 / throughput.p50_ratio, 1.0 / throughput.p10_ratio, throughput.rows,
                f"reciprocal of {throughput.task_kind}/throughput/{throughput.regime}: {throughput.source}")


def figure_metric(name: str) -> str | None:
    """The metric class of a reported figure (rates ``*_per_s`` are throughput), None for other keys."""
    return FIGURE_METRIC.get(name) or ("throughput" if name.endswith("_per_s") else None)


def slo_factor(task_kind: str, figure: str, model_id: str, accelerator_id: str, risk: str) -> float:
    """What a predicted ``figure`` is multiplied by before it is compared with its limit at ``risk``."""
    return band(task_kind, FIGURE_METRIC[figure], regime(task_kind, model_id, accelerator_id)).ratio(risk)


def uncertainty(task_kind: str, model_id: str, accelerator_id: str, figures: dict[str, float | None]) -> dict:
    """The ``uncertainty`` block of an estimate: regime and the p10/p50/p90 of each figure."""
    model_ok, acc_ok = in_fit(task_kind, model_id, accelerator_id)
    reg = "in_fit" if model_ok and acc_ok else "unseen"
    out: dict[str, dict[str, float | int | str]] = {}
    for name, value in figures.items():
        metric = figure_metric(name)
        if value is None or metric is None or not value == value:  # None or nan: no figure
            continue
        b = band(task_kind, metric, reg)
        out[name] = {"p10": value * b.p10_ratio, "p50": value * b.p50_ratio, "p90": value * b.p90_ratio,
                     "band_rows": b.rows, "band": f"{b.task_kind}/{b.metric}/{b.regime}"}
    return {"task_kind": task_kind, "regime": reg, "model_in_fit": model_ok, "accelerator_in_fit": acc_ok,
            "figures": out}
