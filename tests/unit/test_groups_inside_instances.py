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


def test_a_70b_service_never_spans_a_tp_group_over_two_vms():
    """The planner's own layouts (the steady 70B golden scenario): every multi-instance option's TP group
    divides its instance."""
    from infrafit.search.planner import plan
    from infrafit.workload.spec import parse_spec

    cat = load_catalog()
    spec = parse_spec("""
name: tiles
task: inference
model: llama3.1-70b
precision: [fp8]
inference:
  mode: realtime
  traffic: {requests_per_s: 20, input_tokens: {mean: 1500, p99: 6000}, output_tokens: {mean: 300, p99: 1000}}
  slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.06}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
""", catalog=cat)
    options = plan(spec, cat, top=20).to_dict()["options"]
    offers = cat.offers.set_index("id")
    assert any(o["server"]["instances_per_replica"] > 1 for o in options)  # the rule is exercised
    for o in options:
        per_instance = int(offers.loc[o["offer_id"], "accelerator_count"])
        tp = int(o["performance"]["parallelism"]["tp"])
        if o["server"]["instances_per_replica"] > 1:
            assert per_instance % tp == 0, o["offer_id"]
