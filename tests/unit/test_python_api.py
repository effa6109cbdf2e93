"""The Python API (issue 16 point 3): infrafit.plan / estimate / check return what the CLI prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import infrafit
from infrafit.cli import app
from infrafit.errors import NoFeasibleOption, ProblemsError

ROOT = Path(__file__).resolve().parents[2]
CHAT = str(ROOT / "examples" / "chatbot-asia.yaml")
SMALL = {"name": "small", "task": "inference", "model": "llama3.1-8b",
         "inference": {"traffic": {"requests_per_s": 5, "input_tokens": 500, "output_tokens": 100},
                       "slo": {"ttft_p99_s": 1.0}},
         "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]}, "horizon_months": 12}


def test_plan_returns_the_typed_plan_the_cli_prints():
    p = infrafit.plan(CHAT)
    cli = json.loads(CliRunner().invoke(app, ["plan", CHAT, "--json"]).stdout)
    assert p.to_dict()["options"][0]["offer_id"] == cli["options"][0]["offer_id"]
    assert p.options[0].cost["tco_usd"] == pytest.approx(cli["options"][0]["cost"]["tco_usd"])
    frame = p.to_frame()
    assert list(frame["rank"]) == [o.rank for o in p.options]
    assert {"tco_usd", "ttft_p99_s", "accelerator", "deployment"} <= set(frame.columns)


def test_overrides_act_like_set():
    base = infrafit.plan(CHAT)
    more = infrafit.plan(CHAT, inference__traffic__requests_per_s=6)
    same = infrafit.plan(CHAT, overrides={"inference.traffic.requests_per_s": 6})
    assert more.options[0].cost["tco_usd"] > base.options[0].cost["tco_usd"]
    assert same.options[0].cost["tco_usd"] == pytest.approx(more.options[0].cost["tco_usd"])


def test_a_dict_spec_and_estimate_and_check():
    w = infrafit.check(SMALL)
    assert w.name == "small"
    assert infrafit.plan(SMALL).options
    e = infrafit.estimate(SMALL, accelerator="h100", count=1, precision="fp8")
    assert e.to_json()["latency"]["ttft_s"]["p99"] > 0


def test_errors_are_the_clis():
    with pytest.raises(ProblemsError) as info:
        infrafit.check(SMALL | {"horizon_months": 0})
    assert "To fix" in str(info.value)
    with pytest.raises(NoFeasibleOption):
        infrafit.plan(SMALL, inference__slo__ttft_p99_s=0.001)
