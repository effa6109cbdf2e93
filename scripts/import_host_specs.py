"""One-shot fill of host facts (vCPUs, RAM, local NVMe) that a host row's price source leaves out but another
source states, and the two Qubrid AI bare-metal servers the 2026 market import left out.

Run from the repository root: ``python scripts/import_host_specs.py``. Idempotent: a field that already has a
value is never overwritten, so a re-run changes nothing. Each filled field names its source in the row's
``notes`` and the source joins the row's ``source``. Users never run this; the rows it produced are shipped.

NVMe counts the data drives a listing states (a server's M.2 boot drive holds the OS and is not counted);
``nvme_read_bytes_per_s`` follows the catalog's one rule, drives x ``NVME_DRIVE_READ_BYTES_PER_S``
(``catalog/tables.py``). DIMM capacities ("32 x 64GB") are binary: 64 GiB each.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from infrafit.catalog import DATA_DIR, clear_cache, load_catalog
from infrafit.catalog.refresh import Listing, convert, merge_into_csv, slug_id
from infrafit.catalog.tables import HOSTS, NVME_DRIVE_READ_BYTES_PER_S, OFFERS
from infrafit.units import GB, TB, GiB

HYPERSTACK = ("Hyperstack GPU pricing page https://www.hyperstack.cloud/gpu-pricing as transcribed 2026-08-26 in "
              "github:api-evangelist/nexgen-cloud plans/nexgen-cloud-plans-pricing.yml "
              "@0fa0509ef79e8b096a7dd124750e4fc508c61fa0")
QUBRID = ("github:api-evangelist/qubrid-ai plans/qubrid-ai-plans-pricing.yml @499bacac546b99631b21466acf428f39aaa97f0d "
          "(transcribed 2026-09-20 from https://qubrid.com/pricing)")
RUNPOD = ("RunPod pricing page https://www.runpod.io/pricing as transcribed 2026-10-07 in github:api-evangelist/runpod "
          "plans/runpod-plans-pricing.yml (seen via search excerpt only: the stored file is an older scaffold); the "
          "page's prices ($3.49, $4.59, $6.79 an hour) are the catalog's Secure Cloud rows")
EXOMEM = ('github:Artexis10/exomem docs/cloud-hardware-options.md ("Checked on 7 October 2026"), as gathered in '
          "the 2026 market reference (dedicated_servers.csv storage column)")


def _nvme(drives: int, drive_bytes: float) -> dict[str, float]:
    return {"nvme_bytes": drives * drive_bytes, "nvme_drive_count": drives,
            "nvme_read_bytes_per_s": drives * NVME_DRIVE_READ_BYTES_PER_S}


def _hyperstack(gpus: int, vcpus_per_gpu: int, ram_gb_per_gpu: int) -> dict[str, float]:
    """The 8-GPU flavour: the rate card's maximum CPUs and RAM per GPU times the GPUs (what the VM is given)."""
    return {"vcpu_count": gpus * vcpus_per_gpu, "ram_bytes": gpus * ram_gb_per_gpu * GB}


def _pod(vcpus: int, ram_gb: int) -> dict[str, float]:
    return {"vcpu_count": vcpus, "ram_bytes": ram_gb * GB}


#: host id -> (facts, what the source says, source)
FACTS: dict[str, tuple[dict[str, float], str, str]] = {
    "hyperstack_8x_b300": (_hyperstack(8, 28, 240), "rate card: max 28 CPUs and 240 GB RAM per B300", HYPERSTACK),
    "hyperstack_8x_b200": (_hyperstack(8, 31, 256), "rate card: max 31 CPUs and 256 GB RAM per B200", HYPERSTACK),
    "hyperstack_8x_h200_sxm": (_hyperstack(8, 22, 225), "rate card: max 22 CPUs and 225 GB RAM per H200 SXM",
                               HYPERSTACK),
    "hyperstack_8x_h100_sxm": (_hyperstack(8, 24, 240), "rate card: max 24 CPUs and 240 GB RAM per H100 SXM",
                               HYPERSTACK),
    "qubrid_ai_8x_b300_288gb_hgx_bare_metal": (
        {"vcpu_count": 2 * 48 * 2, "ram_bytes": 3.0 * TB, **_nvme(8, 3.84 * TB)},
        "2 x 48 cores (192 threads), ~3 TB DDR5, 8 x 3.84 TB NVMe E1.S data drives (+ 1.9 TB M.2 boot)", QUBRID),
    "qubrid_ai_8x_b200_180gb_sxm_bare_metal": (
        {"ram_bytes": 32 * 96 * GiB, **_nvme(4, 7.68 * TB)},
        "32 x 96 GB DDR5, 4 x 7.68 TB NVMe data drives (+ 2 x 960 GB M.2 boot); CPU not stated", QUBRID),
    "qubrid_ai_8x_h200_141gb_sxm_bare_metal": (
        {"ram_bytes": 32 * 64 * GiB, **_nvme(8, 3.8 * TB)},
        "32 x 64 GB DDR5, 8 x 3.8 TB NVMe data drives (+ 2 x 960 GB M.2 boot); CPU not stated", QUBRID),
    "runpod_secure_cloud_1x_h100_sxm": (_pod(20, 125), "Pods - H100 SXM: 125 GB RAM, 20 vCPUs", RUNPOD),
    "runpod_secure_cloud_1x_h200": (_pod(24, 276), "Pods - H200: 276 GB RAM, 24 vCPUs", RUNPOD),
    "runpod_secure_cloud_1x_b200": (_pod(28, 283), "Pods - B200: 283 GB RAM, 28 vCPUs", RUNPOD),
    "hetzner_gex45": (_nvme(2, 512 * GB), "2 x 512 GB NVMe", EXOMEM),
    "hetzner_gex63": (_nvme(2, 1.92 * TB), "2 x 1.92 TB NVMe", EXOMEM),
    "ovhcloud_l4_90": (_nvme(1, 400 * GB), "400 GB NVMe", EXOMEM),
}

#: Qubrid servers listed on the same page as the three already imported: (instance, accelerator, USD a year,
#: RAM bytes, NVMe data drives, bytes per drive, what the page says)
QUBRID_MORE = (
    ("NVIDIA H100 80GB 8-GPU SXM Server", "H100 SXM", 133414.80, 16 * 64 * GiB, 6, 3.84 * TB,
     "16 x 64 GB DDR5-5600, 6 x 3.84 TB NVMe data drives (+ 2 x 480 GB M.2 boot); CPU not stated"),
    ("NVIDIA A100 80GB 8-GPU SXM Server", "A100 SXM 80GB", 89500.0, 16 * 64 * GiB, 2, 1.9 * TB,
     "16 x 64 GB DDR4-3200, 2 x 1.9 TB NVMe data drives (+ 2 x 960 GB M.2 boot); CPU not stated"),
)


#: The stock note of a host row made from a price list (``catalog.refresh``), rewritten once facts are filled.
STOCK_NOTE = "from a price list: vCPUs and RAM as listed; NVMe and network not stated"
STATED = (("vcpu_count", "vCPUs"), ("ram_bytes", "RAM"), ("nvme_bytes", "NVMe"), ("network_bits_per_s", "network"))


def stated_note(row: dict[str, str]) -> str:
    """What the row now states and what it still does not, in the stock note's words."""
    have = [w for k, w in STATED if row.get(k)]
    missing = [w for k, w in STATED if not row.get(k)]
    return f"stated: {', '.join(have)}" + (f"; not stated: {', '.join(missing)}" if missing else "")


def _cell(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.10g}"


def filled_rows(path: Path) -> list[dict[str, str]]:
    """The host rows of ``FACTS`` with their empty fields filled (fields that have a value are kept)."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    out = []
    for host_id, (facts, said, source) in FACTS.items():
        row = dict(rows[host_id])
        new = {k: v for k, v in facts.items() if not row.get(k)}
        if not new:
            continue
        row.update({k: _cell(v) for k, v in new.items()})
        notes = row["notes"].replace(STOCK_NOTE, stated_note(row))
        row["notes"] = "; ".join(p for p in (notes, f"{', '.join(sorted(new))} from: {said}") if p)
        if source not in row["source"]:
            row["source"] = f"{row['source']}; host facts: {source}"
        out.append(row)
    return out


def qubrid_listings() -> list[Listing]:
    return [Listing(provider="Qubrid AI", instance=name, accelerator=accel, accelerator_count=8, region="qubrid-us",
                    mode="dedicated_monthly", usd_per_month=usd_year / 12, contract_months=12, ram_bytes=ram,
                    nvme_bytes=drives * drive_bytes, nvme_drive_count=drives, source=QUBRID, retrieved_on="2026-09-20",
                    confidence="low", derived=True, availability="unverified", host_kind="server",
                    includes="dedicated bare-metal server rental (annual contract)",
                    notes=f"as of 2026-09-20; annual price / 12; location not stated; {said}")
            for name, accel, usd_year, ram, drives, drive_bytes, said in QUBRID_MORE]


def main() -> int:
    hosts_csv = DATA_DIR / "hosts.csv"
    print("host rows filled", merge_into_csv(hosts_csv, HOSTS.names, filled_rows(hosts_csv)))
    conversion = convert(qubrid_listings(), load_catalog())
    print(conversion.summary())
    for host in conversion.hosts:
        host["id"] = slug_id(host["id"])
    print("hosts replaced/added", merge_into_csv(hosts_csv, HOSTS.names, conversion.hosts))
    print("offers replaced/added", merge_into_csv(DATA_DIR / "offers.csv", OFFERS.names, conversion.offers))
    clear_cache()
    load_catalog()  # validates the result
    return 0


if __name__ == "__main__":
    sys.exit(main())
