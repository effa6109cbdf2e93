"""Contents of the built-in catalog: aliases, ids the calibration sets use, families, derivation rules."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.errors import InputError
from infrafit.units import HOURS_PER_MONTH

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def cat():  # noqa: ANN201
    return load_catalog(overlay_dir="")


@pytest.mark.parametrize(("alias", "expected"), [
    ("h100", "nvidia_h100_sxm"), ("H100-SXM5-80GB", "nvidia_h100_sxm"), ("h100 sxm5 80gb", "nvidia_h100_sxm"),
    ("v5e", "google_tpu_v5e"), ("trillium", "google_tpu_v6e"), ("MI300X", "amd_mi300x"),
    ("nvidia_gb200_per_gpu", "nvidia_gb200_per_gpu"), ("intel_xeon_6787p", "intel_xeon_6787p"),
    ("amd_epyc_9005_128c", "amd_epyc_9755"),
])
def test_aliases(cat, alias: str, expected: str) -> None:  # noqa: ANN001
    assert cat.resolve_accelerator_id(alias) == expected


def test_near_miss_suggests(cat) -> None:  # noqa: ANN001
    with pytest.raises(InputError) as info:
        cat.accelerator("h100-sxm6")
    assert "did you mean" in info.value.message and "h100-sxm" in info.value.message


def test_calibration_ids_resolve_with_their_family(cat) -> None:  # noqa: ANN001
    seen = 0
    for name in ("calibration.csv", "latency_calibration.csv"):
        path = ROOT / "benchmarks" / "data" / name
        if not path.exists():
            pytest.skip("calibration sets not present")
        pairs = {(r["accelerator_id"], r["accelerator_family"]) for r in csv.DictReader(path.open())}
        for aid, family in pairs:
            assert cat.accelerator(aid).family == family, aid
            seen += 1
    assert seen >= 30


def test_at_least_35_chips_and_the_issue_list(cat) -> None:  # noqa: ANN001
    assert len(cat.accelerators) >= 35
    for name in ("t4", "a10g", "l4", "l40s", "a100-40gb", "a100-80gb", "a100-pcie-80gb", "h100-pcie", "h100-nvl",
                 "h200", "gh200", "b200", "b300", "gb200", "gb300", "rtx-4090", "rtx-6000-ada", "rtx-pro-6000",
                 "mi250x", "mi300x", "mi325x", "mi350x", "mi355x", "v4", "v5e", "v5p", "v6e", "tpu7x", "gaudi2",
                 "gaudi3", "trn1", "trn2", "inf2", "spr", "emr", "gnr", "genoa", "turin"):
        cat.accelerator(name)
    kinds = {a.kind for a in cat.accelerators.values()}
    assert kinds == {"gpu", "tpu", "asic", "cpu"}


def test_missing_precision_is_unsupported_not_zeroed(cat) -> None:  # noqa: ANN001
    t4 = cat.accelerator("t4")
    assert not t4.supports("bf16") and t4.peak("bf16") == 0.0 and t4.supports("fp16")
    assert "bf16" not in t4.peak_flops_per_s


def test_cpu_peaks_follow_cores_clock_ops_rule(cat) -> None:  # noqa: ANN001
    per_cycle = {"intel": {"bf16": 1024, "int8": 2048, "fp32": 64}, "genoa": {"bf16": 64, "fp32": 32},
                 "turin": {"bf16": 128, "fp32": 64}}
    for acc in cat.accelerators.values():
        if acc.kind != "cpu":
            continue
        key = "intel" if acc.vendor == "Intel" else acc.generation
        for precision, ops in per_cycle[key].items():
            assert acc.peak(precision) == pytest.approx(acc.cores * acc.clock_hz * ops), (acc.id, precision)


def test_offers_cover_providers_regions_and_modes(cat) -> None:  # noqa: ANN001
    offers = cat.offers
    for provider in ("AWS", "GCP", "Azure", "Oracle", "Lambda", "CoreWeave", "RunPod"):
        assert (offers["provider"] == provider).any(), provider
    assert set(offers["mode"]) == {"cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y",
                                   "cloud_capacity_block", "dedicated_monthly", "on_prem"}
    dedicated = offers[offers["mode"] == "dedicated_monthly"]
    for city in ("Hong Kong", "Tokyo", "Los Angeles", "Singapore", "Frankfurt"):
        assert (dedicated["city"] == city).any(), city
    assert (dedicated["country"] == "US").any()
    assert dedicated["derived"].all() and (dedicated["contract_months"] >= 1).all()
    gcp_tpu = offers[(offers["provider"] == "GCP") & offers["accelerator_id"].str.startswith("google_tpu")]
    assert len(gcp_tpu) > 5
    onprem = offers[(offers["mode"] == "on_prem") & (offers["accelerator_count"] == 8)]
    assert len(onprem) >= 5


def test_dedicated_monthly_rule(cat) -> None:  # noqa: ANN001
    """H100 8-GPU monthly = median GPU-cloud $/GPU-h x 8 x 730 h (x 1.275 in Asia-Pacific)."""
    offers = cat.offers.set_index("id")
    us = offers.loc["dedicated_hgx_h100_8gpu_ashburn_12m"]
    hk = offers.loc["dedicated_hgx_h100_8gpu_hong_kong_12m"]
    assert us["usd_per_month"] == pytest.approx(2.99 * 8 * HOURS_PER_MONTH, abs=1)
    assert hk["usd_per_month"] == pytest.approx(us["usd_per_month"] * 1.275, abs=1)


def test_frameworks_cover_every_family(cat) -> None:  # noqa: ANN001
    families = {a.family for a in cat.accelerators.values()}
    fw = cat.frameworks
    for family in families:
        got = set(fw.loc[fw["family"] == family, "framework"])
        assert got == {"pytorch", "tensorflow", "jax", "onnx", "sklearn", "xgboost"}, family


def test_stack_ids_cover_calibration_stack_families(cat) -> None:  # noqa: ANN001
    path = ROOT / "benchmarks" / "data" / "calibration.csv"
    if not path.exists():
        pytest.skip("calibration set not present")
    stacks = set(cat.stacks["id"])
    assert {r["software_stack_family"] for r in csv.DictReader(path.open())} <= stacks
