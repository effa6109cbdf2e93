"""search.offers.prune_dominated: an offer no cheaper on any price column than another of the same
seller, host, mode, place and term is pruned before any performance model runs; anything that
differs in what is bought (seller, place, term) or is cheaper on some column stays."""

from __future__ import annotations

import pandas as pd

from infrafit.search.offers import prune_dominated

BASE = {"provider": "AWS", "host_id": "p5", "mode": "cloud_on_demand", "region": "us-east-1", "country": "US",
        "accelerator_id": "h100", "accelerator_count": 8, "contract_months": 0, "usd_per_hour": 98.0,
        "usd_per_month": None, "purchase_usd": None, "retrieved_on": "2025-07-01"}


def _offers(*changes: dict) -> pd.DataFrame:
    return pd.DataFrame([{**BASE, "id": f"o{i}", **c} for i, c in enumerate(changes)])


def test_a_dearer_copy_of_the_same_purchase_is_pruned():
    kept, n = prune_dominated(_offers({}, {"usd_per_hour": 120.0}, {"usd_per_hour": 98.0}))
    assert n == 2 and list(kept["id"]) == ["o0"]


def test_equal_prices_keep_the_freshest():
    kept, _ = prune_dominated(_offers({"retrieved_on": "2024-01-01"}, {"retrieved_on": "2026-10-01"}))
    assert list(kept["id"]) == ["o1"]


def test_what_differs_in_what_is_bought_is_kept():
    kept, n = prune_dominated(_offers({}, {"provider": "Lambda", "usd_per_hour": 120.0},
                                      {"region": "us-west-2", "usd_per_hour": 120.0},
                                      {"contract_months": 12, "usd_per_hour": 120.0}))
    assert n == 0 and len(kept) == 4


def test_cheaper_on_one_column_is_not_dominated():
    kept, n = prune_dominated(_offers({"mode": "on_prem", "usd_per_hour": None, "usd_per_month": 900.0,
                                       "purchase_usd": 300_000.0},
                                      {"mode": "on_prem", "usd_per_hour": None, "usd_per_month": 700.0,
                                       "purchase_usd": 320_000.0}))
    assert n == 0 and len(kept) == 2
