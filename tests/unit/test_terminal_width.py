"""The plan table fits 80, 100 and 160 columns without splitting a word or a number (issue 17 point 2).

Each example is rendered at the width and at 400 columns; every token (a run of non-space characters
outside the box drawing) of the narrow render must be a token of the wide one: a folded "hardwar/e" or
"$449,13/4" would be two tokens the wide render does not have."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from infrafit.catalog import load_catalog
from infrafit.report.render import fitting_columns, option_rows, render_terminal
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BOX = re.compile(r"[│┃┏┓┗┛━─┡┩┼╇┳┻╋┣┫├┤└┘┌┐═╪┬┴]")
SPECS = ["chatbot-asia", "jax-pretraining", "train-here-serve-there", "tabular-xgboost", "edge-vision",
         "switch-from-gpu-contract"]


def _render(p, width: int) -> str:
    buf = StringIO()
    render_terminal(p, Console(file=buf, width=width))
    return buf.getvalue()


def _tokens(text: str) -> list[str]:
    return BOX.sub(" ", text).split()


@pytest.fixture(scope="module")
def plans():
    catalog = load_catalog()
    return {name: plan(load_spec(EXAMPLES / f"{name}.yaml", catalog), catalog, top=5) for name in SPECS}


@pytest.mark.parametrize("name", SPECS)
@pytest.mark.parametrize("width", [80, 100, 160])
def test_no_word_or_number_is_split(plans, name, width):
    p = plans[name]
    wide = set(_tokens(_render(p, 400)))
    narrow = _render(p, width)
    split = [t for t in _tokens(narrow) if t not in wide]
    assert not split, f"{name} at {width} columns splits {split[:8]}"
    assert max(len(line) for line in narrow.splitlines()) <= width


def test_optional_columns_go_before_a_word_would_split(plans):
    rows = option_rows(plans["chatbot-asia"])
    full, _ = fitting_columns(rows, 400)
    narrow, widths = fitting_columns(rows, 80)
    assert "bottleneck" in full and "bottleneck" not in narrow and set(narrow) < set(full)
    assert all(widths[c] >= max(len(w) for r in rows for w in r[c].split()) for c in narrow)


@pytest.mark.parametrize("width", [80, 100, 160])
def test_catalog_offers_fit_and_keep_the_hardware_and_its_price(monkeypatch, width):
    from infrafit.cli import main
    from infrafit.commands import output

    def render(w: int) -> str:
        buf = StringIO()
        monkeypatch.setattr(output, "stdout", Console(file=buf, width=w))
        assert main(["catalog", "offers", "--country", "JP"]) == 0
        return buf.getvalue()

    wide = set(_tokens(render(400)))
    narrow = render(width)
    assert not [t for t in _tokens(narrow) if t not in wide]
    assert "accelerator" in narrow and "$/accel-h" in narrow  # the hardware and its price always show
    assert max(len(line) for line in narrow.splitlines()) <= width
