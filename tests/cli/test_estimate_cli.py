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
    assert any("no fp4 tensor math: weight-only 4-bit" in n for n in json.loads(capsys.readouterr().out)["notes"])


def test_estimate_prints_each_stacks_operating_point_and_same_load_when_asked(tmp_path, capsys):
    """Stacks compared without --concurrency run at their own SLO-limited loads, which the table
    names; with --concurrency both run at the same one."""
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    points = {}
    for stack in ("vllm", "sglang"):
        assert main(["estimate", str(spec), "--accelerator", "h100", "--count", "4", "--stack", stack,
                     "--precision", "fp8", "--json"]) == 0
        points[stack] = json.loads(capsys.readouterr().out)["operating_point"]
        assert main(["estimate", str(spec), "--accelerator", "h100", "--count", "4", "--stack", stack,
                     "--precision", "fp8"]) == 0
        out = capsys.readouterr().out
        assert f"{points[stack]['concurrency']:.0f} requests in flight" in out
    same = []
    for stack in ("vllm", "sglang"):
        assert main(["estimate", str(spec), "--accelerator", "h100", "--count", "4", "--stack", stack,
                     "--precision", "fp8", "--concurrency", "8", "--json"]) == 0
        same.append(json.loads(capsys.readouterr().out)["operating_point"]["concurrency"])
    assert same == [8.0, 8.0]


def test_estimate_says_when_no_load_meets_the_slos(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("ttft_p99_s: 2.0", "ttft_p99_s: 0.01"))
    assert main(["estimate", str(spec), "--accelerator", "h100", "--count", "4", "--precision", "fp8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no load meets the SLOs" in out and "TTFT p99" in out


def test_estimate_says_when_the_configuration_does_not_fit(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    assert main(["estimate", str(spec), "--accelerator", "l4", "--count", "1", "--precision", "bf16"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "does not fit in memory" in out and "not reachable" in out and "no load meets" not in out
