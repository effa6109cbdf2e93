"""A replica over several instances is built from whole TP groups per instance (issue 12 point 1): TP2 groups
tile 2- and 4-GPU instances, but two 3-GPU instances cannot hold three TP2 groups without one of them
running its all-reduces across the network between the VMs."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from infrafit.catalog import load_catalog
from infrafit.search.parts import join_offers


def _offers(*counts: int) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"h100x{c}" for c in counts], "accelerator_id": ["nvidia_h100_sxm"] * len(counts),
                         "accelerator_count": list(counts), "host_id": [f"host_{c}" for c in counts]})


def _layout(count: int, tp: int) -> dict:
    return {"accelerator": "nvidia_h100_sxm", "count": count, "tp": tp, "pp": 1, "dp": count // tp}


def test_tp_groups_must_tile_each_instance_of_a_multi_instance_replica():
    ev = SimpleNamespace(rows=[_layout(6, 2), _layout(4, 2), _layout(6, 3), _layout(3, 1)])
    rows, cfg = join_offers(_offers(2, 3), ev, multiples=(1, 2, 3), catalog=load_catalog())
    got = {(r["id"], int(r["instances_per_replica"]), int(c)) for (_, r), c in zip(rows.iterrows(), cfg, strict=True)}
    assert ("h100x2", 3, 0) in got  # three 2-GPU instances, one TP2 group each
    assert ("h100x2", 2, 1) in got
    assert ("h100x3", 2, 2) in got  # TP3 groups tile 3-GPU instances
    assert ("h100x3", 1, 3) in got
    assert ("h100x3", 2, 0) not in got  # TP2 x 3 over two 3-GPU instances: one group would straddle them


def _moe_layout(count: int, tp: int) -> dict:
    return {"accelerator": "nvidia_h100_sxm", "count": count, "tp": tp, "pp": 1, "dp": count // tp}


def test_a_moe_replica_spans_instances_only_over_a_declared_fabric_that_carries_the_priced_rate():
    """DeepSeek-V3 at fp8 (671 GB) does not fit one 8x H100 box; on two p5.48xlarge joined by their 3,200
    Gbit/s EFA (50 GB/s per GPU, the rate the estimate prices the all-to-alls at) it does. Two instances of a
    host with no declared fabric, or one whose fabric carries less than that rate, are not joined."""
    cat = load_catalog()
    offers = pd.DataFrame({"id": ["p5", "plain"], "accelerator_id": ["nvidia_h100_sxm"] * 2,
                           "accelerator_count": [8, 8], "host_id": ["aws_p5_48xlarge", "lambda_8x_h100_sxm"]})
    assert cat.hosts.set_index("id").at["aws_p5_48xlarge", "scaleout_fabric"] == "efa"
    ev = SimpleNamespace(rows=[_moe_layout(16, 8), _moe_layout(8, 8)])
    rows, cfg = join_offers(offers, ev, multiples=(1, 2), catalog=cat, moe=True)
    got = {(r["id"], int(r["instances_per_replica"]), int(c)) for (_, r), c in zip(rows.iterrows(), cfg, strict=True)}
    assert got == {("p5", 2, 0), ("p5", 1, 1), ("plain", 1, 1)}
    slow = cat.hosts.set_index("id").loc["aws_p4d_24xlarge"]  # EFA 400 Gbit/s for 8 A100s: 6.25 GB/s each
    assert slow["scaleout_fabric"] == "efa"
    assert slow["network_bits_per_s"] / 8 / 8 < cat.accelerators["nvidia_a100_40gb_sxm"].scaleout_bytes_per_s
    a100 = pd.DataFrame({"id": ["p4d"], "accelerator_id": ["nvidia_a100_40gb_sxm"], "accelerator_count": [8],
                         "host_id": ["aws_p4d_24xlarge"]})
    ev100 = SimpleNamespace(rows=[{**_moe_layout(16, 8), "accelerator": "nvidia_a100_40gb_sxm"}])
    assert join_offers(a100, ev100, multiples=(2,), catalog=cat, moe=True)[0].empty


def test_tp_all_reduces_stay_on_nvlink_while_the_all_to_all_crosses_the_fabric():
    from infrafit.perf.llm.setup import ConfigRow, build_setup

    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    s = build_setup([ConfigRow(h100, "fp8", "sglang", tp=8, adp=2), ConfigRow(h100, "fp8", "sglang", tp=8)])[0]
    assert s.link_bytes_per_s[0] == s.link_bytes_per_s[1] == h100.scaleup_bytes_per_s
    assert s.ep_link_bytes_per_s[0] == h100.scaleout_bytes_per_s
    assert s.ep_link_bytes_per_s[1] == h100.scaleup_bytes_per_s


def test_deepseek_v3_on_h100s_plans_two_efa_joined_boxes():
    from infrafit.search.planner import plan
    from infrafit.workload.spec import parse_spec

    cat = load_catalog()
    spec = parse_spec("""
name: deepseek-h100
task: inference
model: deepseek-v3
precision: [fp8]
inference:
  mode: realtime
  traffic: {requests_per_s: 2, input_tokens: {mean: 2000, p99: 8000}, output_tokens: {mean: 500, p99: 2000}}
  slo: {ttft_p99_s: 3.0, tpot_p99_s: 0.1}
placement: {countries: [US]}
hardware: {accelerators: [nvidia_h100_sxm]}
deployment: {allowed: [cloud]}
horizon_months: 12
""", catalog=cat)
    options = plan(spec, cat).to_dict()["options"]
    assert options, "DeepSeek-V3 fp8 needs more than 640 GB: two joined 8x H100 boxes"
    top = options[0]
    assert top["count"] == 16 and top["server"]["instances_per_replica"] == 2
    host = cat.hosts.set_index("id").loc[top["server"]["host_id"]]
    assert host["scaleout_fabric"] in ("efa", "infiniband", "rdma")
    assert any(r.startswith("fabric: one replica spans 2 instances") for r in top["risks"])
    offers = cat.offers.set_index("id")
    for o in options:  # every multi-instance option keeps each TP group inside one instance
        if o["server"]["instances_per_replica"] > 1:
            assert int(offers.loc[o["offer_id"], "accelerator_count"]) % int(o["performance"]["parallelism"]["tp"]) == 0


def _train_layout(count: int, tp: int = 1) -> dict:
    return {"accelerator": "nvidia_h100_sxm", "count": count, "tp": tp, "pp": 1, "dp": count // tp}


def test_a_training_run_spans_instances_only_over_a_declared_fabric():
    """A training run is one replica whose gradient all-reduce crosses every instance it spans, priced at the
    chip's scale-out rate: 16 H100s over two p5.48xlarge (3,200 Gbit/s EFA) are joined; over two 8-GPU VMs
    whose host declares no network between instances they are not (one 8-GPU run on either still is)."""
    cat = load_catalog()
    offers = pd.DataFrame({"id": ["p5", "plain"], "accelerator_id": ["nvidia_h100_sxm"] * 2,
                           "accelerator_count": [8, 8], "host_id": ["aws_p5_48xlarge", "lambda_8x_h100_sxm"]})
    ev = SimpleNamespace(rows=[_train_layout(16), _train_layout(8)])
    rows, cfg = join_offers(offers, ev, multiples=(1, 2), catalog=cat, training=True)
    got = {(r["id"], int(r["instances_per_replica"]), int(c)) for (_, r), c in zip(rows.iterrows(), cfg, strict=True)}
    assert got == {("p5", 2, 0), ("p5", 1, 1), ("plain", 1, 1)}
    served = join_offers(offers, ev, multiples=(1, 2), catalog=cat)[0]  # dense serving: DP copies, no traffic
    assert ("plain", 2) in {(r["id"], int(r["instances_per_replica"])) for _, r in served.iterrows()}


def test_a_tight_deadline_plans_multi_node_training_only_on_fabric_hosts_and_says_why_others_drop():
    from infrafit.search.planner import plan
    from infrafit.workload.spec import parse_spec

    spec = """
name: pretrain-1b-fast
task: training
model: llama3.2-1b
framework: pytorch
precision: [bf16, fp8]
training: {tokens: 20B, seq_len: 4096, global_batch: 512, deadline_days: 0.05}
usage: {pattern: periodic, runs_per_year: 1}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 3
"""
    cat = load_catalog()
    out = plan(parse_spec(spec, catalog=cat), cat, top=20).to_dict()
    hosts = cat.hosts.set_index("id")
    assert out["options"]
    for o in out["options"]:
        n = int(o["server"]["instances_per_replica"])
        h = hosts.loc[o["server"]["host_id"]]
        assert n == 1 or isinstance(h["scaleout_fabric"], str) or str(h["fabric_spans_instances"]) == "True"
    ada = next(e["reason"] for e in out["excluded"] if e["what"] == "NVIDIA Ada")
    assert "more than one instance holds" in ada and "hosts.scaleout_fabric" in ada


def test_bought_dgx_servers_train_together_over_their_infiniband_and_the_switches_are_a_stated_risk():
    """The DGX/HGX datasheets list one 400 Gb/s ConnectX-7 (DGX A100: 200 Gb/s HDR) compute NIC per GPU, the
    SuperPOD fabric, so a bought run may span servers; the switches between them are not in the server price."""
    from infrafit.search.planner import plan
    from infrafit.workload.spec import parse_spec

    cat = load_catalog()
    hosts = cat.hosts.set_index("id")
    assert hosts.at["server_dgx_b200", "scaleout_fabric"] == "infiniband"
    spec = """
name: pretrain8b-onprem
task: training
model: llama3.1-8b
framework: pytorch
precision: [bf16, fp8]
training: {tokens: 1T, seq_len: 8192, deadline_days: 30}
usage: {pattern: periodic, runs_per_year: 4}
placement: {countries: [US]}
deployment: {allowed: [on_prem]}
horizon_months: 36
"""
    o = plan(parse_spec(spec, catalog=cat), cat, top=1).to_dict()["options"][0]
    assert o["deployment"] == "on_prem" and int(o["server"]["instances_per_replica"]) > 1
    assert any(r.startswith("fabric:") and "switches and cables between them are not priced" in r
               for r in o["risks"])
