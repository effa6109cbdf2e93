"""Cost factors read from the catalog's cost tables (``Catalog.cost_factors``) for one offer.

Each lookup returns the value(s) and a note: ``""`` when the catalog has the figure for that
provider or place, otherwise one line saying which stand-in was used and why, so that results can
show it. The tables (``catalog/data/cost_*.csv``, units in the column names):

- ``egress``: USD/GB tiers per provider, ``tier_start_bytes``/``tier_end_bytes`` (empty end = no
  limit), ``free_bytes_per_month`` (a $0 allowance at the start of the first tier);
- ``storage``: USD/GB-month per provider and ``storage_class`` (object, block, local_nvme);
- ``electricity``: USD/kWh per region/country and sector, with a ``default`` row;
- ``pue``: facility PUE by kind; ``colocation``: USD/kW-month per region/country;
- ``maintenance``: yearly share of the purchase price.

Stand-ins for data the catalog genuinely lacks are the ``GENERIC_*`` constants below, each sourced.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from infrafit.errors import InputError, suggest
from infrafit.units import GB, HOURS_PER_DAY, HOURS_PER_MONTH, SECONDS_PER_HOUR, SECONDS_PER_MINUTE

#: Egress for a provider with no row in cost_egress.csv: AWS EC2 internet egress, first 10 TB/month
#: ($0.09/GB, the catalog's aws_0 row), the hyperscaler list price; conservative for GPU clouds that
#: include traffic. Overlay the provider's real tiers to replace it.
GENERIC_EGRESS_USD_PER_GB = (0.09, "AWS EC2 internet egress first 10 TB tier (cost_egress.csv aws_0)")
#: Object storage for a cloud provider with no row in cost_storage.csv: AWS S3 Standard, first 50 TB.
GENERIC_OBJECT_STORAGE_USD_PER_GB_MONTH = (0.023, "AWS S3 Standard first 50 TB (cost_storage.csv aws_s3_standard)")
#: Modes that keep data on the server's own NVMe (included in rent or purchase, the catalog's rule).
LOCAL_STORAGE_MODES = ("dedicated_monthly", "on_prem")


def norm_name(value: object) -> str:
    """Case- and space-insensitive form of a provider or place name (empty for a missing value)."""
    return _norm(value)


def _norm(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) or pd.isna(value) \
        else str(value).strip().lower()


_EMPTY = pd.DataFrame()


def _table(factors: dict, name: str) -> pd.DataFrame:
    found = factors.get(name)
    return _EMPTY if found is None else found


def egress_tiers(factors: dict, provider: str) -> tuple[list[float], list[float], str]:
    """(cumulative upper bounds in GB, the last ``inf``; USD/GB per tier; note) for ``provider``.

    The free allowance becomes a $0 first tier; the last collected tier applies beyond its bound
    (the catalog notes say so for GCP; for AWS, beyond 150 TB/month is billed lower, so this
    over-prices very large volumes slightly)."""
    table = _table(factors, "egress")
    rows = table[table["provider"].map(_norm) == _norm(provider)] if not table.empty else table
    if rows.empty:
        generic, source = GENERIC_EGRESS_USD_PER_GB
        return [np.inf], [generic], f"no egress tiers for provider {provider!r}: generic ${generic}/GB ({source})"
    rows = rows.sort_values("tier_start_bytes")
    free_gb = float(np.nansum(rows["free_bytes_per_month"].to_numpy(dtype=float))) / GB
    upto: list[float] = []
    price: list[float] = []
    if free_gb > 0:
        upto.append(free_gb)
        price.append(0.0)
    for end, usd in zip(rows["tier_end_bytes"].to_numpy(dtype=float), rows["usd_per_gb"].to_numpy(dtype=float),
                        strict=True):
        end_gb = end / GB if np.isfinite(end) else np.inf
        if end_gb > (upto[-1] if upto else 0.0):
            upto.append(end_gb)
            price.append(usd)
    upto[-1] = np.inf
    return upto, price, ""


def storage_prices(factors: dict, provider: str, mode: str) -> tuple[dict[str, float], str]:
    """USD/GB-month for the cost core's tiers (``hot``, ``archive``) and a note.

    Cloud modes keep datasets, checkpoints and artifacts on the provider's object storage; the
    catalog has no archive class, so archive is priced at the object rate (an upper bound,
    docs/cost.md). Dedicated and on-prem keep data on the server's local NVMe, included in the price."""
    table = _table(factors, "storage")
    if mode in LOCAL_STORAGE_MODES:
        local = table[table["storage_class"] == "local_nvme"] if not table.empty else table
        usd = float(local["usd_per_gb_month"].iloc[0]) if not local.empty else 0.0
        return {"hot": usd, "archive": usd}, ""
    rows = table[(table["provider"].map(_norm) == _norm(provider)) & (table["storage_class"] == "object")] \
        if not table.empty else table
    if rows.empty:
        usd, source = GENERIC_OBJECT_STORAGE_USD_PER_GB_MONTH
        return {"hot": usd, "archive": usd}, f"no object-storage price for provider {provider!r}: {source}"
    usd = float(rows["usd_per_gb_month"].min())
    return {"hot": usd, "archive": usd}, ""


def _place_rows(table: pd.DataFrame, region: str, country: str) -> tuple[pd.DataFrame, str]:
    """Rows for the region, else the country's own row (region = the country code), else none."""
    if table.empty:
        return table, "none"
    reg = table["region"].map(_norm)
    rows = table[reg == _norm(region)] if _norm(region) else table.iloc[0:0]
    if not rows.empty:
        return rows, "region"
    if _norm(country):
        country_rows = table[(table["country"].map(_norm) == _norm(country)) & (reg == _norm(country))]
        if not country_rows.empty:
            return country_rows, "country"
    return table.iloc[0:0], "none"


def electricity_usd_per_kwh(factors: dict, region: str, country: str,
                            sector: str = "commercial") -> tuple[float, str]:
    """USD/kWh at the site: the region's row, else the country average, else the ``default`` row.

    ``sector`` picks the tariff (EIA counts most data centres under ``commercial``); when the
    place has no row of that sector, any sector of that place is used."""
    table = _table(factors, "electricity")
    rows, level = _place_rows(table, region, country)
    if level == "none":
        rows = table[table["region"].map(_norm) == "default"] if not table.empty else table
        if rows.empty:
            raise InputError(f"no electricity price for {region or country or 'the site'!r} and no default row",
                             fix="add a row for the site (or a 'default' row) to cost_electricity.csv")
        value = float(rows["usd_per_kwh"].iloc[0])
        where = "/".join(x for x in (region, country) if x) or "an unspecified site"
        return value, f"no electricity price for {where}: catalog default ${value}/kWh ({rows['notes'].iloc[0]})"
    same = rows[rows["sector"].map(_norm) == _norm(sector)]
    pick = same if not same.empty else rows
    return float(pick["usd_per_kwh"].iloc[0]), "" if level == "region" else f"{country} country average"


def pue_ratio(factors: dict, facility: str = "industry_average") -> float:
    """PUE of the facility kind (id in cost_pue.csv); the default is the industry average, the
    fair assumption for a colocation cage."""
    table = _table(factors, "pue")
    rows = table[table["id"] == facility] if not table.empty else table
    if rows.empty:
        known = [] if table.empty else list(table["id"])
        raise InputError(f"unknown facility {facility!r} in cost_pue.csv{suggest(facility, known)}",
                         fix=f"use one of {', '.join(known) or 'the ids you add to cost_pue.csv'}")
    return float(rows["pue_ratio"].iloc[0])


def colocation_usd_per_kw_month(factors: dict, region: str, country: str) -> tuple[float, str]:
    """USD per provisioned kW-month: the region's or country's row, else the median of every row
    (flagged: the catalog has a rate for that place only when someone collected it)."""
    table = _table(factors, "colocation")
    rows, level = _place_rows(table, region, country)
    if level == "none" and not table.empty and _norm(country):
        rows = table[table["country"].map(_norm) == _norm(country)]
        level = "country" if not rows.empty else "none"
    if level != "none":
        return float(rows["usd_per_kw_month"].iloc[0]), ""
    if table.empty:
        return 0.0, "no colocation table in the catalog: facility cost not charged"
    value = float(table["usd_per_kw_month"].median())
    where = "/".join(x for x in (region, country) if x) or "an unspecified site"
    return value, f"no colocation rate for {where}: ${value:g}/kW-month from {', '.join(table['id'])}"


def maintenance_share(factors: dict, item: str | None = None) -> float:
    """Yearly maintenance share of the purchase: the row ``item``, or by default the largest share
    in the table (a conservative reading: the vendor support contract, not self-maintenance)."""
    table = _table(factors, "maintenance")
    if table.empty:
        raise InputError("the catalog has no maintenance table", fix="add cost_maintenance.csv to the catalog")
    if item is None:
        return float(table["annual_fraction"].max())
    rows = table[table["id"] == item]
    if rows.empty:
        raise InputError(f"unknown maintenance item {item!r}{suggest(item, list(table['id']))}",
                         fix=f"use one of {', '.join(table['id'])}")
    return float(rows["annual_fraction"].iloc[0])


#: Billing of elastic capacity for a provider with no row in cost_billing.csv (nor an ``any`` row):
#: whole hours, the conservative assumption (the catalog's default_elastic row says the same).
GENERIC_BILLING = ((SECONDS_PER_HOUR, SECONDS_PER_HOUR, 5 * SECONDS_PER_MINUTE),
                   "whole-hour billing and a 5-min boot (assumption: no published rule)")


#: Lookup indexes built once per loaded table, kept with the table (so an id is never read for another one):
#: a plan asks for every provider, host and mode of its offers.
_INDEXES: dict[tuple[int, str], tuple[pd.DataFrame, dict[tuple[str, ...], Any]]] = {}


def _first_by(table: pd.DataFrame, name: str,
              columns: Callable[[pd.DataFrame], tuple[list[pd.Series], pd.Series]]) -> dict[tuple[str, ...], Any]:
    """``{key tuple: value of its first row}`` of ``table``, ``columns(table)`` giving the key columns and
    the value column; built once per table and ``name``."""
    held = _INDEXES.get((id(table), name))
    if held is not None and held[0] is table:
        return held[1]
    keys, value = columns(table)
    index: dict[tuple[str, ...], Any] = {}
    for key, v in zip(zip(*keys, strict=True), value, strict=True):
        index.setdefault(key, v)
    _INDEXES[(id(table), name)] = (table, index)
    return index


def _billing_columns(t: pd.DataFrame) -> tuple[list[pd.Series], pd.Series]:
    return [t["provider"].map(_norm), t["mode"].map(_norm)], pd.Series(range(len(t)))


def _spot_columns(t: pd.DataFrame) -> tuple[list[pd.Series], pd.Series]:
    keys = [t["provider"].map(_norm), t["host_id"].astype(str), t["region"].astype(str)]
    return keys, t["frequency_band"].astype(str)


def _billing_row(factors: dict, provider: str, mode: str) -> tuple[pd.Series | None, str]:
    """The cost_billing.csv row for ``provider`` in ``mode`` and the stand-in note (None: no row).
    The most specific row wins: (provider, mode), (provider, any), (any, mode), (any, any)."""
    table = _table(factors, "billing")
    if table.empty:
        return None, f"no billing rule for {provider!r}: {GENERIC_BILLING[1]}"
    index = _first_by(table, "billing", _billing_columns)
    for p_key, m_key in ((_norm(provider), _norm(mode)), (_norm(provider), "any"), ("any", _norm(mode)),
                         ("any", "any")):
        pos = index.get((p_key, m_key))
        if pos is not None:
            row = table.iloc[int(pos)]
            return row, "" if p_key != "any" else f"no billing rule for {provider!r}: {row['id']} ({row['notes']})"
    return None, f"no billing rule for {provider!r}: {GENERIC_BILLING[1]}"


def billing_rule(factors: dict, provider: str, mode: str) -> tuple[tuple[float, float, float], str]:
    """((increment_s, minimum_s, boot_s), note) of elastic capacity from ``provider`` in ``mode``
    (``_billing_row``); the note names the stand-in when the provider has no row of its own."""
    row, note = _billing_row(factors, provider, mode)
    if row is None:
        return GENERIC_BILLING[0], note
    return (float(row["increment_s"]), float(row["minimum_s"]), float(row["boot_s"])), note


#: cost_billing.csv's optional columns of prepaid blocks -> (OfferArrays field, value when empty), in hours.
BLOCK_COLUMNS = {"long_after_s": ("billing_long_after_h", 0.0), "long_increment_s": ("billing_long_increment_h", 0.0),
                 "maximum_s": ("billing_maximum_h", float("inf")), "end_margin_s": ("billing_end_margin_h", 0.0)}


def purchase_limits(factors: dict, provider: str, mode: str) -> dict[str, float]:
    """A prepaid block's length rule and size limit (``BLOCK_COLUMNS`` in hours, ``max_instances``) for
    ``provider`` in ``mode``; empty columns give no limit."""
    row, _ = _billing_row(factors, provider, mode)
    out = {field: empty for field, empty in BLOCK_COLUMNS.values()}
    out["max_instances"] = float("inf")
    if row is None:
        return out
    for col, (field, _empty) in BLOCK_COLUMNS.items():
        v = float(row[col]) if col in row and row[col] == row[col] and row[col] is not None else None
        if v is not None:
            out[field] = v / SECONDS_PER_HOUR
    n = row.get("max_instances_count")
    if n is not None and n == n:
        out["max_instances"] = float(n)
    return out


#: Upper edge of each published band and the hours it is counted over: the Spot Instance Advisor bands are
#: the fraction of capacity reclaimed in the trailing month (">20%" has no upper edge, so it gives no rate and
#: the default applies); GCP publishes a daily preemption rate ("5-15%/day": "the average preemption rate
#: varies between 5% and 15% per day per project, on a seven-day average").
SPOT_BAND_UPPER_FRACTION = {"<5%": (0.05, HOURS_PER_MONTH), "5-10%": (0.10, HOURS_PER_MONTH),
                            "10-15%": (0.15, HOURS_PER_MONTH), "15-20%": (0.20, HOURS_PER_MONTH),
                            "5-15%/day": (0.15, HOURS_PER_DAY)}


def spot_hazard(factors: dict, provider: str, host_id: str, region: str) -> tuple[float, str]:
    """(interruptions per instance-hour, the band it comes from) published for ``host_id`` of ``provider``
    in ``region`` (cost_spot.csv; host ``any`` and region ``any`` match every host and region, a row for the
    host itself and then for the region itself wins); NaN and "" when none or ">20%".

    A band is the share of instances interrupted over its period (a month for the Spot Instance Advisor,
    a day for GCP's rate). Read as the chance that an instance held the whole period is interrupted, its
    upper edge ``f`` gives a constant hazard ``-ln(1 - f) / period`` per hour (5% a month -> 7.0e-5/h, one
    interruption in ~600 days of one instance; 15% a day -> 6.8e-3/h). An instance typically held for less
    than the period meets the same share over fewer hours, so the true hazard may be higher: the band's
    upper edge is used, never its midpoint."""
    table = _table(factors, "spot")
    if table.empty:
        return float("nan"), ""
    bands = _first_by(table, "spot", _spot_columns)
    prov = _norm(provider)
    band = next((str(bands[k]) for k in ((prov, host_id, region), (prov, host_id, "any"), (prov, "any", region),
                                    (prov, "any", "any")) if k in bands), None)
    if band is None:
        return float("nan"), ""
    edge = SPOT_BAND_UPPER_FRACTION.get(band)
    if edge is None:
        return float("nan"), band
    upper, hours = edge
    return -math.log(1.0 - upper) / hours, band
