"""Edge devices (Jetson developer kits, host_kind edge_device) serve ``inference.mode: edge`` only.

A $5,499 Jetson AGX Thor has 128 GB and 517 dense FP8 TFLOPS, so on FLOPs per dollar it beat an 8x H100
server as the on-prem trainer of ``train-here-serve-there`` (and eight AGX Orins "joined" into one
replica came second). A developer kit has no remote management, redundant power or rack mounting: it
is not a server. The rule removes them from any other work with one exclusion line that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
JETSONS = {"nvidia_jetson_orin_nano_super", "nvidia_jetson_agx_orin_64gb", "nvidia_jetson_agx_thor_t5000"}


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _accelerators(option: dict) -> set[str]:
    parts = option.get("parts") or []
    return {option.get("accelerator")} | {p.get("accelerator") for p in parts if isinstance(p, dict)}


def test_training_and_datacenter_serving_never_use_a_developer_kit(cat):
    out = plan(load_spec(EXAMPLES / "train-here-serve-there.yaml", catalog=cat), cat).to_dict()
    assert out["options"]
    for option in out["options"]:
        assert not (_accelerators(option) & JETSONS), option.get("accelerator")
    line = next(e for e in out["excluded"] if e["what"] == "edge devices")
    assert "inference.mode: edge" in line["reason"] and "To fix:" in line["reason"]
    assert all(j in line["reason"] for j in JETSONS)


def test_edge_inference_compares_the_three_devices(cat):
    out = plan(load_spec(EXAMPLES / "edge-vision.yaml", catalog=cat), cat).to_dict()
    accs = [o["accelerator"] for o in out["options"]]
    assert accs[0] == "nvidia_jetson_orin_nano_super"  # the cheapest device that meets 30 frames/s in 50 ms
    assert JETSONS <= set(accs)
    assert not any(e["what"] == "edge devices" for e in out["excluded"])
    price = {o["accelerator"]: o["cost"]["cash_outlay_usd"] for o in out["options"]}
    assert price["nvidia_jetson_orin_nano_super"] < price["nvidia_jetson_agx_orin_64gb"] \
        < price["nvidia_jetson_agx_thor_t5000"]
