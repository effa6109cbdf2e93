"""infrafit bench import: load-test results stored beside the option's prediction (issue 16 point 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infrafit.bench.importers import detect, read_results
from infrafit.bench.results import history
from infrafit.cli import app, main
from infrafit.errors import InputError
from infrafit.store import connect

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "loadtests"
FILES = {"vllm-bench": FIX / "vllm_bench_serve.json", "guidellm": FIX / "guidellm_report.json",
         "aiperf": FIX / "aiperf_profile_export.json"}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_each_format_is_detected_and_read_in_si(fmt):
    data = json.loads(FILES[fmt].read_text())
    assert detect(data) == fmt
    results = read_results(data)
    r = results[0]
    raw = {"vllm-bench": data.get("p99_ttft_ms"),
           "guidellm": (data.get("benchmarks") or [{}])[0].get("metrics", {}).get("time_to_first_token_ms", {})
           .get("successful", {}).get("percentiles", {}).get("p99"),
           "aiperf": data.get("records", {}).get("time_to_first_token", {}).get("p99")}[fmt]
    assert r.ttft_s["p99"] == pytest.approx(raw / 1000)  # milliseconds in the file, seconds here
    assert r.requests_per_s and r.requests_per_s > 0 and r.tpot_s["p99"] < r.ttft_s["p99"] * 10
    if fmt == "guidellm":
        assert len(results) == 2 and results[1].target_rate_per_s == 8.0  # one result per benchmark of a sweep


def test_a_foreign_file_is_refused_with_a_fix():
    with pytest.raises(InputError, match="not a vllm bench, guidellm or aiperf"):
        detect({"hello": 1})
    with pytest.raises(InputError, match="no measurement"):
        read_results({"benchmarks": []})


def test_import_stores_results_beside_the_option_re_estimated_at_the_measured_load(tmp_path, plan_json):
    db = tmp_path / "r.db"
    result = CliRunner().invoke(app, ["bench", "import", str(FILES["guidellm"]), "--option-from", str(plan_json),
                                      "--rank", "1", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    rows = history(connect(db), run_id=out["run_id"])
    ttft = [r for r in rows if r["kind"] == "serving_ttft_s" and r["params"]["statistic"] == "p99"]
    assert len(ttft) == 2 and all(r["predicted"] is not None and r["error"] is not None for r in ttft)
    # latency rises with load: the option predicted at 8 req/s is slower than at 2 req/s
    by_rate = sorted(ttft, key=lambda r: r["params"]["target_rate_per_s"])
    assert by_rate[1]["predicted"] > by_rate[0]["predicted"]
    planned = json.loads(plan_json.read_text())["options"][0]
    assert all(r["params"]["option"]["offer_id"] == planned["offer_id"] for r in rows)
    for r in ttft:
        assert r["error"] == pytest.approx((r["predicted"] - r["value"]) / r["value"])


def test_import_without_a_plan_stores_measurements_only(tmp_path):
    db = tmp_path / "r.db"
    assert main(["bench", "import", str(FILES["vllm-bench"]), "--db", str(db), "--json"]) == 0
    rows = history(connect(db))
    assert rows and all(r["predicted"] is None for r in rows)
    assert {r["kind"] for r in rows} >= {"serving_ttft_s", "serving_tpot_s", "serving_requests_per_s"}


def test_bad_imports_exit_2(tmp_path, capsys, plan_json):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    assert main(["bench", "import", str(bad), "--db", str(tmp_path / "r.db")]) == 2
    assert main(["bench", "import", str(FILES["aiperf"]), "--option-from", str(plan_json), "--rank", "9",
                 "--db", str(tmp_path / "r.db")]) == 2
    assert main(["bench", "import", str(FILES["aiperf"]), "--format", "locust", "--db", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("To fix") >= 3


def test_the_option_is_re_estimated_at_the_lengths_the_test_sent_and_p50_and_e2e_are_compared(tmp_path, plan_json):
    """vLLM bench sent 800-token prompts and 200-token outputs; the option is predicted for those, not the spec's
    traffic, and p50 TTFT/TPOT and the end-to-end p99 are compared too (only the p99s were)."""
    db = tmp_path / "r.db"
    assert main(["bench", "import", str(FILES["vllm-bench"]), "--option-from", str(plan_json), "--db", str(db),
                 "--json"]) == 0
    rows = {(r["kind"], r["params"]["statistic"]): r for r in history(connect(db))}
    for key in (("serving_ttft_s", "p50"), ("serving_tpot_s", "p50"), ("serving_ttft_s", "p99"),
                ("serving_tpot_s", "p99"), ("serving_e2e_s", "p99")):
        assert rows[key]["predicted"] is not None and rows[key]["error"] is not None, key
    at = rows[("serving_ttft_s", "p99")]["prediction"]["at_measured_load"]
    assert "800 prompt, 200 output tokens a request" in at["at"]
    traffic = at["replay"]["workload"]["inference"]["traffic"]
    assert traffic["input_tokens"] == {"mean": 800.0, "p99": 800.0}
    assert traffic["output_tokens"] == {"mean": 200.0, "p99": 200.0}
    # a p50 is below its p99, end to end is ~ TTFT + 199 x TPOT at those lengths
    assert rows[("serving_ttft_s", "p50")]["predicted"] <= rows[("serving_ttft_s", "p99")]["predicted"]
    assert rows[("serving_e2e_s", "p99")]["predicted"] > 150 * rows[("serving_tpot_s", "p50")]["predicted"]


def test_a_load_test_of_another_model_is_refused_before_anything_is_stored(tmp_path, capsys):
    """The vLLM bench file served Llama-3.1-8B-Instruct; importing it against a 70B plan compared the wrong
    model. It is refused with the fix, and nothing is stored."""
    spec = tmp_path / "chat70.yaml"
    spec.write_text(json.dumps({"name": "chat70", "task": "inference", "model": "llama3.1-70b", "inference": {
        "traffic": {"requests_per_s": 2, "input_tokens": 800, "output_tokens": 200},
        "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.06}}, "hardware": {"accelerators": ["h100"]}}))
    plan70 = tmp_path / "plan70.json"
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    plan70.write_text(result.stdout)
    db = tmp_path / "r.db"
    assert main(["bench", "import", str(FILES["aiperf"]), "--option-from", str(plan70), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "served meta-llama/Llama-3.1-8B-Instruct (llama3.1-8b); option #1 of the plan serves llama3.1-70b" in err
    assert "To fix" in err
    assert history(connect(db)) == []
