"""The typed plan: ``planner.plan`` returns frozen ``Plan``/``Option``/``Excluded`` values whose
``to_dict()`` is the ``plan --json`` contract, and round-trips through ``from_dict``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.cli import main
from infrafit.search.planner import plan
from infrafit.search.types import Excluded, Option, Plan
from infrafit.workload.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def hybrid() -> Plan:
    return plan(load_spec(EXAMPLES / "train-here-serve-there.yaml"), load_catalog(), top=3)


def test_plan_is_typed_and_frozen(hybrid):
    assert isinstance(hybrid, Plan) and hybrid.options and all(isinstance(o, Option) for o in hybrid.options)
    assert all(isinstance(e, Excluded) for e in hybrid.excluded)
    top = hybrid.options[0]
    assert top.rank == 1 and top.count >= 1 and top.deployment
    assert all(isinstance(p, Option) and p.part in ("train", "serve") for p in top.parts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        top.rank = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        top.performance["fits"] = False  # type: ignore[index]


def test_to_dict_is_the_json_the_cli_prints_and_round_trips(hybrid, capsys):
    assert main(["plan", str(EXAMPLES / "train-here-serve-there.yaml"), "--json", "--top", "3"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(hybrid.to_dict()))
    assert Plan.from_dict(printed).to_dict() == printed


def test_unknown_option_keys_are_refused():
    with pytest.raises(ValueError, match="unknown option keys"):
        Option.from_dict({"accelerator": "a", "count": 1, "precision": "bf16", "stack": "x", "deployment": "on_prem",
                          "provider": "p", "region": "r", "colour": "blue"})
