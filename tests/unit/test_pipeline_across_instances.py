"""A dense model too large for one scale-up domain runs pipeline stages on separate instances, each stage's
TP group inside one instance, over a declared RDMA fabric (issue 12 point 1): the layout vLLM documents for
multi-node serving (tensor parallel inside a node, pipeline parallel across nodes). Pipelining buys memory,
not speed: a token still reads a TP-only replica's weights and pays a send per stage."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.capacity import pipeline_degrees
from infrafit.perf.llm.engine import _collectives_s, decode_step, max_concurrency, pipeline_hop_s, prefill_alone_s
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.search.parts import join_offers
from infrafit.workload.models import resolve_model


@pytest.fixture(scope="module")
def h100():
    return load_catalog().accelerator("nvidia_h100_sxm")


def test_pipeline_stages_are_searched_only_past_one_scale_up_domain(h100):
    assert pipeline_degrees(h100, 8, [1, 2, 4, 8], 126) == []  # one NVLink domain: TP alone
    assert pipeline_degrees(h100, 16, [1, 2, 4, 8], 126) == [(8, 2)]
    assert pipeline_degrees(h100, 32, [1, 2, 4, 8], 126) == [(8, 4)]
    assert pipeline_degrees(h100, 128, [1, 2, 4, 8], 126) == []  # 16 stages: past PP_MAX
    assert pipeline_degrees(h100, 16, [1, 2, 4, 8], 1) == []  # more stages than layers


def test_a_token_reads_the_tp_only_weights_and_pays_a_send_per_stage(h100):
    """Llama-3.1-70B bf16, TP4 x PP2 on 8 chips against TP4 on 4 and TP8 on 8. Every chip of the pipeline
    holds half the weights, so it holds far more sequences; a token round reads the TP4 replica's weights
    (each stage re-reads its half for each micro-batch) but each stage reads only its own layers' cache, so
    the cache is read with 8 chips' bandwidth. TP8 on the same 8 chips reads half the weights a token, so
    it is faster: pipelining buys memory, not speed."""
    shape = shape_from_arch(resolve_model("llama3.1-70b"))
    s = build_setup([ConfigRow(h100, "bf16", "vllm", tp=4, pp=2), ConfigRow(h100, "bf16", "vllm", tp=4),
                     ConfigRow(h100, "bf16", "vllm", tp=8)])[0]
    batch = np.full(3, 32.0)
    step = decode_step(shape, s, batch, np.full(3, 2000.0))
    t_pp, t_tp4, t_tp8 = step["time_s"]
    assert t_tp8 < t_pp < 1.25 * t_tp4
    assert step["gemm_memory_s"][0] == pytest.approx(step["gemm_memory_s"][1], rel=0.02)
    assert step["kv_read_s"][0] == pytest.approx(step["kv_read_s"][1] / 2, rel=1e-6)
    # one micro-batch per stage: the sends and the stage's own all-reduces are in the step
    hop = pipeline_hop_s(shape, s, batch / s.pp)
    assert hop[1] == hop[2] == 0.0 and hop[0] > 0.0
    assert step["collectives_s"][0] == pytest.approx(2 * (_collectives_s(shape, s, batch / 2)[0] + hop[0]))
    # a chip all-reduces only for its stage's layers
    c = _collectives_s(shape, s, np.full(3, 8.0))
    assert c[0] == pytest.approx(c[1] / 2)
    # a prompt passes the stages in turn: no faster than on the TP-only replica, plus the sends
    p = prefill_alone_s(shape, s, np.full(3, 2000.0))
    assert p[0] >= p[1] > p[2]
    cmax = max_concurrency(shape, s, np.full(3, 2300.0))
    assert cmax[0] > 2 * cmax[1]  # half the weights per chip leave far more room for the KV cache


def test_a_lone_sequence_passes_every_stage_whole(h100):
    """One sequence on TP4 x PP2: its token passes both stages one after the other, each with the whole
    sequence (a stage never works on half a sequence) and one scheduler step, so the step is TP4's plus a
    send per stage."""
    shape = shape_from_arch(resolve_model("llama3.1-70b"))
    s = build_setup([ConfigRow(h100, "bf16", "vllm", tp=4, pp=2), ConfigRow(h100, "bf16", "vllm", tp=4)])[0]
    one = np.ones(2)
    t_pp, t_tp = decode_step(shape, s, one, np.full(2, 2000.0))["time_s"]
    extra = 2 * pipeline_hop_s(shape, s, one)[0]
    assert t_pp == pytest.approx(t_tp + extra, rel=1e-6)


def test_stages_on_separate_instances_talk_over_the_scale_out_fabric(h100):
    s = build_setup([ConfigRow(h100, "bf16", "vllm", tp=8, pp=2)])[0]
    assert s.link_bytes_per_s[0] == h100.scaleup_bytes_per_s  # the TP all-reduces stay on NVLink
    assert s.pp_link_bytes_per_s[0] == h100.scaleout_bytes_per_s
    assert s.pp_link_latency_s[0] > s.link_latency_s[0]


def _dense(count: int, tp: int, pp: int) -> dict:
    return {"accelerator": "nvidia_h100_sxm", "count": count, "tp": tp, "pp": pp, "dp": count // (tp * pp)}


def test_a_pipeline_spans_instances_only_over_a_declared_fabric():
    """Two p5.48xlarge (EFA, 3,200 Gbit/s) are joined; two 8x H100 boxes with no declared fabric are not,
    though two independent TP8 copies on them (dp 2) still are, since those exchange nothing."""
    cat = load_catalog()
    offers = pd.DataFrame({"id": ["p5", "plain"], "accelerator_id": ["nvidia_h100_sxm"] * 2,
                           "accelerator_count": [8, 8], "host_id": ["aws_p5_48xlarge", "lambda_8x_h100_sxm"]})
    ev = SimpleNamespace(rows=[_dense(16, 8, 2), _dense(16, 8, 1)])
    rows, cfg = join_offers(offers, ev, multiples=(2,), catalog=cat)
    got = {(r["id"], int(c)) for (_, r), c in zip(rows.iterrows(), cfg, strict=True)}
    assert got == {("p5", 0), ("p5", 1), ("plain", 1)}


def test_llama_405b_bf16_on_h100s_plans_two_efa_joined_boxes():
    """810 GB of bf16 weights do not fit one 8x H100 box (640 GB). The plan rents two p5.48xlarge in one
    cluster placement group, TP8 inside each and two pipeline stages: 2 x $55.04 an hour on demand."""
    from infrafit.search.planner import plan
    from infrafit.workload.spec import load_spec

    cat = load_catalog()
    spec = load_spec(Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "llama405-bf16-h100.yaml", cat)
    options = plan(spec, cat).to_dict()["options"]
    assert options, "Llama-3.1-405B bf16 needs two joined 8x H100 boxes"
    top = next(o for o in options if o["deployment"] == "cloud_on_demand")
    assert top["server"]["host_id"] == "aws_p5_48xlarge" and top["server"]["instances_per_replica"] == 2
    par = top["performance"]["parallelism"]
    assert (par["tp"], par["pp"]) == (8, 2)
    assert any(r.startswith("fabric: one replica spans 2 instances") for r in top["risks"])
    rate = float(cat.offers.set_index("id").loc[top["offer_id"], "usd_per_hour"])
    assert rate == pytest.approx(55.04)
    replicas = top["count"] // 16
    paid = top["cost"]["breakdown"]["compute_usd"] + top["cost"]["breakdown"]["idle_usd"]
    assert paid == pytest.approx(replicas * 2 * rate * 8760, rel=0.01)  # two instances all year


def test_estimate_refuses_a_pipeline_across_instances_without_a_declared_fabric(capsys):
    """`estimate --offer` applies the planner's rule: two p5.48xlarge (EFA) may hold TP8 x PP2; two Lambda 8x
    H100 VMs, whose host row declares no fabric between instances, may not (exit 2, with the fix)."""
    from infrafit.cli import main

    spec = str(Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "llama405-bf16-h100.yaml")
    base = ["estimate", spec, "--count", "16", "--tp", "8", "--pp", "2", "--precision", "bf16", "--json"]
    assert main([*base, "--offer", "aws_p5_48xlarge_us_east_1_cloud_on_demand_20250701"]) == 0
    capsys.readouterr()
    assert main([*base, "--offer", "lambda_gpu_8x_h100_sxm5_lambda_us_cloud_on_demand_20250701"]) == 2
    err = capsys.readouterr().err
    assert "declares no RDMA fabric" in err and "To fix" in err and "Traceback" not in err
