"""``catalog refresh`` (SkyPilot and Azure retail price lists -> overlay), ``catalog diff``, ``catalog gaps``,
and the plan's price age (said once; ``--max-price-age-days``). Recorded fixture files only: no network."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.catalog.refresh import read_azure_retail, read_ec2instances
from infrafit.cli import app, main
from infrafit.units import HOURS_PER_YEAR

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "refresh"
CHATBOT = str(ROOT / "examples" / "chatbot-asia.yaml")
JAX = str(ROOT / "examples" / "jax-pretraining.yaml")


def _refresh(tmp_path: Path, fmt: str, source: Path) -> tuple[Path, dict]:
    out = tmp_path / "overlay"
    result = CliRunner().invoke(app, ["catalog", "refresh", "--format", fmt, "--from", str(source), "--out",
                                      str(out), "--retrieved-on", "2026-11-30", "--json"])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


def _offers(folder: Path) -> dict[str, dict]:
    import csv

    with (folder / "offers.csv").open(newline="", encoding="utf-8") as fh:
        return {(r["host_id"], r["region"], r["mode"]): r for r in csv.DictReader(fh)}


def test_skypilot_refresh_reprices_builtin_offers_and_adds_new_ones(tmp_path):
    out, summary = _refresh(tmp_path, "skypilot", FIXTURES / "skypilot")
    offers = _offers(out)
    # the built-in g4dn.xlarge us-east-1 on-demand row keeps its id, so the overlay replaces its price
    g4 = offers[("aws_g4dn_xlarge", "us-east-1", "cloud_on_demand")]
    assert g4["id"] == "aws_g4dn_xlarge_us_east_1_cloud_on_demand_20250701" and float(g4["usd_per_hour"]) == 0.5
    assert g4["retrieved_on"] == "2026-11-30" and g4["city"] == "Ashburn" and g4["country"] == "US"
    # three zones of spot: the median (17.5), not the luckiest zone
    p5en = offers[("aws_p5en_48xlarge", "ap-southeast-1", "cloud_spot")]
    assert float(p5en["usd_per_hour"]) == 17.5 and "median of 3 zone" in p5en["notes"]
    assert ("nebius_gpu_h200_sxm_8gpu_128vcpu_1600gb", "eu-north1", "cloud_on_demand") in offers
    reasons = {s["instance"]: s["reason"] for s in summary["skipped"]}
    assert "unknown accelerator 'V100'" in reasons["p3.2xlarge"]
    assert "cloud_regions.csv" in next(s["reason"] for s in summary["skipped"] if s["region"] == "mars-north-1")
    assert "no host row" in reasons["m7i.large"]


def test_the_overlay_is_what_plan_uses(tmp_path, monkeypatch):
    out, _ = _refresh(tmp_path, "skypilot", FIXTURES / "skypilot")
    catalog = load_catalog(out)
    row = catalog.offers.set_index("id").loc["aws_g4dn_xlarge_us_east_1_cloud_on_demand_20250701"]
    assert row["usd_per_hour"] == 0.5 and bool(row["user_row"])
    result = CliRunner().invoke(app, ["--catalog-dir", str(out), "plan", CHATBOT, "--json"])
    assert result.exit_code == 0, result.output


def test_azure_retail_pages_become_on_demand_spot_and_reserved_offers(tmp_path):
    listings = read_azure_retail(FIXTURES / "azure", retrieved_on="2026-11-30")
    by_mode = {x.mode: x.usd_per_hour for x in listings if x.instance == "Standard_ND96isr_H100_v5"}
    assert by_mode["cloud_on_demand"] == 98.32 and by_mode["cloud_spot"] == 39.33  # Windows, Low Priority out
    assert by_mode["cloud_reserved_1y"] == pytest.approx(534060.0 / HOURS_PER_YEAR)  # a whole-term price
    assert by_mode["cloud_reserved_3y"] == pytest.approx(1051200.0 / (3 * HOURS_PER_YEAR))
    out, summary = _refresh(tmp_path, "azure-retail", FIXTURES / "azure")
    offers = _offers(out)
    assert ("azure_nd96isr_h100_v5", "eastus", "cloud_reserved_3y") in offers
    assert any("Standard_NC6s_v3" in s["instance"] and "no host row" in s["reason"] for s in summary["skipped"])


def test_ec2instances_json_gives_every_region_with_reserved_and_spot(tmp_path):
    """The instances.json of ec2instances.info: Linux only, Standard no-upfront reserved for 1 and 3 years
    (not Convertible), the average spot rate as a derived row carrying the interruption band."""
    listings = read_ec2instances(FIXTURES / "ec2instances", retrieved_on="2026-11-30")
    g4 = {(x.region, x.mode): x for x in listings if x.instance == "g4dn.xlarge"}
    assert set(g4) == {("us-east-1", m) for m in ("cloud_on_demand", "cloud_reserved_1y", "cloud_reserved_3y",
                                                   "cloud_spot")} | {("sa-east-1", "cloud_on_demand"),
                                                                    ("sa-east-1", "cloud_reserved_1y")}
    assert g4["us-east-1", "cloud_on_demand"].usd_per_hour == 0.5  # not the Windows 0.71
    assert g4["us-east-1", "cloud_reserved_1y"].usd_per_hour == 0.331  # not the Convertible 0.38
    spot = g4["us-east-1", "cloud_spot"]
    assert spot.usd_per_hour == 0.21 and spot.derived and "interruption frequency <5%" in spot.notes
    out, summary = _refresh(tmp_path, "ec2instances", FIXTURES / "ec2instances")
    offers = _offers(out)
    # the built-in rows keep their ids (the overlay replaces them); Sao Paulo's city comes from cloud_regions
    assert offers[("aws_g4dn_xlarge", "us-east-1", "cloud_on_demand")]["id"] == \
        "aws_g4dn_xlarge_us_east_1_cloud_on_demand_20250701"
    assert offers[("aws_g4dn_xlarge", "sa-east-1", "cloud_reserved_1y")]["country"] == "BR"
    assert offers[("aws_g6_4xlarge", "us-east-1", "cloud_on_demand")]["accelerator_id"] == "nvidia_l4"
    assert summary["hosts"] == 1  # g6.4xlarge, a new host from its listed vCPUs, RAM, NVMe and network
    assert summary["spot_bands"] == 1 and (out / "cost_spot.csv").exists()
    import csv

    with (out / "hosts.csv").open(newline="", encoding="utf-8") as fh:
        g6 = next(csv.DictReader(fh))
    assert (float(g6["vcpu_count"]), float(g6["ram_bytes"])) == (16, 64 * 2**30)
    assert (float(g6["nvme_bytes"]), int(g6["nvme_drive_count"]), float(g6["nvme_read_bytes_per_s"])) == \
        (600e9, 1, 3.0e9)  # one drive at the catalog's 3.0e9 B/s rule
    assert float(g6["network_bits_per_s"]) == 25e9 and "not stated" not in g6["notes"]
    reasons = {s["instance"]: s["reason"] for s in summary["skipped"]}
    assert "unknown accelerator 'NVIDIA Tesla V100'" in reasons["p3.2xlarge"]
    assert "no host row" in reasons["m7i.large"] and "cloud_regions.csv" in reasons["g5.xlarge"]
    # the spot listing's advisor band lands in cost_spot.csv, which the spot model reads as a hazard
    from infrafit.cost.factors import spot_hazard

    factors = load_catalog(out).cost_factors
    hazard, band = spot_hazard(factors, "AWS", "aws_g4dn_xlarge", "us-east-1")
    assert band == "<5%" and hazard == pytest.approx(-np.log(0.95) / 730.0)
    assert spot_hazard(load_catalog().cost_factors, "AWS", "aws_g4dn_xlarge", "us-east-1")[1] == ""


@pytest.mark.parametrize(("fmt", "text", "expect"), [
    ("ec2instances", '{"not": "a list"}', "not a list of instance types"),
    ("ec2instances", '[{"instance_type": "g5.xlarge"', "not an instances.json"),
    ("azure-retail", '{"Items": [', "not an Azure Retail Prices page"),
    ("azure-retail", '[1, 2]', "no Items list"),
])
def test_a_broken_json_price_list_is_a_clear_error(tmp_path, capsys, fmt, text, expect):
    (tmp_path / "page.json").write_text(text)
    code = main(["catalog", "refresh", "--format", fmt, "--from", str(tmp_path / "page.json"),
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and expect in err and "page.json" in err and "To fix" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "expect"), [
    (["--format", "aws-csv"], "not a known price-list format"),
    (["--format", "skypilot", "--retrieved-on", "yesterday"], "is not a date"),
])
def test_bad_refresh_arguments_exit_2(tmp_path, capsys, args, expect):
    code = main(["catalog", "refresh", "--from", str(FIXTURES / "skypilot"), "--out", str(tmp_path / "o"), *args])
    assert code == 2 and expect in capsys.readouterr().err


def test_a_vms_csv_without_skypilot_columns_names_the_file(tmp_path, capsys):
    (tmp_path / "src" / "aws").mkdir(parents=True)
    (tmp_path / "src" / "aws" / "vms.csv").write_text("name,price\nx,1\n")
    code = main(["catalog", "refresh", "--format", "skypilot", "--from", str(tmp_path / "src"), "--out",
                 str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "vms.csv:1" in err and "InstanceType" in err and "To fix" in err


@pytest.mark.parametrize("fmt", ["skypilot", "ec2instances"])
def test_fetch_without_network_is_a_clear_error(tmp_path, capsys, monkeypatch, fmt):
    httpx = pytest.importorskip("httpx")
    asked = []

    def refuse(self, url, **kw):
        asked.append(url)
        raise httpx.ConnectError("network is unreachable")

    monkeypatch.setattr(httpx.Client, "get", refuse)
    code = main(["catalog", "refresh", "--format", fmt, "--fetch", "--clouds", "aws", "--from",
                 str(tmp_path / "dl"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "--fetch failed" in err and "To fix" in err
    assert asked and ("instances.json" in asked[0]) == (fmt == "ec2instances")


def test_fetch_without_httpx_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "httpx", None)
    code = main(["catalog", "refresh", "--format", "azure-retail", "--fetch", "--from", str(tmp_path / "dl"),
                 "--out", str(tmp_path / "o")])
    assert code == 2 and "infrafit[refresh]" in capsys.readouterr().err


def test_diff_shows_added_and_repriced_offers_of_the_refreshed_providers(tmp_path):
    out, _ = _refresh(tmp_path, "skypilot", FIXTURES / "skypilot")
    result = CliRunner().invoke(app, ["catalog", "diff", "builtin", str(out), "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    repriced = {(r["host_id"], r["region"], r["mode"]): r for r in d["repriced"]}
    g4 = repriced[("aws_g4dn_xlarge", "us-east-1", "cloud_on_demand")]
    assert g4["old_price_usd"] == 0.526 and g4["new_price_usd"] == 0.5
    assert g4["change_fraction"] == pytest.approx(0.5 / 0.526 - 1, abs=1e-4)
    assert any(r["host_id"] == "aws_p5en_48xlarge" for r in d["added"])
    # providers the overlay does not mention are out of scope, not removed
    assert all(r["provider"] in ("AWS", "Nebius") for r in d["removed"])
    assert not any(r["provider"] == "GCP" for r in d["removed"])
    wide = json.loads(CliRunner().invoke(app, ["catalog", "diff", "builtin", str(out), "--json",
                                               "--all-providers"]).stdout)
    assert any(r["provider"] == "GCP" for r in wide["removed"])
    text = CliRunner().invoke(app, ["catalog", "diff", "builtin", str(out)]).stdout
    assert "~ AWS aws_g4dn_xlarge us-east-1 cloud_on_demand: 0.526 -> 0.5 (-4.9%" in text


def test_gaps_list_families_modes_and_countries_without_a_price():
    result = CliRunner().invoke(app, ["catalog", "gaps", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    by = {(r["family"], r["mode"]): r for r in rows}
    assert by[("AMD Instinct", "cloud_spot")]["offer_count"] == 0  # nobody sells AMD spot in the data
    assert "US" not in by[("NVIDIA Hopper", "cloud_on_demand")]["missing_countries"]
    only = json.loads(CliRunner().invoke(app, ["catalog", "gaps", "--json", "--family", "Intel Gaudi"]).stdout)
    assert only and all(r["family"] == "Intel Gaudi" for r in only)


def test_stale_prices_are_said_once_per_plan_not_per_option():
    result = CliRunner().invoke(app, ["plan", JAX, "--json"])
    d = json.loads(result.stdout)
    assert not any("stale price" in r for o in d["options"] for r in o["risks"])
    age = d["price_age"]
    assert age["stale_after_days"] == 180 and age["oldest_retrieved_on"] <= age["newest_retrieved_on"]
    assert {s["rank"] for s in age["stale_options"]} <= {o["rank"] for o in d["options"]}
    text = CliRunner().invoke(app, ["plan", JAX]).stdout
    assert text.count("Stale prices") == (1 if age["stale_options"] else 0)


def test_max_price_age_drops_old_offers_and_says_so():
    d = json.loads(CliRunner().invoke(app, ["plan", JAX, "--json", "--max-price-age-days", "365"]).stdout)
    assert not d["price_age"]["stale_options"]
    assert any(e["what"] == "old prices" and "365" in e["reason"] for e in d["excluded"])
    assert any("priced more than 365 days ago" in e["reason"] for e in d["excluded"] if e["what"] == "Google TPU")


def test_negative_max_price_age_exits_2(capsys):
    assert main(["plan", JAX, "--max-price-age-days", "-1"]) == 2
    assert "To fix" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "expect"), [
    (["catalog", "gaps", "--mode", "spot"], "not a deployment mode"),
    (["catalog", "gaps", "--family", "Hoper"], "not an accelerator family"),
    (["catalog", "diff", "builtin", "/nonexistent/overlay"], "no offers.csv there"),
])
def test_bad_gaps_and_diff_arguments_exit_2(capsys, args, expect):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert expect in err and "To fix" in err


def test_a_broken_offers_csv_in_diff_names_its_line(tmp_path, capsys):
    bad = tmp_path / "offers.csv"
    bad.write_text("id,provider\nx,AWS\n")
    assert main(["catalog", "diff", "builtin", str(bad)]) == 2
    assert f"{bad}:" in capsys.readouterr().err


def test_merge_into_csv_replaces_in_place_and_appends(tmp_path):
    """The helper the one-shot data imports write through: a row with a known id keeps its position."""
    from infrafit.catalog.refresh import merge_into_csv

    path = tmp_path / "t.csv"
    path.write_text("id,price,note\na,1,x\nb,2,y\n")
    assert merge_into_csv(path, ("id", "price", "note"), [{"id": "a", "price": 1.5, "note": float("nan")},
                                                           {"id": "c", "price": 3, "note": None}]) == (1, 1)
    assert path.read_text() == "id,price,note\na,1.5,\nb,2,y\nc,3,\n"
