"""A replica runs no faster than its host's CPU prepares the items (JPEG or audio decode, tokenisation): the
plan priced the accelerators' rate and only named the host as the bottleneck. ResNet-50 on one H100 of a
16-vCPU p5.4xlarge takes 11,855 images/s; 14 free cores decode 9,915 of them (turbojpeg, 708 images/s a core)."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf import host_fed_factor
from infrafit.perf.host.attach import core_s_per_item
from infrafit.perf.host.server import host_item_rate, load_server_profile
from infrafit.search.planner import plan
from infrafit.workload.models import resolve_model
from infrafit.workload.spec import parse_spec

ALL_BUT_AWS = ("Azure, CoreWeave, Cudo, DigitalOcean, GCP, Hetzner, Hyperbolic, Hyperstack, Lambda, Latitude.sh, "
               "Nebius, OVHcloud, Oblivus, Oracle, Prime Intellect, Qubrid AI, RunPod, Shadeform, Verda, "
               "dedicated (market rate), purchase, vast.ai")
RESNET = f"""
name: resnet-train
task: training
model: resnet50
training: {{epochs: 40, dataset: {{samples: 1.28M}}}}
hardware: {{accelerators: [h100]}}
deployment: {{exclude_providers: [{ALL_BUT_AWS}]}}
horizon_months: 1
"""


def test_the_host_rate_is_the_free_cores_over_the_work_per_item():
    prof = load_server_profile()
    per = prof["cpu_core_s_per_item:jpeg_decode_imagenet"]
    runtime = prof["runtime_cores_per_accelerator"]
    assert host_item_rate(per, 16, 1) == pytest.approx((16 - runtime) / per)
    assert host_item_rate(per, 2, 1) == 0.0  # the runtime takes every core
    assert np.isinf(host_item_rate(per, np.nan, 1)) and np.isinf(host_item_rate(0.0, 16, 1))


def test_the_factor_slows_only_what_the_host_cannot_feed():
    w = parse_spec(RESNET)
    arch = resolve_model("resnet50")
    limit = host_item_rate(core_s_per_item(w, arch), 16, 1)
    assert host_fed_factor(w, arch, limit * 1.2, 16, 1) == pytest.approx(1.2)
    assert host_fed_factor(w, arch, limit * 0.5, 16, 1) == 1.0
    assert host_fed_factor(w, arch, limit * 1.2, 16, 1, "cpu") == 1.0  # a CPU's compute model already uses its cores


def test_the_plan_prices_the_rate_the_host_feeds_and_says_so():
    cat = load_catalog()
    best = plan(parse_spec(RESNET, catalog=cat), cat, top=1).options[0]
    assert best.server["host_id"] == "aws_p5_4xlarge"
    assert best.performance["bottleneck"] == "host_cpu"
    factor = best.performance["breakdown"]["host_fed_factor"]
    assert factor == pytest.approx(11_855 / 9_915, rel=0.02)
    assert best.performance["time_to_train_s"] == pytest.approx(72.0 * 60 * factor, rel=0.02)
    # the accelerators wait for the host: their utilisation falls with the rate
    assert best.performance["throughput"]["mfu_fraction"] == pytest.approx(
        best.performance["breakdown"]["peak_fraction"] / factor, rel=0.01)
    line = next(w for w in best.why if w.startswith("host CPU: the instance's 16 cores feed 9,915 items/s"))
    assert "NVIDIA DALI" in line


def test_an_llm_host_is_never_the_limit_at_ordinary_prompt_lengths():
    w = parse_spec("""
name: t
task: inference
model: llama3.1-8b
inference: {traffic: {requests_per_s: 50, input_tokens: 2000, output_tokens: 200}}
""")
    assert host_fed_factor(w, resolve_model("llama3.1-8b"), 50.0, 4, 1) == 1.0  # 0.13 of a core to tokenise


def test_a_host_whose_runtime_takes_every_core_feeds_nothing():
    w = parse_spec(RESNET)
    assert np.isinf(host_fed_factor(w, resolve_model("resnet50"), 100.0, 2, 1))


def test_a_training_row_the_host_pushes_past_the_deadline_is_dropped_and_said():
    """ResNet-50 on one H100 of a p5.4xlarge: 72 min at the GPU's rate (91 min at the band's p90) meets a 1.7 h
    deadline, the 86 min the host feeds (109 min at p90) does not. On p5.4xlarge offers alone every row is dropped
    (a spot row's own deadline check no longer overwrites the block), with the host as the reason."""
    from infrafit.search.compat import family_compat
    from infrafit.search.offers import filter_offers
    from infrafit.search.planner import build_part

    cat = load_catalog()
    w = parse_spec(RESNET.replace("training: {epochs: 40,", "training: {epochs: 40, deadline_days: 1.7h,"),
                   catalog=cat)
    kept = filter_offers(cat, w, ("cloud",), (), ()).kept
    offers = kept[kept["host_id"] == "aws_p5_4xlarge"].reset_index(drop=True)
    compat = family_compat(cat, w.framework, sorted(set(offers["family"])), (), False)
    part = build_part(w, w.model_arch(), cat, offers, compat, "train")
    assert len(part) and part.blocked.all()
    hopper = " ".join(part.failures["NVIDIA Hopper"])
    assert "host CPU: aws_p5_4xlarge's 16 vCPUs feed the input pipeline 1.2x slower" in hopper
    assert "To fix: decode on the accelerators" in hopper


def test_the_count_search_goes_on_to_a_host_that_feeds_the_chips_in_time():
    """With the whole AWS catalog the same deadline is met: the count search no longer stops at counts only the
    accelerators could finish in time (1x on a p5.4xlarge; 2x and 4x, which span p5.4xlarge instances no training
    run joins), so 8x H100 on one 192-vCPU p5.48xlarge is found."""
    cat = load_catalog()
    spec = RESNET.replace("training: {epochs: 40,", "training: {epochs: 40, deadline_days: 1.7h,")
    best = plan(parse_spec(spec, catalog=cat), cat, top=3).options[0]
    assert best.server["host_id"] == "aws_p5_48xlarge" and best.count == 8
