"""Import (2026-12-03, widened 2026-12-06) of AWS GPU prices for the regions the SkyPilot catalog does not
carry or carries thinly (``REGIONS``), plus 1-yr reserved rates, from a per-family extract of
instances.vantage.sh data.

Source: ``github:tsaol/aws-gpu`` ``data/<family>_instances.js`` @7412fd2 (generated 2026-01-21 from
instances.vantage.sh, which reads the AWS Price List API): per instance type its vCPUs, memory, storage and
network, and per region the Linux ``onDemand`` and ``reserved`` rates (1-yr Standard, no upfront: the
generator's ``utils.py`` picks ``yrTerm1Standard.noUpfront``).
Run from the repository root: ``python scripts/import_aws_regional_prices.py PATH_TO_GIT_DIR_OF_aws-gpu``.

It first checks the source against the shipped SkyPilot us-east-1 on-demand rows (they must agree to the
cent), then adds the offers the catalog lacks for the instance types in ``INSTANCES`` and re-prices in place
(same id, as ``catalog refresh`` does) a built-in row of the same host, region and mode that is older than
the source and priced otherwise. Idempotent. Users never run this; the rows it produced are shipped with their sources
(docs/catalog.md, Known gaps).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

from infrafit.catalog import DATA_DIR, clear_cache, load_catalog
from infrafit.catalog.refresh import merge_into_csv, slug_id
from infrafit.catalog.tables import HOSTS, NVME_DRIVE_READ_BYTES_PER_S, NVME_RULE, OFFERS
from infrafit.units import GB, GBIT, GiB

COMMIT = "7412fd256c5eda04a70a17742a68e8e44824b2cb"
#: The instance types imported: the hosts the catalog has, and g5.xlarge (the smallest A10G box), new.
INSTANCES = ("g4dn.xlarge", "g5.xlarge", "g5.12xlarge", "g5.16xlarge", "g6.xlarge", "g6.12xlarge", "g6e.xlarge",
             "g6e.12xlarge", "p4d.24xlarge", "p5.4xlarge", "p5.48xlarge")
#: 2026-12-06: g6e.xlarge (one 48 GB L40S, the smallest box a 14-32B model fits on in one GPU) added.
NEW_HOSTS = {"g5.xlarge": "nvidia_a10g", "g6e.xlarge": "nvidia_l40s"}
#: The regions imported (2026-12-03: sa-east-1, the one the SkyPilot catalog lacks, and us-east-1 for its 1-yr
#: rows; 2026-12-06: the residency markets where the catalog had no or only one AWS GPU box: Ireland, the
#: UK, France, Sweden, Germany, Canada, India, Australia, Japan, Korea, Singapore, the other US regions, Spain,
#: the UAE, Indonesia, Hong Kong, Osaka and Melbourne).
#: City and country from cloud_regions.csv (AWS's region list).
REGIONS = ("sa-east-1", "us-east-1", "us-east-2", "us-west-2", "ca-central-1", "eu-central-1", "eu-west-1", "eu-west-2",
           "eu-west-3", "eu-north-1", "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1",
           "ap-southeast-2", "eu-south-2", "me-central-1", "ap-southeast-3", "ap-east-1", "ap-northeast-3",
           "ap-southeast-4")
RETRIEVED_ON = "2026-01-21"
SOURCE = ("github:tsaol/aws-gpu data/{fam}_instances.js @7412fd2 (auto-generated 2026-01-21 from "
          "instances.vantage.sh, which reads the AWS Price List API)")
INCLUDES = "whole instance: accelerators, host CPU, RAM, local NVMe"


def load(git_dir: str) -> dict[str, dict]:
    out = {}
    for fam in sorted({name.split(".")[0] for name in INSTANCES}):
        text = subprocess.run(["git", "-C", git_dir, "show", f"{COMMIT}:data/{fam}_instances.js"],
                              capture_output=True, text=True, check=True).stdout
        out |= {d["name"]: d for d in json.loads(text[text.index("["):text.rindex("]") + 1])}
    return out


def host_row(item: dict, accelerator: str) -> dict[str, str]:
    """A host row from the source's own specs ("16 GB" memory is GiB on AWS; "250 GB SSD" one NVMe drive)."""
    memory = float(item["memory"].split()[0]) * GiB
    storage = float(re.match(r"(\d+) GB", item["storage"]).group(1)) * GB
    network = float(re.search(r"(\d+) Gigabit", item["network"]).group(1)) * GBIT
    up_to = "up to " if item["network"].startswith("Up to") else ""
    return {"id": slug_id("aws", item["name"]), "name": item["name"], "provider": "AWS",
            "host_kind": "cloud_instance", "accelerator_id": accelerator, "accelerator_count": str(item["gpuCount"]),
            "vcpu_count": str(item["vcpu"]), "ram_bytes": f"{memory:.8g}", "nvme_bytes": f"{storage:g}",
            "nvme_drive_count": "1", "nvme_read_bytes_per_s": f"{NVME_DRIVE_READ_BYTES_PER_S:g}",
            "network_bits_per_s": f"{network:g}", "fabric_spans_instances": "", "scaleout_fabric": "", "power_w": "",
            "confidence": "high", "derived": "true",
            "notes": f"network {up_to}{network / GBIT:g} Gb/s; nvme_read_bytes_per_s = drives x {NVME_RULE} B/s "
                     "(rule, data/README.md)",
            "source": f"AWS EC2 accelerated computing instance types (aws.amazon.com/ec2/instance-types/"
                      f"{item['name'].split('.')[0]}/), instance specs as listed by instances.vantage.sh "
                      f"({SOURCE.split(' (')[0].format(fam=item['name'].split('.')[0])})",
            "retrieved_on": RETRIEVED_ON}


def region_places() -> dict[str, tuple[str, str]]:
    """AWS region code -> (city, country) from the catalog's region table."""
    with (DATA_DIR / "cloud_regions.csv").open(newline="") as fh:
        return {r["region"]: (r["city"], r["country"]) for r in csv.DictReader(fh) if r["provider"] == "AWS"}


def offer_row(offer_id: str, host: dict, region: str, mode: str, price: float, note: str) -> dict[str, str]:
    city, country = region_places()[region]
    return {"id": offer_id, "provider": "AWS", "region": region, "city": city, "country": country, "mode": mode,
            "host_id": host["id"], "accelerator_id": host["accelerator_id"],
            "accelerator_count": str(host["accelerator_count"]), "usd_per_hour": f"{price:g}", "usd_per_month": "",
            "contract_months": "", "purchase_usd": "", "includes": INCLUDES, "host_included": "true",
            "confidence": "medium", "derived": "false", "availability": "verified", "notes": note,
            "source": SOURCE.format(fam=host["name"].split(".")[0]), "retrieved_on": RETRIEVED_ON}


def main(git_dir: str) -> int:
    data = load(git_dir)
    with (DATA_DIR / "offers.csv").open(newline="") as fh:
        offers = list(csv.DictReader(fh))
    with (DATA_DIR / "hosts.csv").open(newline="") as fh:
        hosts = {h["name"]: h for h in csv.DictReader(fh) if h["provider"] == "AWS"}
    new_hosts = [host_row(data[name], acc) for name, acc in NEW_HOSTS.items() if name not in hosts]
    hosts |= {h["name"]: h for h in new_hosts}
    by_id = {h["id"]: h for h in hosts.values()}
    for o in offers:  # the source must agree with the shipped SkyPilot rows
        name = by_id.get(o["host_id"], {}).get("name")
        if o["region"] == "us-east-1" and o["mode"] == "cloud_on_demand" and name in data:
            listed = data[name]["pricing"]["us-east-1"]["onDemand"]
            assert abs(float(o["usd_per_hour"]) - listed) < 0.005, (name, o["usd_per_hour"], listed)
        elif o["mode"] == "cloud_on_demand" and name in data and o["region"] in data[name]["pricing"]:
            listed = data[name]["pricing"][o["region"]]["onDemand"]
            if abs(float(o["usd_per_hour"]) - listed) >= 0.005:  # reported; older rows are re-priced below
                print(f"differs: {o['id']} {o['usd_per_hour']} ({o['retrieved_on']}) vs {listed} in the source")
    shipped = {(o["host_id"], o["region"], o["mode"]): o for o in offers}
    rows = []
    for name in INSTANCES:
        host = hosts[name]
        for region, p in ((r, data[name]["pricing"].get(r)) for r in REGIONS):
            listed = [("cloud_on_demand", p["onDemand"],
                       "Linux on-demand; region listed in the AWS price list for this instance type")] if p else []
            if p and "reserved" in p:
                listed.append(("cloud_reserved_1y", p["reserved"],
                               "1-yr Standard Reserved Instance, no upfront, Linux (effective hourly); implied "
                               f"discount {1 - p['reserved'] / p['onDemand']:.0%} vs on-demand"))
            for mode, price, note in listed:
                old = shipped.get((host["id"], region, mode))
                if old is None:
                    stamp = RETRIEVED_ON.replace("-", "")
                    rows.append(offer_row(slug_id(host["id"], region, mode, stamp), host, region, mode, price, note))
                elif old["retrieved_on"] < RETRIEVED_ON and abs(float(old["usd_per_hour"]) - price) >= 0.005:
                    # older than the source and priced otherwise (the us-east-1 p4d 1-yr row predates AWS's
                    # June 2025 P4/P5 price cut); rows the source confirms keep their own source
                    cut = " (before AWS's June 2025 P4/P5 price cut)" if old["retrieved_on"] < "2025-06" else ""
                    note += f"; re-priced from ${float(old['usd_per_hour']):.2f}/h listed {old['retrieved_on']}{cut}"
                    rows.append(offer_row(old["id"], host, region, mode, price, note))
    print("hosts replaced/added", merge_into_csv(DATA_DIR / "hosts.csv", HOSTS.names, new_hosts))
    print("offers replaced/added", merge_into_csv(DATA_DIR / "offers.csv", OFFERS.names, rows))
    clear_cache()
    load_catalog()  # validates the result
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
