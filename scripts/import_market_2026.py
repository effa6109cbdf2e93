"""One-shot import of the 2026 market reference (``../shared/reference/market_2026/``) into the built-in
catalog data, through the same converter ``infrafit catalog refresh`` uses.

Run from the repository root: ``python scripts/import_market_2026.py REFERENCE_DIR``. It rewrites
``src/infrafit/catalog/data/offers.csv`` and ``hosts.csv``: a listing whose (provider, host, region,
mode) matches a built-in offer replaces that row (new price, new date); others are appended. What it
leaves out, and why, is printed (and summarised in docs/catalog.md). Users never run this: the
reference folder is not shipped; the rows it produced are, with their sources.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import sys
from dataclasses import replace
from pathlib import Path

from infrafit.catalog import DATA_DIR, clear_cache, load_catalog
from infrafit.catalog.refresh import Listing, convert, merge_into_csv, read_skypilot_file, slug_id
from infrafit.catalog.tables import HOSTS, OFFERS
from infrafit.units import GiB

READ_ON = "2026-12-01"
SKY_COMMIT_SOURCE = "github:skypilot-org/skypilot-catalog catalogs/v8/{cloud}/vms.csv @{commit}"
SKY_NOTE = "SkyPilot catalog snapshot (commit date not exposed; content is late 2025 or newer)"
#: SkyPilot clouds that are marketplaces: the listing is a third party's machine, sold through them.
MARKETPLACES = {"shadeform", "primeintellect"}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def skypilot(ref: Path) -> list[Listing]:
    rows = _rows(ref / "skypilot_offers.csv")
    out: list[Listing] = []
    by_cloud: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        if "placeholder" in row["notes"]:
            continue  # Mithril's 1.0 USD/GPU-h auction placeholder is not a price
        by_cloud.setdefault(row["cloud"], []).append(row)
    for cloud, group in by_cloud.items():
        text = io.StringIO()
        fields = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice",
                  "Region", "AvailabilityZone"]
        writer = csv.DictWriter(text, fieldnames=fields)
        writer.writeheader()
        for row in group:
            writer.writerow({"InstanceType": row["InstanceType"], "AcceleratorName": row["AcceleratorName"],
                             "AcceleratorCount": row["AcceleratorCount"], "vCPUs": row["vCPUs"],
                             "MemoryGiB": row["MemoryGiB"], "Price": row["Price_usd_per_hour"],
                             "SpotPrice": row["SpotPrice_usd_per_hour"], "Region": row["Region"],
                             "AvailabilityZone": row["AvailabilityZone"]})
        source = SKY_COMMIT_SOURCE.format(cloud=cloud, commit=group[0]["source_commit"])
        listings = read_skypilot_file(io.StringIO(text.getvalue()), cloud, READ_ON, source)
        for listing in listings:
            extra = {}
            if cloud in MARKETPLACES:
                extra = {"confidence": "medium",
                         "notes": _join(listing.notes, f"{SKY_NOTE}; marketplace listing, machine of "
                                                       f"{listing.instance.split('_')[0]}")}
            elif cloud == "oci":
                extra = {"region": "oci-any-us", "availability": "unverified",
                         "notes": _join(listing.notes, f"{SKY_NOTE}; OCI list prices are global and the catalog "
                                                       "lists every shape in every region (shape availability in "
                                                       "a US region not verified)")}
            elif cloud == "hyperbolic":
                extra = {"availability": "unverified", "confidence": "medium",
                         "notes": _join(listing.notes, f"{SKY_NOTE}; the listing gives no location")}
            else:
                extra = {"notes": _join(listing.notes, SKY_NOTE)}
            out.append(replace(listing, **extra))
    return out


def amd_intel(ref: Path) -> list[Listing]:
    """Complete AMD/Gaudi rentals. OCI and Denvr rows also come through the SkyPilot file (skipped here as
    duplicates); the per-GPU rows of secondary notes name no region or host and stay out."""
    out = []
    for row in _rows(ref / "amd_intel_rentable.csv"):
        if row["provider"].startswith("DigitalOcean"):
            out.append(Listing(provider="DigitalOcean", instance=row["instance_or_sku"], accelerator="MI300X",
                               accelerator_count=1, region="nyc2", mode="cloud_on_demand",
                               usd_per_hour=float(row["usd_per_hour_instance"]), source=row["source"],
                               retrieved_on=_dated(row["as_of_date"]), confidence="medium", availability="unverified",
                               notes=_join(row["notes"], f"as of {row['as_of_date']}; listed regions empty at "
                                                         "capture, placed in nyc2 (unverified)")))
    return out


NEOCLOUD_PROVIDERS = {"runpod": ("RunPod", "runpod-us"), "lambda": ("Lambda", "lambda-us"),
                      "hyperstack": ("Hyperstack", "US-1")}
#: Hyperstack sells SXM parts as 8-GPU nodes and PCIe parts per GPU (its rate card is per GPU-hour).
HYPERSTACK_NODE_GPUS = {"H100 SXM": 8, "H200 SXM": 8, "B200": 8, "B300": 8, "A100 SXM 80GB": 8}
LAMBDA_HOSTS = {"8x H100 SXM": "gpu_8x_h100_sxm5", "8x A100 SXM 80GB": "gpu_8x_a100_80gb_sxm4",
                "1x H100 PCIe": "gpu_1x_h100_pcie", "1x B200 SXM6": "gpu_1x_b200_sxm6", "1x A10": "gpu_1x_a10",
                "1x A100 SXM 40GB": "gpu_1x_a100_sxm4"}


def neocloud(ref: Path) -> list[Listing]:
    """Per-GPU on-demand and spot rates of RunPod, Lambda and Hyperstack (others: marketplace 'starting at'
    prices with no location, a CONFLICTing vast.ai median, and GCP shapes already in the catalog)."""
    out = []
    for row in _rows(ref / "neocloud_ondemand.csv"):
        if row["provider"] not in NEOCLOUD_PROVIDERS:
            continue
        provider, region = NEOCLOUD_PROVIDERS[row["provider"]]
        accel, per_gpu = row["accelerator"], float(row["usd_per_accel_hour"])
        count = int(row["min_gpus"])
        if provider == "Hyperstack":
            count = HYPERSTACK_NODE_GPUS.get(accel, 1)
            instance = f"{count}x {accel}"
        elif provider == "Lambda":
            instance = LAMBDA_HOSTS.get(row["product"], row["product"])
        else:
            instance = f"{row['product']} {count}x {accel}"
        mode = "cloud_spot" if row["pricing_model"] == "spot" else "cloud_on_demand"
        note = f"as of {row['as_of_date']} ({row['provider_url'] or 'rate card'}); per-GPU rate x {count} GPUs"
        if provider == "Hyperstack":
            note += "; the rate card names no region (placed in US-1, unverified)"
        out.append(Listing(provider=provider, instance=instance, accelerator=accel, accelerator_count=count,
                           region=region, mode=mode, usd_per_hour=per_gpu * count, source=row["source"],
                           retrieved_on=_dated(row["as_of_date"]), confidence=row["confidence"], derived=count > 1,
                           availability="unverified" if provider == "Hyperstack" else "verified",
                           notes=_join(row["notes"], note)))
    return out


def reserved(ref: Path) -> list[Listing]:
    """Hyperstack reserved per-GPU rates (term not stated: priced as the 1-year mode, the shortest term
    infrafit models). AWS Capacity Blocks (1-182-day prepaid blocks) have no matching mode and stay out."""
    out = []
    for row in _rows(ref / "reserved_committed.csv"):
        if not row["provider"].startswith("Hyperstack"):
            continue
        accel = row["accelerator"].split(" (")[0]
        count = HYPERSTACK_NODE_GPUS.get(accel, 1)
        out.append(Listing(provider="Hyperstack", instance=f"{count}x {accel}", accelerator=accel,
                           accelerator_count=count, region="US-1", mode="cloud_reserved_1y",
                           usd_per_hour=float(row["usd_per_accel_hour"]) * count, source=row["source"],
                           retrieved_on=_dated(row["as_of_date"]), confidence="medium", derived=True,
                           availability="unverified",
                           notes=f"as of {row['as_of_date']}; per-GPU reserved rate x {count}; ASSUMPTION: the card "
                                 "states no term, priced as a 1-year commitment; the card names no region (placed in "
                                 "US-1, unverified)"))
    return out




#: USD per EUR: the ECB euro reference rate of 2026-01-22 (the latest dated one found), as reported by
#: businessnovinite.bg ("Курсът на долара за 22 януари 2026 г."; 31 Dec 2025: 1.1750, standartnews.com).
#: EUR prices are converted once, here, at import (an edge); the rate is ~9 months older than the prices.
EUR_USD = 1.1739
EUR_USD_SOURCE = ("EUR converted at 1.1739 USD/EUR, the ECB euro reference rate of 2026-01-22 as reported by "
                  "businessnovinite.bg/bg-biznes/kursat-na-dolara-za-22-januari-2026-g.html")
#: The EUR-priced single-GPU rentals: product -> (region, accelerator, vCPUs, RAM GiB, mode, includes, notes).
EUR_ROWS = {
    "GEX45": ("hel1", "nvidia_rtx_pro_4000_bw_sff", 20, 64, "dedicated_monthly",
              "dedicated server rental: hardware, power, cooling, rack space and traffic (Hetzner)",
              "Intel i5-13500 (14 cores, 20 threads), 2 x 512 GB NVMe; excl. VAT; setup fee EUR 209 once "
              "(not priced: offers.csv has no setup column)"),
    "GEX63": ("hetzner-eu", "nvidia_rtx_pro_6000_bw_maxq", 20, 128, "dedicated_monthly",
              "dedicated server rental: hardware, power, cooling, rack space and traffic (Hetzner)",
              "Intel Core Ultra 7 265 (20 cores), 2 x 1.92 TB NVMe; excl. VAT; site not stated (the source says "
              "DE or FI)"),
    "l4-90 (Public Cloud GPU instance, not dedicated)": (
        "ovh-eu", "nvidia_l4", 22, 90, "dedicated_monthly",
        "monthly-billed public cloud instance (OVHcloud monthly billing: the month is committed)",
        "22 vCores, 90 GB RAM, 400 GB NVMe; the source gives EUR 0.75/h OR EUR 540/month as separate billing "
        "choices (AMBIGUOUS in the reference); the monthly plan is the one priced here; zone not stated"),
}


def dedicated(ref: Path) -> list[Listing]:
    """Dedicated servers: Qubrid annual bare metal (per month = year / 12, 12-month contract), Latitude.sh GPU
    bare metal (hourly), and the EUR-priced single-GPU servers (Hetzner GEX45/GEX63, OVHcloud's monthly L4)
    at ``EUR_USD``. Latitude CPU-only rows give vCPUs, not a CPU model, and stay out, as does OVHcloud's
    RISE-S (its Ryzen 7 9700X has no accelerator row)."""
    out = []
    for row in _rows(ref / "dedicated_servers.csv"):
        if row["product"] in EUR_ROWS and row["eur_per_month"]:
            region, accel, vcpu, ram, mode, includes, notes = EUR_ROWS[row["product"]]
            eur = float(row["eur_per_month"])
            out.append(Listing(provider=row["provider"], instance=row["product"].split(" (")[0], accelerator=accel,
                               accelerator_count=int(row["gpu_count"]), region=region, mode=mode,
                               usd_per_month=round(eur * EUR_USD, 2), contract_months=1,
                               vcpu_count=float(vcpu), ram_bytes=float(ram) * GiB,
                               source=_join(row["source"], EUR_USD_SOURCE), retrieved_on=_dated(row["as_of_date"]),
                               confidence="medium", derived=True,
                               availability="verified" if region == "hel1" else "unverified",
                               host_kind="server" if row["provider"] == "Hetzner" else "cloud_instance",
                               includes=includes,
                               notes=_join(f"EUR {eur:g} a month x {EUR_USD} USD/EUR", notes)))
            continue
        if row["provider"] == "Qubrid AI" and row["usd_per_year"]:
            accel, count = row["gpu"], int(row["gpu_count"])
            out.append(Listing(provider="Qubrid AI", instance=row["product"], accelerator=accel,
                               accelerator_count=count, region="qubrid-us", mode="dedicated_monthly",
                               usd_per_month=float(row["usd_per_year"]) / 12, contract_months=12,
                               source=row["source"], retrieved_on=_dated(row["as_of_date"]), confidence="low",
                               derived=True,
                               availability="unverified", host_kind="server",
                               includes="dedicated bare-metal server rental (annual contract)",
                               notes=f"as of {row['as_of_date']}; annual price / 12; location not stated"))
        elif row["provider"].startswith("Latitude") and row["gpu"] and row["usd_per_hour"]:
            accel = "L40" if row["gpu"].startswith("L40") else row["gpu"]
            out.append(Listing(provider="Latitude.sh", instance=row["product"], accelerator=accel,
                               accelerator_count=int(row["gpu_count"]), region=row["location"],
                               mode="cloud_on_demand", usd_per_hour=float(row["usd_per_hour"]),
                               vcpu_count=float(row["cpu"].split()[0]), ram_bytes=float(row["ram_gb"]) * GiB,
                               source=row["source"], retrieved_on=READ_ON, confidence="medium",
                               notes=_join(row["notes"], "bare metal billed hourly (via Prime Intellect listing)")))
    return out


def _dated(as_of: str) -> str:
    """The source's own date when it states a full one (a price is as old as its source), else the read date."""
    try:
        return dt.date.fromisoformat(as_of.strip()).isoformat()
    except ValueError:
        return READ_ON


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def main(ref: Path) -> int:
    catalog = load_catalog()
    listings = skypilot(ref) + amd_intel(ref) + neocloud(ref) + reserved(ref) + dedicated(ref)
    conversion = convert(listings, catalog)
    print(conversion.summary())
    for listing, why in conversion.skipped:
        print(f"  - {listing.provider} {listing.instance} {listing.region} {listing.mode}: {why}")
    for host in conversion.hosts:
        host["id"] = slug_id(host["id"])
    print("hosts replaced/added", merge_into_csv(DATA_DIR / "hosts.csv", HOSTS.names, conversion.hosts))
    print("offers replaced/added", merge_into_csv(DATA_DIR / "offers.csv", OFFERS.names, conversion.offers))
    clear_cache()
    load_catalog()  # validates the result
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/market_2026")))
