"""QA: the JSON contracts of DESIGN.md section 4, checked on the real CLI with strict JSON (no NaN).

Violations in code owned by other areas are ``xfail(strict=True)`` with the finding as the reason.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from infrafit.cli import main

ROOT = Path(__file__).resolve().parents[2]
CHATBOT = str(ROOT / "examples" / "chatbot-asia.yaml")
TRAINING = str(ROOT / "examples" / "custom-ops-training.yaml")
EDGE = str(ROOT / "examples" / "edge-vision.yaml")
LATENCY_CSV = ROOT / "benchmarks" / "data" / "latency_calibration.csv"
NUM = (int, float)


def _strict(text: str):
    def no_constants(name: str):
        raise AssertionError(f"JSON contains {name}")

    return json.loads(text, parse_constant=no_constants)


def _run_json(argv: list[str], capsys, expect_rc: int = 0):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == expect_rc, err[-500:]
    return _strict(out)


def _assert_estimate_shape(d: dict) -> None:
    assert isinstance(d["accelerator"], str) and isinstance(d["count"], int)
    assert isinstance(d["precision"], str) and isinstance(d["stack"], str)
    assert set(d["parallelism"]) >= {"tp", "pp", "dp", "ep"}
    assert all(isinstance(v, int) and v >= 1 for v in d["parallelism"].values())
    assert isinstance(d["fits"], bool)
    mem_keys = {"per_accelerator_bytes", "capacity_bytes", "weights_bytes", "kv_cache_bytes", "activations_bytes",
                "optimizer_bytes"}
    assert set(d["memory"]) >= mem_keys
    assert all(v is None or isinstance(v, NUM) for v in d["memory"].values())
    assert all(k.endswith(("_per_s", "_fraction", "_per_s_per_accelerator")) for k in d["throughput"]), d["throughput"]
    for key in ("ttft_s", "tpot_s"):
        v = d["latency"][key]
        assert v is None or (set(v) >= {"p50", "p99"} and all(x is None or isinstance(x, NUM) for x in v.values()))
    assert d["time_to_train_s"] is None or isinstance(d["time_to_train_s"], NUM)
    assert d["server"] is None or set(d["server"]) >= {"cpu_cores", "ram_bytes", "nvme_bytes",
                                                       "storage_read_bytes_per_s", "network_bytes_per_s"}
    assert isinstance(d["bottleneck"], str) and isinstance(d["breakdown"], dict)


ESTIMATES = {
    "llm": [CHATBOT, "--accelerator", "h100", "--count", "8", "--precision", "fp8"],
    "training": [TRAINING, "--accelerator", "h100", "--count", "8", "--precision", "bf16"],
    "nonllm": [EDGE, "--accelerator", "l4", "--count", "1", "--precision", "fp16"],
}


@pytest.mark.parametrize("kind", sorted(ESTIMATES))
def test_estimate_json_shape(kind, capsys):
    _assert_estimate_shape(_run_json(["estimate", *ESTIMATES[kind], "--json"], capsys))


@pytest.mark.parametrize("kind", sorted(ESTIMATES))
def test_estimate_json_accelerator_is_the_catalog_id(kind, capsys):
    """The same chip must not appear as 'h100' in one output and 'nvidia_h100_sxm' in another."""
    from infrafit.catalog import load_catalog

    d = _run_json(["estimate", *ESTIMATES[kind], "--json"], capsys)
    assert d["accelerator"] in load_catalog().accelerators


def test_estimate_llm_has_server_needs(capsys):
    d = _run_json(["estimate", *ESTIMATES["llm"], "--json"], capsys)
    assert isinstance(d["server"], dict)


def test_estimate_fits_agrees_with_memory(capsys):
    d = _run_json(["estimate", *ESTIMATES["llm"], "--json"], capsys)
    m = d["memory"]
    assert d["fits"] == (m["per_accelerator_bytes"] <= m["capacity_bytes"])


def test_estimate_uses_the_spec_precision_list(capsys):
    _assert_estimate_shape(_run_json(["estimate", CHATBOT, "--accelerator", "h100", "--count", "8", "--json"],
                                     capsys))


def test_validate_json_shape(tmp_path, capsys):
    rows = list(csv.DictReader(LATENCY_CSV.open(encoding="utf-8")))[:12]
    path = tmp_path / "slice.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    d = _run_json(["validate", str(path), "--json", "--model-configs", str(ROOT / "tests/fixtures/model_configs")],
                  capsys)
    assert d["rows"] == 12 and isinstance(d["predicted"], int)
    assert d["predicted"] + len(d["skipped"]) == d["rows"]
    assert all(set(s) >= {"row_id", "reason"} and s["reason"] for s in d["skipped"])
    assert d["mdape"] is None or isinstance(d["mdape"], NUM)
    for axis in ("accelerator_family", "task", "metric_kind"):
        assert all(set(v) >= {"rows", "mdape"} for v in d["by"][axis].values())
    for r in d["results"]:
        assert set(r) >= {"row_id", "metric_kind", "measured", "predicted", "ape"}
        assert r["ape"] == pytest.approx(abs(r["predicted"] - r["measured"]) / r["measured"])


DEPLOYMENTS = {"cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly",
               "on_prem", "hybrid"}


def test_plan_json_shape(capsys):
    rc = main(["plan", TRAINING, "--json", "--top", "3"])
    out, err = capsys.readouterr()
    assert rc in (0, 3), err[-400:]
    d = _strict(out)
    assert set(d) >= {"workload", "catalog_retrieved_on", "options", "excluded"}
    assert isinstance(d["workload"], dict) and isinstance(d["catalog_retrieved_on"], str)
    assert all(set(e) >= {"what", "reason"} and e["reason"] for e in d["excluded"])
    assert (rc == 0) == bool(d["options"])
    for o in d["options"]:
        _assert_option(o)


def _assert_option(o: dict) -> None:
    keys = {"rank", "accelerator", "count", "precision", "stack", "deployment", "provider", "region", "server",
            "performance", "cost", "why", "risks"}
    assert set(o) >= keys
    assert o["deployment"] in DEPLOYMENTS
    if o["deployment"] == "hybrid":
        assert o["parts"] and all(isinstance(p, dict) for p in o["parts"])
    c = o["cost"]
    assert set(c) >= {"monthly_usd", "tco_usd", "horizon_months", "per_unit", "breakdown"}
    assert isinstance(c["monthly_usd"], NUM) and isinstance(c["tco_usd"], NUM)
    assert all(k.endswith("_usd") for k in c["breakdown"]) and all(k.startswith("usd_per_") for k in c["per_unit"])
    assert all(isinstance(s, str) for s in o["why"] + o["risks"])
    _assert_estimate_shape(o["performance"])


@pytest.mark.parametrize("table", ["accelerators", "offers", "hosts", "frameworks", "stacks", "models"])
def test_catalog_json_is_strict_list_of_records(table, capsys):
    d = _run_json(["catalog", table, "--json"], capsys)
    assert isinstance(d, list) and d and all(isinstance(r, dict) and "id" in r or "framework" in r for r in d)


def test_catalog_show_json(capsys):
    d = _run_json(["catalog", "show", "h100", "--json"], capsys)
    assert d["table"] == "accelerators" and d["row"]["memory_bytes"] > 0
