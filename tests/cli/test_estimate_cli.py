"""In-process CLI tests of `infrafit estimate` and `infrafit validate`."""

import json

from infrafit.cli import main

SPEC = """name: chat
task: inference
model: llama3.1-70b
inference:
  traffic: {requests_per_s: 5, input_tokens: 1500, output_tokens: 300}
  slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.05}
"""


def test_estimate_json_shape(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    rc = main(["estimate", str(spec), "--accelerator", "h100", "--count", "8", "--tp", "4",
               "--precision", "fp8", "--json"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("accelerator", "count", "precision", "stack", "parallelism", "fits", "memory", "throughput",
                "latency", "time_to_train_s", "server", "bottleneck", "breakdown"):
        assert key in data
    assert data["parallelism"]["dp"] == 2 and data["fits"] is True
    assert data["latency"]["ttft_s"]["p99"] <= 2.0 and data["throughput"]["output_tokens_per_s"] > 0
    assert set(data["memory"]) >= {"per_accelerator_bytes", "capacity_bytes", "weights_bytes", "kv_cache_bytes",
                                   "activations_bytes", "optimizer_bytes"}


def test_estimate_bad_layout_exits_2(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    rc = main(["estimate", str(spec), "--accelerator", "h100", "--count", "6", "--tp", "4"])
    assert rc == 2 and "To fix:" in capsys.readouterr().err


def test_estimate_fp4_fallback_note(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    rc = main(["estimate", str(spec), "--accelerator", "h100", "--count", "8", "--tp", "8",
               "--precision", "fp4", "--json"])
    assert rc == 0
    assert any("fell back" in n for n in json.loads(capsys.readouterr().out)["notes"])
