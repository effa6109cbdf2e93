"""Build src/infrafit/catalog/data/grid_carbon.csv from Google Cloud's published region carbon data.

Usage: python scripts/build_grid_carbon.py PATH/TO/region-carbon-info/data/yearly/2024.csv

Source: github.com/GoogleCloudPlatform/region-carbon-info (commit 49f3f26, 2025-12-03), data/yearly/2024.csv,
"Grid carbon intensity (gCO2eq / kWh)": the average operational gross emissions per kWh of the local grid
(location-based), per Google Cloud region. Grid intensity belongs to the grid, not to Google, so it applies
to any data centre on that grid. Google's CFE regions are the country for most of the world and the
balancing authority where a country has distinct grids; so:

- a country whose Google locations all share one value (or that has one location) gets a country row
  (city empty): every data centre in that country is on that grid;
- a country with distinct values (US, Japan, India, Australia, Canada) gets city rows only: a city not
  listed there has no figure (missing, never guessed).
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "infrafit" / "catalog" / "data" / "grid_carbon.csv"
SOURCE = ("Google Cloud region carbon data 2024 (github.com/GoogleCloudPlatform/region-carbon-info@49f3f26, "
          "data/yearly/2024.csv), grid carbon intensity, location-based; region {region} ({location})")
RETRIEVED_ON = "2025-12-03"  # the data commit's date
#: Google Cloud region -> (city, ISO country) of the data centre (Google Cloud locations page).
REGION_PLACE = {
    "africa-south1": ("Johannesburg", "ZA"), "asia-east1": ("Changhua County", "TW"),
    "asia-east2": ("Hong Kong", "HK"), "asia-northeast1": ("Tokyo", "JP"), "asia-northeast2": ("Osaka", "JP"),
    "asia-northeast3": ("Seoul", "KR"), "asia-south1": ("Mumbai", "IN"), "asia-south2": ("Delhi", "IN"),
    "asia-southeast1": ("Singapore", "SG"), "asia-southeast2": ("Jakarta", "ID"),
    "australia-southeast1": ("Sydney", "AU"), "australia-southeast2": ("Melbourne", "AU"),
    "europe-central2": ("Warsaw", "PL"), "europe-north1": ("Hamina", "FI"), "europe-north2": ("Stockholm", "SE"),
    "europe-southwest1": ("Madrid", "ES"), "europe-west1": ("St. Ghislain", "BE"), "europe-west2": ("London", "GB"),
    "europe-west3": ("Frankfurt", "DE"), "europe-west4": ("Eemshaven", "NL"), "europe-west6": ("Zurich", "CH"),
    "europe-west8": ("Milan", "IT"), "europe-west9": ("Paris", "FR"), "europe-west10": ("Berlin", "DE"),
    "europe-west12": ("Turin", "IT"), "me-central1": ("Doha", "QA"), "me-central2": ("Dammam", "SA"),
    "me-west1": ("Tel Aviv", "IL"), "northamerica-northeast1": ("Montreal", "CA"),
    "northamerica-northeast2": ("Toronto", "CA"), "northamerica-south1": ("Queretaro", "MX"),
    "southamerica-east1": ("Sao Paulo", "BR"), "southamerica-west1": ("Santiago", "CL"),
    "us-central1": ("Council Bluffs", "US"), "us-central2": ("Oklahoma", "US"), "us-east1": ("Moncks Corner", "US"),
    "us-east2": ("Georgia", "US"), "us-east4": ("Ashburn", "US"), "us-east5": ("Columbus", "US"),
    "us-south1": ("Dallas", "US"), "us-west1": ("The Dalles", "US"), "us-west2": ("Los Angeles", "US"),
    "us-west3": ("Salt Lake City", "US"), "us-west4": ("Las Vegas", "US"),
}


def main(path: str) -> None:
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    by_country: dict[str, list[tuple[str, str, float, str]]] = defaultdict(list)
    for r in rows:
        region = r["Google Cloud Region"]
        city, country = REGION_PLACE[region]
        by_country[country].append((region, city, float(r["Grid carbon intensity (gCO2eq / kWh)"]), r["Location"]))
    out = []
    for country, entries in sorted(by_country.items()):
        values = {v for _, _, v, _ in entries}
        for region, city, value, location in entries:
            out.append({"id": f"{country.lower()}-{region}", "country": country, "city": city,
                        "co2e_g_per_kwh": f"{value:g}", "period": "calendar year 2024", "confidence": "high",
                        "notes": "city row", "source": SOURCE.format(region=region, location=location),
                        "retrieved_on": RETRIEVED_ON})
        if len(values) == 1:
            region, _, value, location = entries[0]
            out.append({"id": country.lower(), "country": country, "city": "", "co2e_g_per_kwh": f"{value:g}",
                        "period": "calendar year 2024", "confidence": "medium",
                        "notes": f"country row: {len(entries)} Google location(s) in {country}, one value "
                                 "(one national grid as Google's CFE regions define it)",
                        "source": SOURCE.format(region=region, location=location), "retrieved_on": RETRIEVED_ON})
    with open(OUT, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    print(f"wrote {len(out)} rows to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
