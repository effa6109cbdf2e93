"""In-process CLI tests of ``infrafit catalog``: exit codes and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infrafit.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "catalog"


@pytest.fixture(autouse=True)
def _no_overlay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INFRAFIT_CATALOG", raising=False)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_accelerators_filters_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, ["catalog", "accelerators", "--vendor", "amd", "--min-memory", "250GB", "--json"])
    assert rows and all(r["vendor"] == "AMD" and r["memory_bytes"] >= 250e9 for r in rows)
    assert {r["id"] for r in rows} >= {"amd_mi325x", "amd_mi355x"}


def test_offers_filters(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, ["catalog", "offers", "--country", "JP", "--mode", "dedicated_monthly", "--json"])
    assert rows and all(r["country"] == "JP" and r["mode"] == "dedicated_monthly" for r in rows)
    cheap = _json(capsys, ["catalog", "offers", "--accelerator", "h100", "--max-usd-per-hour", "3", "--json"])
    assert cheap and all(r["usd_per_accelerator_hour"] <= 3 and r["accelerator_id"] == "nvidia_h100_sxm" for r in cheap)
    tokyo = _json(capsys, ["catalog", "offers", "--region", "tokyo", "--json"])
    assert tokyo and all(r["city"] == "Tokyo" or r["region"] == "tokyo" for r in tokyo)
    # a city's other name (GeoNames alternate names, place_aliases.csv) lists the same offers
    mumbai = _json(capsys, ["catalog", "offers", "--region", "mumbai", "--json"])
    assert mumbai and _json(capsys, ["catalog", "offers", "--region", "bombay", "--json"]) == mumbai


def test_an_empty_listing_keeps_its_own_columns(capsys: pytest.CaptureFixture[str]) -> None:
    """No offer matched: the table printed a plan's headers (#, hardware, deployment, TCO)."""
    assert main(["catalog", "offers", "--region", "atlantis"]) == 0
    out = capsys.readouterr().out
    assert "offers (0)" in out and "provider" in out and "TCO" not in out and "deployment" not in out


def test_stale_days_lists_only_old_prices(capsys: pytest.CaptureFixture[str]) -> None:
    old = _json(capsys, ["catalog", "offers", "--stale-days", "500", "--json"])
    assert old and all(r["age_days"] > 500 for r in old)
    everything = _json(capsys, ["catalog", "offers", "--json"])
    assert len(old) < len(everything)


def test_hosts_frameworks_stacks_show(capsys: pytest.CaptureFixture[str]) -> None:
    hosts = _json(capsys, ["catalog", "hosts", "--accelerator", "trillium", "--json"])
    assert hosts and all(h["accelerator_id"] == "google_tpu_v6e" for h in hosts)
    fw = _json(capsys, ["catalog", "frameworks", "--framework", "pytorch", "--family", "tpu", "--json"])
    assert [r["runtime"] for r in fw] == ["PyTorch/XLA"]
    stacks = _json(capsys, ["catalog", "stacks", "--family", "Google TPU", "--json"])
    assert {"jetstream", "maxtext"} <= {s["id"] for s in stacks}
    shown = _json(capsys, ["catalog", "show", "H100-SXM5-80GB", "--json"])
    assert shown["table"] == "accelerators" and shown["row"]["peak_flops_per_s"]["bf16"] == 989e12
    assert main(["catalog", "accelerators"]) == 0 and "nvidia_h100_sxm" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["catalog", "show", "h100-sxm6"],
    ["catalog", "accelerators", "--min-memory", "lots"],
    ["catalog", "offers", "--mode", "cloud_ondemand"],
    ["catalog", "offers", "--accelerator", "h1OO"],
])
def test_bad_input_exits_2_with_a_fix(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "To fix:" in err and "Traceback" not in err


def test_catalog_dir_overlay_marks_user_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "offers.csv").write_text(
        "id,provider,region,city,country,mode,host_id,accelerator_id,accelerator_count,usd_per_month,"
        "contract_months,host_included,confidence,derived,source,retrieved_on\n"
        "hk_quote,HKDC,hong-kong,Hong Kong,HK,dedicated_monthly,server_hgx_h100_8gpu,nvidia_h100_sxm,8,15000,"
        "24,true,high,false,private quote,2025-05-01\n"
    )
    monkeypatch.setenv("INFRAFIT_CATALOG", "")  # restored after the test; --catalog-dir sets it
    rows = _json(capsys, ["--catalog-dir", str(overlay), "catalog", "offers", "--country", "HK", "--json"])
    mine = [r for r in rows if r["user_row"]]
    assert [r["id"] for r in mine] == ["hk_quote"] and len(rows) > 1
    (overlay / "offers.csv").write_text("id,provider\nx,y\n")
    assert main(["--catalog-dir", str(overlay), "catalog", "offers"]) == 2
    assert "offers.csv:1" in capsys.readouterr().err


def test_models_table_reads_in_people_units(capsys: pytest.CaptureFixture[str]) -> None:
    """Parameter counts as 70.6B / 25.6M and KV in kB per token, not raw integers cut by the terminal."""
    assert main(["catalog", "models"]) == 0
    out = capsys.readouterr().out
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "70.6B" in lines["llama3.1-70b"] and "327.7" in lines["llama3.1-70b"]  # 2 x 80 x 8 x 128 x 2 B
    assert "25.6M" in lines["resnet50"]
    assert "None" not in out and "…" not in out
