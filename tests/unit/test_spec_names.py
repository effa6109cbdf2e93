"""Names in a spec are checked against the catalog (``workload.names``): unknown regions, places and
providers are errors with close matches, region/country contradictions are errors, providers match
by display name, and the provider filter uses the same rule."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.errors import ProblemsError
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

BASE = """
name: names
task: inference
model: llama3.1-8b
inference:
  mode: realtime
  traffic: {{requests_per_s: 2, input_tokens: 500, output_tokens: 100}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.1}}
{extra}
"""


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _problems(cat, extra: str) -> list[str]:
    with pytest.raises(ProblemsError) as info:
        parse_spec(BASE.format(extra=extra), catalog=cat)
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize("extra, field, part", [
    ("placement: {regions: [tokyoo]}", "placement.regions[0]", "did you mean 'tokyo'"),
    ("placement: {regions: [hongkongg]}", "placement.regions[0]", "hong-kong"),
    ("placement: {users_in: [atlantis]}", "placement.users_in[0]", "not a known place"),
    ("placement: {regions: [tokyo], countries: [DE]}", "placement.regions[0]", "is in JP"),
    ("placement: {regions: [frankfrut]}", "placement.regions[0]", "frankfurt"),
    ("deployment: {exclude_providers: [vast]}", "deployment.exclude_providers[0]", "did you mean 'vast.ai'"),
    ("deployment: {exclude_providers: [nosuchcloud]}", "deployment.exclude_providers[0]", "not a provider"),
])
def test_wrong_names_are_refused_with_a_suggestion(cat, extra, field, part):
    problems = _problems(cat, extra)
    assert any(field in p and part in p and "To fix" in p for p in problems), problems


@pytest.mark.parametrize("extra", [
    "placement: {regions: [tokyo, hong-kong], users_in: [seoul, taipei, JP, sao-paulo]}",
    "placement: {regions: [paris, on-prem-lab], countries: [FR]}",
    "deployment: {exclude_providers: [vast.ai, AWS, Lambda]}",
    "placement: {regions: [hongkong, tokio], users_in: [bangalore, bombay]}",  # other names of those cities
])
def test_right_names_pass(cat, extra):
    assert parse_spec(BASE.format(extra=extra), catalog=cat).name == "names"


def test_a_display_name_excludes_that_providers_offers(cat):
    offers = plan(parse_spec(BASE.format(extra="deployment: {allowed: [cloud]}"), catalog=cat), cat, top=200,
                  diverse=False)
    assert any(o.provider == "vast.ai" for o in offers.options), "the check needs vast.ai among the options"
    w = parse_spec(BASE.format(extra="deployment: {allowed: [cloud], exclude_providers: [vast.ai]}"), catalog=cat)
    assert all(o.provider != "vast.ai" for o in plan(w, cat, top=200, diverse=False).options)
