"""Refit the LLM serving profiles from imported load tests (``infrafit calibrate``, issue 16).

``infrafit bench import --option-from PLAN.json`` stores each measured TTFT/TPOT p99 with what is needed
to predict it again (the plan's resolved workload, the option's offer, layout, precision and stack, and
the load the test measured: ``prediction.at_measured_load.replay``). This module evaluates the real engine
again on those rows under trial profile values and picks, per (accelerator generation, stack, GEMM
precision), the two that the measurements pin:

- the decode HBM efficiency (``decode`` / ``memory``): a decode step reads the weights and KV cache, so it
  sets TPOT; fitted on the TPOT p99 rows;
- the prefill GEMM efficiency (``prefill`` / ``gemm``): prefill is compute-bound, so it sets TTFT;
  fitted on the TTFT p99 rows with the memory value already chosen (queueing behind decode steps is
  part of TTFT at load).

Each is the packaged value times a scale on a log-spaced grid (``SCALE_GRID``), capped at 1 (no kernel
beats its datasheet peak), minimising the median |log(predicted / measured)|: robust to one noisy test,
symmetric in over- and under-prediction. Nothing else moves, so the fit cannot absorb a model's quirks
into unrelated constants. Reported: MdAPE before (the profiles in force now) and after, and with 3 or
more results leave-one-result-out MdAPE (each result predicted by a fit that did not see it), which is
what a new test on the same platform will see. The rows go to ``perf_profiles_llm.csv`` in the overlay
(read by :func:`infrafit.perf.profiles.load_profiles` under ``--catalog-dir``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from infrafit.perf import ProfileRow, Profiles, load_profiles, using_profiles

#: Measurement kind -> (phase, op class) of the profile value it pins, in fitting order.
FITTED = {"serving_tpot_s": ("decode", "memory"), "serving_ttft_s": ("prefill", "gemm")}
#: What each kind reads from an estimate's latency block.
LATENCY_KEY = {"serving_tpot_s": "tpot_s", "serving_ttft_s": "ttft_s"}
SCALE_GRID = np.geomspace(0.25, 4.0, 25)  # steps of 12 %
#: Most coordinate-descent rounds (each: memory, then GEMM).
FIT_ROUNDS = 4
#: Grid steps either side of the current value searched after the first round.
LOCAL_STEPS = 3
#: Leave-one-out is reported from this many results of one platform up.
LOO_MIN_RESULTS = 3


@dataclass(frozen=True)
class ServingPoint:
    """One stored p99 measurement that can be predicted again."""

    row_id: int
    run_id: str
    kind: str
    measured_s: float
    replay: dict[str, Any]
    result: str  # which load test it came from (run and operating point): the unit left out in LOO
    memo: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)  # parsed workload


def serving_points(rows: list[dict[str, Any]]) -> list[ServingPoint]:
    """The stored TTFT/TPOT p99 rows that carry a replay context (imported with ``--option-from``)."""
    out = []
    for r in rows:
        replay = ((r.get("prediction") or {}).get("at_measured_load") or {}).get("replay")
        if r["kind"] in FITTED and r["params"].get("statistic") == "p99" and replay and r["value"] > 0:
            point = f"{r['run_id']}:{replay['estimate'].get('requests_per_s')}"
            out.append(ServingPoint(int(r["id"]), r["run_id"], r["kind"], float(r["value"]), replay, point))
    return out


def platform_key(point: ServingPoint, catalog) -> tuple[str, str, str]:
    """(accelerator generation, stack, GEMM precision): the keys of the profile rows the point pins."""
    from infrafit.perf import plan_precision

    res = point.replay["resolved"]
    acc = catalog.accelerator(res["accelerator"])
    return acc.generation, str(res["stack"]), plan_precision(acc, str(res["precision"])).gemm


#: ``commands.estimate.estimate_workload``'s signature: the command layer passes it in (bench sits below it).
EstimateFn = Callable[..., Any]


def predict_points(points: list[ServingPoint], catalog, estimate_workload: EstimateFn,
                   profiles: Profiles | None = None) -> np.ndarray:
    """Each point's predicted p99 now (under ``profiles``, else the profiles in force)."""
    from infrafit.workload.spec import workload_from_data

    def one(p: ServingPoint) -> float:
        if "workload" not in p.memo:  # parsed once per point: the fit evaluates each point many times
            p.memo["workload"] = workload_from_data(p.replay["workload"], catalog=catalog)
        est = estimate_workload(p.memo["workload"], catalog, **p.replay["estimate"]).to_json()
        lat = (est.get("latency") or {}).get(LATENCY_KEY[p.kind]) or {}
        return float(lat.get("p99") or np.nan)

    if profiles is None:
        return np.array([one(p) for p in points])
    with using_profiles(profiles):
        return np.array([one(p) for p in points])


def trial(base: Profiles, key: tuple[str, str, str], scales: dict[tuple[str, str], float],
          source: str = "trial") -> Profiles:
    """``base`` with the fitted rows of ``key`` scaled (placed first: the most specific rows for the key)."""
    gen, stack, prec = key
    rows = []
    for (phase, op), s in scales.items():
        value = min(base.value(gen, stack, prec, phase, op) * s, 1.0)
        rows.append(ProfileRow(gen, stack, prec, phase, op, value, 0, source, date.today().isoformat()))
    return Profiles(tuple(rows) + base.rows)


def _loss(pred: np.ndarray, measured: np.ndarray) -> float:
    ok = np.isfinite(pred) & (pred > 0)
    return float(np.median(np.abs(np.log(pred[ok] / measured[ok])))) if ok.any() else np.inf


def mdape(pred: np.ndarray, measured: np.ndarray) -> float | None:
    ok = np.isfinite(pred)
    return float(np.median(np.abs(pred[ok] / measured[ok] - 1.0))) if ok.any() else None


def fit_scales(points: list[ServingPoint], key: tuple[str, str, str], catalog, base: Profiles,
               estimate: EstimateFn) -> dict[tuple[str, str], float]:
    """The scale of each fitted profile value: coordinate descent on the grid (memory on TPOT, then GEMM on
    TTFT with memory fixed, again until neither moves: each value also shows in the other latency through
    the prefill share of TPOT and the queueing inside TTFT)."""
    scales: dict[tuple[str, str], float] = {cls: 1.0 for kind, cls in FITTED.items()
                                            if any(p.kind == kind for p in points)}
    for round_ in range(FIT_ROUNDS):
        moved = False
        for kind, cls in FITTED.items():
            mine = [p for p in points if p.kind == kind]
            if not mine:
                continue
            measured = np.array([p.measured_s for p in mine])
            grid = scale_grid(base.value(*key, *cls))
            if round_:  # later rounds move the value a few steps at most
                at = int(np.argmin(np.abs(np.log(grid / scales[cls]))))
                grid = grid[max(at - LOCAL_STEPS, 0):at + LOCAL_STEPS + 1]
            losses = [_loss(predict_points(mine, catalog, estimate, trial(base, key, {**scales, cls: float(s)})),
                            measured)
                      for s in grid]
            best = float(grid[int(np.argmin(losses))])
            moved |= best != scales[cls]
            scales[cls] = best
        if not moved:
            break
    return scales


def scale_grid(value: float) -> np.ndarray:
    """``SCALE_GRID`` up to the scale that takes ``value`` to 1 (the datasheet peak), that one included."""
    cap = 1.0 / value
    return np.append(SCALE_GRID[SCALE_GRID < cap * (1 - 1e-9)], cap) if cap < SCALE_GRID[-1] else SCALE_GRID


def calibrate_serving(rows: list[dict[str, Any]], catalog, estimate: EstimateFn) -> list[dict[str, Any]]:
    """Fit every platform with imported serving results; [] when none (the bench fit may still run)."""
    points = serving_points(rows)
    groups: dict[tuple[str, str, str], list[ServingPoint]] = {}
    for p in points:
        groups.setdefault(platform_key(p, catalog), []).append(p)
    base = load_profiles()
    fits = []
    for key, group in sorted(groups.items()):
        measured = np.array([p.measured_s for p in group])
        before = predict_points(group, catalog, estimate)
        scales = fit_scales(group, key, catalog, base, estimate)
        after = predict_points(group, catalog, estimate, trial(base, key, scales))
        results = sorted({p.result for p in group})
        loo = None
        if len(results) >= LOO_MIN_RESULTS:
            held = []
            for res in results:
                train = [p for p in group if p.result != res]
                test = [p for p in group if p.result == res]
                s = fit_scales(train, key, catalog, base, estimate)
                held.append(predict_points(test, catalog, estimate, trial(base, key, s))
                            / np.array([p.measured_s for p in test]))
            ratios = np.concatenate(held)
            loo = float(np.median(np.abs(ratios[np.isfinite(ratios)] - 1.0)))
        gen, stack, prec = key
        fits.append({
            "generation": gen, "stack": stack, "precision": prec, "results": len(results), "rows": len(group),
            "runs": sorted({p.run_id for p in group}),
            "values": {f"{phase}/{op}": _value(base.value(gen, stack, prec, phase, op), s)
                       for (phase, op), s in scales.items()},
            "mdape_before": mdape(before, measured), "mdape_after": mdape(after, measured),
            "loo_mdape": loo,
            "by_kind": {k: {"before": mdape(before[m], measured[m]), "after": mdape(after[m], measured[m])}
                        for k in FITTED if (m := np.array([p.kind == k for p in group])).any()},
        })
    return fits


def _value(before: float, scale: float) -> dict[str, Any]:
    after = min(before * scale, 1.0)
    return {"before": before, "scale": scale, "after": after, "at_peak": after >= 1.0 - 1e-9}


def warnings(fits: list[dict[str, Any]]) -> list[str]:
    """What a user must check: a value at the datasheet peak means the tests ran faster than the planned
    hardware can (another GPU, another precision, a cache hit) or the model misses a mechanism."""
    out = []
    for f in fits:
        for name, v in f["values"].items():
            if v["at_peak"]:
                out.append(f"{f['generation']} {f['stack']} {f['precision']} {name}: the fit reached the datasheet "
                           "peak (efficiency 1): the measurements are faster than this hardware allows. To fix: check "
                           "that the load test ran on the planned accelerator, precision and lengths")
    return out


def profile_rows(fits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The overlay's ``perf_profiles_llm.csv`` rows of the fits (columns of ``perf.profiles``)."""
    from infrafit.perf import OP_CLASS_UNITS

    out = []
    for f in fits:
        for name, v in f["values"].items():
            phase, op = name.split("/")
            out.append({"generation": f["generation"], "stack": f["stack"], "precision": f["precision"],
                        "phase": phase, "op_class": op, "value": f"{v['after']:.4g}", "unit": OP_CLASS_UNITS[op],
                        "rows_fitted": f["rows"],
                        "source": f"infrafit calibrate: {f['results']} imported load-test results (runs "
                                  f"{', '.join(f['runs'])}); packaged {v['before']:.4g} x {v['scale']:.3g}",
                        "retrieved_on": date.today().isoformat()})
    return out
