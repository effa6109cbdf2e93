"""Place names beyond cities and catalog regions. US states (``placement.regions: [virginia]``): every offer
in a city of the state is inside the residency constraint, whichever name its catalog gives the region
(us-east-1, us-east4, Azure eastus). Countries written by name or alpha-3 code where a spec wants a two-letter
code (or a place) are refused with the code to write, not a spelling guess among cities ('germany' -> 'kerman')."""

from __future__ import annotations

import pandas as pd
import pytest

from infrafit.catalog import load_catalog
from infrafit.countries import ISO_COUNTRIES, country_named
from infrafit.errors import InputError
from infrafit.search.offers import residency_mask
from infrafit.workload.names import locate, name_problems, places, subdivision_cities, subdivisions
from infrafit.workload.place_aliases import canonical_place, place_aliases
from infrafit.workload.spec import parse_spec

SPEC = """\
name: states
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


@pytest.fixture(scope="module")
def cat():  # noqa: ANN201
    return load_catalog()


def _offers(cat, regions: tuple[str, ...], countries: tuple[str, ...] = ()) -> pd.DataFrame:  # noqa: ANN001
    offers = cat.offers
    return offers[residency_mask(offers, regions, countries)]


def test_every_state_and_dc_is_a_subdivision_with_a_source():
    subs = subdivisions()
    assert len(subs) == 51
    assert subs["virginia"] == ("US", "VA", "Virginia")
    # the city keeps the plain slug; the state is reached as washington-state
    assert subs["washington-state"][1] == "WA" and "washington" not in subs


def test_virginia_holds_the_ashburn_towns_and_the_azure_label_but_not_ohio():
    cities = subdivision_cities("virginia")
    assert {"ashburn", "dulles", "culpeper", "virginia"} <= cities
    assert "columbus" not in cities and subdivision_cities("ohio") >= {"columbus", "cleveland"}
    assert subdivision_cities("atlantis") == frozenset()
    # a state whose name is a city's (washington: DC) never matches that city's offers by name
    assert "washington" not in subdivision_cities("washington-state")


def test_virginia_selects_us_east_1_us_east4_and_azure_east_us_only(cat):  # noqa: ANN001
    got = _offers(cat, ("virginia",))
    regions = set(got["region"])
    assert {"us-east-1", "us-east4", "eastus"} <= regions
    assert not regions & {"us-east-2", "us-east5", "us-west-2", "us-central1"}  # Ohio, Oregon, Iowa
    assert set(got["country"]) == {"US"}
    # the city alone keeps what it kept before: Azure's region is labelled by its state, not by Ashburn
    assert "eastus" not in set(_offers(cat, ("ashburn",))["region"])
    assert len(got) > len(_offers(cat, ("ashburn",)))


def test_a_state_with_a_country_outside_placement_countries_selects_nothing(cat):  # noqa: ANN001
    assert _offers(cat, ("virginia",), ("DE",)).empty
    assert set(_offers(cat, ("ohio", "frankfurt"))["country"]) == {"US", "DE"}


def test_check_accepts_states_and_refuses_a_state_outside_the_countries(cat):  # noqa: ANN001
    ok = parse_spec(SPEC.format(placement="{regions: [ohio, virginia]}"))
    assert name_problems(ok, cat) == []
    bad = parse_spec(SPEC.format(placement="{regions: [virginia], countries: [DE]}"))
    [(path, what, fix)] = name_problems(bad, cat)
    assert path == ("placement", "regions", 0) and "is in US" in what and "placement.countries" in fix
    typo = parse_spec(SPEC.format(placement="{regions: [virgina]}"))
    [(_, what, fix)] = name_problems(typo, cat)
    assert "did you mean 'virginia'" in what and "US state" in fix


def test_a_state_is_located_at_its_most_populous_known_place():
    lat, lon, how = locate("virginia")
    assert how == "virginia (at virginia-beach, its most populous place)"
    assert (round(lat), round(lon)) == (37, -76)
    assert locate("wyoming") is None  # no known place in it: not guessed


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
    # a city-state's city is the city (hongkong: GeoNames' other name of hong-kong), not the country
    hk = parse_spec(SPEC.format(placement="{regions: [hongkong]}"))
    assert hk.placement.regions == ("hong-kong",) and name_problems(hk, cat) == []
    # a US state of the same name as a country is the state there (Georgia), as a place
    assert name_problems(parse_spec(SPEC.format(placement="{regions: [georgia]}")), cat) == []


def test_other_names_of_a_city_are_that_city():
    """GeoNames alternate names that can mean one place only: 'bangalore' is Bengaluru, in users_in and regions
    alike, and selects the offers sold there; the plan never sees the old name."""
    spec = parse_spec(SPEC.format(placement="{regions: [bombay], users_in: [bangalore, Saigon, gurgaon, Munchen]}"))
    assert spec.placement.regions == ("mumbai",)
    assert spec.placement.users_in == ("bengaluru", "ho-chi-minh-city", "gurugram", "munich")
    assert name_problems(spec, load_catalog()) == []
    assert locate("bengaluru")[2] == "bengaluru"


def test_an_alias_never_shadows_a_place_state_or_town_of_its_own():
    aliases = place_aliases()
    assert len(aliases) > 10_000 and set(aliases.values()) <= set(places())
    assert not set(aliases) & (set(places()) | set(subdivisions()))
    # 'canton' is Guangzhou's old name but Canton, Ohio's own: no alias (a town is not moved to China);
    # 'calcutta' likewise (Calcutta, South Africa); a state keeps its name
    assert "canton" not in aliases and "calcutta" not in aliases and canonical_place("virginia") == "virginia"
    assert canonical_place("us-east-1") == "us-east-1" and canonical_place("peking") == "beijing"
