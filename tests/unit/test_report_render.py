import json
import re

import pytest

from infrafit.errors import InputError
from infrafit.report.render import render_html, render_markdown, write_report
from infrafit.search.types import Plan


@pytest.fixture
def plan():
    option = {
        "rank": 1, "accelerator": "nvidia_h100_sxm", "count": 8, "precision": "fp8", "stack": "vllm",
        "deployment": "cloud_reserved_1y", "provider": "aws", "region": "ap-northeast-1",
        "server": {"cpu_cores": 32},
        "performance": {
            "bottleneck": "hbm_bandwidth",
            "memory": {"per_accelerator_bytes": 60e9, "capacity_bytes": 80e9, "weights_bytes": 40e9,
                       "kv_cache_bytes": 15e9, "activations_bytes": 5e9, "optimizer_bytes": None},
            "latency": {"ttft_s": {"p50": 0.2, "p99": 0.6}, "tpot_s": {"p50": 0.02, "p99": 0.03}},
            "breakdown": {"time_shares": {"weights": 0.6, "kv": 0.3, "compute": 0.1}},
        },
        "cost": {"monthly_usd": 12345.0, "tco_usd": 296280.0, "horizon_months": 24,
                 "breakdown": {"compute_usd": 12000.0, "egress_usd": 345.0}},
        "why": ["cheapest option meeting TTFT p99 1 s"], "risks": ["single vendor"],
        "front_point": {"tco_usd": 296280.0, "metric_value": 0.6},
    }
    return Plan.from_dict({
        "workload": {"name": "chatbot"}, "objective": "cost", "catalog_retrieved_on": "2025-06-01 to 2026-08-22",
        "options": [option], "excluded": [{"what": "CPU", "reason": "TTFT p99 4.2 s > 1 s SLO"}],
        "front": [{"label": "a", "tco_usd": 296280.0, "metric_value": 0.6, "on_front": True},
                  {"label": "b", "tco_usd": 400000.0, "metric_value": 0.9, "on_front": False}],
        "front_metric": "ttft_p99_s",
        "tco_by_mode": {"cloud_on_demand": [1.0, 2.0, 3.0], "on_prem": [5.0, 5.5, 6.0]},
        "breakeven": {"utilisation": [0.1, 0.5, 1.0], "monthly_usd_by_mode": {"a": [1, 5, 10], "b": [6, 6, 6]}},
        "evaluated": 1234,
    })


def test_html_is_self_contained(plan):
    text = render_html(plan)
    assert "<script" in text
    assert not re.search(r"<script[^>]+src=", text), "must not fetch scripts"
    assert "TTFT p99 4.2 s" in text
    assert text.count("plotly-graph-div") >= 5  # front, tco by mode, break-even, memory, bottleneck


def test_markdown_has_table_and_exclusions(plan):
    md = render_markdown(plan)
    assert "| # | hardware |" in md
    assert "8x nvidia_h100_sxm" in md
    assert "**CPU**: TTFT p99 4.2 s > 1 s SLO" in md
    assert "$12,345" in md


def test_markdown_cost_breakdown_is_labelled_as_horizon_totals(plan):
    """The breakdown sums to the TCO (24 months here); a 'monthly' header overstated a month by 24x."""
    md = render_markdown(plan)
    assert "| cost item | over 24 months |" in md
    assert "| cost item | monthly |" not in md


def test_monthly_column_shows_the_peak_month_when_growth_raises_it(plan):
    from infrafit.report.render import option_rows

    assert option_rows(plan)[0]["month 1 / peak"] == "$12,345"  # no peak given: steady
    grown = plan.to_dict()
    grown["options"][0]["cost"]["peak_monthly_usd"] = 29079.0
    assert option_rows(Plan.from_dict(grown))[0]["month 1 / peak"] == "$12,345 / $29,079"


def test_write_report_by_suffix(plan, tmp_path):
    write_report(plan, tmp_path / "r.md")
    write_report(plan, tmp_path / "r.html")
    assert (tmp_path / "r.md").read_text().startswith("# infrafit plan")
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    with pytest.raises(InputError, match="To fix"):
        write_report(plan, tmp_path / "r.pdf")
    json.dumps(plan.to_dict())
