"""deployment.managed_preferred (issue 13 point 3): an offer runs on its provider's managed platform only
where the catalog has one for the work (cost_managed.csv: AWS Batch, Google Cloud Batch, Azure Batch for
scheduled batch inference; SageMaker AI for services and training, at its own instance rate), pays that
platform's fee (or rate) as its own line and is operated at the managed rate; every other offer stays
self-managed and says so. Before, the flag gave every offer of every provider the managed hours for free."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.adapters import managed_platforms, ops_hours
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]
BATCH = """
name: managed-batch
task: inference
model: bert-large
inference:
  mode: batch
  traffic:
    items: {{per_day: 40M, window_hours: 6}}
    input_tokens: {{mean: 256, p99: 512}}
usage: {{pattern: periodic}}
placement: {{countries: [US]}}
deployment: {{allowed: [cloud]{extra}}}
ops: {{engineer_usd_per_hour: 100}}
horizon_months: 12
"""
CHAT = """
name: managed-chat
task: inference
model: llama3.1-8b
inference:
  mode: realtime
  traffic: {{requests_per_s: 2, input_tokens: 500, output_tokens: 200}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.1}}
deployment: {{allowed: [cloud]{extra}}}
horizon_months: 12
"""


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _plan(cat, spec: str, extra: str):
    return plan(parse_spec(spec.format(extra=extra), catalog=cat), cat, top=8)


def test_batch_work_runs_on_the_managed_batch_service_at_the_managed_rate(cat):
    p = _plan(cat, BATCH, ", managed_preferred: true")
    on = [o for o in p.options if o.server.get("managed_platform")]
    off = [o for o in p.options if not o.server.get("managed_platform")]
    assert on and off, [(o.provider, o.server.get("managed_platform")) for o in p.options]
    base = _plan(cat, BATCH, "")
    by_offer = {(o.offer_id, o.count): o for o in base.options}
    for o in on:
        assert o.server["managed_platform"] in ("AWS Batch", "Google Cloud Batch", "Azure Batch")
        assert o.cost["breakdown"]["platform_usd"] == 0.0  # the batch services bill only the instances
        assert any(w.startswith(f"managed: runs on {o.server['managed_platform']}") for w in o.why)
        same = by_offer.get((o.offer_id, o.count))
        if same is not None:  # the same offer self-managed: only the labour differs
            assert o.cost["breakdown"]["ops_labour_usd"] < same.cost["breakdown"]["ops_labour_usd"]
            assert o.cost["breakdown"]["compute_usd"] == pytest.approx(same.cost["breakdown"]["compute_usd"])
    for o in off:
        assert o.provider not in ("AWS", "GCP", "Azure") or o.deployment not in ("cloud_on_demand", "cloud_spot")
        assert any(w.startswith("managed: the catalog has no managed platform") for w in o.why)
    managed_fixed, _ = ops_hours(np.array(["cloud_on_demand"]), True, work="batch")
    self_fixed, _ = ops_hours(np.array(["cloud_on_demand"]), False, work="batch")
    assert managed_fixed[0] < self_fixed[0]  # no launcher or job scheduler of your own to keep working


def test_a_service_runs_on_sagemaker_at_its_own_instance_rate_where_it_sells_the_host(cat):
    """SageMaker AI sells ml.* instances at its own rate (cost_managed_instances.csv): a realtime service on
    an EC2 host it sells, in a region it has a rate for, runs on it on demand at that rate with the managed
    hours; every other offer stays self-managed and says so. Kubernetes control planes (EKS, GKE, AKS) are
    not a managed service (the team still runs the cluster, docs/cost.md).

    By hand, Llama-3.1-8B at 2 requests/s on one ml.g5.xlarge (3.55 requests/s within the SLOs) for 12
    months: 1.4084 $/h x 730 h x 12 = $12,338 of compute, and (4 + 0.5 x 1) h x 12 x $100 = $5,400 of
    operations, $17,738 in all; self-managed on EC2 it is 1.006 x 730 x 12 = $8,813 plus 18 h x 12 x $100."""
    p = _plan(cat, CHAT, ", managed_preferred: true")
    base = _plan(cat, CHAT, "")
    by_offer = {(o.offer_id, o.count): o for o in base.options}
    on = [o for o in p.options if o.server.get("managed_platform")]
    assert on, [(o.offer_id, o.server.get("managed_platform")) for o in p.options]
    for o in on:
        assert o.server["managed_platform"] == "Amazon SageMaker AI"
        assert (o.provider, o.deployment, o.region) == ("AWS", "cloud_on_demand", "us-east-1")
        assert any("at Amazon SageMaker AI's own rate" in w for w in o.why)
    g5 = next(o for o in on if o.offer_id.startswith("aws_g5_xlarge_us_east_1_cloud_on_demand"))
    b = g5.cost["breakdown"]
    assert b["compute_usd"] + b["idle_usd"] == pytest.approx(1.4084 * 730 * 12, rel=1e-3)
    assert b["ops_labour_usd"] == pytest.approx((4 + 0.5) * 12 * 100, rel=1e-3)
    for o in p.options:
        if not o.server.get("managed_platform"):
            said = [w for w in o.why if w.startswith("managed: ")]
            if o.provider == "AWS":  # SageMaker exists but does not sell this host here at a rate of its own
                assert said and said[0].startswith("managed: Amazon SageMaker AI sells no "), said
            else:
                assert said and said[0].startswith("managed: the catalog has no managed platform"), said
            same = by_offer.get((o.offer_id, o.count))
            if same is not None:  # self-managed either way: the same cost
                assert o.cost["tco_usd"] == pytest.approx(same.cost["tco_usd"])


def test_sagemaker_runs_only_the_on_demand_hosts_and_regions_it_has_a_rate_for(cat):
    from infrafit.cost.adapters import managed_instance_rates, offers_from_catalog

    offers = cat.offers
    rows = offers[(offers["provider"] == "AWS")].reset_index(drop=True)
    on, names, fees = managed_platforms(cat, rows, True, "any")
    rated = cat.cost_factors["managed_instances"]
    sold = {(h, r) for h, r in zip(rated["host_id"], rated["region"], strict=True)}
    expect = np.array([(h, r) in sold and m == "cloud_on_demand"
                       for h, r, m in zip(rows["host_id"], rows["region"], rows["mode"], strict=True)])
    assert expect.any() and (on == expect).all()
    assert set(names[on]) == {"Amazon SageMaker AI"} and not fees.any()
    rates = managed_instance_rates(cat, rows)
    arrays = offers_from_catalog(cat, rows, managed=True)
    vm = rows["usd_per_hour"].to_numpy(dtype=float)
    assert np.allclose(arrays.usd_per_hour[on], rates[on])
    assert (rates[on] > vm[on]).all()  # the platform's premium over the VM (20-40 %)
    assert np.allclose(arrays.usd_per_hour[~on], vm[~on], equal_nan=True)
    self_managed = offers_from_catalog(cat, rows, managed=False)
    assert np.allclose(self_managed.usd_per_hour, vm, equal_nan=True)


def test_without_the_preference_nothing_runs_on_a_platform(cat):
    p = _plan(cat, BATCH, "")
    assert p.options
    for o in p.options:
        assert o.server.get("managed_platform") is None and o.cost["breakdown"]["platform_usd"] == 0.0
        assert not any(w.startswith("managed:") for w in o.why)


def test_the_platform_rule_per_offer(cat):
    offers = cat.offers
    rows = offers[offers["provider"].isin(["AWS", "RunPod"]) & offers["mode"].isin(
        ["cloud_on_demand", "cloud_spot", "cloud_capacity_block"])].reset_index(drop=True)
    on, names, fees = managed_platforms(cat, rows, True, "batch")
    aws = (rows["provider"] == "AWS").to_numpy()
    block = (rows["mode"] == "cloud_capacity_block").to_numpy()
    assert on[aws & ~block].all() and not on[~aws].any()
    assert not on[block].any()  # no managed operations row for capacity blocks: self-managed
    assert set(names[on]) == {"AWS Batch"} and not fees.any()
    service, _, _ = managed_platforms(cat, rows, True, "any")
    assert not service[(rows["mode"] != "cloud_on_demand").to_numpy()].any()  # SageMaker: on demand only
    off, _, none = managed_platforms(cat, rows, False, "batch")
    assert not off.any() and not none.any()


def test_an_overlay_platform_row_is_priced(tmp_path, cat):
    """A team that runs on its own managed platform states it, with its fee, as an overlay row."""
    overlay = tmp_path / "mine"
    overlay.mkdir()
    header = (ROOT / "src" / "infrafit" / "catalog" / "data" / "cost_managed.csv").read_text().splitlines()[0]
    (overlay / "cost_managed.csv").write_text(
        header + "\nmy_platform,RunPod,Our platform team,any,0.05,medium,,internal quote,2026-11-30\n")
    mine = load_catalog(overlay_dir=overlay)
    p = _plan(mine, CHAT, ", managed_preferred: true")
    runpod = [o for o in p.options if o.provider == "RunPod"]
    assert runpod, [o.provider for o in p.options]
    for o in runpod:
        assert o.server["managed_platform"] == "Our platform team"
        assert o.cost["breakdown"]["platform_usd"] == pytest.approx(0.05 * 730 * 12, rel=1e-3)


def test_a_batch_run_on_aws_batch_pays_the_vm_rate_not_sagemakers(cat):
    """AWS Batch bills the EC2 instances it launches: a g5.xlarge in us-east-1 run as batch work on it is
    billed EC2's $1.006 an hour, though SageMaker AI sells the same host at $1.4084 for services."""
    from infrafit.cost.adapters import managed_instance_rates, offers_from_catalog

    offers = cat.offers
    rows = offers[(offers["host_id"] == "aws_g5_xlarge") & (offers["region"] == "us-east-1")
                  & (offers["mode"] == "cloud_on_demand")].reset_index(drop=True)
    assert len(rows) == 1
    vm = float(rows["usd_per_hour"].iloc[0])
    on, names, _ = managed_platforms(cat, rows, True, "batch")
    assert on[0] and names[0] == "AWS Batch"
    batch = offers_from_catalog(cat, rows, managed=True, work="batch")
    assert batch.usd_per_hour[0] == pytest.approx(vm)
    service = offers_from_catalog(cat, rows, managed=True, work="any")
    assert service.usd_per_hour[0] == pytest.approx(1.4084)
    assert np.isnan(managed_instance_rates(cat, rows, ["AWS Batch"])[0])
