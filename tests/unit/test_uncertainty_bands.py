"""Honest uncertainty (issue 15): every prediction carries a p10/p90 band from cross-validated residuals,
validate reports band coverage, and the planner checks SLOs at a chosen risk."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.cli import main
from infrafit.perf import bands as B
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "infrafit" / "catalog" / "data"
CHAT = """name: chat
task: inference
model: llama3.1-8b
precision: [fp8, bf16]
inference:
  traffic: {requests_per_s: 20, input_tokens: {mean: 800, p99: 2000}, output_tokens: {mean: 200, p99: 600}}
  slo: {ttft_p99_s: 1.0, tpot_p99_s: 0.05}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_every_band_is_ordered_sourced_and_each_task_kind_has_a_fallback():
    rows = list(csv.DictReader((DATA / B.BANDS_FILE).open()))
    assert rows
    for r in rows:
        p10, p50, p90 = float(r["p10_ratio"]), float(r["p50_ratio"]), float(r["p90_ratio"])
        assert 0 < p10 <= p50 <= p90 and int(r["rows_count"]) >= 20, r
        assert r["source"].startswith("scripts/fit_bands.py") and r["retrieved_on"]
    keys = {(r["task_kind"], r["metric"], r["regime"]) for r in rows}
    for kind in ("llm", "nonllm", "training", "*"):
        for regime in ("in_fit", "unseen"):
            assert (kind, "*", regime) in keys
    # the unseen bands come from held-out predictions: no narrower than the in-fit ones where both exist
    for kind, metric in (("llm", "ttft"), ("llm", "tpot"), ("training", "time_to_train")):
        seen, new = B.band(kind, metric, "in_fit"), B.band(kind, metric, "unseen")
        assert new.p90_ratio / new.p10_ratio >= seen.p90_ratio / seen.p10_ratio * 0.95


def test_regime_follows_the_fit_members():
    members = B.members()
    model = sorted(members[("llm", "model")])[0]
    chip = sorted(members[("llm", "accelerator")])[0]
    assert B.regime("llm", model, chip) == "in_fit"
    assert B.regime("llm", "no-such-model", chip) == "unseen"
    assert B.regime("llm", model, "no-such-chip") == "unseen"
    unc = B.uncertainty("llm", "no-such-model", chip, {"ttft_p99_s": 0.5, "output_tokens_per_s": 100.0,
                                                        "weights_bytes": 1.0, "tpot_p99_s": None})
    assert unc["regime"] == "unseen" and set(unc["figures"]) == {"ttft_p99_s", "output_tokens_per_s"}
    f = unc["figures"]["ttft_p99_s"]
    b = B.band("llm", "ttft", "unseen")
    assert f["p10"] == pytest.approx(0.5 * b.p10_ratio) and f["p90"] == pytest.approx(0.5 * b.p90_ratio)


def test_estimate_json_carries_the_band_of_each_figure(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(CHAT)
    assert main(["estimate", str(spec), "--accelerator", "h100", "--count", "1", "--precision", "fp8", "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    unc = est["uncertainty"]
    assert unc["task_kind"] == "llm" and unc["regime"] in ("in_fit", "unseen")
    ttft = unc["figures"]["ttft_p99_s"]
    assert ttft["p10"] < est["latency"]["ttft_s"]["p99"] < ttft["p90"]
    assert unc["figures"]["tpot_p99_s"]["p90"] > est["latency"]["tpot_s"]["p99"]


def test_validate_reports_band_coverage_per_row_and_group(capsys):
    data = ROOT / "benchmarks" / "data" / "calibration.csv"
    assert main(["validate", str(data), "--model-configs", str(ROOT / "tests/fixtures/model_configs"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all("band" in r and isinstance(r["in_band"], bool) for r in out["results"])
    inside = sum(r["in_band"] for r in out["results"]) / len(out["results"])
    assert out["band_coverage"] == pytest.approx(inside)
    assert 0.70 <= out["band_coverage"] <= 0.90  # an 80 % band
    assert all("band_coverage" in g for g in out["by"]["task"].values())


def _plan(risk: str):
    cat = load_catalog()
    w = parse_spec(CHAT.replace("tpot_p99_s: 0.05}", f"tpot_p99_s: 0.05, risk: {risk}}}"), "chat.yaml", catalog=cat)
    return plan(w, cat, top=3)


def test_p90_risk_sizes_for_the_band_and_the_why_says_the_headroom():
    p50, p90 = _plan("p50"), _plan("p90")
    a, b = p50.options[0], p90.options[0]
    # at p90 the operating point leaves room for the band: its p90 TTFT and TPOT are within the SLOs
    assert b.performance["uncertainty"]["figures"]["ttft_p99_s"]["p90"] <= 1.0 + 1e-9
    assert b.performance["uncertainty"]["figures"]["tpot_p99_s"]["p90"] <= 0.05 + 1e-9
    assert b.cost["tco_usd"] >= a.cost["tco_usd"]
    assert any("SLOs checked at p90 of the uncertainty band" in w for w in b.why)
    assert any("SLOs checked at p50 of the uncertainty band" in w for w in a.why)
    # the binding constraint is named at the risk the SLOs were checked at, with the prediction beside it
    bind = next(w for w in b.why if w.startswith("binding constraint: "))
    figures = b.performance["uncertainty"]["figures"]
    name, label = max((("ttft_p99_s", "TTFT p99"), ("tpot_p99_s", "TPOT p99")),
                      key=lambda t: figures[t[0]]["p90"] / {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}[t[0]])
    assert bind.startswith(f"binding constraint: {label} ") and "at the p90 of its band (" in bind
    share = figures[name]["p90"] / {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}[name]
    assert bind.endswith(f"({share:.0%} of it)") and 0.5 < share <= 1.0 + 1e-9
    assert not any("at the p90 of its band" in w for w in a.why if w.startswith("binding constraint: "))


def test_p90_risk_lowers_the_load_one_configuration_may_carry(tmp_path, capsys):
    """The same chip, precision and stack at its SLO-limited load: at p90 the band must fit under the SLOs,
    so the load drops below the p50 one and the band's p90 TTFT is within the limit."""
    spec = tmp_path / "s.yaml"
    spec.write_text(CHAT)
    points = {}
    for risk in ("p50", "p90"):
        assert main(["estimate", str(spec), "--accelerator", "h100", "--count", "1", "--precision", "fp8",
                     "--stack", "vllm", "--set", f"inference.slo.risk={risk}", "--json"]) == 0
        points[risk] = json.loads(capsys.readouterr().out)
    rate = {r: e["operating_point"]["requests_per_s"] for r, e in points.items()}
    assert 0 < rate["p90"] < rate["p50"]
    assert points["p90"]["uncertainty"]["figures"]["ttft_p99_s"]["p90"] <= 1.0 + 1e-9
    assert points["p50"]["uncertainty"]["figures"]["ttft_p99_s"]["p90"] > 1.0  # p50 sizes to the prediction


def test_plan_risk_flag_is_the_spec_field(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(CHAT)
    assert main(["plan", str(spec), "--risk", "p50", "--json", "--top", "1"]) == 0
    flag = json.loads(capsys.readouterr().out)
    assert main(["plan", str(spec), "--set", "inference.slo.risk=p50", "--json", "--top", "1"]) == 0
    field = json.loads(capsys.readouterr().out)
    assert flag["options"][0]["cost"]["tco_usd"] == field["options"][0]["cost"]["tco_usd"]
    assert main(["plan", str(spec), "--json", "--top", "1"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert main(["plan", str(spec), "--risk", "p90", "--json", "--top", "1"]) == 0
    p90 = json.loads(capsys.readouterr().out)
    assert default["workload"]["inference"]["slo"]["risk"] == "p90"  # the default: sized for the band
    assert default["options"][0]["cost"]["tco_usd"] == p90["options"][0]["cost"]["tco_usd"]
    assert any("SLOs checked at p90 of the uncertainty band" in w for w in default["options"][0]["why"])
    assert main(["plan", str(spec), "--risk", "p99"]) == 2
    assert "To fix" in capsys.readouterr().err


def test_risk_on_a_training_spec_sets_its_deadline_risk_and_on_a_fleet_every_items_risk(capsys):
    assert main(["plan", str(ROOT / "examples" / "custom-ops-training.yaml"), "--risk", "p50", "--json",
                 "--top", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["workload"]["training"]["risk"] == "p50"
    assert any(w.startswith("binding constraint: time to train ") and "p90" not in w for w in out["options"][0]["why"])
    fleet = str(ROOT / "examples" / "multi-model-fleet.yaml")
    tco = {}
    for risk in ("p50", "p90"):
        assert main(["plan", fleet, "--risk", risk, "--json", "--top", "1"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert [w["plan"]["workload"]["inference"]["slo"]["risk"] for w in out["workloads"]] == [risk] * 3
        tco[risk] = out["separate_tco_usd"]
    assert tco["p50"] < tco["p90"]  # sized to the prediction, not to the band's p90
    assert main(["plan", fleet, "--risk", "p99"]) == 2
    assert "'p99' is not one of p50, p90" in capsys.readouterr().err


def test_a_latency_without_its_own_band_is_the_reciprocal_of_the_throughput_band():
    """Non-LLM serving has a throughput band only: a rate measured r x the prediction is a step 1/r x
    as long, so the latency band is the reciprocal (the all-metric band would put the tail on the wrong side)."""
    rate = B.band("nonllm", "throughput", "in_fit")
    lat = B.band("nonllm", "latency", "in_fit")
    assert lat.p90_ratio == pytest.approx(1.0 / rate.p10_ratio) and lat.p10_ratio == pytest.approx(1.0 / rate.p90_ratio)
    assert lat.p90_ratio > 1.0 > lat.p10_ratio and "reciprocal" in lat.source


def test_p90_risk_checks_a_non_llm_latency_slo_at_the_band():
    """A BERT-base classifier at a 15 ms p99: at p90 each configuration's p99 times its band ratio must be
    within the SLO, so the SLO-limited batch and rate drop wherever the SLO binds."""
    from infrafit.perf.evaluate_many import serving_slo_s
    from infrafit.perf.nonllm.capacity import evaluate_nonllm

    cat = load_catalog()
    spec = parse_spec("name: cls\ntask: inference\nmodel: bert-base\ninference:\n  mode: realtime\n"
                      "  traffic: {requests_per_s: 100}\n  slo: {latency_p99_s: 15ms}\n", "cls.yaml", catalog=cat)
    arch = spec.model_arch()
    pairs = [(cat.accelerator(a), 1) for a in ("nvidia_l4", "nvidia_h100_sxm", "intel_xeon_spr_4core")]
    slo, realtime = serving_slo_s(spec)
    got = {r: evaluate_nonllm(arch, pairs, ("fp16",), slo, realtime, {}, risk=r) for r in ("p50", "p90")}
    by = {r: {c["accelerator"]: (float(ev.capacity[i]), float(ev.metric[i]))
              for i, c in enumerate(ev.rows)} for r, ev in got.items()}
    lowered = 0
    for acc, (rate90, p99_90) in by["p90"].items():
        rate50, _ = by["p50"][acc]
        assert rate90 <= rate50 + 1e-9
        if rate90 > 0:
            factor = B.slo_factor("nonllm", "latency_p99_s", str(arch.id), acc, "p90")
            assert p99_90 * factor <= 0.015 + 1e-12
        lowered += rate90 < rate50 * 0.999
    assert lowered >= 1


def test_a_family_refused_by_its_band_quotes_the_figure_checked_not_the_prediction():
    """At risk p90 a family whose prediction meets the SLO but whose band's p90 does not is refused with both:
    'TTFT p99 1.42 s > 2.00 s SLO' read as a contradiction; the line now shows the p90 figure that failed."""
    from infrafit.search.explain import family_fail_line

    line = family_fail_line("serve", "ttft_p99_s", 1.42, 2.0, "4x nvidia_t4, int4", checked=2.96)
    assert line == "TTFT p99 1.42 s predicted, 2.96 s at the p90 of its band > 2.00 s SLO (best: 4x nvidia_t4, int4)"
    cat = load_catalog()
    text = CHAT.replace("model: llama3.1-8b", "model: llama3.1-70b").replace("ttft_p99_s: 1.0", "ttft_p99_s: 1.2")
    text = text.replace("precision: [fp8, bf16]", "precision: [int4]") + "hardware: {accelerators: [t4]}\n"
    reasons = {}
    for risk in ("p50", "p90"):
        w = parse_spec(text.replace("tpot_p99_s: 0.05}", f"tpot_p99_s: 0.05, risk: {risk}}}"), catalog=cat)
        reasons[risk] = next(e.reason for e in plan(w, cat, top=3).excluded if e.what == "NVIDIA Turing")
    assert "at the p90 of its band" in reasons["p90"] and "at the p90 of its band" not in reasons["p50"]
