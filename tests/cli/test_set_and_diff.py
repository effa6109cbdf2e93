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


FLEET = str(ROOT / "examples" / "multi-model-fleet.yaml")


def test_set_indexes_a_fleet_item_and_only_that_item_changes():
    result = CliRunner().invoke(app, ["plan", FLEET, "--json", "--top", "1",
                                      "--set", "workloads[0].inference.traffic.requests_per_s=6"])
    assert result.exit_code == 0, result.output
    rates = {w["name"]: w["plan"]["workload"]["inference"]["traffic"]["requests_per_s"]
             for w in json.loads(result.stdout)["workloads"]}
    assert rates["support-chat"] == 6 and rates["code-assist"] == 1  # the file says 2 and 1


def test_set_path_keys_and_list_errors_name_the_fix(capsys):
    from infrafit.workload.spec import path_keys

    assert path_keys("workloads[1].inference.slo") == ["workloads", 1, "inference", "slo"]
    assert path_keys("a.b[0][2].c") == ["a", "b", 0, 2, "c"]
    for bad, needle, fix in (
            ("workloads[7].model=x", "workloads has 3 item(s), so there is no item [7]", "from 0 to 2"),
            ("workloads.model=x", "workloads is a list, so a field of it needs an index", "workloads[0].model"),
            ("workloads[0]]x.model=x", "is not a field name or name[index]", "workloads[0].inference"),
            ("inference[0].slo=x", "inference is not a list, so it has no item [0]", "index only lists")):
        assert main(["check", FLEET, "--set", bad]) == 2, bad
        err = capsys.readouterr().err
        assert needle in err and fix in err and "Traceback" not in err, (bad, err)


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
