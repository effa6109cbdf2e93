"""Filtering and lookup behind ``infrafit catalog ...``: pure functions from a ``Catalog`` to rows (dicts).

Rows are JSON-ready (SI units, unit-named keys); the command layer formats them for a terminal.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pandas as pd

from infrafit.catalog.model import Catalog, normalize_name
from infrafit.errors import InputError, suggest
from infrafit.units import HOURS_PER_MONTH
from infrafit.workload.place_aliases import canonical_place

CLOUD_MODES = ("cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "cloud_capacity_block")


def _has(text: object, needle: str | None) -> bool:
    return needle is None or needle.lower() in str(text).lower()


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.drop(columns=["origin_file", "origin_line"], errors="ignore").to_dict(orient="records")


def accelerator_rows(
    cat: Catalog, *, vendor: str | None = None, family: str | None = None, kind: str | None = None,
    min_memory_bytes: float | None = None,
) -> list[dict[str, Any]]:
    """Accelerators matching every given filter (vendor/family: case-insensitive substring)."""
    out = []
    for acc in cat.accelerators.values():
        if not (_has(acc.vendor, vendor) and _has(acc.family, family) and (kind is None or acc.kind == kind)):
            continue
        if min_memory_bytes is not None and acc.memory_bytes < min_memory_bytes:
            continue
        out.append(acc.to_dict())
    return out


def age_days(retrieved_on: str, today: dt.date | None = None) -> int:
    """Whole days between ``retrieved_on`` (ISO date) and today."""
    return ((today or dt.date.today()) - dt.date.fromisoformat(retrieved_on)).days


def usd_per_accelerator_hour(row: dict[str, Any]) -> float:
    """Comparable hourly price per accelerator: cloud price / count; dedicated monthly / 730 h / count.

    ``nan`` for purchases (their hourly cost depends on amortisation, which is the cost model's job).
    """
    count = float(row["accelerator_count"])
    if row["mode"] in CLOUD_MODES:
        return float(row["usd_per_hour"]) / count
    if row["mode"] == "dedicated_monthly":
        return float(row["usd_per_month"]) / HOURS_PER_MONTH / count
    return math.nan


def offer_rows(
    cat: Catalog, *, provider: str | None = None, region: str | None = None, country: str | None = None,
    mode: str | None = None, accelerator: str | None = None, family: str | None = None,
    max_usd_per_hour: float | None = None, stale_days: int | None = None, today: dt.date | None = None,
) -> list[dict[str, Any]]:
    """Offers matching every filter. ``region`` matches the region slug or the city; ``max_usd_per_hour``
    compares the per-accelerator hourly price; ``stale_days`` keeps only prices older than N days."""
    acc_id = cat.resolve_accelerator_id(accelerator) if accelerator else None
    # a city's other name finds it too (``bombay``: Mumbai's offers; workload.place_aliases)
    where = normalize_name(canonical_place(normalize_name(region))) if region is not None else ""
    out = []
    for row in _records(cat.offers):
        if not (_has(row["provider"], provider) and (mode is None or row["mode"] == mode)):
            continue
        if region is not None and not {normalize_name(region), where} & {normalize_name(row["region"]),
                                                                        normalize_name(row["city"])}:
            continue
        if country is not None and row["country"].upper() != country.upper():
            continue
        if acc_id is not None and row["accelerator_id"] != acc_id:
            continue
        if family is not None and not _has(cat.accelerators[row["accelerator_id"]].family, family):
            continue
        row["usd_per_accelerator_hour"] = usd_per_accelerator_hour(row)
        if max_usd_per_hour is not None and not row["usd_per_accelerator_hour"] <= max_usd_per_hour:
            continue
        row["age_days"] = age_days(row["retrieved_on"], today)
        if stale_days is not None and row["age_days"] <= stale_days:
            continue
        out.append(row)
    return out


def host_rows(cat: Catalog, *, provider: str | None = None, accelerator: str | None = None,
              family: str | None = None) -> list[dict[str, Any]]:
    """Hosts matching every filter."""
    acc_id = cat.resolve_accelerator_id(accelerator) if accelerator else None
    return [
        r for r in _records(cat.hosts)
        if _has(r["provider"], provider) and (acc_id is None or r["accelerator_id"] == acc_id)
        and (family is None or _has(cat.accelerators[r["accelerator_id"]].family, family))
    ]


def framework_rows(cat: Catalog, *, framework: str | None = None, family: str | None = None) -> list[dict[str, Any]]:
    """Framework support rows matching the filters."""
    return [r for r in _records(cat.frameworks)
            if (framework is None or r["framework"] == framework.lower()) and _has(r["family"], family)]


def provider_rows(cat: Catalog, *, require: str | None = None) -> list[dict[str, Any]]:
    """Every provider that sells in the catalog, with its providers.csv row (empty qualities = not known);
    ``require`` keeps those known to meet one quality (``yes``)."""
    from infrafit.catalog.tables import PROVIDER_QUALITIES, PROVIDERS

    table = cat.table("providers")
    known = {str(r["provider"]): r for r in _records(table)} if not table.empty else {}
    selling = cat.offers.groupby("provider").size().to_dict() if not cat.offers.empty else {}
    blank = {c: "" for c in PROVIDERS.names if c != "provider"}
    rows = []
    for name in sorted(set(selling) | set(known), key=str.lower):
        row = {**blank, **known.get(name, {"notes": "not in providers.csv: nothing known"}), "provider": name}
        row["offer_count"] = int(selling.get(name, 0))
        row["known_to_meet"] = [q for q in PROVIDER_QUALITIES if row.get(q) == "yes"]
        rows.append(row)
    if require is not None:
        if require not in PROVIDER_QUALITIES:
            raise InputError(f"unknown quality {require!r}{suggest(require, sorted(PROVIDER_QUALITIES))}",
                             fix=f"use one of {', '.join(PROVIDER_QUALITIES)}")
        rows = [r for r in rows if r.get(require) == "yes"]
    return rows


def stack_rows(cat: Catalog, *, family: str | None = None) -> list[dict[str, Any]]:
    """Software stacks, optionally only those supporting a family."""
    return [r for r in _records(cat.stacks) if _has(r["families"], family)]


def show(cat: Catalog, name: str) -> dict[str, Any]:
    """One entry by id or alias, from any table: ``{"table": ..., "row": {...}}``."""
    try:
        acc = cat.accelerator(name)
    except InputError:
        acc = None
    if acc is not None:
        return {"table": "accelerators", "row": acc.to_dict()}
    for table in ("hosts", "offers", "stacks", "frameworks"):
        frame = cat.table(table)
        match = frame[frame["id"].str.lower() == name.lower()]
        if not match.empty:
            return {"table": table, "row": _records(match)[0]}
    ids = [*cat.accelerators, *cat.aliases, *(i for t in ("hosts", "offers", "stacks") for i in cat.table(t)["id"])]
    raise InputError(f"nothing in the catalog is called {name!r}",
                     fix=f"use an id from `infrafit catalog accelerators|hosts|offers|stacks`{suggest(name, ids)}")
