"""What changed between two price lists (``diff``) and what the market has no price for (``gaps``).

Both are pure functions over offer frames; ``infrafit catalog diff`` and ``infrafit catalog gaps`` print
them. Offers are matched by what a team buys, not by row id: the same instance from the same provider,
in the same region and mode (a refresh changes the date in an id, not the thing).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from infrafit.catalog.loader import read_table
from infrafit.catalog.model import Catalog
from infrafit.catalog.tables import OFFERS
from infrafit.errors import InputError

MATCH_KEY = ("provider", "host_id", "region", "mode")
PRICE_COLUMNS = ("usd_per_hour", "usd_per_month", "purchase_usd")
#: A re-price smaller than this fraction is rounding, not news.
REPRICE_MIN_FRACTION = 0.005


def read_offers(path: Path) -> pd.DataFrame:
    """Offers from a catalog or overlay folder (its ``offers.csv``) or an offers CSV file."""
    file = path / "offers.csv" if path.is_dir() else path
    if not file.is_file():
        raise InputError(f"{path}: no offers.csv there",
                         fix="name a catalog folder, an overlay folder or an offers CSV")
    return read_table(file, OFFERS, partial=True)


def _price(row: pd.Series) -> tuple[str, float]:
    for col in PRICE_COLUMNS:
        value = row.get(col)
        if isinstance(value, (int, float)) and not math.isnan(value):
            return col, float(value)
    return "", math.nan


def _keyed(frame: pd.DataFrame) -> dict[tuple[str, ...], pd.Series]:
    return {tuple(str(row[k]) for k in MATCH_KEY): row for _, row in frame.iterrows()}


def diff_offers(old: pd.DataFrame, new: pd.DataFrame, *, only_new_providers: bool = True) -> dict[str, Any]:
    """Added, removed and re-priced offers from ``old`` to ``new`` (prices in USD, per what
    ``price_column`` says: ``usd_per_hour``, ``usd_per_month`` or ``purchase_usd``). With
    ``only_new_providers`` (the default, right for an overlay from one price list) an old offer of a
    provider ``new`` never mentions is out of scope, not removed."""
    old_k, new_k = _keyed(old), _keyed(new)
    scope = set(new["provider"]) if only_new_providers else set(old["provider"])
    added = [_brief(new_k[k]) for k in sorted(new_k.keys() - old_k.keys())]
    removed = [_brief(old_k[k]) for k in sorted(old_k.keys() - new_k.keys()) if old_k[k]["provider"] in scope]
    repriced = []
    for k in sorted(old_k.keys() & new_k.keys()):
        (col, before), (_, after) = _price(old_k[k]), _price(new_k[k])
        if before > 0 and after == after and abs(after - before) / before >= REPRICE_MIN_FRACTION:
            repriced.append({**_brief(new_k[k]), "price_column": col, "old_price_usd": before, "new_price_usd": after,
                             "change_fraction": round(after / before - 1.0, 4),
                             "old_retrieved_on": str(old_k[k]["retrieved_on"])})
    return {"added": added, "removed": removed, "repriced": repriced,
            "unchanged": len(old_k.keys() & new_k.keys()) - len(repriced)}


def _brief(row: pd.Series) -> dict[str, Any]:
    col, price = _price(row)
    return {"id": str(row["id"]), **{k: str(row[k]) for k in MATCH_KEY},
            "accelerator_id": str(row["accelerator_id"]), "accelerator_count": int(row["accelerator_count"]),
            "price_column": col, "price_usd": price, "retrieved_on": str(row["retrieved_on"])}


def gaps(catalog: Catalog, *, complete_only: bool = True) -> list[dict[str, Any]]:
    """For each accelerator family and deployment mode: the countries of the catalog with no price for it
    (a family with no price at all in a mode lists every country). Component prices (no host) do not
    count when ``complete_only``: nobody can deploy on them."""
    from infrafit.catalog.tables import MODES

    offers = catalog.offers
    if complete_only:
        offers = offers[offers["host_included"].astype(bool)]
    family = offers["accelerator_id"].map(lambda a: catalog.accelerators[a].family)
    countries = sorted({str(c) for c in catalog.offers["country"] if isinstance(c, str) and c})
    families = sorted({a.family for a in catalog.accelerators.values()})
    out = []
    for fam in families:
        for mode in MODES:
            rows = offers[(family == fam).to_numpy() & (offers["mode"] == mode).to_numpy()]
            if mode == "on_prem":  # a purchase is placed where the buyer puts it: priced or not, no country
                if rows.empty:
                    out.append({"family": fam, "mode": mode, "offer_count": 0, "missing_countries": ["(any)"]})
                continue
            have = {str(c) for c in rows["country"] if isinstance(c, str) and c}
            missing = [c for c in countries if c not in have]
            if missing:
                out.append({"family": fam, "mode": mode, "offer_count": len(rows), "missing_countries": missing})
    return out
