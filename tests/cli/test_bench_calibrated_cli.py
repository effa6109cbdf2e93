"""End to end: bench a tiny encoder, calibrate, and `estimate --catalog-dir` uses the fitted efficiency."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

pytest.importorskip("torch")

from infrafit.cli import main  # noqa: E402

TINY_BERT = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 64, "intermediate_size": 256,
             "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 512,
             "max_position_embeddings": 128, "type_vocab_size": 2, "torch_dtype": "float32"}


def _estimate(capsys, overlay, spec, acc_id):
    assert main(["--catalog-dir", str(overlay), "estimate", str(spec), "--accelerator", acc_id, "--count", "1",
                 "--precision", "fp32", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _bench_and_calibrate(tmp_path, capsys):
    """A quick local bench of the tiny BERT into a fresh store, calibrated into an overlay folder:
    ``(model path, db, overlay, the one fit)``."""
    model = tmp_path / "tiny-bert.json"
    model.write_text(json.dumps(TINY_BERT))
    db, overlay = str(tmp_path / "r.db"), tmp_path / "overlay"
    assert main(["bench", "run", str(model), "--quick", "--no-train", "--db", db, "--json",
                 "--batch-sizes", "1,4", "--seq-lens", "16,64"]) == 0
    capsys.readouterr()
    assert main(["calibrate", "--db", db, "--out", str(overlay), "--json"]) == 0
    (fit,) = json.loads(capsys.readouterr().out)["fits"]
    return model, db, overlay, fit


def test_calibrated_overlay_changes_the_estimate_in_the_fitted_direction(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("INFRAFIT_CATALOG", raising=False)  # main() sets it from --catalog-dir; undo after
    model, db, overlay, fit = _bench_and_calibrate(tmp_path, capsys)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: tiny-embed\ntask: inference\nmodel: {model}\nframework: pytorch\n"
                    "inference:\n  mode: batch\n  traffic:\n    items: {per_day: 1M, window_hours: 6}\n"
                    "    input_tokens: {mean: 64, p99: 128}\n")
    acc_id = fit["accelerator_id"]
    with open(overlay / "perf_profiles_bench.csv") as fh:
        (row,) = list(csv.DictReader(fh))

    # the same local CPU row without the fitted efficiencies: what estimate predicted before calibrating
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(overlay / "accelerators.csv", plain / "accelerators.csv")
    before = _estimate(capsys, plain, spec, acc_id)
    after = _estimate(capsys, overlay, spec, acc_id)

    assert before["breakdown"]["calibration"] is None
    cal = after["breakdown"]["calibration"]
    assert cal["eff_compute"] == pytest.approx(float(row["eff_compute_fraction"]))
    assert after["breakdown"]["efficiency"] == pytest.approx(float(row["eff_compute_fraction"]))
    assert any("calibrated" in n for n in after.get("notes", []))
    thr_before, thr_after = before["throughput"]["samples_per_s"], after["throughput"]["samples_per_s"]
    assert thr_after != pytest.approx(thr_before, rel=1e-3)
    # the tiny BERT on a CPU is compute-bound before and after (its GEMMs), so the rate follows the
    # efficiency ratio: lower fitted efficiency -> fewer samples/s
    assert before["bottleneck"] == after["bottleneck"] == "compute"
    ratio = after["breakdown"]["efficiency"] / before["breakdown"]["efficiency"]
    assert (thr_after / thr_before - 1.0) * (ratio - 1.0) > 0


def test_validate_from_store_predicts_bench_rows_with_the_fitted_overlay(tmp_path, capsys, monkeypatch):
    """Model-bench rows: `validate --from-store` uses their stored prediction, and under the calibrated
    overlay the fitted efficiency (the in-sample MdAPE calibrate reported)."""
    monkeypatch.delenv("INFRAFIT_CATALOG", raising=False)
    _, db, overlay, fit = _bench_and_calibrate(tmp_path, capsys)
    assert main(["validate", "--from-store", "--db", db, "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert main(["--catalog-dir", str(overlay), "validate", "--from-store", "--db", db, "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert before["predicted"] == after["predicted"] == fit["rows"]
    assert before["mdape"] == pytest.approx(fit["mdape_before"])
    # the overlay keeps each efficiency to 4 significant digits, so the error agrees to about 1 %
    assert after["mdape"] == pytest.approx(fit["mdape_after"], rel=0.02)
    assert after["mdape"] < before["mdape"] and "bench_latency" in after["by"]["kind"]
