"""workloads: [...] planned apart and together on one fleet (issue 19 point 2)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.cli import app, main
from infrafit.search.fleet import Member, _pack, plan_fleet, size_pool
from infrafit.units import HOURS_PER_MONTH
from infrafit.workload.fleet import Fleet, fleet_from_data
from infrafit.workload.yaml_loader import load_yaml_text

CHAT = {"task": "inference", "model": "llama3.1-8b",
        "inference": {"mode": "realtime", "traffic": {"requests_per_s": 1, "daily_profile": "business-hours",
                                                      "input_tokens": 800, "output_tokens": 200},
                      "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.06}}}
BATCH = {"task": "inference", "model": "bert-large", "usage": {"pattern": "periodic"},
         "inference": {"mode": "batch", "traffic": {"items": {"per_day": 1_000_000, "window_hours": 6},
                                                    "input_tokens": 256}}}
SHARED = {"horizon_months": 12, "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud", "dedicated"]}}


def _fleet(items, shared=SHARED, name="f"):
    text = yaml.safe_dump({"name": name, **shared, "workloads": items}, sort_keys=False)
    return fleet_from_data(load_yaml_text(text, "fleet.yaml"), base_dir=None, default_name=name,
                           catalog=load_catalog())


def test_items_take_the_shared_fields_and_keep_their_own():
    f = _fleet([CHAT | {"name": "a"}, CHAT | {"name": "b", "placement": {"countries": ["DE"]}}])
    assert isinstance(f, Fleet) and [w.name for w in f.workloads] == ["a", "b"]
    assert f.workloads[0].placement.countries == ("US",) and f.workloads[1].placement.countries == ("DE",)
    assert all(w.horizon_months == 12 and w.deployment.allowed == ("cloud", "dedicated") for w in f.workloads)


@pytest.mark.parametrize("items,shared,needle", [
    ([CHAT | {"name": "a"}, CHAT | {"name": "a"}], SHARED, "share a name"),
    ([CHAT | {"name": "a"}, CHAT | {"name": "b", "horizon_months": 24}], SHARED, "different horizon_months"),
    ([CHAT | {"name": "a", "inference": {"mode": "realtime", "traffic": {"requests_per_s": -1}}}], SHARED,
     "requests_per_s"),
    ([], SHARED, "non-empty list"),
])
def test_bad_fleets_are_refused_with_the_field(tmp_path, capsys, items, shared, needle):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"name": "f", **shared, "workloads": items}, sort_keys=False))
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "To fix" in err


def _member(name, u, busy, weights=1e9, kv=1e9, realtime=True, fill=None):
    u = np.asarray(u, float)
    return Member(name, None, 0, realtime, u, np.zeros((len(u), 168)), np.asarray(fill if fill is not None else
                  np.zeros(len(u)), float), np.asarray(busy, float), weights, kv)


def test_fractions_of_an_instance_pack_together_within_memory():
    ms = [_member("a", [0.3], [100]), _member("b", [0.4], [100]), _member("c", [0.5], [100])]
    assert _pack(ms, [0.3, 0.4, 0.5], memory=1e12)[0] == 2  # 0.5 + 0.4 and 0.3
    assert _pack(ms, [0.3, 0.4, 0.5], memory=2.5e9)[0] == 3  # weights + KV share: one model per instance
    assert _pack(ms, [1.3, 0.0, 0.5], memory=1e12)[0] == 2  # a whole instance of its own, 0.3 + 0.5 shared


def test_batch_fills_idle_hours_and_overflow_gets_its_own_instances():
    rt = _member("chat", [0.5, 0.5], [100, 100])
    small = _member("batch", [0, 0], [50, 50], realtime=False, fill=[50, 50])
    held, hours, notes = size_pool([rt, small], 1e12, 2)
    assert list(held) == [1, 1] and any("idle hours" in n for n in notes)
    big = _member("batch", [0, 0], [2000, 2000], realtime=False, fill=[2000, 2000])
    held, hours, _ = size_pool([rt, big], 1e12, 2)
    idle = HOURS_PER_MONTH - 100
    assert held[0] == 1 + np.ceil((2000 - idle) / HOURS_PER_MONTH)


@pytest.fixture(scope="module")
def small_fleet():
    items = [CHAT | {"name": "chat-a"}, copy.deepcopy(CHAT) | {"name": "chat-b", "model": "qwen2.5-7b"},
             BATCH | {"name": "nightly"}]
    return _fleet(items)


def test_combined_is_never_worse_than_apart_and_adds_up(small_fleet):
    out = plan_fleet(small_fleet, load_catalog(), top=1)
    c = out["combined"]
    assert c["tco_usd"] <= out["separate_tco_usd"] + 1e-6 <= out["separate_sum_usd"] + 1e-6
    assert c["saving_usd"] == pytest.approx(out["separate_tco_usd"] - c["tco_usd"])
    assert sum(x["tco_usd"] for x in c["per_workload"]) == pytest.approx(c["tco_usd"])
    if c["kind"] == "shared":  # small models at low load share instances
        assert max(c["instances_by_month"]) < len(small_fleet.workloads)


def test_a_fleet_that_cannot_share_is_planned_apart():
    big = {"task": "inference", "model": "llama3.1-70b",
           "inference": {"mode": "realtime", "traffic": {"requests_per_s": 20, "input_tokens": 2000,
                                                         "output_tokens": 400},
                         "slo": {"ttft_p99_s": 1.5, "tpot_p99_s": 0.05}}}
    f = _fleet([big | {"name": "big-us"}, big | {"name": "big-jp", "placement": {"countries": ["JP"]}}])
    out = plan_fleet(f, load_catalog(), top=1)
    assert out["combined"]["kind"] == "separate"  # no offer is both in the US and in Japan
    assert out["combined"]["tco_usd"] == pytest.approx(out["separate_tco_usd"])


def test_cli_plans_a_fleet_and_refuses_what_does_not_apply(tmp_path, capsys):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"name": "f", **SHARED, "workloads": [CHAT | {"name": "a"}, BATCH | {"name": "b"}]}))
    result = CliRunner().invoke(app, ["plan", str(path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [w["name"] for w in out["workloads"]] == ["a", "b"] and out["combined"]["kind"] in ("shared", "separate")
    assert main(["plan", str(path), "--objective", "latency"]) == 2
    assert "fleet" in capsys.readouterr().err


def test_a_fleet_report_has_the_combined_plan_then_each_workloads_plan(tmp_path, capsys):
    """``plan FLEET --report``: the fleet summary (each workload apart, the combined plan and why), then every
    workload's own plan one heading level down; HTML embeds plotly.js once for all workloads' charts."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"name": "f", **SHARED, "workloads": [CHAT | {"name": "a"}, BATCH | {"name": "b"}]}))
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    assert main(["plan", str(path), "--report", str(md)]) == 0
    assert main(["plan", str(path), "--report", str(page)]) == 0
    assert "wrote report" in capsys.readouterr().err
    text = md.read_text()
    out = plan_fleet(_fleet([CHAT | {"name": "a"}, BATCH | {"name": "b"}]), load_catalog(), top=5)
    assert text.startswith("# infrafit fleet plan: f\n")
    assert "| workload | best apart | TCO apart | in the combined plan |" in text
    combined = out["combined"]
    assert f"TCO ${combined['tco_usd']:,.0f} over 12 months" in text
    for line in combined["why"]:
        assert f"- {line}" in text
    a, b = text.index("## Workload a\n"), text.index("## Workload b\n")
    assert a < b and text.index("### infrafit plan: a") > a and text.index("### infrafit plan: b") > b
    best_a = out["workloads"][0]["plan"]["options"][0]
    assert f"#### #1: {best_a['count']}x {best_a['accelerator']}" in text[a:b]
    html_text = page.read_text()
    assert html_text.count("window.PlotlyConfig") == 1 and html_text.count('class="plotly-graph-div"') >= 2
    assert "<h2>Workload a</h2>" in html_text and "<h2>Workload b</h2>" in html_text


def test_the_fleet_example_pools_and_the_api_returns_the_cli_json():
    import infrafit

    out = infrafit.plan_fleet("examples/multi-model-fleet.yaml", top=1)
    assert [w["name"] for w in out["workloads"]] == ["support-chat", "code-assist", "nightly-embeddings"]
    c = out["combined"]
    assert c["kind"] == "shared" and c["tco_usd"] < out["separate_tco_usd"]
    assert any("share instances within memory" in w for w in c["why"])
    assert any("idle hours" in w for w in c["why"])
    with pytest.raises(Exception, match="workloads"):
        infrafit.plan_fleet("examples/chatbot-asia.yaml")


def test_a_fleets_workload_is_planned_from_its_one_evaluation_as_if_alone(small_fleet):
    """plan_fleet evaluates each workload once (``prepare``) and both plans and pools from it: the plan
    from that evaluation equals the workload's own plan, and planning does not change the evaluation
    (a second plan from it is the same)."""
    from infrafit.search.planner import plan, prepare

    cat = load_catalog()
    work = small_fleet.workloads[0]
    prepared = prepare(work, cat)
    masks = {k: v.copy() for k, v in prepared.masks.items()}
    first = plan(work, cat, top=3, prepared=prepared).to_dict()
    assert first == plan(work, cat, top=3).to_dict()
    assert all(np.array_equal(masks[k], prepared.masks[k]) for k in masks)
    assert plan(work, cat, top=3, prepared=prepared).to_dict() == first


@pytest.mark.parametrize("argv", [
    ["estimate", "examples/multi-model-fleet.yaml", "--accelerator", "h100", "--count", "1"],
    ["sweep", "examples/multi-model-fleet.yaml", "--grid", "horizon_months=12,24"],
])
def test_commands_that_take_one_workload_refuse_a_fleet_with_the_fix(argv, capsys):
    """Not 'model: missing required field ... unknown field workloads': the file is read as what it is."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is a fleet spec (workloads: [...]), and this command takes one workload" in err
    assert "infrafit plan" in err and "unknown field" not in err and "Traceback" not in err


def test_the_api_sends_a_fleet_to_plan_fleet():
    import infrafit
    from infrafit.errors import InputError

    with pytest.raises(InputError, match="call infrafit.plan_fleet"):
        infrafit.plan("examples/multi-model-fleet.yaml")


def test_a_fleet_export_has_each_workloads_own_export_and_an_index_of_the_combined_plan(tmp_path, capsys):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"name": "f", **SHARED, "workloads": [CHAT | {"name": "a"}, BATCH | {"name": "b"}]}))
    out = tmp_path / "run"
    assert main(["plan", str(path), "--export", str(out), "--top", "2"]) == 0
    assert "exported" in capsys.readouterr().err
    index = json.loads((out / "index.json").read_text())
    plans = plan_fleet(_fleet([CHAT | {"name": "a"}, BATCH | {"name": "b"}]), load_catalog(), top=2)
    assert index["fleet"] == "f" and index["combined"]["kind"] == plans["combined"]["kind"]
    assert index["combined"]["tco_usd"] == pytest.approx(plans["combined"]["tco_usd"])
    assert [w["name"] for w in index["workloads"]] == ["a", "b"]
    for w in index["workloads"]:
        own = json.loads((out / w["folder"] / "index.json").read_text())  # what `plan --export` writes for it
        assert own["plan"] == w["name"] and len(own["options"]) == w["options"] >= 1
        serve = out / w["folder"] / "option-1" / "serve.sh"
        assert serve.exists() and serve.stat().st_mode & 0o111
