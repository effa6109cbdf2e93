"""Planner rules on the small fixture catalog (tests/fixtures/catalog): hard constraints, exclusions
with their numbers, diverse top-N and the Pareto front. Each case is a spec change and what must hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.search.compat import family_compat
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
BASE = """
name: fixture-chat
task: inference
model: llama3.1-8b
precision: [bf16, fp8]
inference:
  mode: realtime
  traffic: {{requests_per_s: 2, input_tokens: 1000, output_tokens: 200}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.1}}
{extra}
"""


@pytest.fixture(scope="module")
def cat():
    return load_catalog(overlay_dir="", base_dir=FIXTURE)


def _plan(cat, extra: str = "", top: int = 5) -> dict:
    return plan(parse_spec(BASE.format(extra=extra)), cat, top=top).to_dict()


def _reason(p: dict, family: str) -> str:
    return " ".join(e["reason"] for e in p["excluded"] if e["what"] == family)


@pytest.mark.parametrize(("extra", "check", "family", "phrase"), [
    ("placement: {countries: [JP]}", lambda o: o["country"] == "JP", "NVIDIA Ada", "residency"),
    ("deployment: {allowed: [on_prem]}", lambda o: o["deployment"] == "on_prem", "Google TPU",
     "allowed deployment"),
    # (with AWS excluded the fixture's only cloud left is single-chip TPU v5e VMs, which hold an 8B model
    # only as a TP group across VMs: not buildable, so the case excludes GCP instead)
    ("deployment: {allowed: [cloud], exclude_providers: [gcp]}", lambda o: o["provider"] != "GCP", "Google TPU",
     "excluded providers"),
])
def test_hard_constraints_filter_options_and_name_the_excluded_family(cat, extra, check, family, phrase):
    p = _plan(cat, extra)
    assert p["options"], p["excluded"]
    assert all(check(o) for o in p["options"])
    assert phrase in _reason(p, family)
    assert re.search(r"\d", _reason(p, family))


@pytest.mark.parametrize(("framework", "ops", "family", "allowed", "level"), [
    ("sklearn", (), "NVIDIA Hopper", False, "none"),
    ("pytorch", (), "NVIDIA Hopper", True, "first-class"),
    ("pytorch", ("flash_attn_custom",), "NVIDIA Hopper", True, "first-class"),
    ("pytorch", ("flash_attn_custom",), "Google TPU", True, "experimental"),
])
def test_framework_support_from_the_migration_rule(cat, framework, ops, family, allowed, level):
    c = family_compat(cat, framework, [family], ops)[family]
    assert c.allowed is allowed and c.support == level
    if level == "experimental":  # a custom op off NVIDIA adds porting weeks beyond the table's effort
        base = family_compat(cat, framework, [family], ())[family]
        assert c.porting_weeks > base.porting_weeks
    if not allowed:
        assert "not supported" in c.reason(framework, ops)


def test_a_family_off_first_class_support_names_its_level_and_the_priced_port(cat):
    """An option on a family whose framework support is not first-class says so in one readable line (it read
    "supported framework support: ..."), with the porting cost priced in migration."""
    real = load_catalog()
    p = plan(parse_spec(BASE.format(extra="hardware: {vendors: [AMD]}")), real, top=3).to_dict()
    amd = [o for o in p["options"] if o["family"] == "AMD Instinct"]
    assert amd
    for o in amd:
        [line] = [r for r in o["risks"] if r.startswith("framework support: ")]
        level = family_compat(real, "pytorch", ["AMD Instinct"], ())["AMD Instinct"].support
        assert level != "first-class" and line.startswith(f"framework support: {level}, not first-class: ")
        assert f"(migration ${o['cost']['breakdown']['migration_usd']:,.0f} priced)" in line


def test_framework_none_excludes_the_family_with_a_reason(cat):
    text = (BASE.format(extra="").replace("model: llama3.1-8b", "model: xgboost-gbt\nframework: sklearn")
            .replace("precision: [bf16, fp8]\n", "").replace("{ttft_p99_s: 2.0, tpot_p99_s: 0.1}",
                                                             "{latency_p99_s: 0.05}")
            .replace(", input_tokens: 1000, output_tokens: 200", ""))
    p = plan(parse_spec(text), cat).to_dict()
    assert "not supported" in _reason(p, "NVIDIA Hopper")


def test_budget_excludes_every_family_with_its_cheapest_number(cat):
    p = _plan(cat, "budget: {monthly_usd: 1}")
    assert p["options"] == []
    lines = [e for e in p["excluded"] if "budget" in e["reason"]]
    assert lines
    for e in lines:
        assert re.search(r"\$[\d,]+", e["reason"]), e


def test_every_exclusion_line_carries_a_number(cat):
    p = _plan(cat, "placement: {countries: [JP]}\ndeployment: {allowed: [cloud]}")
    for e in p["excluded"]:
        if "no price for it" in e["reason"]:
            continue
        assert re.search(r"\d", e["reason"]), e


def test_top_n_differs_in_substance(cat):
    p = _plan(cat, top=4)
    keys = [(o["family"], o["deployment"], o["provider"]) for o in p["options"]]
    assert len(keys) == len(set(keys))
    # no family is shown twice while another feasible family worth showing (within 5x of #1) is left out
    fams = [k[0] for k in keys]
    shown_twice = len(fams) != len(set(fams))
    within = [c for c in p["compared"]
              if (m := re.search(r"\+([\d,]+)% vs #1", c["reason"])) is None or float(m[1].replace(",", "")) <= 400]
    assert not (shown_twice and within), (fams, p["compared"])


def test_options_marked_on_the_front_are_not_dominated(cat):
    p = _plan(cat, top=5)
    pts = [(f["tco_usd"], f["metric_value"]) for f in p["front"]]
    on = [o for o in p["options"] if any("Pareto front" in w for w in o["why"])]
    assert on
    for o in on:
        t, m = o["front_point"]["tco_usd"], o["front_point"]["metric_value"]
        assert not any(a <= t and b <= m and (a < t or b < m) for a, b in pts)
    assert sum(f["on_front"] for f in p["front"]) >= 1


def test_no_two_options_rent_the_same_offer_at_the_same_size(cat):
    p = _plan(cat, top=6)
    keys = [(o["offer_id"], o["count"]) for o in p["options"]]
    assert len(keys) == len(set(keys)), keys


def test_component_prices_without_a_host_are_not_planned():
    """A GPU-only part of a VM price or a bare baseboard (host_included false) would understate TCO."""
    from infrafit.search.offers import filter_offers

    catalog = load_catalog(overlay_dir="")
    parts = set(catalog.offers.loc[~catalog.offers["host_included"], "id"])
    assert parts, "the built-in catalog has component prices to exclude"
    workload = parse_spec(BASE.format(extra=""))
    kept = filter_offers(catalog, workload, ("cloud", "dedicated", "on_prem"), (), ())
    assert not parts & set(kept.kept["id"])
    edge = set(catalog.offers["host_id"]) & set(catalog.hosts.loc[catalog.hosts["host_kind"] == "edge_device", "id"])
    edge_offers = set(catalog.offers.loc[catalog.offers["host_id"].isin(edge), "id"])  # inference.mode: edge only
    assert len(kept.kept) == len(catalog.offers) - len(parts | edge_offers)


def test_a_different_chip_comes_before_the_same_chip_at_another_count():
    """nightly-embeddings listed 32x, 16x and 8x B200 on the same Lambda offer as #1-#3 while other chips
    of the feasible families were left out; the top N now varies the chip before the count."""
    from infrafit.workload.spec import load_spec

    root = Path(__file__).resolve().parents[2]
    p = plan(load_spec(root / "examples" / "nightly-embeddings.yaml"), load_catalog(), top=5).to_dict()
    chips = [o["accelerator"] for o in p["options"]]
    assert len(chips) == 5 and len(set(chips)) == 5, chips


def test_pair_pools_add_the_parts_best_by_the_objective():
    """``combine._pool``: the cheapest candidates, plus the fastest (time) or lowest-p99 (latency) ones
    even when they are too dear to be among the cheapest; infinite TCO never enters."""
    from types import SimpleNamespace

    import numpy as np

    from infrafit.search.combine import _pool

    tco = np.array([1.0, 2.0, 3.0, 9.0, np.inf])
    metric = np.array([50.0, 40.0, 30.0, 1.0, 0.5])  # the dearest finite one is the fastest / lowest p99
    train = SimpleNamespace(task="train", cost=SimpleNamespace(tco_usd=tco), ev=SimpleNamespace(metric=metric))
    serve = SimpleNamespace(task="serve", cost=SimpleNamespace(tco_usd=tco), ev=SimpleNamespace(metric=metric))
    assert list(_pool(train, "cost", 2)) == [0, 1]
    assert list(_pool(train, "time", 2)) == [0, 1, 2, 3]
    assert list(_pool(train, "latency", 2)) == [0, 1]  # latency is about the serving part
    assert list(_pool(serve, "latency", 1)) == [0, 3]
    assert list(_pool(serve, "time", 1)) == [0]


def test_a_family_refusal_names_its_best_computed_configuration_not_an_uncomputed_one():
    """A configuration whose latencies were not computed (NaN) made the refusal read 'TTFT p99 ∞ > 1.00 s SLO
    (best: 16x nvidia_l40)': NaN won the comparison for the best. The best computed one is named now."""
    import numpy as np

    from infrafit.perf import Evaluated
    from infrafit.search import planner

    rows = [{"accelerator": "nvidia_l40", "count": 16, "precision": "fp8"},
            {"accelerator": "nvidia_l40s", "count": 2, "precision": "fp8"}]
    nan = float("nan")
    ev = Evaluated(rows, np.array([True, True]), np.zeros(2), np.full(2, nan), np.zeros(2), np.ones(2),
                   np.full(2, 2.0), {"ttft_p99_s": (np.array([nan, 1.77]), 1.0),
                                     "tpot_p99_s": (np.array([nan, 0.03]), 0.05)},
                   [{}, {"risk_factor_ttft_p99_s": 1.7}], {})
    failures: dict[str, list[str]] = {}
    planner._family_failures(ev, "serve", {"nvidia_l40": "NVIDIA Ada", "nvidia_l40s": "NVIDIA Ada"}, failures)
    assert failures["NVIDIA Ada"] == ["TTFT p99 1.77 s predicted, 3.01 s at the p90 of its band > 1.00 s SLO "
                                      "(best: 2x nvidia_l40s, fp8)"]
