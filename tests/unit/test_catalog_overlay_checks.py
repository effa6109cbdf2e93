"""Overlays may not remap built-in names silently or state impossible figures, and their rows are
marked wherever a plan shows them (JSON ``user_row``, a risk line with the file and line)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from infrafit.catalog import DATA_DIR, load_catalog
from infrafit.errors import CatalogError
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

T4_OFFER = "aws_g4dn_xlarge_us_east_1_cloud_on_demand_20250701"


def _builtin_row(table: str, key: str, value: str) -> tuple[list[str], dict[str, str]]:
    with (DATA_DIR / f"{table}.csv").open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        row = next(r for r in reader if r[key] == value)
        return list(reader.fieldnames or []), row


def _overlay(tmp: Path, table: str, rows: list[dict[str, str]], fields: list[str]) -> Path:
    with (tmp / f"{table}.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return tmp


def _offer(tmp: Path, **changes: str) -> Path:
    fields, row = _builtin_row("offers", "id", T4_OFFER)
    return _overlay(tmp, "offers", [{**row, **changes}], fields)


def test_a_price_far_below_the_market_is_refused(tmp_path):
    with pytest.raises(CatalogError, match="10x below the cheapest known price") as info:
        load_catalog(_offer(tmp_path, usd_per_hour="0.000001"))
    assert "offers.csv:2" in str(info.value)


def test_an_offer_count_that_contradicts_its_host_is_refused(tmp_path):
    with pytest.raises(CatalogError, match="holds 1"):
        load_catalog(_offer(tmp_path, accelerator_count="8", usd_per_hour="4.2"))


def test_an_impossible_accelerator_is_refused(tmp_path):
    fields, row = _builtin_row("accelerators", "id", "nvidia_t4")
    row = {**row, "memory_bytes": "1.6e14"}  # 160 TB of memory on one card: a unit slip (GB written as bytes x1000)
    with pytest.raises(CatalogError, match="largest known part"):
        load_catalog(_overlay(tmp_path, "accelerators", [row], fields))


def test_remapping_a_builtin_alias_needs_remaps_builtin(tmp_path):
    fields = ["alias", "accelerator_id", "remaps_builtin", "source", "retrieved_on"]
    row = {"alias": "h100", "accelerator_id": "nvidia_t4", "source": "me", "retrieved_on": "2026-11-01"}
    with pytest.raises(CatalogError, match="built in for nvidia_h100_sxm"):
        load_catalog(_overlay(tmp_path, "aliases", [{**row, "remaps_builtin": ""}], fields))
    allowed = load_catalog(_overlay(tmp_path, "aliases", [{**row, "remaps_builtin": "true"}], fields))
    assert allowed.accelerator("h100").id == "nvidia_t4"


def test_overlay_rows_are_marked_in_plans(tmp_path):
    cat = load_catalog(_offer(tmp_path, usd_per_hour="0.08"))
    w = parse_spec("""
name: small
task: inference
model: llama3.1-8b
precision: [int8]
inference:
  mode: realtime
  traffic: {requests_per_s: 0.5, input_tokens: 200, output_tokens: 100}
  slo: {ttft_p99_s: 5.0, tpot_p99_s: 0.2}
placement: {regions: [us-east-1]}
deployment: {allowed: [cloud]}
""", catalog=cat)
    options = plan(w, cat, top=5).options
    mine = [o for o in options if o.offer_id == T4_OFFER]
    assert mine and all(o.user_row for o in mine)
    assert all("your catalog overlay" in o.risks[0] and "offers.csv:2" in o.risks[0] for o in mine)
    assert all(not o.user_row for o in options if o.offer_id != T4_OFFER)
