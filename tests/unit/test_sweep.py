"""infrafit sweep: a grid of overrides planned on a process pool or on Ray (issue 16 point 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.cli import app, main
from infrafit.errors import InputError
from infrafit.search.planner import plan
from infrafit.search.sweep import MAX_POINTS, Axis, parse_axis, points, sweep
from infrafit.workload.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "nightly-embeddings.yaml"
AXES = [Axis("horizon_months", ("12", "24")), Axis("inference.traffic.items.per_day", ("10M", "40M"))]


def test_axes_parse_values_and_lists():
    assert parse_axis("horizon_months=12,24,36") == Axis("horizon_months", ("12", "24", "36"))
    assert parse_axis("placement.regions=[tokyo, osaka],[singapore]").values == ("[tokyo, osaka]", "[singapore]")
    for bad in ("horizon_months", "=1,2", "horizon_months=1,,2"):
        with pytest.raises(InputError):
            parse_axis(bad)


def test_points_are_every_combination_and_bounded():
    grid = points(AXES)
    assert grid == [("horizon_months=12", "inference.traffic.items.per_day=10M"),
                    ("horizon_months=12", "inference.traffic.items.per_day=40M"),
                    ("horizon_months=24", "inference.traffic.items.per_day=10M"),
                    ("horizon_months=24", "inference.traffic.items.per_day=40M")]
    with pytest.raises(InputError, match="more than"):
        points([Axis("a", tuple(map(str, range(MAX_POINTS)))), Axis("b", ("1", "2"))])
    with pytest.raises(InputError, match="same field"):
        points([Axis("a", ("1",)), Axis("a", ("2",))])


def test_each_point_is_the_plan_of_its_overrides():
    rows = sweep(SPEC, AXES, top=2, workers=2)
    catalog = load_catalog()
    assert sorted({r["point"] for r in rows}) == [0, 1, 2, 3]
    for i, sets in enumerate(points(AXES)):
        direct = plan(load_spec(SPEC, catalog, sets), catalog, top=2).to_dict()["options"]
        mine = [r for r in rows if r["point"] == i]
        assert [r["rank"] for r in mine] == [o["rank"] for o in direct]
        assert [r["tco_usd"] for r in mine] == pytest.approx([o["cost"]["tco_usd"] for o in direct])
        assert [r["accelerator"] for r in mine] == [o["accelerator"] for o in direct]


def test_ray_executor_equals_the_local_one():
    pytest.importorskip("ray")
    axes = AXES[:1]
    local = sweep(SPEC, axes, top=1, workers=2)
    remote = sweep(SPEC, axes, top=1, executor="ray")
    assert remote == local


def test_cli_writes_rows_and_a_report(tmp_path):
    out, report = tmp_path / "rows.csv", tmp_path / "sweep.html"
    result = CliRunner().invoke(app, ["sweep", str(SPEC), "--grid", "horizon_months=12,24", "--out", str(out),
                                      "--report", str(report), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    frame = pd.read_csv(out)
    assert len(frame) == len(rows) == 2 and list(frame["horizon_months"]) == [12, 24]
    html = report.read_text()
    assert "plotly" in html.lower() and "horizon_months" in html


def test_cli_refuses_bad_input_before_planning(tmp_path, capsys):
    assert main(["sweep", str(SPEC), "--grid", "horizon_months=12", "--out", str(tmp_path / "x.xlsx")]) == 2
    assert main(["sweep", str(SPEC), "--grid", "horizon_months=12", "--executor", "dask"]) == 2
    assert main(["sweep", str(SPEC), "--grid", "nope.field=1"]) == 2
    err = capsys.readouterr().err
    assert "To fix" in err and "nope" in err


def test_a_point_that_cannot_be_planned_is_a_row_with_its_reason():
    rows = sweep(SPEC, [Axis("budget.monthly_usd", ("1", "100000"))], top=1, workers=1)
    first = [r for r in rows if r["point"] == 0]
    assert first[0]["rank"] is None and "no option" in first[0]["error"]
    assert any(r["point"] == 1 and r["rank"] == 1 for r in rows)


def test_parquet_needs_pyarrow_or_says_how_to_get_it(tmp_path, capsys):
    import importlib.util

    out = tmp_path / "rows.parquet"
    rc = main(["sweep", str(SPEC), "--grid", "horizon_months=12", "--out", str(out)])
    if importlib.util.find_spec("pyarrow") is None:
        assert rc == 2 and "infrafit[parquet]" in capsys.readouterr().err
    else:
        assert rc == 0 and len(pd.read_parquet(out)) == 1
