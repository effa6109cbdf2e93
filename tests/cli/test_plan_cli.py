"""In-process CLI tests of ``infrafit plan``: exit codes, JSON contract, reports."""

from __future__ import annotations

import json
from pathlib import Path

from infrafit.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OPTION_KEYS = {"rank", "accelerator", "count", "precision", "stack", "deployment", "provider", "region", "server",
               "performance", "cost", "why", "risks"}
DEPLOYMENTS = {"cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly",
               "on_prem", "hybrid"}


def test_plan_json_contract(capsys, tmp_path):
    report = tmp_path / "plan.html"
    code = main(["plan", str(EXAMPLES / "lora-finetune-70b.yaml"), "--json", "--top", "3", "--report", str(report)])
    cap = capsys.readouterr()
    out = cap.out
    assert code == 0, cap.err
    plan = json.loads(out)
    assert {"workload", "catalog_retrieved_on", "options", "excluded"} <= set(plan)
    assert 1 <= len(plan["options"]) <= 3
    for o in plan["options"]:
        assert OPTION_KEYS <= set(o)
        assert o["deployment"] in DEPLOYMENTS
        assert {"monthly_usd", "tco_usd", "horizon_months", "per_unit", "breakdown"} <= set(o["cost"])
        assert o["why"] and all(isinstance(w, str) for w in o["why"])
    assert [o["rank"] for o in plan["options"]] == list(range(1, len(plan["options"]) + 1))
    assert all({"what", "reason"} <= set(e) for e in plan["excluded"])
    html = report.read_text()
    assert html.startswith("<!doctype html>") and "src=\"http" not in html


def test_plan_impossible_exits_3_with_reasons(capsys, tmp_path):
    spec = EXAMPLES.parent / "tests" / "fixtures" / "specs" / "impossible-plan.yaml"
    code = main(["plan", str(spec)])
    captured = capsys.readouterr()
    assert code == 3
    assert "SLO" in captured.out + captured.err and "budget" in captured.out + captured.err
    assert "To fix" in captured.err


def test_plan_bad_input_exits_2(capsys, tmp_path):
    assert main(["plan", str(tmp_path / "missing.yaml")]) == 2
    assert main(["plan", str(EXAMPLES / "lora-finetune-70b.yaml"), "--objective", "fastest"]) == 2
    assert main(["plan", str(EXAMPLES / "lora-finetune-70b.yaml"), "--report", str(tmp_path / "r.pdf")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_table_why_and_json_agree(capsys):
    """The table's latency cell, the #1 why line and performance.latency are one operating point (the
    plan's), with p50 and p99 both filled; the estimate's standalone figures sit apart."""
    from infrafit.report.render import option_rows
    from infrafit.units import fmt_duration

    code = main(["plan", str(EXAMPLES / "chatbot-asia.yaml"), "--json", "--top", "3", "--objective", "latency"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0
    from infrafit.search.types import Plan

    rows = option_rows(Plan.from_dict(plan))
    for o, row in zip(plan["options"], rows, strict=True):
        perf = o["performance"]
        ttft, tpot = perf["latency"]["ttft_s"], perf["latency"]["tpot_s"]
        assert ttft["p50"] is not None and ttft["p50"] < ttft["p99"] and tpot["p50"] <= tpot["p99"]
        assert perf["at_capacity"]["latency"] == perf["latency"]
        assert perf["throughput"]["requests_per_s"] == perf["operating_point"]["requests_per_s"]
        assert fmt_duration(ttft["p99"]) in row["performance (p99)"]
        assert f"TTFT p99 {fmt_duration(ttft['p99'])}" in o["why"][0]
        assert o["front_point"]["metric_value"] == ttft["p99"]
        assert {"throughput", "latency"} <= set(perf["estimate_at_max_rate"])
