"""Price refresh: public price lists converted into catalog rows (offers and hosts) in infrafit's columns.

Stages, each pure: a reader turns one source format into ``Listing`` records (``read_skypilot`` for a folder
of SkyPilot catalog ``<cloud>/vms.csv`` files, ``read_azure_retail`` for saved pages of the Azure Retail
Prices API, ``read_ec2instances`` for the ``instances.json`` of ec2instances.info / instances.vantage.sh:
every AWS region, with 1- and 3-year reserved rates); ``convert`` resolves each listing against the catalog
(accelerator through the alias table, host by instance name, region through ``cloud_regions.csv``) and returns
offer and host rows plus the listings it skipped and why; ``write_overlay`` saves them as an overlay folder
that ``plan --catalog-dir`` reads. A listing whose (provider, host, region, mode) matches a built-in offer
reuses that offer's id, so the overlay *replaces* the old price instead of adding a second one.
"""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from infrafit.catalog.loader import read_table
from infrafit.catalog.model import Catalog
from infrafit.catalog.schema import Schema, provenance, text
from infrafit.catalog.tables import HOSTS, NVME_DRIVE_READ_BYTES_PER_S, NVME_RULE, OFFERS, SPOT_BANDS, TABLES
from infrafit.errors import InfrafitError, InputError
from infrafit.units import GB, GBIT, HOURS_PER_YEAR, GiB
from infrafit.workload.names import provider_key

REGIONS = Schema(
    "cloud_regions",
    (
        text("provider", "provider as in offers.csv"),
        text("skypilot_cloud", "the provider's folder name in the SkyPilot catalog", required=False),
        text("region", "the provider's region code"),
        text("city", "city of the region", required=False),
        text("country", "ISO 3166 alpha-2"),
        text("notes", "caveats", required=False),
        *provenance(),
    ),
    key=("provider", "region"),
    doc="Where each provider region is (city, country), for converting price lists that name only the code.",
)
REGIONS_PATH = Path(__file__).parent / "data" / "cloud_regions.csv"
CLOUD_INCLUDES = "whole instance: accelerators, host CPU, RAM, local NVMe"
#: Azure Retail Prices: a reservation item's retailPrice is the price of the whole term.
AZURE_TERM_YEARS = {"1 Year": 1, "3 Years": 3}
AZURE_TERM_MODE = {"1 Year": "cloud_reserved_1y", "3 Years": "cloud_reserved_3y"}
#: ec2instances.info ``network_performance``: "25 Gigabit", "Up to 10 Gigabit", "3200 Gigabit".
_GIGABIT = re.compile(r"(\d+(?:\.\d+)?)\s*Gigabit", re.IGNORECASE)
#: ec2instances.info reserved keys read: Standard, no upfront (an hourly rate for the whole term).
EC2_RESERVED_MODE = {"yrTerm1Standard.noUpfront": "cloud_reserved_1y", "yrTerm3Standard.noUpfront": "cloud_reserved_3y"}


@dataclass(frozen=True)
class Listing:
    """One priced thing as a source lists it, before it is matched to the catalog."""

    provider: str
    instance: str
    accelerator: str  # a name the alias table resolves ("H100", "MI300X"); empty: take the host's
    accelerator_count: int
    region: str
    mode: str
    source: str
    retrieved_on: str
    usd_per_hour: float = math.nan
    usd_per_month: float = math.nan
    contract_months: int | None = None
    purchase_usd: float = math.nan
    vcpu_count: float = math.nan
    ram_bytes: float = math.nan
    confidence: str = "high"
    derived: bool = False
    availability: str = "verified"
    notes: str = ""
    host_kind: str = "cloud_instance"
    includes: str = CLOUD_INCLUDES
    spot_band: str = ""  # a spot listing's published interruption band (SPOT_BANDS), when the source has one
    nvme_bytes: float = math.nan  # local NVMe, when the source lists it (ec2instances: devices x size)
    nvme_drive_count: int = 0
    network_bits_per_s: float = math.nan  # the instance's network, when the source lists it


@dataclass
class Conversion:
    """Rows ready for an overlay, and what was left out (listing, reason)."""

    offers: list[dict[str, Any]] = field(default_factory=list)
    hosts: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[Listing, str]] = field(default_factory=list)
    spot_bands: list[dict[str, Any]] = field(default_factory=list)  # cost_spot.csv rows

    def summary(self) -> str:
        reasons: dict[str, int] = {}
        for _, why in self.skipped:
            reasons[why] = reasons.get(why, 0) + 1
        lines = [f"{len(self.offers)} offers, {len(self.hosts)} new hosts, {len(self.skipped)} listings skipped"
                 + (f", {len(self.spot_bands)} spot interruption bands" if self.spot_bands else "")]
        lines += [f"  skipped {n}: {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])]
        return "\n".join(lines)


def slug_id(*parts: object) -> str:
    """An id fragment: lower case, runs of other characters as one ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", "_".join(str(p) for p in parts).lower()).strip("_")


@lru_cache(maxsize=4)
def regions_table(path: str | None = None) -> dict[tuple[str, str], tuple[str, str]]:
    """(provider key, region) -> (city, country), from the validated ``cloud_regions.csv``."""
    frame = read_table(Path(path) if path else REGIONS_PATH, REGIONS)
    return {(provider_key(p), r): (c, cc) for p, r, c, cc in
            zip(frame["provider"], frame["region"], frame["city"], frame["country"], strict=True)}


@lru_cache(maxsize=4)
def skypilot_providers(path: str | None = None) -> dict[str, str]:
    """SkyPilot cloud folder name -> provider name."""
    frame = read_table(Path(path) if path else REGIONS_PATH, REGIONS)
    return {c: p for c, p in zip(frame["skypilot_cloud"], frame["provider"], strict=True) if c}


# --- readers --------------------------------------------------------------------------------------

SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region")


def _number(text_: str | None) -> float:
    try:
        value = float(text_ or "nan")
    except ValueError:
        return math.nan
    return value if math.isfinite(value) and value > 0 else math.nan


def read_skypilot(folder: Path, *, retrieved_on: str, source: str | None = None) -> list[Listing]:
    """Listings from ``folder/<cloud>/vms.csv`` (SkyPilot catalog v7/v8 columns): one on-demand and one
    spot listing per instance type and region (on-demand: the lowest zone price; spot: the median)."""
    files = sorted(folder.glob("*/vms.csv"))
    if not files:
        raise InputError(f"{folder} has no <cloud>/vms.csv files",
                         fix="point --from at a copy of skypilot-catalog/catalogs/v8 (or v7), or use --fetch")
    out: list[Listing] = []
    for path in files:
        with path.open(newline="", encoding="utf-8") as fh:
            out += read_skypilot_file(fh, path.parent.name, retrieved_on, source or f"SkyPilot catalog {path}",
                                      label=str(path))
    return out


def read_skypilot_file(fh: IO[str], cloud: str, retrieved_on: str, source: str, label: str = "vms.csv"
                       ) -> list[Listing]:
    """Listings from one SkyPilot ``vms.csv`` (an open text stream) of ``cloud``."""
    provider = skypilot_providers().get(cloud, cloud)
    reader = csv.DictReader(fh)
    missing = [c for c in SKYPILOT_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{label}:1: missing SkyPilot column(s) {', '.join(missing)}",
                         fix="use a vms.csv from skypilot-catalog catalogs/v7 or v8")
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for row in reader:
        groups.setdefault((row["InstanceType"], row["Region"]), []).append(row)
    out: list[Listing] = []
    for (instance, region), rows in groups.items():
        out += _skypilot_group(instance, region, rows, provider, retrieved_on, source)
    return out


def _skypilot_group(instance: str, region: str, rows: list[dict[str, str]], provider: str, retrieved_on: str,
                    source: str) -> list[Listing]:
    first = rows[0]
    count = _number(first.get("AcceleratorCount"))
    base = Listing(provider=provider, instance=instance, accelerator=first.get("AcceleratorName") or "",
                   accelerator_count=int(count) if count == count else 0, region=region, mode="cloud_on_demand",
                   source=source, retrieved_on=retrieved_on, vcpu_count=_number(first.get("vCPUs")),
                   ram_bytes=_number(first.get("MemoryGiB")) * GiB)
    on_demand = [p for p in (_number(r.get("Price")) for r in rows) if p == p]
    spot = [p for p in (_number(r.get("SpotPrice")) for r in rows) if p == p]
    out = []
    if on_demand:
        out.append(replace(base, usd_per_hour=min(on_demand)))
    if spot:
        note = f"spot: median of {len(spot)} zone price(s), {min(spot):g}-{max(spot):g} USD/h"
        out.append(replace(base, mode="cloud_spot", usd_per_hour=statistics.median(spot), notes=note,
                           derived=len(spot) > 1))
    return out


def _json_files(path: Path, *, what: str, save: str) -> Iterator[tuple[Path, Any]]:
    """``(file, parsed JSON)`` for ``path`` (a JSON file, or a folder's ``*.json`` files in name order); a
    missing or unreadable file is an exit-2 error naming it."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise InputError(f"{path} has no .json files", fix=f"save {save} there")
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{file}: not {what} ({exc})",
                             fix=f"save {save} as it is downloaded") from None
        yield file, data


def read_azure_retail(path: Path, *, retrieved_on: str, source: str | None = None) -> list[Listing]:
    """Listings from saved Azure Retail Prices API pages (a JSON file, or a folder of them): Linux VM
    meters only; Consumption -> on-demand (``Spot`` meters -> spot), Reservation -> reserved per term."""
    out: list[Listing] = []
    for file, page in _json_files(path, what="an Azure Retail Prices page",
                                  save="pages of prices.azure.com/api/retail/prices"):
        items = page.get("Items") if isinstance(page, dict) else None
        if not isinstance(items, list):
            raise InputError(f"{file}: no Items list", fix="save the API's JSON response as it is")
        out += [x for x in (_azure_item(i, retrieved_on, source or f"Azure Retail Prices API page {file.name}")
                            for i in items if isinstance(i, dict)) if x is not None]
    return out


def _azure_item(item: dict[str, Any], retrieved_on: str, source: str) -> Listing | None:
    names = f"{item.get('productName', '')} {item.get('skuName', '')} {item.get('meterName', '')}"
    if item.get("serviceName") != "Virtual Machines" or "Windows" in names or "Low Priority" in names:
        return None
    price = _number(str(item.get("retailPrice", "")))
    if price != price or item.get("currencyCode", "USD") != "USD":
        return None
    kind, term = item.get("type"), item.get("reservationTerm") or ""
    if kind == "Consumption":
        mode, hourly, note = ("cloud_spot" if "Spot" in names else "cloud_on_demand"), price, ""
    elif kind == "Reservation" and term in AZURE_TERM_YEARS:
        years = AZURE_TERM_YEARS[term]
        mode, hourly = AZURE_TERM_MODE[term], price / (years * HOURS_PER_YEAR)
        note = f"derived: reservation price {price:g} USD for {term} / {years * HOURS_PER_YEAR:g} h"
    else:
        return None
    return Listing(provider="Azure", instance=str(item.get("armSkuName", "")), accelerator="", accelerator_count=0,
                   region=str(item.get("armRegionName", "")), mode=mode, usd_per_hour=hourly, source=source,
                   retrieved_on=retrieved_on, derived=bool(note), notes=note)


def read_ec2instances(path: Path, *, retrieved_on: str, source: str | None = None) -> list[Listing]:
    """Listings from an ec2instances.info ``instances.json`` (a JSON list of instance types; a folder: its
    ``*.json`` files): per region, the Linux on-demand rate, the 1- and 3-year Standard no-upfront reserved
    rates, and the average spot rate (derived: an average over the file's sampling, not a price AWS
    quotes)."""
    out: list[Listing] = []
    for file, items in _json_files(path, what="an instances.json", save="instances.vantage.sh/instances.json"):
        if not isinstance(items, list):
            raise InputError(f"{file}: not a list of instance types", fix="save instances.json as it is")
        label = source or f"ec2instances.info instances.json ({file.name})"
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not item.get("instance_type"):
                raise InputError(f"{file}: entry {i} has no instance_type", fix="save instances.json as it is")
            out += _ec2_item(item, retrieved_on, label)
    return out


def _ec2_host_facts(item: dict[str, Any]) -> dict[str, Any]:
    """Local NVMe (``storage``: ``devices`` x ``size`` GB, NVMe drives only) and network (the
    ``network_performance`` figure; "Up to N" gives N) of an instances.json entry, where it lists them."""
    facts: dict[str, Any] = {}
    storage = item.get("storage")
    if isinstance(storage, dict) and storage.get("nvme_ssd"):
        devices, size = _number(str(storage.get("devices") or "")), _number(str(storage.get("size") or ""))
        if devices == devices and size == size:
            facts |= {"nvme_bytes": devices * size * GB, "nvme_drive_count": int(devices)}
    found = _GIGABIT.search(str(item.get("network_performance") or ""))
    if found:
        facts["network_bits_per_s"] = float(found.group(1)) * GBIT
    return facts


def _ec2_item(item: dict[str, Any], retrieved_on: str, source: str) -> list[Listing]:
    gpus = _number(str(item.get("GPU") or ""))
    base = Listing(provider="AWS", instance=str(item["instance_type"]),
                   accelerator=str(item.get("GPU_model") or "") if gpus == gpus else "",
                   accelerator_count=int(gpus) if gpus == gpus else 0, region="", mode="cloud_on_demand",
                   source=source, retrieved_on=retrieved_on, vcpu_count=_number(str(item.get("vCPU") or "")),
                   ram_bytes=_number(str(item.get("memory") or "")) * GiB, **_ec2_host_facts(item))
    out = []
    pricing = item.get("pricing") or {}
    for region, by_os in pricing.items() if isinstance(pricing, dict) else ():
        linux = by_os.get("linux") if isinstance(by_os, dict) else None
        if not isinstance(linux, dict):
            continue
        at = replace(base, region=str(region))
        od = _number(str(linux.get("ondemand") or ""))
        if od == od:
            out.append(replace(at, usd_per_hour=od))
        listed = linux.get("reserved")
        reserved: dict[str, Any] = listed if isinstance(listed, dict) else {}
        for key, mode in EC2_RESERVED_MODE.items():
            rate = _number(str(reserved.get(key) or ""))
            if rate == rate:
                out.append(replace(at, mode=mode, usd_per_hour=rate,
                                   notes=f"{key}: Standard Reserved Instance, no upfront, effective hourly"))
        spot = _number(str(linux.get("spot_avg") or ""))
        if spot == spot:
            band = str(linux.get("pct_interrupt") or "")
            said = f"; interruption frequency {band}" if band else ""
            out.append(replace(at, mode="cloud_spot", usd_per_hour=spot, derived=True,
                               spot_band=band if band in SPOT_BANDS else "",
                               notes=f"spot: the file's average, {linux.get('spot_min', '?')}-"
                                     f"{linux.get('spot_max', '?')} USD/h{said}"))
    return out


# --- conversion -----------------------------------------------------------------------------------

def convert(listings: Iterable[Listing], catalog: Catalog) -> Conversion:
    """Offer and host rows for ``listings`` in the catalog's columns; unmatched listings are skipped with a
    reason. New hosts are made for listings that name their accelerator; others need a host row."""
    hosts = _host_index(catalog)
    offers = _offer_index(catalog)
    regions = regions_table()
    seen_regions = {(provider_key(str(p)), str(r)): (str(c or ""), str(cc or "")) for p, r, c, cc in
                    zip(catalog.offers["provider"], catalog.offers["region"], catalog.offers["city"],
                        catalog.offers["country"], strict=True) if r}
    out = Conversion()
    ids: set[str] = set()
    for listing in listings:
        try:
            host = _host_for(listing, catalog, hosts, out)
            city, country = _place(listing, regions, seen_regions)
        except _Skip as skip:
            out.skipped.append((listing, str(skip)))
            continue
        row = _offer_row(listing, host, city, country, offers)
        if row["id"] in ids:
            out.skipped.append((listing, "a second listing of the same instance, region and mode"))
            continue
        ids.add(row["id"])
        out.offers.append(row)
        if listing.spot_band:
            out.spot_bands.append(_spot_row(listing, row))
    return out


def _spot_row(listing: Listing, offer: dict[str, Any]) -> dict[str, Any]:
    """A cost_spot.csv row: the published interruption band of a spot listing, which the spot model turns
    into a per-instance hazard (``cost.factors.spot_hazard``)."""
    return {"id": slug_id(offer["host_id"], listing.region), "provider": listing.provider,
            "host_id": offer["host_id"], "region": listing.region, "frequency_band": listing.spot_band,
            "confidence": "medium", "notes": "Linux; the Spot Instance Advisor band as the price list carries it",
            "source": listing.source, "retrieved_on": listing.retrieved_on}


class _Skip(Exception):
    """A listing that cannot become an offer (the message says why)."""


def _host_index(catalog: Catalog) -> dict[tuple[str, str], dict[str, Any]]:
    return {(provider_key(str(r["provider"])), str(r["name"]).lower()): r
            for r in catalog.hosts.to_dict(orient="records")}


def _offer_index(catalog: Catalog) -> dict[tuple[str, str, str, str], str]:
    frame = catalog.offers
    return {(provider_key(str(p)), str(h), str(r), str(m)): str(i) for i, p, h, r, m in
            zip(frame["id"], frame["provider"], frame["host_id"], frame["region"], frame["mode"], strict=True)}


def _host_for(listing: Listing, catalog: Catalog, hosts: dict, out: Conversion) -> dict[str, Any]:
    key = (provider_key(listing.provider), listing.instance.lower())
    if key in hosts:
        return hosts[key]
    if not listing.accelerator:
        raise _Skip(f"no host row for {listing.provider} {listing.instance}: add it to hosts.csv (an overlay)")
    try:
        accelerator = catalog.resolve_accelerator_id(listing.accelerator)
    except InfrafitError:
        raise _Skip(f"unknown accelerator {listing.accelerator!r}: add an alias row (aliases.csv)") from None
    if listing.accelerator_count < 1:
        raise _Skip("no accelerator count")
    row = _host_row(listing, accelerator)
    hosts[key] = row
    out.hosts.append(row)
    return row


def _host_row(listing: Listing, accelerator: str) -> dict[str, Any]:
    drives = listing.nvme_drive_count
    stated = [w for w, v in (("NVMe", listing.nvme_bytes), ("network", listing.network_bits_per_s)) if v == v]
    missing = [w for w in ("NVMe", "network") if w not in stated]
    notes = "from a price list: vCPUs and RAM" + "".join(f", {w}" for w in stated) + " as listed"
    notes += f"; {' and '.join(missing)} not stated" if missing else ""
    notes += f"; nvme_read_bytes_per_s = drives x {NVME_RULE} B/s (rule)" if drives else ""
    return {"id": slug_id(listing.provider, listing.instance), "name": listing.instance,
            "provider": listing.provider, "host_kind": listing.host_kind, "accelerator_id": accelerator,
            "accelerator_count": listing.accelerator_count, "vcpu_count": _cell(listing.vcpu_count),
            "ram_bytes": _cell(listing.ram_bytes), "nvme_bytes": _cell(listing.nvme_bytes),
            "nvme_drive_count": drives or "",
            "nvme_read_bytes_per_s": _cell(drives * NVME_DRIVE_READ_BYTES_PER_S) if drives else "",
            "network_bits_per_s": _cell(listing.network_bits_per_s), "fabric_spans_instances": "", "power_w": "",
            "confidence": listing.confidence, "derived": str(bool(drives)).lower(), "notes": notes,
            "source": listing.source, "retrieved_on": listing.retrieved_on}


def _place(listing: Listing, regions: dict, seen: dict) -> tuple[str, str]:
    key = (provider_key(listing.provider), listing.region)
    found = regions.get(key) or seen.get(key)
    if not found or not found[1]:
        raise _Skip(f"region {listing.region!r} of {listing.provider} has no country: add a row to "
                    f"cloud_regions.csv")
    return found


def _offer_row(listing: Listing, host: dict[str, Any], city: str, country: str, offers: dict) -> dict[str, Any]:
    same = offers.get((provider_key(listing.provider), str(host["id"]), listing.region, listing.mode))
    stamp = listing.retrieved_on.replace("-", "")
    return {"id": same or slug_id(host["id"], listing.region, listing.mode, stamp),
            "provider": listing.provider, "region": listing.region, "city": city, "country": country,
            "mode": listing.mode, "host_id": host["id"], "accelerator_id": host["accelerator_id"],
            "accelerator_count": int(host["accelerator_count"]), "usd_per_hour": _cell(listing.usd_per_hour),
            "usd_per_month": _cell(listing.usd_per_month), "contract_months": listing.contract_months or "",
            "purchase_usd": _cell(listing.purchase_usd), "includes": listing.includes,
            "host_included": "true", "confidence": listing.confidence,
            "derived": str(listing.derived).lower(), "availability": listing.availability, "notes": listing.notes,
            "source": listing.source, "retrieved_on": listing.retrieved_on}


def _cell(value: float) -> str | float:
    return "" if value != value else round(float(value), 6)


def write_overlay(conversion: Conversion, out_dir: Path) -> list[Path]:
    """``offers.csv``, and when there are any ``hosts.csv`` (new hosts) and ``cost_spot.csv`` (interruption
    bands), in ``out_dir``, written atomically."""
    from infrafit import safe_io

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema, rows in (("offers", OFFERS, conversion.offers), ("hosts", HOSTS, conversion.hosts),
                               ("cost_spot", TABLES["cost_spot"], conversion.spot_bands)):
        if not rows:
            continue
        path = out_dir / f"{name}.csv"
        safe_io.atomic_write_text(path, _csv_text(schema, rows))
        written.append(path)
    return written


def merge_into_csv(path: Path, names: tuple[str, ...], new_rows: list[dict[str, Any]], key: str = "id"
                   ) -> tuple[int, int]:
    """Merge ``new_rows`` into the CSV at ``path`` (columns ``names``): a row whose ``key`` is already there
    replaces it in place, the others are appended; NaN and None are written empty. Returns (replaced,
    added). For the one-shot imports that maintain the shipped data files (``scripts/import_*.py``)."""
    with path.open(newline="", encoding="utf-8") as fh:
        old = list(csv.DictReader(fh))
    index = {r[key]: i for i, r in enumerate(old)}
    replaced = added = 0
    for row in new_rows:
        cells = {n: "" if row.get(n) is None or (isinstance(row.get(n), float) and math.isnan(row[n]))
                 else str(row[n]) for n in names}
        if row[key] in index:
            old[index[row[key]]] = cells
            replaced += 1
        else:
            index[row[key]] = len(old)
            old.append(cells)
            added += 1
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(names), lineterminator="\n")
        writer.writeheader()
        writer.writerows(old)
    return replaced, added


def _csv_text(schema: Schema, rows: list[dict[str, Any]]) -> str:
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(schema.names), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()
