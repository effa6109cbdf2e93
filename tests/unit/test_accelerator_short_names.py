"""The name a plan table prints for a chip (its id without the vendor prefix) is accepted wherever a spec names
an accelerator, with the catalog's case/space/underscore-insensitive matching: the spec checks once compared
lower-cased names only, so `rtx_6000_ada` and `xeon_spr_4core`, printed by `plan`, were refused."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.catalog.model import short_accelerator
from infrafit.errors import ProblemsError
from infrafit.search.planner import plan
from infrafit.workload.names import accelerator_names
from infrafit.workload.spec import parse_spec

SPEC = """
name: t
task: inference
model: llama3.1-8b
inference:
  traffic: {requests_per_s: 1, input_tokens: 500, output_tokens: 100}
hardware: {accelerators: [%s]}
"""


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_every_printed_short_name_resolves_to_its_chip(cat):
    names = accelerator_names(cat)
    for acc in cat.accelerators:
        short = short_accelerator(acc)
        assert cat.resolve_accelerator_id(short) == acc
        assert names[short] == acc and names[short.upper().replace("_", " ")] == acc


@pytest.mark.parametrize("written", ["rtx_6000_ada", "RTX 6000 Ada", "xeon_spr_4core", "gb200_per_gpu"])
def test_a_spec_may_name_a_chip_as_the_plan_prints_it(cat, written):
    w = parse_spec(SPEC % written, catalog=cat)
    result = plan(w, cat, top=1)
    assert result.options and {o.accelerator for o in result.options} == {cat.resolve_accelerator_id(written)}


def test_an_unknown_name_is_still_refused_with_suggestions(cat):
    with pytest.raises(ProblemsError, match="'rtx_6000_adaa' is not an accelerator in the catalog"):
        parse_spec(SPEC % "rtx_6000_adaa", catalog=cat)
