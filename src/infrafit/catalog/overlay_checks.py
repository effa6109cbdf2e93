"""What a user's overlay may not do: remap a built-in name silently, or state physically impossible
figures (a T4 at $0.000001/h, a chip with 100x the memory of any part made).

Bounds, each against the built-in catalog so they move with the market:
- accelerator memory, bandwidth, links and every peak within ``PHYSICAL_MARGIN`` x the largest
  built-in value of that column;
- offer prices per accelerator at least the built-in cheapest / ``PRICE_MARGIN`` (hourly, monthly
  and purchase prices separately);
- an offer's accelerator count equal to its host's (an 8-GPU price on a 1-GPU host is a typo);
- an alias row that points a built-in alias at another accelerator only with ``remaps_builtin: true``.
Errors name the overlay file and line (``CatalogError``, exit 2).
"""

from __future__ import annotations

import math

import pandas as pd

from infrafit.catalog.tables import PEAK_COLUMNS
from infrafit.errors import CatalogError

PHYSICAL_MARGIN = 10.0
PRICE_MARGIN = 10.0
_ACCELERATOR_COLUMNS = ("memory_bytes", "memory_bytes_per_s", "scaleup_bytes_per_s", "scaleout_bytes_per_s",
                        "host_bytes_per_s", *PEAK_COLUMNS.values())
_PRICE_COLUMNS = ("usd_per_hour", "usd_per_month", "purchase_usd")


def _where(row: pd.Series) -> str:
    return f"{row['origin_file']}:{row['origin_line']}"


def _user(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["user_row"].astype(bool)] if "user_row" in frame else frame.iloc[0:0]


def check_aliases(base: pd.DataFrame, merged: pd.DataFrame) -> None:
    builtin = dict(zip(base["alias"].str.lower(), base["accelerator_id"], strict=True))
    for _, row in _user(merged).iterrows():
        old = builtin.get(str(row["alias"]).lower())
        if old is not None and old != row["accelerator_id"] and not bool(row.get("remaps_builtin")):
            raise CatalogError(f"alias {row['alias']!r} is built in for {old}; this row points it at "
                               f"{row['accelerator_id']}", where=_where(row),
                               fix="use a new alias, or set remaps_builtin to true to remap it on purpose")


def check_accelerators(base: pd.DataFrame, merged: pd.DataFrame) -> None:
    for col in _ACCELERATOR_COLUMNS:
        if col not in base:
            continue
        largest = pd.to_numeric(base[col], errors="coerce").max()
        if not (isinstance(largest, float) and math.isfinite(largest) and largest > 0):
            continue
        for _, row in _user(merged).iterrows():
            value = pd.to_numeric(pd.Series([row.get(col)]), errors="coerce").iloc[0]
            if pd.notna(value) and value > PHYSICAL_MARGIN * largest:
                raise CatalogError(f"{row['id']}: {col} {value:.4g} is over {PHYSICAL_MARGIN:g}x the largest "
                                   f"known part ({largest:.4g})", where=_where(row),
                                   fix="check the unit (bytes, bytes/s, FLOP/s, not GB or TFLOPS) and the value")


def check_offers(base: pd.DataFrame, merged: pd.DataFrame, hosts: pd.DataFrame) -> None:
    count_by_host = dict(zip(hosts["id"], hosts["accelerator_count"], strict=True))
    for col in _PRICE_COLUMNS:
        per_acc = pd.to_numeric(base[col], errors="coerce") / base["accelerator_count"]
        floor = per_acc[per_acc > 0].min() / PRICE_MARGIN
        for _, row in _user(merged).iterrows():
            value = pd.to_numeric(pd.Series([row.get(col)]), errors="coerce").iloc[0]
            if pd.notna(value) and value / max(float(row["accelerator_count"]), 1.0) < floor:
                raise CatalogError(f"{row['id']}: {col} {value:g} is {float(row['accelerator_count']):g} "
                                   f"accelerator(s) at under {floor:.3g} each, {PRICE_MARGIN:g}x below the cheapest "
                                   "known price", where=_where(row),
                                   fix="check the price and its unit (USD per hour, per month, or purchase)")
    for _, row in _user(merged).iterrows():
        host = count_by_host.get(row["host_id"])
        if host is not None and int(host) != int(row["accelerator_count"]):
            raise CatalogError(f"{row['id']}: accelerator_count {int(row['accelerator_count'])} but host "
                               f"{row['host_id']} holds {int(host)}", where=_where(row),
                               fix="give the host's accelerator count, or a host of that size")


def check_overlay(base: dict[str, pd.DataFrame], merged: dict[str, pd.DataFrame]) -> None:
    """All overlay rules, over the built-in tables and the merged ones (overlay rows carry user_row)."""
    check_aliases(base["aliases"], merged["aliases"])
    check_accelerators(base["accelerators"], merged["accelerators"])
    check_offers(base["offers"], merged["offers"], merged["hosts"])
