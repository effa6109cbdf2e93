"""Fixtures shared by the unit tests of imported load tests (bench import, calibrate, validate --from-store)."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

#: An 8B chat the load-test fixtures (tests/fixtures/loadtests) are imported against.
CHAT_8B_SPEC = {"name": "chat8b", "task": "inference", "model": "llama3.1-8b", "precision": ["bf16"],
                "inference": {"mode": "realtime",
                              "traffic": {"requests_per_s": 4, "input_tokens": 800, "output_tokens": 200},
                              "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}},
                "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]}, "horizon_months": 12}


#: The shipped throughput calibration set (MLPerf and vendor rows, with their sources).
CALIBRATION = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "calibration.csv"


@pytest.fixture(scope="session")
def calibration_rows() -> dict[str, dict[str, str]]:
    """Every row of ``benchmarks/data/calibration.csv`` by ``row_id`` (read once; copy a row before changing it)."""
    with CALIBRATION.open(newline="") as f:
        return {r["row_id"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def plan_json(tmp_path_factory):
    """``plan --json --top 2`` of ``CHAT_8B_SPEC``, written to a file."""
    from infrafit.cli import app

    d = tmp_path_factory.mktemp("plan")
    spec = d / "chat.yaml"
    spec.write_text(json.dumps(CHAT_8B_SPEC))
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "2"])
    assert result.exit_code == 0, result.output
    path = d / "plan.json"
    path.write_text(result.stdout)
    return path


@pytest.fixture
def chat_8b_spec() -> dict:
    """``CHAT_8B_SPEC`` as a fresh dict (the spec ``plan_json`` planned)."""
    return copy.deepcopy(CHAT_8B_SPEC)
