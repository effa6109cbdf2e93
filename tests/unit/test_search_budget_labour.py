"""budget.monthly_usd holds the infrastructure; budget.include_labour counts the modelled ops labour
too (issue 12 point 4), and an exclusion says which part broke the budget."""

from __future__ import annotations

from infrafit.catalog import load_catalog
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

SPEC = """
name: tight-70b
task: inference
model: llama3.1-70b
precision: [fp8]
inference:
  mode: realtime
  traffic: {{requests_per_s: 0.2, input_tokens: 500, output_tokens: 200}}
  slo: {{ttft_p99_s: 3.0, tpot_p99_s: 0.1}}
deployment: {{allowed: [cloud]}}
budget: {{monthly_usd: 2500{labour}}}
horizon_months: 12
"""


def _plan(labour: str):
    cat = load_catalog()
    return plan(parse_spec(SPEC.format(labour=labour), catalog=cat), cat, top=3)


def test_the_budget_holds_infrastructure_by_default():
    p = _plan("")
    assert p.options
    for o in p.options:
        peak_infra = o.cost["peak_monthly_usd"] - o.cost["breakdown"]["ops_labour_usd"] / 12
        assert peak_infra <= 2500 + 1e-6
        assert o.cost["peak_monthly_usd"] > 2500  # with labour it would not fit: the default decides


def test_include_labour_counts_it_and_the_exclusion_says_so():
    p = _plan(", include_labour: true")
    assert not p.options
    lines = [e.reason for e in p.excluded if "monthly budget" in e.reason]
    assert lines and all("with ops labour" in x and "of which labour" in x for x in lines)


def test_the_default_exclusion_names_the_labour_left_out():
    cat = load_catalog()
    tiny = SPEC.format(labour="").replace("monthly_usd: 2500", "monthly_usd: 300")
    p = plan(parse_spec(tiny, catalog=cat), cat, top=3)
    lines = [e.reason for e in p.excluded if "monthly budget" in e.reason]
    assert lines and all("infrastructure" in x and "budget.include_labour: true counts it" in x for x in lines)
