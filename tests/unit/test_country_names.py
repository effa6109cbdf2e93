"""A country written by its name or alpha-3 code where a spec wants its two-letter code (or a place) is
refused with the code to write, instead of a spelling guess among cities ('germany' -> 'kerman')."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.countries import ISO_COUNTRIES, country_named
from infrafit.errors import InputError
from infrafit.workload.names import name_problems
from infrafit.workload.spec import parse_spec

SPEC = """\
name: names
task: inference
model: llama3.1-8b
precision: [fp8]
inference:
  mode: realtime
  traffic: {{requests_per_s: 5, input_tokens: {{mean: 800, p99: 2000}}, output_tokens: {{mean: 200, p99: 600}}}}
  slo: {{ttft_p99_s: 1.0, tpot_p99_s: 0.05}}
placement: {placement}
deployment: {{allowed: [cloud]}}
horizon_months: 12
"""


@pytest.mark.parametrize(("text", "code"), [("Germany", "DE"), ("germany", "DE"), ("DEU", "DE"), ("usa", "US"),
                                            ("United Kingdom", "GB"), ("south-korea", "KR"), ("Ivory Coast", "CI"),
                                            ("Netherlands", "NL"), ("The Netherlands", "NL")])
def test_names_and_alpha3_codes_find_the_country(text, code):
    found = country_named(text)
    assert found is not None and found[0] == code and found[0] in ISO_COUNTRIES


@pytest.mark.parametrize("text", ["", "tokyo", "germanyy", "virginia"])
def test_other_words_name_no_country(text):
    assert country_named(text) is None


def test_countries_field_says_which_code_to_write():
    with pytest.raises(InputError) as info:
        parse_spec(SPEC.format(placement="{countries: [Germany]}"))
    assert "'Germany' is the country Germany" in info.value.message and "To fix: write DE" in info.value.message


def test_users_in_and_regions_say_which_code_to_write():
    cat = load_catalog()
    users = parse_spec(SPEC.format(placement="{users_in: [germany]}"))
    [(path, what, fix)] = name_problems(users, cat)
    assert path == ("placement", "users_in", 0) and "the country Germany" in what and "DE" in fix
    regions = parse_spec(SPEC.format(placement="{regions: [japan]}"))
    [(path, what, fix)] = name_problems(regions, cat)
    assert path == ("placement", "regions", 0) and "the country Japan" in what
    assert "JP in placement.countries" in fix
    # a city-state's city is the city (hongkong: did you mean hong-kong), not the country
    [(_, what, _)] = name_problems(parse_spec(SPEC.format(placement="{regions: [hongkong]}")), cat)
    assert "did you mean 'hong-kong'" in what
    # a US state of the same name as a country is the state there (Georgia), as a place
    assert name_problems(parse_spec(SPEC.format(placement="{regions: [georgia]}")), cat) == []
