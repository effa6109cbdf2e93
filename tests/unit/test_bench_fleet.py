"""bench run --executor ray: once per node type of a Ray cluster, measurements gathered locally (issue 16 point 5)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from infrafit.bench.fleet import node_types
from infrafit.bench.results import history
from infrafit.cli import app, main
from infrafit.store import connect


def test_node_types_group_by_resources_not_by_name_or_memory():
    nodes = [
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 8.0, "GPU": 1.0, "accelerator_type:H100": 1.0,
                                                      "node:10.0.0.1": 1.0, "memory": 1e11}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 8.0, "GPU": 1.0, "accelerator_type:H100": 1.0,
                                                      "node:10.0.0.2": 1.0, "memory": 9e10}},
        {"NodeID": "c", "Alive": True, "Resources": {"CPU": 16.0, "node:10.0.0.3": 1.0, "memory": 6e10}},
        {"NodeID": "d", "Alive": False, "Resources": {"CPU": 4.0}},
    ]
    kinds = node_types(nodes)
    assert sorted(kinds.values()) == ["a", "c"]  # b is a second H100 node; d is dead
    assert (("CPU", 16.0),) in kinds


def test_a_local_ray_cluster_runs_the_bench_once_per_node_type(tmp_path):
    pytest.importorskip("ray")
    pytest.importorskip("torch")
    db = tmp_path / "r.db"
    result = CliRunner().invoke(app, ["bench", "run", "bert-large", "--quick", "--executor", "ray", "--db", str(db),
                                      "--json"])
    assert result.exit_code == 0, result.output
    nodes = json.loads(result.stdout)["nodes"]
    assert len(nodes) == 1 and nodes[0]["measurements"] > 0
    rows = history(connect(db), run_id=nodes[0]["run_id"])
    assert len(rows) == nodes[0]["measurements"]
    assert rows[0]["host"]["ray_node_id"] == nodes[0]["node_id"] and rows[0]["host"]["cpu_model"]
    assert {r["kind"] for r in rows} >= {"memory_triad", "inference_latency"}


def test_bad_fleet_runs_exit_2_before_any_node(tmp_path, capsys):
    assert main(["bench", "run", "no-such-model", "--executor", "ray", "--db", str(tmp_path / "r.db")]) == 2
    assert main(["bench", "run", "bert-large", "--executor", "k8s", "--db", str(tmp_path / "r.db")]) == 2
    assert main(["bench", "run", "bert-large", "--executor", "ray", "--layers", "2",
                 "--db", str(tmp_path / "r.db")]) == 2
    assert capsys.readouterr().err.count("To fix") >= 3


def test_the_fleet_knows_the_precisions_bench_run_can_time():
    pytest.importorskip("torch")
    from infrafit.bench.fleet import RUNNABLE_PRECISIONS
    from infrafit.bench.models import DTYPES

    assert set(RUNNABLE_PRECISIONS) == set(DTYPES)
