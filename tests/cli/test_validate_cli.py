"""In-process CLI tests of `infrafit validate`."""

import csv
import json

from infrafit.cli import main

SRC = "benchmarks/data/latency_calibration.csv"


def test_validate_json_shape_on_a_slice(tmp_path, capsys):
    rows = list(csv.DictReader(open(SRC)))[:40]
    path = tmp_path / "slice.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    rc = main(["validate", str(path), "--json", "--model-configs", "tests/fixtures/model_configs"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"rows", "predicted", "skipped", "mdape", "by", "results"}
    assert data["rows"] == 40 and data["predicted"] + len(data["skipped"]) == 40
    r = data["results"][0]
    assert set(r) >= {"row_id", "metric_kind", "measured", "predicted", "ape"}
    assert abs(r["ape"] - abs(r["predicted"] - r["measured"]) / r["measured"]) < 1e-9


def test_validate_unknown_model_is_skipped_with_reason(tmp_path, capsys):
    rows = list(csv.DictReader(open(SRC)))[:1]
    rows[0]["workload"] = "nobody/no-such-model"
    path = tmp_path / "one.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["validate", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["predicted"] == 0 and data["skipped"][0]["reason"]


def test_validate_missing_file_exits_2(capsys):
    assert main(["validate", "/no/such.csv"]) == 2
    assert "To fix:" in capsys.readouterr().err


def test_validate_terminal_view_says_why_rows_were_skipped(tmp_path, capsys):
    """The table view lists the skipped rows with why (the first ten; --json has all), not just a count."""
    rows = list(csv.DictReader(open(SRC)))[:14]
    for r in rows[:12]:
        r["metric_statistic"] = "p95"  # not a statistic a row can be compared with
    path = tmp_path / "bad.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["validate", str(path), "--model-configs", "tests/fixtures/model_configs"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # table cells may wrap
    assert "skipped 12" in out and "skipped (12, the first 10)" in out
    assert "CSV line 2:" in out and "CSV line 11:" in out and "metric_statistic 'p95'" in out
    assert "CSV line 12:" not in out and "CSV line 13:" not in out  # only the first ten are listed
    assert "... and 2 more: --json lists every skipped row with why" in out
