"""deployment.require keeps only offers whose provider is known to meet each requirement (issue 19 point 4)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from infrafit.catalog import DATA_DIR, load_catalog
from infrafit.cli import app, main
from infrafit.search.offers import filter_offers
from infrafit.search.planner import plan
from infrafit.search.require import requirement_masks
from infrafit.workload.spec import workload_from_data

CHAT = {"name": "regulated", "task": "inference", "model": "llama3.1-8b",
        "inference": {"mode": "realtime", "traffic": {"requests_per_s": 5, "input_tokens": 1000, "output_tokens": 200},
                      "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}},
        "horizon_months": 12}


def _spec(**deployment):
    return workload_from_data(CHAT | {"deployment": deployment})


def _known(catalog, quality: str) -> set[str]:
    table = catalog.table("providers")
    return set(table.loc[table[quality] == "yes", "provider"])


def test_require_keeps_only_providers_known_to_meet_it():
    catalog = load_catalog()
    out = plan(_spec(require=["hipaa"]), catalog, top=10, diverse=False).to_dict()
    assert out["options"]
    assert {o["provider"] for o in out["options"]} <= _known(catalog, "hipaa")
    line = next(e for e in out["excluded"] if e["what"] == "deployment.require hipaa")
    assert "not known to meet it" in line["reason"] and "Lambda" in line["reason"]
    free = plan(_spec(), catalog, top=10, diverse=False).to_dict()
    assert {o["provider"] for o in free["options"]} - _known(catalog, "hipaa")  # the requirement removed some


def test_confidential_computing_is_met_per_instance_type():
    catalog = load_catalog()
    spec = _spec(require=["confidential_computing"])
    kept = filter_offers(catalog, spec, ("cloud", "dedicated", "on_prem"), (), ()).kept
    table = catalog.table("providers")
    listed = {h for v in table["confidential_computing_hosts"] for h in str(v).split(";") if h}
    assert len(kept) and set(kept["host_id"]) <= listed
    out = plan(spec, catalog, top=3).to_dict()
    assert out["options"] and all(o["provider"] == "GCP" and o["count"] == 1 for o in out["options"])


def test_unknown_is_never_assumed_until_an_overlay_says_yes(tmp_path):
    catalog = load_catalog()
    spec = _spec(require=["soc2"])
    masks = requirement_masks(catalog.offers, catalog, spec)
    lambda_rows = (catalog.offers["provider"] == "Lambda").to_numpy()
    assert not masks[0][1][lambda_rows].any()  # Lambda's soc2 cell is empty: not met
    header = (DATA_DIR / "providers.csv").read_text().splitlines()[0]
    row = "Lambda,yes,,,,,,,,,,,,,,medium,our signed report,Lambda SOC 2 Type II report shared under NDA,2026-11-01"
    (tmp_path / "providers.csv").write_text(header + "\n" + row + "\n")
    overlaid = load_catalog(overlay_dir=tmp_path)
    masks = requirement_masks(overlaid.offers, overlaid, spec)
    assert masks[0][1][(overlaid.offers["provider"] == "Lambda").to_numpy()].all()


def test_on_prem_meets_what_the_team_says_of_its_facility():
    catalog = load_catalog()
    kinds = ("on_prem",)
    without = filter_offers(catalog, _spec(allowed=["on_prem"], require=["soc2"]), kinds, (), ())
    assert without.kept.empty
    assert any("own_facility_meets" in e["reason"] for e in without.excluded)
    with_own = filter_offers(catalog, _spec(allowed=["on_prem"], require=["soc2"], own_facility_meets=["soc2"]),
                             kinds, (), ())
    assert len(with_own.kept) and set(with_own.kept["mode"]) == {"on_prem"}


def test_known_no_is_said_apart_from_unknown():
    catalog = load_catalog()
    spec = _spec(require=["custom_builds"])
    masks = requirement_masks(catalog.offers, catalog, spec)
    _, met, known_no = masks[0]
    aws = (catalog.offers["provider"] == "AWS").to_numpy()
    assert known_no[aws].all() and not met[aws].any()
    out = plan(spec, catalog, top=3).to_dict()
    line = next(e for e in out["excluded"] if e["what"] == "deployment.require custom_builds")
    assert "known not to meet it: AWS" in line["reason"]


def test_an_unknown_requirement_is_refused(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(json.dumps(CHAT | {"deployment": {"require": ["soc3"]}}))
    assert main(["check", str(path)]) == 2
    assert "deployment.require" in capsys.readouterr().err


def test_catalog_providers_lists_every_seller_and_filters():
    result = CliRunner().invoke(app, ["catalog", "providers", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    catalog = load_catalog()
    assert {r["provider"] for r in rows} >= set(catalog.offers["provider"])
    aws = next(r for r in rows if r["provider"] == "AWS")
    assert "hipaa" in aws["known_to_meet"] and aws["source"] and aws["retrieved_on"]
    hipaa = CliRunner().invoke(app, ["catalog", "providers", "--require", "hipaa", "--json"])
    assert {r["provider"] for r in json.loads(hipaa.stdout)} == _known(catalog, "hipaa")


@pytest.mark.parametrize("bad", ["maybe", "YES!"])
def test_a_quality_cell_must_be_yes_no_or_empty(tmp_path, bad):
    shutil.copytree(DATA_DIR, tmp_path / "data")
    path = tmp_path / "data" / "providers.csv"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("AWS,yes", f"AWS,{bad}", 1)
    path.write_text("\n".join(lines) + "\n")
    from infrafit.errors import CatalogError

    with pytest.raises(CatalogError, match="providers.csv"):
        load_catalog(base_dir=tmp_path / "data")
