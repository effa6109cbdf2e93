"""search.operating: the lighter operating points the latency objective plans, and their effect."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from infrafit.catalog import load_catalog
from infrafit.perf.operating import MAX_RATE, point_indices, point_name
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec, parse_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_point_indices_pick_the_busiest_point_under_each_target():
    rate = np.array([[1.0, 3.0, 6.0, 10.0, 0.0],   # SLO-limited at index 3 (10/s)
                     [2.0, 0.0, 0.0, 0.0, 0.0],    # only concurrency 1 is feasible: no lighter point
                     [0.0, 0.0, 0.0, 0.0, 0.0]])   # infeasible: reported at index 0
    rows, cols, names = point_indices(rate, (0.5, 0.25))
    got = {(int(r), n): int(c) for r, c, n in zip(rows, cols, names, strict=True)}
    assert got[(0, MAX_RATE)] == 3 and got[(0, point_name(0.5))] == 1 and got[(0, point_name(0.25))] == 0
    assert got[(1, MAX_RATE)] == 0 and (1, point_name(0.5)) not in got
    assert got[(2, MAX_RATE)] == 0 and len(got) == 5


def test_latency_objective_buys_lower_latency_than_cost():
    """chatbot-asia: every SLO-limited option sits near the 1 s TTFT SLO; the latency objective must
    find clearly lower p99s by running replicas lighter (and say so), the cost objective must not."""
    # at the prediction (risk p50), where the SLO-limited TTFT sits near the 1 s SLO
    cat = load_catalog()
    text = (EXAMPLES / "chatbot-asia.yaml").read_text().replace("ttft_p99_s: 1.0", "ttft_p99_s: 1.0\n    risk: p50")
    w = parse_spec(text, "chatbot-asia.yaml", catalog=cat)
    cost = plan(w, cat, objective="cost", top=3).to_dict()
    lat = plan(w, cat, objective="latency", top=3).to_dict()
    best_cost = cost["options"][0]["performance"]["latency"]["ttft_s"]["p99"]
    best_lat = lat["options"][0]["performance"]["latency"]["ttft_s"]["p99"]
    assert best_lat < 0.8 * best_cost
    assert all(o["performance"]["operating_point"]["name"] == MAX_RATE for o in cost["options"])
    top = lat["options"][0]
    point = top["performance"]["operating_point"]
    if point["name"] != MAX_RATE:
        assert point["utilisation_fraction"] <= 0.5 and point["metric_value"] < point["metric_at_max_rate"]
        assert any(w.startswith("operating point:") and "SLO-limited load" in w for w in top["why"])
    assert top["cost"]["tco_usd"] >= cost["options"][0]["cost"]["tco_usd"]


def test_tabular_options_are_served_by_their_framework():
    """XGBoost was labelled 'pytorch' on CPUs and 'tensorrt' on NVIDIA; its own predictor serves it."""
    out = plan(load_spec(EXAMPLES / "tabular-xgboost.yaml"), load_catalog(), objective="latency", top=3).to_dict()
    assert out["options"] and {o["stack"] for o in out["options"]} == {"xgboost"}
    for o in out["options"]:
        lat = o["performance"]["latency"]["e2e_s"]
        assert lat["p50"] is not None and lat["p50"] <= lat["p99"]
