"""Cross-border conditions (issue 13 point 1): serving users in one country from another states the
sourced condition (GDPR transfer, mainland China's border, Russian localisation) as a risk on exactly the
options it covers, and a malformed condition row is refused where it stands."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.errors import CatalogError
from infrafit.search import borders
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"

SPEC = """
name: borders
task: inference
model: llama3.1-8b
inference:
  mode: realtime
  traffic: {{requests_per_s: 2, input_tokens: 500, output_tokens: 200}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.1}}
placement: {{users_in: {users}, countries: [{country}]}}
deployment: {{allowed: [cloud]}}
horizon_months: 12
"""
CONDITIONS = ("GDPR transfer", "cross-border network", "PIPL transfer", "data localisation", "LGPD transfer")


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _risks(cat, users: str, country: str) -> list[tuple[str, list[str]]]:
    p = plan(parse_spec(SPEC.format(users=users, country=country), catalog=cat), cat, top=3)
    assert p.options, "the plan has options to check"
    return [(o.country, [r for r in o.risks if r.split(":")[0] in CONDITIONS]) for o in p.options]


def test_eu_users_served_from_a_country_without_adequacy_get_the_transfer_rule(cat):
    for country, risks in _risks(cat, "[paris, berlin]", "SG"):
        assert country == "SG" and len(risks) == 1
        assert "users in paris, berlin" in risks[0] and "no EU adequacy decision" in risks[0]
        assert "GDPR Art. 44-46" in risks[0] and "eur-lex.europa.eu" in risks[0]  # the source travels with it


def test_eu_users_served_from_the_us_are_told_the_framework_covers_certified_companies_only(cat):
    p = plan(parse_spec(SPEC.format(users="[paris]", country="US"), catalog=cat), cat, top=3)
    for o in p.options:
        dpf = [r for r in o.risks if r.startswith("GDPR transfer")]
        assert len(dpf) == 1 and "Data Privacy Framework" in dpf[0] and f"check {o.provider} at" in dpf[0]


@pytest.mark.parametrize("users,country", [("[paris]", "DE"), ("[paris]", "JP"), ("[tokyo]", "US")])
def test_no_condition_where_none_applies(cat, users, country):
    """Inside the EEA, to an adequate country, or for users outside every condition's countries."""
    assert all(not risks for _, risks in _risks(cat, users, country))


def test_users_served_inside_their_own_country_cross_no_border(cat):
    """The catalog sells nothing in mainland China, so this is checked on the rule itself."""
    found = borders.conditions(cat.table("place_borders"), {"CN": ["shanghai"]})
    assert {rec["id"] for rec, _ in found} == {"cn_border_network", "cn_pipl_transfer"}
    assert borders.risks(found, "CN", "Alibaba Cloud") == []
    assert len(borders.risks(found, "HK", "Alibaba Cloud")) == 2
    assert borders.risks(found, "", "on-prem") == []  # a serving country that is not known states nothing


def test_users_in_mainland_china_served_offshore_get_the_border_and_pipl(cat):
    for country, risks in _risks(cat, "[shanghai, {place: moscow, share: 0.1}]", "JP"):
        names = [r.split(":")[0] for r in risks]
        assert names == ["cross-border network", "PIPL transfer", "data localisation"], names
        assert country == "JP" and "users in shanghai reach JP" in risks[0]
        assert "round-trip estimate does not include" in risks[0]
        assert "users in moscow" in risks[2] and "152-FZ" in risks[2]


def test_hong_kong_is_not_mainland_china(cat):
    assert all(not risks for _, risks in _risks(cat, "[hong-kong]", "JP"))


@pytest.mark.parametrize("edit,needle", [
    (("SE IS LI NO,,", "SE IS LI NO,US,"), "exactly one of served_in and served_outside"),
    (("{country}, which", "{city}, which"), "unknown fields ['city']"),
    (("AT BE BG", "at BE BG"), "not ISO 3166 alpha-2 codes: at"),
])
def test_a_malformed_condition_row_is_refused_with_its_line(tmp_path, edit, needle):
    base = tmp_path / "base"
    shutil.copytree(FIXTURE, base)
    path = base / "place_borders.csv"
    lines = path.read_text().splitlines(keepends=True)
    assert edit[0] in lines[1]
    lines[1] = lines[1].replace(edit[0], edit[1], 1)
    path.write_text("".join(lines))
    with pytest.raises(CatalogError) as info:
        load_catalog(overlay_dir="", base_dir=base)
    assert "place_borders.csv:2" in info.value.message and needle in info.value.message
    assert "To fix:" in info.value.message


def test_an_overlay_row_adds_a_condition_and_says_it_is_yours(tmp_path):
    overlay = tmp_path / "mine"
    overlay.mkdir()
    header = (FIXTURE / "place_borders.csv").read_text().splitlines()[0]
    (overlay / "place_borders.csv").write_text(
        header + "\nbr_lgpd,BR,,BR,LGPD transfer,users in {users} served from {country}: LGPD Art. 33 applies,"
        "high,,Lei 13.709/2018 Art. 33,2018-08-14\n")
    mine = load_catalog(overlay_dir=overlay)
    for _, risks in _risks(mine, "[sao-paulo]", "US"):
        assert risks == [r for r in risks if r.startswith("LGPD transfer")] and len(risks) == 1
        assert "users in sao-paulo served from US" in risks[0] and "your catalog overlay" in risks[0]
