"""deployment.managed_preferred (issue 13 point 3): an offer runs on its provider's managed platform only
where the catalog has one for the work (cost_managed.csv: AWS Batch, Google Cloud Batch, Azure Batch for
scheduled batch inference), pays that platform's fee as its own line (theirs is $0) and is operated at the
managed rate; every other offer stays self-managed and says so. Before, the flag gave every offer of every
provider the managed hours for free."""

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


def test_a_service_has_no_built_in_managed_platform_and_says_so(cat):
    """Kubernetes control planes (EKS, GKE, AKS) are not a managed service: the team still upgrades, secures
    and networks the cluster (docs/cost.md), so a realtime service stays self-managed."""
    p = _plan(cat, CHAT, ", managed_preferred: true")
    base = _plan(cat, CHAT, "")
    assert [o.offer_id for o in p.options] == [o.offer_id for o in base.options]
    for o, b in zip(p.options, base.options, strict=True):
        assert o.server.get("managed_platform") is None
        assert o.cost["tco_usd"] == pytest.approx(b.cost["tco_usd"])  # no free managed hours any more
        assert any("a managed endpoint's own prices (SageMaker, Vertex AI) are not in the catalog" in w for w in o.why)


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
    assert not service.any()
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
