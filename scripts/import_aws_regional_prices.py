"""One-shot import (2026-12-03) of AWS GPU prices for a region the SkyPilot catalog does not carry
(sa-east-1, Sao Paulo), plus 1-yr reserved rates, from a per-family extract of instances.vantage.sh data.

Source: ``github:tsaol/aws-gpu`` ``data/<family>_instances.js`` @7412fd2 (generated 2026-01-21 from
instances.vantage.sh, which reads the AWS Price List API): per region, Linux ``onDemand`` and
``reserved`` (1-yr Standard, no upfront; the generator's ``utils.py`` picks ``yrTerm1Standard.noUpfront``).
Run from the repository root: ``python scripts/import_aws_regional_prices.py PATH_TO_GIT_DIR_OF_aws-gpu``.

It first checks the source against the shipped SkyPilot us-east-1 on-demand rows (they must agree to the
cent), then appends the rows the catalog lacks for hosts it has (plus the ``g5.xlarge`` host), and
replaces the us-east-1 p4d.24xlarge 1-yr row that predates AWS's June 2025 price cut. Idempotent. Users
never run this; the rows it produced are shipped with their sources (docs/catalog.md, Known gaps).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

COMMIT = "7412fd256c5eda04a70a17742a68e8e44824b2cb"
FAMILIES = ("g4dn", "g5", "g6", "p4d", "p5")
REGIONS = {"sa-east-1": ("Sao Paulo", "BR"), "us-east-1": ("Ashburn", "US")}
RETRIEVED_ON = "2026-01-21"
SOURCE = ("github:tsaol/aws-gpu data/{fam}_instances.js @7412fd2 (auto-generated 2026-01-21 from "
          "instances.vantage.sh, which reads the AWS Price List API)")
INCLUDES = "whole instance: accelerators, host CPU, RAM, local NVMe"
DATA = Path("src/infrafit/catalog/data")
G5_XLARGE = {
    "id": "aws_g5_xlarge", "name": "g5.xlarge", "provider": "AWS", "host_kind": "cloud_instance",
    "accelerator_id": "nvidia_a10g", "accelerator_count": "1", "vcpu_count": "4", "ram_bytes": "1.7179869e+10",
    "nvme_bytes": "2.5e+11", "nvme_drive_count": "1", "nvme_read_bytes_per_s": "3e+09",
    "network_bits_per_s": "1e+10", "fabric_spans_instances": "", "scaleout_fabric": "", "power_w": "",
    "confidence": "high", "derived": "true",
    "notes": "network up to 10 Gb/s; nvme_read_bytes_per_s = drives x 3.0e9 B/s (rule, data/README.md)",
    "source": "AWS EC2 accelerated computing instance types (aws.amazon.com/ec2/instance-types/g5/), instance "
              "specs as listed by instances.vantage.sh (github:tsaol/aws-gpu data/g5_instances.js @7412fd2)",
    "retrieved_on": RETRIEVED_ON,
}


def load(git_dir: str) -> dict[str, dict]:
    out = {}
    for fam in FAMILIES:
        text = subprocess.run(["git", "-C", git_dir, "show", f"{COMMIT}:data/{fam}_instances.js"],
                              capture_output=True, text=True, check=True).stdout
        out |= {d["name"]: d for d in json.loads(text[text.index("["):text.rindex("]") + 1])}
    return out


def offer(host: dict, region: str, mode: str, price: float, note: str) -> dict[str, str]:
    city, country = REGIONS[region]
    return {"id": f"{host['id']}_{region.replace('-', '_')}_{mode}_{RETRIEVED_ON.replace('-', '')}",
            "provider": "AWS", "region": region, "city": city, "country": country, "mode": mode,
            "host_id": host["id"], "accelerator_id": host["accelerator_id"],
            "accelerator_count": host["accelerator_count"], "usd_per_hour": f"{price:g}", "usd_per_month": "",
            "contract_months": "", "purchase_usd": "", "includes": INCLUDES, "host_included": "true",
            "confidence": "medium", "derived": "false", "availability": "verified", "notes": note,
            "source": SOURCE.format(fam=host["name"].split(".")[0]), "retrieved_on": RETRIEVED_ON}


def reserved_note(p: dict, extra: str = "") -> str:
    return (f"1-yr Standard Reserved Instance, no upfront, Linux (effective hourly); implied discount "
            f"{1 - p['reserved'] / p['onDemand']:.0%} vs on-demand{extra}")


def main(git_dir: str) -> int:
    data = load(git_dir)
    hosts = list(csv.DictReader((DATA / "hosts.csv").open(newline="")))
    offers = list(csv.DictReader((DATA / "offers.csv").open(newline="")))
    if not any(h["id"] == G5_XLARGE["id"] for h in hosts):
        hosts.append(G5_XLARGE)
    by_id = {h["id"]: h for h in hosts}
    for o in offers:  # the source must agree with the shipped SkyPilot rows
        name = by_id[o["host_id"]]["name"]
        if o["provider"] == "AWS" and o["region"] == "us-east-1" and o["mode"] == "cloud_on_demand" and name in data:
            listed = data[name]["pricing"]["us-east-1"]["onDemand"]
            assert abs(float(o["usd_per_hour"]) - listed) < 0.005, (name, o["usd_per_hour"], listed)
    have = {(o["host_id"], o["region"], o["mode"]) for o in offers}
    new = []
    for host in (h for h in hosts if h["provider"] == "AWS" and h["name"] in data):
        for region in REGIONS:
            p = data[host["name"]]["pricing"].get(region)
            if not p:
                continue
            if (host["id"], region, "cloud_on_demand") not in have:
                new.append(offer(host, region, "cloud_on_demand", p["onDemand"],
                                 "Linux on-demand; region listed in the AWS price list for this instance type"))
            if "reserved" in p and (host["id"], region, "cloud_reserved_1y") not in have:
                new.append(offer(host, region, "cloud_reserved_1y", p["reserved"], reserved_note(p)))
    p4d = data["p4d.24xlarge"]["pricing"]["us-east-1"]
    for i, o in enumerate(offers):
        if (o["host_id"], o["region"], o["mode"]) == ("aws_p4d_24xlarge", "us-east-1", "cloud_reserved_1y") \
                and o["retrieved_on"] < RETRIEVED_ON:
            offers[i] = offer(by_id["aws_p4d_24xlarge"], "us-east-1", "cloud_reserved_1y", p4d["reserved"],
                              reserved_note(p4d, f"; replaces a {o['retrieved_on']} listing of "
                                                 f"${float(o['usd_per_hour']):.2f}/h that predates AWS's June 2025 "
                                                 "P4/P5 price cut"))
    for name, rows in (("hosts", hosts), ("offers", offers + new)):
        with (DATA / f"{name}.csv").open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0].keys()), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    print(f"{len(new)} offers added")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
