"""``--set path=value`` on check, plan and estimate; ``infrafit diff OLD.json NEW.json`` (issue 17 point 3)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from infrafit.cli import app, main

ROOT = Path(__file__).resolve().parents[2]
CHAT = str(ROOT / "examples" / "chatbot-asia.yaml")


def _plan_json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["plan", CHAT, "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_set_overrides_a_field_like_the_file_would():
    base = _plan_json()
    more = _plan_json("--set", "inference.traffic.requests_per_s=5", "--set", "placement.users_in=[tokyo]")
    assert more["workload"]["inference"]["traffic"]["requests_per_s"] == 5
    assert more["workload"]["placement"]["users_in"] == ["tokyo"]
    assert more["options"][0]["cost"]["tco_usd"] != base["options"][0]["cost"]["tco_usd"]


def test_set_values_are_validated_and_misspelt_paths_suggested(capsys):
    assert main(["check", CHAT, "--set", "inference.trafic.requests_per_s=5"]) == 2
    err = capsys.readouterr().err
    assert "(with --set)" in err and "did you mean 'traffic'" in err
    assert main(["check", CHAT, "--set", "inference.traffic.requests_per_s=-3"]) == 2
    assert "requests_per_s" in capsys.readouterr().err
    assert main(["check", CHAT, "--set", "nothing"]) == 2
    assert "is not path=value" in capsys.readouterr().err


def test_estimate_takes_set_too():
    result = CliRunner().invoke(app, ["estimate", CHAT, "--accelerator", "h100", "--count", "2", "--json",
                                      "--set", "inference.traffic.input_tokens={mean: 500, p99: 1000}"])
    assert result.exit_code == 0, result.output


def test_diff_names_what_changed_and_can_fail_a_build(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(_plan_json()))
    new.write_text(json.dumps(_plan_json("--set", "inference.traffic.peak_requests_per_s=30")))
    result = CliRunner().invoke(app, ["diff", str(old), str(new), "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert d["top"]["tco_change_fraction"] > 0.05 and d["ranks"][0]["rank"] == 1
    assert set(d["top"]["old_performance"]) == {"ttft_p99_s", "e2e_p99_s"}  # unit-named, seconds
    assert d["top"]["old_performance"]["ttft_p99_s"] > 0
    md = CliRunner().invoke(app, ["diff", str(old), str(new), "--md"]).stdout
    assert "| rank | before | TCO | after | TCO |" in md and "TCO of the top option" in md
    assert CliRunner().invoke(app, ["diff", str(old), str(new), "--fail-above", "5"]).exit_code == 1
    assert CliRunner().invoke(app, ["diff", str(old), str(new), "--fail-above", "500"]).exit_code == 0
    assert CliRunner().invoke(app, ["diff", str(new), str(old), "--fail-above", "0"]).exit_code == 0  # cost fell


def test_diff_refuses_what_is_not_a_plan(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    assert main(["diff", str(bad), str(bad)]) == 2
    assert "not a plan" in capsys.readouterr().err
