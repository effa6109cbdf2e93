"""deployment.owned (issue 13 point 3): servers the team already has are priced at power, colocation
and operations only, used first when they carry the load, and refused when they cannot."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from infrafit.cli import app, main

SPEC = """\
name: owned-h100
task: inference
model: llama3.1-70b
precision: [fp8, bf16]
inference:
  mode: realtime
  traffic:
    requests_per_s: {rps}
    input_tokens: {{mean: 1000, p99: 4000}}
    output_tokens: {{mean: 300, p99: 1000}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.06}}
placement: {{countries: [US]}}
deployment:
  allowed: {allowed}
  owned: {owned}
horizon_months: 12
"""


def _plan(tmp_path, rps=10, owned="[{accelerator: h100, count: 16}]", allowed="[cloud, on_prem]") -> dict:
    spec = tmp_path / "owned.yaml"
    spec.write_text(SPEC.format(rps=rps, owned=owned, allowed=allowed))
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--all", "--top", "50"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_owned_servers_are_used_first_and_cost_only_running_them(tmp_path):
    d = _plan(tmp_path)
    top = d["options"][0]
    assert top["provider"] == "owned" and top["accelerator"] == "nvidia_h100_sxm"
    b = top["cost"]["breakdown"]
    assert b.get("compute_usd", 0) == 0 and b.get("resale_loss_usd", 0) == 0 and b.get("maintenance_usd", 0) == 0
    assert b["power_usd"] > 0 and b["colocation_usd"] > 0 and b["ops_labour_usd"] > 0
    assert top["cost"]["commitment_months"] == 0
    assert any(w.startswith("owned hardware used first") for w in top["why"])
    assert not any("capital outlay" in r for r in top["risks"])
    # the same box bought new costs its depreciation, maintenance and resale loss on top
    bought = next(o for o in d["options"] if o["provider"] == "purchase" and o["accelerator"] == "nvidia_h100_sxm"
                  and o["count"] == top["count"])
    assert bought["cost"]["tco_usd"] > top["cost"]["tco_usd"]


def test_owned_servers_that_cannot_carry_the_load_are_not_offered(tmp_path):
    d = _plan(tmp_path, rps=40, owned="[{accelerator: h100, count: 8}]")
    assert not any(o["provider"] == "owned" for o in d["options"])
    # the same load on enough owned servers is planned on them: the cap, not the offer, removed them
    enough = _plan(tmp_path, rps=40, owned="[{accelerator: h100, count: 64}]")
    top = enough["options"][0]
    assert top["provider"] == "owned"
    assert max(top["cost"]["replicas"]) * top["server"]["instances_per_replica"] > 1  # more than one box


@pytest.mark.parametrize(("owned", "allowed", "expect"), [
    ("[{accelerator: h1000, count: 8}]", "[cloud, on_prem]", "is not an accelerator"),
    ("[{accelerator: h100, count: 4}]", "[cloud, on_prem]", "do not fill one"),
    ("[{accelerator: h100, count: 8, host: no_such_box}]", "[cloud, on_prem]", "is not in hosts.csv"),
    ("[{accelerator: h100, count: 8}]", "[cloud]", "leaves on_prem out"),
    ("[{accelerator: h100, count: 8, place: atlantis}]", "[cloud, on_prem]", "'atlantis' is not a known place"),
    # the spec allows only US: servers in Frankfurt could never be planned, so say so instead of dropping them
    ("[{accelerator: h100, count: 8, place: frankfurt}]", "[cloud, on_prem]", "'frankfurt' is in DE, but"),
])
def test_bad_owned_entries_exit_2(tmp_path, capsys, owned, allowed, expect):
    spec = tmp_path / "owned.yaml"
    spec.write_text(SPEC.format(rps=10, owned=owned, allowed=allowed))
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert expect in err and "To fix" in err


@pytest.mark.parametrize("place", ["us-east-1", "virginia", "ashburn", "US", "on-prem-dc1"])
def test_owned_servers_at_a_cloud_region_or_city_are_placed_in_its_country(tmp_path, place):
    """A ``place`` that is a catalog region or an offer's city is in that region's country (us-east-1 -> US).
    Before, only the places table was asked, so ``us-east-1`` had no country, the US residency rule dropped
    the owned servers, and the plan rented instead without a word."""
    d = _plan(tmp_path, owned=f"[{{accelerator: h100, count: 16, place: {place}}}]")
    top = d["options"][0]
    assert top["provider"] == "owned" and top["region"] == place
    assert top["country"] == "US"  # on-prem-dc1, the team's own site, is in the spec's country


def test_an_owned_site_outside_placement_regions_exits_2(tmp_path, capsys):
    spec = tmp_path / "owned.yaml"
    text = SPEC.format(rps=10, owned="[{accelerator: h100, count: 8, place: on-prem-dc1}]", allowed="[cloud, on_prem]")
    spec.write_text(text.replace("placement: {countries: [US]}", "placement: {regions: [us-east-1]}"))
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "'on-prem-dc1' is not one of placement.regions" in err and "To fix" in err


def test_owned_servers_a_filter_drops_are_named_in_excluded(tmp_path):
    spec = tmp_path / "owned.yaml"
    spec.write_text(SPEC.format(rps=10, owned="[{accelerator: h100, count: 16}]", allowed="[cloud, on_prem]")
                    + "hardware: {vendors: [amd]}\n")
    result = CliRunner().invoke(app, ["plan", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert not any(o["provider"] == "owned" for o in d["options"])
    line = next(e for e in d["excluded"] if e["what"] == "owned hardware")
    assert "deployment.owned[0]" in line["reason"] and "hardware filters" in line["reason"]


def test_the_headline_says_the_servers_are_owned_not_bought(tmp_path):
    spec = tmp_path / "owned.yaml"
    spec.write_text(SPEC.format(rps=10, owned="[{accelerator: h100, count: 16, place: us-east-1}]",
                                allowed="[cloud, on_prem]"))
    result = CliRunner().invoke(app, ["plan", str(spec)])
    assert result.exit_code == 0, result.output
    first = " ".join(result.stdout.split())  # the headline wraps at the terminal width
    head = first.split("infrafit plan")[0]
    assert "on servers you own, on-prem at us-east-1" in head and "bought on-prem" not in head
    assert "first as hardware you own (deployment.owned)" in first
