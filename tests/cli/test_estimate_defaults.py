"""`estimate` without a layout or precision: it chooses as a serving engineer would, and says so."""

import json
from pathlib import Path

import pytest

from infrafit.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _estimate(capsys, *args):
    code = main(["estimate", *map(str, args), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_llm_layout_is_searched_when_not_given(capsys):
    searched = _estimate(capsys, EXAMPLES / "chatbot-asia.yaml", "--accelerator", "h100", "--count", "8")
    pinned = _estimate(capsys, EXAMPLES / "chatbot-asia.yaml", "--accelerator", "h100", "--count", "8", "--tp", "1")
    assert searched["parallelism"]["tp"] > 1  # 70B at fp8 on one 80 GB GPU leaves almost no KV cache
    assert pinned["parallelism"]["tp"] == 1
    assert searched["throughput"]["requests_per_s"] > pinned["throughput"]["requests_per_s"]


@pytest.mark.parametrize(("accelerator", "precision"), [("h100", "fp8"), ("a100-80gb", "bf16")])
def test_precision_is_the_narrowest_allowed_native_one(capsys, accelerator, precision):
    # chatbot-asia allows [bf16, fp8]; the A100 has no fp8 tensor cores.
    data = _estimate(capsys, EXAMPLES / "chatbot-asia.yaml", "--accelerator", accelerator, "--count", "8")
    assert data["precision"] == precision


@pytest.mark.parametrize(
    ("spec", "accelerator", "count"),
    [("chatbot-asia.yaml", "h100", 8), ("lora-finetune-70b.yaml", "h100", 8), ("edge-vision.yaml", "l4", 1)],
)
def test_every_estimate_sizes_the_whole_server(capsys, spec, accelerator, count):
    data = _estimate(capsys, EXAMPLES / spec, "--accelerator", accelerator, "--count", count)
    server = data["server"]
    for key in ("cpu_cores", "ram_bytes", "nvme_bytes", "storage_read_bytes_per_s", "network_bytes_per_s"):
        assert server[key] is not None and server[key] >= 0
    assert server["cpu_cores"] > 0 and server["ram_bytes"] > 0
    assert server["reasons"] and server["bottleneck"]


def test_memory_breakdown_is_consistent_with_fits(capsys):
    data = _estimate(capsys, EXAMPLES / "chatbot-asia.yaml", "--accelerator", "h100", "--count", "8", "--tp", "1")
    mem = data["memory"]
    parts = mem["weights_bytes"] + mem["kv_cache_bytes"] + mem["activations_bytes"]
    assert mem["per_accelerator_bytes"] == pytest.approx(parts)
    assert data["fits"] == (mem["per_accelerator_bytes"] <= mem["capacity_bytes"])
