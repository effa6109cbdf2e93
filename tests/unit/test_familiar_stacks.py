"""``ops.familiar_stacks`` acts (issue 13 / issue 12 point 4): an engine the team does not run costs a
week to adopt, priced once and said in the option's risks; names are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.cli import app, main
from infrafit.errors import InputError
from infrafit.search.familiar import STACK_ADOPTION_WEEKS, adoption_weeks, resolve_familiar

ROOT = Path(__file__).resolve().parents[2]
CHATBOT = (ROOT / "examples" / "chatbot-asia.yaml").read_text()


def test_names_resolve_through_aliases_and_tools_and_unknown_ones_are_refused():
    stacks = load_catalog().stacks
    assert resolve_familiar(["TRTLLM", "kubernetes"], stacks) == {"tensorrt-llm", "kubernetes"}
    with pytest.raises(InputError, match="did you mean 'vllm'"):
        resolve_familiar(["vllmm"], stacks)


def test_only_engines_outside_a_given_list_pay_to_adopt():
    stacks = load_catalog().stacks
    rows = ["vllm", "tensorrt", "sglang", "default", "pytorch"]
    assert adoption_weeks(rows, frozenset(), "pytorch", stacks).tolist() == [0, 0, 0, 0, 0]  # nothing said
    got = adoption_weeks(rows, frozenset({"vllm"}), "pytorch", stacks).tolist()
    assert got == [0, STACK_ADOPTION_WEEKS, STACK_ADOPTION_WEEKS, 0, 0]


def _plan(tmp_path: Path, text: str) -> dict:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--all"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_plan_prices_the_week_and_says_why(tmp_path):
    assert "familiar_stacks: [vllm, kubernetes]" in CHATBOT
    known = _plan(tmp_path, CHATBOT)
    unknown = _plan(tmp_path, CHATBOT.replace("  familiar_stacks: [vllm, kubernetes]\n", ""))
    by_offer = {(o["offer_id"], o["stack"], o["precision"]): o for o in unknown["options"]}
    checked = 0
    for o in known["options"]:
        twin = by_offer.get((o["offer_id"], o["stack"], o["precision"]))
        if twin is None:
            continue
        extra = o["cost"]["breakdown"]["migration_usd"] - twin["cost"]["breakdown"]["migration_usd"]
        if o["stack"] == "vllm":
            assert extra == pytest.approx(0.0)
        else:  # one engineer-week at the spec's $120/h
            assert extra == pytest.approx(STACK_ADOPTION_WEEKS * 40 * 120)
            assert any(r.startswith(f"new stack: {o['stack']} is not among ops.familiar_stacks") for r in o["risks"])
        checked += 1
    assert checked >= 2


def test_an_unknown_stack_name_exits_2(tmp_path, capsys):
    spec = tmp_path / "bad.yaml"
    spec.write_text(CHATBOT.replace("familiar_stacks: [vllm, kubernetes]", "familiar_stacks: [vllmm]"))
    assert main(["plan", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "ops.familiar_stacks: unknown stack 'vllmm'" in err and "Traceback" not in err
