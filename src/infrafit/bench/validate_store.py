"""``infrafit validate --from-store``: every stored measurement predicted again under the catalog in force.

Two kinds of stored rows can be predicted again:

- imported load tests (``bench import --option-from``): the TTFT/TPOT p99 rows carry the option and the load
  they were measured at (``bench.calibrate_serving.serving_points``); the real engine estimates them now,
  under the profiles in force (packaged, or the ``--catalog-dir`` overlay that ``calibrate`` wrote);
- model benches (``bench run``): the roofline inputs stored with each row are predicted with the overlay's
  fitted efficiency for that device and precision when there is one, else the stored prediction stands.

The result has the shape of ``validate DATA`` (rows, predicted, skipped, MdAPE overall and by group), so the
loop plan -> export -> run -> import -> validate -> calibrate -> validate --catalog-dir reads as one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from infrafit.bench.calibrate import ape, fit_rows, predicted_times
from infrafit.bench.calibrate_serving import EstimateFn, platform_key, predict_points, serving_points


def _group(values: list[tuple[str, float]]) -> dict[str, dict[str, Any]]:
    names = sorted({n for n, _ in values})
    return {n: {"rows": len(v := [a for m, a in values if m == n]), "mdape": float(np.median(v))} for n in names}


def validate_store(rows: list[dict[str, Any]], catalog, estimate: EstimateFn) -> dict[str, Any]:
    """APE of every stored measurement that can be predicted now, overall and by kind and platform."""
    from infrafit.bench.predict import load_efficiency

    apes: list[tuple[str, str, float]] = []  # (kind, platform, ape)
    details = []
    points = serving_points(rows)
    if points:
        now = predict_points(points, catalog, estimate)
        for p, pred in zip(points, now, strict=True):
            if not np.isfinite(pred):
                continue
            gen, stack, prec = platform_key(p, catalog)
            apes.append((p.kind, f"{gen} {stack} {prec}", abs(pred / p.measured_s - 1.0)))
            details.append({"id": p.row_id, "kind": p.kind, "measured": p.measured_s, "predicted_now": float(pred),
                            "error_now": float(pred / p.measured_s - 1.0)})
    for (acc, precision), group in sorted(fit_rows(rows).items()):
        eff = load_efficiency(acc).get(precision)
        if eff is not None:
            ape_now = ape(group, predicted_times(group, eff.eff_compute, eff.eff_memory, eff.op_overhead_s))
            apes += [("bench_throughput" if r.is_throughput else "bench_latency", f"{acc} {precision}", float(a))
                     for r, a in zip(group, ape_now, strict=True)]
        else:
            apes += [("bench_throughput" if r.is_throughput else "bench_latency", f"{acc} {precision}", r.stored_ape)
                     for r in group if r.stored_ape is not None]
    replayable = {p.row_id for p in points}
    skipped = [{"id": r["id"], "kind": r["kind"], "why": "imported without --option-from: no option to predict"}
               for r in rows if r["kind"] in ("serving_ttft_s", "serving_tpot_s")
               and r["params"].get("statistic") == "p99" and r["id"] not in replayable]
    return {"rows": len(apes) + len(skipped), "predicted": len(apes), "skipped": skipped,
            "mdape": float(np.median([a for *_, a in apes])) if apes else None,
            "by": {"kind": _group([(k, a) for k, _, a in apes]), "platform": _group([(p, a) for _, p, a in apes])},
            "serving_rows": details}
