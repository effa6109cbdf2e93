"""Scenario tests of the planner on the shipped examples: the usual advice must come out of the numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.search.pareto import METRIC_TIE_FRACTION
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec, parse_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specs"


def _plan(name: str, **kw) -> dict:
    return plan(load_spec(EXAMPLES / name), load_catalog(), **kw).to_dict()


@pytest.fixture(scope="module")
def custom_ops():
    return _plan("custom-ops-training.yaml", top=5)


def test_custom_cuda_ops_land_on_nvidia_first(custom_ops):
    assert custom_ops["options"], custom_ops["excluded"]
    first = custom_ops["options"][0]
    assert load_catalog().accelerator(first["accelerator"]).vendor == "NVIDIA"
    # Non-NVIDIA families carry a porting cost or are excluded with a number.
    for o in custom_ops["options"]:
        if load_catalog().accelerator(o["accelerator"]).vendor != "NVIDIA":
            assert o["cost"]["breakdown"]["migration_usd"] > 0


def test_every_option_respects_residency():
    p = _plan("lora-finetune-70b.yaml", top=5)
    assert p["options"]
    for o in p["options"]:
        assert o["country"] == "US"
        assert o["region"] in ("us-east-1", "us-west-2") or o["deployment"] == "on_prem"


def test_short_occasional_training_favours_elastic_modes(custom_ops):
    assert custom_ops["options"][0]["deployment"] in ("cloud_on_demand", "cloud_spot")


def test_large_stable_jax_pretraining_keeps_tpu_slices_and_drops_independent_spot_vms():
    """JAX pre-training of an 8B model on 2T tokens. TPU stays a feasible, compared family, priced as
    slices. It used to rank #3 as 128 separate single-chip v6e-1 *spot* VMs charged one interruption
    a day for the whole job (1.5% overhead); a synchronous job stops when any of its 128 instances
    is reclaimed, ~5 times an hour, and with 30-minute average lost work it never finishes. Multi-host
    slices (v5p, v6e-8 hosts on ICI) are preempted as one unit. The catalog has no spot price for
    v6e-8 slices (issue 14), so the best TPU option is a v5p slice."""
    p = _plan("jax-pretraining.yaml", top=5)
    tpu = [o for o in p["options"] if o["family"] == "Google TPU"]
    tpu_compared = [c for c in p["compared"] if c["what"] == "Google TPU"]
    assert tpu or tpu_compared, p["excluded"]
    for o in p["options"]:
        if o["deployment"] == "cloud_spot":
            assert not o["offer_id"].startswith("gcp_tpu_v6e_1"), "independent single-chip spot VMs as one job"
    best_tpu = next(c["reason"] for c in tpu_compared) if tpu_compared else ""
    assert "v6e-1" not in best_tpu


def test_steady_serving_favours_fixed_capacity_over_on_demand():
    """Flat 24/7 chatbot traffic that keeps several 8-GPU servers busy (40 requests/s), no growth, budget
    lifted: owned or committed capacity wins. (At the example's 3 requests/s one on-demand GPU is
    cheaper than any committed 8-GPU box; near 20 requests/s the two are within a few percent, so the
    scenario needs steady volume, not just steadiness.)"""
    text = (EXAMPLES / "chatbot-asia.yaml").read_text()
    for old, repl in (('"$90,000"', '"$9,000,000"'), ("peak_requests_per_s: 8", "peak_requests_per_s: 40"),
                      ("requests_per_s: 3\n", "requests_per_s: 40\n"),
                      ("daily_profile: diurnal", "daily_profile: flat"), ("traffic_per_month: 0.08",
                                                                          "traffic_per_month: 0")):
        assert old in text
        text = text.replace(old, repl)
    p = plan(parse_spec(text), load_catalog(), top=3).to_dict()
    assert p["options"]
    assert p["options"][0]["deployment"] in ("cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly",
                                             "on_prem")


def test_impossible_spec_has_no_option_and_says_why():
    p = plan(load_spec(FIXTURES / "impossible-plan.yaml"), load_catalog(), top=3).to_dict()
    assert p["options"] == []
    reasons = " ".join(e["reason"] for e in p["excluded"])
    assert "SLO" in reasons and "residency" in reasons
    assert all(e["reason"] for e in p["excluded"])


def test_tabular_xgboost_lands_on_cpus():
    p = _plan("tabular-xgboost.yaml", top=3)
    assert p["options"], p["excluded"]
    kinds = [load_catalog().accelerator(o["accelerator"]).kind for o in p["options"]]
    assert kinds[0] == "cpu", [(o["accelerator"], o["cost"]["tco_usd"]) for o in p["options"]]
    gpu_lines = [e for e in p["excluded"] if e["what"].startswith("NVIDIA")]
    assert gpu_lines and all(any(ch.isdigit() for ch in e["reason"]) for e in gpu_lines)


def test_sklearn_tabular_runs_only_on_cpus_and_says_why_not_gpus():
    text = (EXAMPLES / "tabular-xgboost.yaml").read_text().replace("framework: xgboost", "framework: sklearn")
    p = plan(parse_spec(text), load_catalog(), top=3).to_dict()
    assert p["options"], p["excluded"]
    assert all(load_catalog().accelerator(o["accelerator"]).kind == "cpu" for o in p["options"])
    assert "not supported" in " ".join(e["reason"] for e in p["excluded"] if e["what"] == "NVIDIA Hopper")


def test_no_ranked_training_option_exceeds_its_precisions_peak():
    from infrafit.perf import peak_fraction

    cat = load_catalog()
    for o in _plan("jax-pretraining.yaml", top=5)["options"]:
        mfu = o["performance"]["at_capacity"]["throughput"]["mfu_fraction"]
        assert peak_fraction(cat.accelerator(o["accelerator"]), mfu, o["precision"]) <= 1.0


def test_prices_date_range_is_shown(custom_ops):
    lo, _, hi = custom_ops["catalog_retrieved_on"].partition(" to ")
    assert lo <= hi and len(lo) == 10


def test_report_charts_compare_modes_like_with_like():
    """TCO by mode shows the best option of every feasible mode; break-even compares one hardware size."""
    p = _plan("jax-pretraining.yaml", top=3)
    modes = {key.split(" ")[0] for key in p["tco_by_mode"]}
    assert len(modes) >= 2
    for series in p["tco_by_mode"].values():
        assert len(series) == p["workload"]["horizon_months"]
        assert all(b >= a for a, b in zip(series, series[1:], strict=False))  # cumulative
    be = p["breakeven"]
    assert len(be["monthly_usd_by_mode"]) >= 2 and be["hardware"]
    for values in be["monthly_usd_by_mode"].values():
        assert len(values) == len(be["utilisation"])


def test_train_here_serve_there_parts_are_estimated_for_their_own_job():
    p = _plan("train-here-serve-there.yaml", top=3)
    assert p["options"]
    for o in p["options"]:
        train, serve = o["parts"]
        assert (train["part"], serve["part"]) == ("train", "serve")
        assert train["performance"]["time_to_train_s"] > 0
        assert serve["performance"]["time_to_train_s"] is None  # the serving part is an inference estimate
        assert serve["performance"]["latency"]["tpot_s"]["p99"] > 0
        assert o["performance"]["time_to_train_s"] == train["performance"]["time_to_train_s"]


def test_train_here_serve_there_pairs_follow_the_objective():
    """Pairs rank by the objective's metric: time -> the training part's time to train, latency -> the
    serving part's p99 at its operating point (TCO only breaks ties); cost keeps the cheapest first."""
    plans = {o: _plan("train-here-serve-there.yaml", objective=o, top=5) for o in ("cost", "time", "latency")}
    ttt = {o: [x["parts"][0]["performance"]["time_to_train_s"] for x in p["options"]] for o, p in plans.items()}
    p99 = {o: [x["front_point"]["metric_value"] for x in p["options"]] for o, p in plans.items()}
    tco = {o: [x["cost"]["tco_usd"] for x in p["options"]] for o, p in plans.items()}
    # figures within METRIC_TIE_FRACTION (3%, replicate noise) of each other are a tie broken by TCO
    tie = 1.0 + METRIC_TIE_FRACTION
    assert all(b * tie >= a for v in (ttt["time"], p99["latency"]) for a, b in zip(v, v[1:], strict=False))
    # and an option ranked above a faster one is never the dearer of the two (the tie is broken by TCO)
    for o, v in (("time", ttt["time"]), ("latency", p99["latency"])):
        assert all(tco[o][i] <= tco[o][j] for i in range(len(v)) for j in range(i + 1, len(v)) if v[j] < v[i])
    assert tco["cost"] == sorted(tco["cost"])
    # the fastest-training pair of any plan is #1 under time; the lowest p99 of any plan #1 under latency
    assert ttt["time"][0] <= tie * min(min(v) for v in ttt.values())
    assert p99["latency"][0] <= tie * min(min(v) for v in p99.values())
    # on this example the objectives disagree, so the ordering must change with them
    assert ttt["time"][0] < ttt["cost"][0] and p99["latency"][0] < p99["cost"][0]
    assert plans["time"]["options"][0]["why"][0].startswith("fastest-training pair")


@pytest.mark.parametrize("spec", [p for p in sorted(EXAMPLES.glob("*.yaml")) if "\nworkloads:" not in p.read_text()],
                         ids=lambda p: p.stem)
def test_no_tensor_parallel_group_spans_instances(spec):
    """The instance is the unit bought: a replica's TP group lives inside one instance's accelerators
    (data-parallel engines and pipeline stages may span instances, over the network)."""
    from infrafit.catalog import load_catalog as _cat

    cat = _cat()
    per_instance = dict(zip(cat.offers["id"], cat.offers["accelerator_count"], strict=True))
    # a host whose fabric spans instances (a TPU slice on its chips' ICI) declares the interconnect between
    # them: there the TP group may span hosts (issue 12 point 1), up to the slice
    spans = set(cat.hosts.loc[cat.hosts["fabric_spans_instances"].fillna(False).astype(bool), "id"])
    for oid, host in zip(cat.offers["id"], cat.offers["host_id"], strict=True):
        if host in spans:
            per_instance[oid] = cat.accelerator(
                str(cat.offers.set_index("id").loc[oid, "accelerator_id"])).scaleup_domain_size
    for objective in ("cost", "latency"):
        workload = load_spec(spec)
        if workload.current is not None:  # stay as is runs on today's instances (offer "current")
            from datetime import date

            from infrafit.search.current import CURRENT_OFFER_ID, current_offer

            row = current_offer(cat, workload, date.today()).iloc[0]
            per_instance[CURRENT_OFFER_ID] = row["accelerator_count"]
        p = plan(workload, cat, objective=objective, top=5).to_dict()
        for o in p["options"]:
            for part in o.get("parts") or [o]:
                tp = part["performance"]["parallelism"]["tp"]
                assert tp <= per_instance[part["offer_id"]], (part["offer_id"], tp)
