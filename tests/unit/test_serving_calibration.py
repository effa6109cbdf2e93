"""Imported load tests change the fit: calibrate refits the serving profiles, validate --from-store shows it
(issue 16 point 2: plan -> export -> run -> import -> calibrate -> plan again)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from infrafit.bench.calibrate_serving import (
    SCALE_GRID,
    calibrate_serving,
    platform_key,
    predict_points,
    profile_rows,
    scale_grid,
    serving_points,
    trial,
)
from infrafit.bench.importers import ServingResult
from infrafit.bench.results import history, record, start_run
from infrafit.bench.serving_import import measurements, option_prediction, predict_at
from infrafit.catalog import load_catalog
from infrafit.cli import main
from infrafit.commands.estimate import estimate_workload
from infrafit.errors import CatalogError
from infrafit.perf.profiles import OVERLAY_FILE, PROFILE_COLUMNS, load_profiles, using_profiles
from infrafit.settings import ACTIVE_OVERLAY
from infrafit.store import connect
from infrafit.workload.spec import workload_from_data

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "loadtests"
TRUE_SCALES = {("decode", "memory"): float(SCALE_GRID[9]), ("prefill", "gemm"): float(SCALE_GRID[8])}  # < 1


def _synthetic_store(db: Path, plan: dict, scales: dict) -> tuple[tuple[str, str, str], list[float]]:
    """Store 'measurements' the engine predicts under known profile values: a fit must find them."""
    catalog = load_catalog()
    option = plan["options"][0]
    workload = workload_from_data(plan["workload"], catalog=catalog)
    conn = connect(db)
    run = start_run(conn, {"source": "test"}, "synthetic import")
    first = predict_at(option, workload, catalog, ServingResult("vllm-bench", requests_per_s=1.0))
    key = platform_key(serving_points(_rows(first, run))[0], catalog)
    truth = trial(load_profiles(), key, scales)
    rates = [0.5, 1.5, 3.0]
    for rate in rates:
        with using_profiles(truth):
            p = predict_at(option, workload, catalog, ServingResult("vllm-bench", requests_per_s=rate))
        result = ServingResult("vllm-bench", ttft_s={"p99": p["ttft_p99_s"]}, tpot_s={"p99": p["tpot_p99_s"]},
                               requests_per_s=rate)
        predicted = predict_at(option, workload, catalog, result)  # under the packaged profiles, as import does
        for m in measurements(result, predicted, option_prediction(option)):
            record(conn, run, m)
    return key, rates


def _rows(predicted: dict, run: str) -> list[dict]:
    return [{"id": 1, "run_id": run, "kind": "serving_tpot_s", "value": 0.02, "params": {"statistic": "p99"},
             "prediction": {"at_measured_load": predicted}}]


def test_the_fit_recovers_known_profile_values_from_the_engines_own_predictions(tmp_path, plan_json):
    plan = json.loads(plan_json.read_text())
    db = tmp_path / "r.db"
    key, rates = _synthetic_store(db, plan, TRUE_SCALES)
    fits = calibrate_serving(history(connect(db)), load_catalog(), estimate_workload)
    assert len(fits) == 1
    f = fits[0]
    assert (f["generation"], f["stack"], f["precision"]) == key and f["results"] == len(rates)
    assert f["values"]["decode/memory"]["scale"] == pytest.approx(TRUE_SCALES[("decode", "memory")])
    assert f["values"]["prefill/gemm"]["scale"] == pytest.approx(TRUE_SCALES[("prefill", "gemm")])
    assert f["mdape_before"] > 0.05 and f["mdape_after"] < 0.01  # slower truth than the packaged profile
    assert f["loo_mdape"] is not None and f["loo_mdape"] < 0.01
    rows = profile_rows(fits)
    assert {(r["phase"], r["op_class"]) for r in rows} == {("decode", "memory"), ("prefill", "gemm")}
    assert all(set(r) == set(PROFILE_COLUMNS) and "imported load-test" in r["source"] for r in rows)


def test_the_scale_grid_stops_at_the_datasheet_peak():
    grid = scale_grid(0.75)
    assert grid[-1] == pytest.approx(1 / 0.75) and (grid * 0.75 <= 1 + 1e-9).all()
    assert np.array_equal(scale_grid(0.1), SCALE_GRID)


def test_an_overlay_profile_row_wins_and_a_rewritten_overlay_is_read_again(tmp_path):
    base = load_profiles()
    packaged = base.value("hopper", "vllm", "bf16", "decode", "memory")
    header = ",".join(PROFILE_COLUMNS)
    (tmp_path / OVERLAY_FILE).write_text(f"{header}\nhopper,vllm,bf16,decode,memory,0.5,fraction,3,test,2026-12-01\n")
    token = ACTIVE_OVERLAY.set(str(tmp_path))
    try:
        assert load_profiles().value("hopper", "vllm", "bf16", "decode", "memory") == 0.5
        assert load_profiles().value("ampere", "vllm", "bf16", "decode", "memory") == base.value(
            "ampere", "vllm", "bf16", "decode", "memory")  # other platforms keep the packaged values
        import os
        (tmp_path / OVERLAY_FILE).write_text(f"{header}\nhopper,vllm,bf16,decode,memory,0.6,fraction,3,t,2026-12-01\n")
        st = (tmp_path / OVERLAY_FILE).stat()
        os.utime(tmp_path / OVERLAY_FILE, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        assert load_profiles().value("hopper", "vllm", "bf16", "decode", "memory") == 0.6
        (tmp_path / OVERLAY_FILE).write_text(f"{header}\nhopper,vllm,bf16,decode,memory,fast,fraction,3,t,x\n")
        os.utime(tmp_path / OVERLAY_FILE, ns=(st.st_atime_ns, st.st_mtime_ns + 2 * 10**9))
        with pytest.raises(CatalogError, match=f"{OVERLAY_FILE}:2 value"):
            load_profiles()
    finally:
        ACTIVE_OVERLAY.reset(token)
    assert load_profiles().value("hopper", "vllm", "bf16", "decode", "memory") == packaged


def test_import_validate_calibrate_validate_plan_is_one_loop(tmp_path, plan_json, chat_8b_spec, capsys):
    db, out, spec = tmp_path / "r.db", tmp_path / "overlay", tmp_path / "chat.yaml"
    spec.write_text(json.dumps(chat_8b_spec))
    for name in ("guidellm_report.json", "vllm_bench_serve.json", "aiperf_profile_export.json"):
        assert main(["bench", "import", str(FIX / name), "--option-from", str(plan_json), "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["validate", "--from-store", "--db", str(db), "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["predicted"] == 8 and before["by"]["kind"].keys() == {"serving_ttft_s", "serving_tpot_s"}
    assert main(["calibrate", "--db", str(db), "--out", str(out), "--json"]) == 0
    cal = json.loads(capsys.readouterr().out)
    assert cal["fits"] == [] and len(cal["serving_fits"]) == 1 and str(out / OVERLAY_FILE) in cal["written"]
    assert cal["serving_fits"][0]["mdape_after"] < cal["serving_fits"][0]["mdape_before"]
    assert main(["--catalog-dir", str(out), "validate", "--from-store", "--db", str(db), "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["mdape"] < before["mdape"]
    assert after["mdape"] == pytest.approx(cal["serving_fits"][0]["mdape_after"])
    # plan again under the overlay: it plans, and the tested option itself now predicts faster decoding
    assert main(["--catalog-dir", str(out), "plan", str(spec), "--json", "--top", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["options"]
    old = json.loads(plan_json.read_text())["options"][0]
    args = ["estimate", str(spec), "--offer", old["offer_id"], "--precision", old["precision"], "--stack",
            old["stack"], "--tp", str(old["performance"]["parallelism"]["tp"]), "--concurrency",
            str(old["performance"]["operating_point"]["concurrency"]), "--json"]
    tpot = []
    for prefix in ([], ["--catalog-dir", str(out)]):
        assert main([*prefix, *args]) == 0
        tpot.append(json.loads(capsys.readouterr().out)["latency"]["tpot_s"]["p99"])
    assert tpot[1] < tpot[0]  # the fit raised the decode HBM efficiency (the tests were faster)


def test_validate_needs_data_or_the_store(tmp_path, capsys):
    assert main(["validate"]) == 2
    assert main(["validate", str(tmp_path / "x.csv"), "--from-store"]) == 2
    assert main(["validate", "--from-store", "--db", str(tmp_path / "empty.db")]) == 2
    assert main(["calibrate", "--db", str(tmp_path / "empty.db"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("To fix") == 4 and "bench import" in err


def test_predictions_follow_the_profiles_in_force(tmp_path, plan_json):
    plan = json.loads(plan_json.read_text())
    db = tmp_path / "r.db"
    key, _ = _synthetic_store(db, plan, TRUE_SCALES)
    points = [p for p in serving_points(history(connect(db))) if p.kind == "serving_tpot_s"]
    catalog = load_catalog()
    slow = predict_points(points, catalog, estimate_workload, trial(load_profiles(), key, {("decode", "memory"): 0.5}))
    assert (slow > predict_points(points, catalog, estimate_workload)).all()
