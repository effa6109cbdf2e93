"""Names in a spec that must be right: checked against the catalog at ``check`` time.

A region, training region, user place or provider the catalog does not know is an error with the
closest known names (``tokyoo`` -> ``tokyo``; a city's other name, ``bombay``, is that city), never
silently planned around; a region whose country is not among ``placement.countries`` contradicts it.
Your own site is named ``on-prem`` or ``on-prem-<name>`` (where purchased hardware stands; it needs no
catalog row).
"""

from __future__ import annotations

import csv
import io
import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from infrafit.catalog.model import normalize_name
from infrafit.countries import alnum, ascii_lower, country_named
from infrafit.errors import suggest

PLACES_FILE = "places.csv"
SUBDIVISIONS_FILE = "subdivisions.csv"

if TYPE_CHECKING:
    from infrafit.workload.spec import Workload

Triple = tuple[tuple[str | int, ...], str, str]
ON_PREM_PREFIX = "on-prem"


def slug(text: object) -> str:
    """The form regions and places are compared in: lower case, spaces as dashes."""
    return str(text or "").strip().lower().replace(" ", "-")


def provider_key(name: object) -> str:
    """The form providers are compared in: lower case letters and digits only (``vast.ai`` = ``VAST.AI``
    = ``vastai``); the same rule the planner's provider filter uses."""
    return re.sub(r"[^a-z0-9]", "", str(name or "").lower())


@lru_cache(maxsize=1)
def places() -> dict[str, tuple[str, float, float]]:
    """Known places (``catalog/data/places.csv``, GeoNames cities of >= 250,000 people and the data
    centre towns of the catalog): slug -> (country code, latitude deg, longitude deg)."""
    return {r["id"]: (r["country"], float(r["lat_deg"]), float(r["lon_deg"])) for r in _places_rows()}


@lru_cache(maxsize=1)
def _places_rows() -> tuple[dict[str, str], ...]:
    text = resources.files("infrafit.catalog").joinpath("data", PLACES_FILE).read_text(encoding="utf-8")
    return tuple(csv.DictReader(io.StringIO(text, newline="")))


@lru_cache(maxsize=1)
def subdivisions() -> dict[str, tuple[str, str, str]]:
    """First-level divisions a placement may name (``catalog/data/subdivisions.csv``: the US states and DC):
    slug -> (country code, admin1 code, name). ``regions: [virginia]`` means every offer in a city of it."""
    text = resources.files("infrafit.catalog").joinpath("data", SUBDIVISIONS_FILE).read_text(encoding="utf-8")
    return {r["id"]: (r["country"], r["admin1"], r["name"]) for r in csv.DictReader(io.StringIO(text, newline=""))}


def _places_in(name: str) -> list[dict[str, str]]:
    """The known places (``places.csv`` rows) in subdivision ``name`` (its country and admin1 code); [] when
    ``name`` is no subdivision."""
    sub = subdivisions().get(slug(name))
    if sub is None:
        return []
    return [r for r in _places_rows() if r["country"] == sub[0] and r.get("admin1") == sub[1]]


@lru_cache(maxsize=64)
def subdivision_cities(name: str) -> frozenset[str]:
    """The city slugs an offer's ``city`` may carry to lie in subdivision ``name`` (empty when it is none):
    every known place in it (``places.csv`` admin1: Ashburn, Dulles, Culpeper for Virginia) and the division's
    own name where a catalog labels a region by its state (Azure's East US: "Virginia") and no city has it."""
    sub = subdivisions().get(slug(name))
    if sub is None:
        return frozenset()
    out = {r["id"] for r in _places_in(name)}
    full = sub[2]
    if slug(full) not in places():
        out.add(slug(full))
    return frozenset(out)


def state_named(name: object) -> str | None:
    """The subdivision id of a US state written by its name (``Washington`` -> ``washington-state``, where a
    bare slug would find the city), or None: for labels known to name a state (Azure's region locations)."""
    key = _name_key(name)
    return next((sid for sid, (_, _, full) in subdivisions().items() if _name_key(full) == key), None) if key else None


@lru_cache(maxsize=64)
def subdivision_anchor(name: str) -> tuple[float, float, str] | None:
    """(lat, lon, how) of a US state's most populous known place (where a user or region named only by its
    state is placed: an estimate, and said so); None when ``name`` is no state or none of its places is known."""
    rows = _places_in(name)
    if not rows:
        return None
    best = max(rows, key=lambda r: float(r.get("population_count") or 0))
    return float(best["lat_deg"]), float(best["lon_deg"]), f"{slug(name)} (at {best['id']}, its most populous place)"


@lru_cache(maxsize=1)
def country_anchors() -> dict[str, tuple[str, float, float]]:
    """ISO country -> (slug, lat, lon) of its most populous known place: where a user or a region given
    only by its country is placed (an estimate, and said so)."""
    best: dict[str, tuple[float, str, float, float]] = {}
    for r in _places_rows():
        pop = float(r.get("population_count") or 0)
        if r["country"] not in best or pop > best[r["country"]][0]:
            best[r["country"]] = (pop, r["id"], float(r["lat_deg"]), float(r["lon_deg"]))
    return {cc: (sid, lat, lon) for cc, (_, sid, lat, lon) in best.items()}


def _name_key(text: object) -> str:
    plain = re.sub(r"\bst\.?\s", "saint ", ascii_lower(text))
    plain = re.sub(r"\s+county$", "", plain.strip())
    return alnum(re.sub(r"\(.*?\)", "", plain))


@lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[float, float, str]]:
    """Place name (accents, case and punctuation ignored) -> (lat, lon, slug) of its most populous
    bearer; ``Frankfurt`` finds frankfurt-am-main, ``New York`` new-york-city."""
    best: dict[str, tuple[float, float, float, str]] = {}
    for r in _places_rows():
        pop = float(r.get("population_count") or 0)
        for key in {_name_key(r["name"]), _name_key(r["name"].split()[0]) if " am " in r["name"] else ""} - {""}:
            if key not in best or pop > best[key][0]:
                best[key] = (pop, float(r["lat_deg"]), float(r["lon_deg"]), r["id"])
    for alias, target in (("newyork", "newyorkcity"), ("sanfranciscobay", "sanfrancisco")):
        if target in best:
            best.setdefault(alias, best[target])
    return {k: (lat, lon, sid) for k, (_, lat, lon, sid) in best.items()}


def place_country(name: str) -> str:
    """The ISO country of a place name (a country code is its own); empty when unknown."""
    text = str(name or "").strip()
    if len(text) == 2 and text.isupper():
        return text
    found = places().get(slug(text))
    if found:
        return found[0]
    named = _by_name().get(_name_key(text))  # "São Paulo", "Frankfurt": as locate() finds them
    return places()[named[2]][0] if named else ""


def locate(*names: object, country: object = "") -> tuple[float, float, str] | None:
    """(lat, lon, how) for the first of ``names`` that is a known place (a city or data-centre town
    slug) or a US state (at its most populous known place), else the country's most populous place;
    ``how`` says which. None when nothing is known."""
    table = places()
    for name in names:
        key = slug(name)
        if key and key in table:
            _, lat, lon = table[key]
            return lat, lon, key
        named = _by_name().get(_name_key(name))
        if named:
            return named
        anchor = subdivision_anchor(key)
        if anchor:
            return anchor
        text = str(name or "").strip()
        if len(text) == 2 and text.isupper() and text in country_anchors():
            sid, lat, lon = country_anchors()[text]
            return lat, lon, f"{text} (at {sid}, its most populous place)"
    cc = str(country or "").strip().upper()
    if cc in country_anchors():
        sid, lat, lon = country_anchors()[cc]
        return lat, lon, f"{cc} (at {sid}, its most populous place)"
    return None


def _country_not_city(name: str) -> tuple[str, str] | None:
    """(code, name) where ``name`` is a country written by its name or alpha-3 code and no known city bears
    it (``hongkong`` is the city hong-kong, for a closest-name suggestion); else None."""
    return None if _by_name().get(_name_key(name)) else country_named(name)


def _known(catalog: Any) -> dict[str, Any]:
    offers = catalog.offers
    regions: dict[str, set[str]] = {pid: {cc} for pid, (cc, _, _) in places().items()}
    regions.update({sid: {cc} for sid, (cc, _, _) in subdivisions().items()})
    for region, country in zip(offers["region"], offers["country"], strict=True):
        if isinstance(region, str) and region:
            known_country = {str(country)} if isinstance(country, str) and country else set()
            regions.setdefault(slug(region), set()).update(known_country)
    offer_regions = {slug(r) for r in offers["region"] if isinstance(r, str) and r}
    cities = {slug(c) for c in offers["city"] if isinstance(c, str) and c}
    city_countries: dict[str, set[str]] = {}
    for city, country in zip(offers["city"], offers["country"], strict=True):
        if isinstance(city, str) and city and isinstance(country, str) and country:
            city_countries.setdefault(slug(city), set()).add(str(country))
    countries = {str(c) for c in offers["country"] if isinstance(c, str) and c}
    providers = {provider_key(p): str(p) for p in offers["provider"]}
    return {"regions": regions, "offer_regions": offer_regions, "cities": cities, "countries": countries,
            "providers": providers, "city_countries": city_countries}


def _region_problems(path: tuple[str, ...], names: tuple[str, ...], known: dict[str, Any],
                     countries: tuple[str, ...]) -> list[Triple]:
    out: list[Triple] = []
    regions = known["regions"]
    sold = sorted(set(known["offer_regions"]) | known["cities"] | set(subdivisions()))
    for i, name in enumerate(names):
        if name.startswith(ON_PREM_PREFIX):
            continue
        if name not in regions and name not in known["cities"]:
            named = _country_not_city(name)
            if named:  # residency by country is placement.countries
                out.append(((*path, i), f"{name!r} is the country {named[1]}, not a region or city",
                            f"put {named[0]} in placement.countries (every region there), or name a region or "
                            "city"))
                continue
            hint = suggest(name, sold) or suggest(name, sorted(regions))  # the catalog's own regions first
            out.append(((*path, i), f"{name!r} is neither a region of the catalog nor a known city or state{hint}",
                        f"use a region of `infrafit catalog offers`, a city or US state (docs/workload-spec.md, "
                        f"places), or {ON_PREM_PREFIX}-<site> for hardware you place yourself"))
            continue
        where = regions.get(name, set())
        if countries and where and not where & set(countries):
            out.append(((*path, i), f"region {name!r} is in {', '.join(sorted(where))}, but placement.countries "
                                    f"allows only {', '.join(countries)}",
                        f"add {sorted(where)[0]} to placement.countries, or drop {name!r}"))
    return out


def name_problems(workload: Workload, catalog: Any) -> list[Triple]:
    """Every region, place and provider name of ``workload`` the catalog does not know, and every
    region/country contradiction, as (field path, what, fix)."""
    known = _known(catalog)
    pl, dep = workload.placement, workload.deployment
    out = _region_problems(("placement", "regions"), pl.regions, known, pl.countries)
    out += _region_problems(("placement", "training_regions"), pl.training_regions, known, pl.countries)
    names = sorted(set(known["regions"]) | known["cities"])
    for i, place in enumerate(pl.users_in):
        name = place.lower()
        if name not in known["regions"] and name not in known["cities"] and not (len(place) == 2 and place.isupper()):
            named = _country_not_city(place)
            if named:  # say which code to write
                out.append((("placement", "users_in", i), f"{place!r} is the country {named[1]}, not a place",
                            f"write its two-letter code {named[0]} (placed at its most populous city), or a city"))
                continue
            out.append((("placement", "users_in", i), f"{place!r} is not a known place{suggest(name, names)}",
                        "use a city of at least 250,000 people, a region of `infrafit catalog offers`, "
                        "or a two-letter country code"))
    out += _hardware_problems(workload, catalog)
    out += _owned_problems(workload, catalog)
    out += _owned_place_problems(workload, known)
    out += _current_problems(workload, catalog)
    for i, prov in enumerate(dep.exclude_providers):
        if provider_key(prov) not in known["providers"]:
            display = sorted(known["providers"].values())
            out.append((("deployment", "exclude_providers", i),
                        f"{prov!r} is not a provider in the catalog{suggest(prov, display)}",
                        f"use one of {', '.join(display)}"))
    return out


def owned_host(catalog: Any, accelerator: str, count: int, host: str | None) -> str | None:
    """The host id owned hardware sits in: the spec's ``host``, else the catalog's server build for the
    accelerator whose accelerator count divides ``count`` (the largest such box), else None."""
    hosts = catalog.hosts
    if host:
        return host if host in set(hosts["id"]) else None
    rows = hosts[(hosts["accelerator_id"] == accelerator) & (hosts["host_kind"].isin(["server", "edge_device"]))]
    if rows.empty:
        return None
    fits = rows[count % rows["accelerator_count"].astype(int) == 0]
    pick = (fits if not fits.empty else rows).assign(known_power=lambda f: f["power_w"].notna())
    pick = pick.sort_values(["known_power", "accelerator_count"], ascending=False)  # a build with its power first
    return str(pick["id"].iloc[0])


def region_country(known: dict[str, Any], name: str) -> str:
    """The country of a spec place name: a two-letter code is its own; a catalog region or a known city
    gives the one country the catalog sells it in (``us-east-1`` -> US); empty when unknown or ambiguous."""
    where = known["regions"].get(slug(name)) or known["city_countries"].get(slug(name), set())
    return next(iter(where)) if len(where) == 1 else place_country(name)  # a country code is its own


def owned_place_country(catalog: Any, name: str) -> str:
    """:func:`region_country` against ``catalog`` (the country an owned server's ``place`` is in)."""
    return region_country(_known(catalog), name)


def _owned_place_problems(workload: Workload, known: dict[str, Any]) -> list[Triple]:
    """An owned server's ``place`` must be a known region, city, country code or ``on-prem-<site>``, and
    inside the spec's own placement: a server the residency rules keep out could never be planned."""
    pl = workload.placement
    out: list[Triple] = []
    names = sorted(set(known["offer_regions"]) | known["cities"])
    for i, item in enumerate(workload.deployment.owned):
        place = item.place
        if not place:
            continue
        path = ("deployment", "owned", i, "place")
        key = slug(place)
        if place.startswith(ON_PREM_PREFIX):  # the team's own site: in the spec's country, but a region by name
            if pl.regions and key not in {slug(r) for r in pl.regions}:
                out.append((path, f"{place!r} is not one of placement.regions ({', '.join(pl.regions)}): the plan "
                                  "could never use these servers",
                            f"add {place!r} to placement.regions, or leave place out (the plan's on-prem site)"))
            continue
        code = len(place) == 2 and place.isupper()
        if not code and key not in known["regions"] and key not in known["cities"]:
            out.append((path, f"{place!r} is not a known place{suggest(key, names)}",
                        f"use a region of `infrafit catalog offers`, a city, a two-letter country code, or "
                        f"{ON_PREM_PREFIX}-<site> for your own data centre"))
            continue
        country = region_country(known, place)
        if pl.countries and country and country not in pl.countries:
            out.append((path, f"{place!r} is in {country}, but placement.countries allows only "
                              f"{', '.join(pl.countries)}: the plan could never use these servers",
                        f"add {country} to placement.countries, or leave the owned servers out"))
        elif pl.regions and key not in {slug(r) for r in pl.regions}:
            out.append((path, f"{place!r} is not one of placement.regions ({', '.join(pl.regions)}): the plan "
                              "could never use these servers",
                        f"add {place!r} to placement.regions, or leave place out (the plan's on-prem site)"))
    return out


def _owned_problems(workload: Workload, catalog: Any) -> list[Triple]:
    names = accelerator_names(catalog)
    out: list[Triple] = []
    if workload.deployment.owned and "on_prem" not in workload.deployment.allowed:
        out.append((("deployment", "owned"), "owned hardware is on-prem, but deployment.allowed leaves on_prem out",
                    "add on_prem to deployment.allowed (owned servers are planned as on-prem capacity)"))
    for i, item in enumerate(workload.deployment.owned):
        acc = names.get(item.accelerator.lower())
        if acc is None:
            out.append((("deployment", "owned", i, "accelerator"),
                        f"{item.accelerator!r} is not an accelerator in the catalog{suggest(item.accelerator, names)}",
                        "use an id or alias from `infrafit catalog accelerators`"))
            continue
        host = owned_host(catalog, acc, item.count, item.host)
        if host is None:
            what = (f"host {item.host!r} is not in hosts.csv" if item.host
                    else f"the catalog has no server build for {acc}")
            out.append((("deployment", "owned", i, "host"), what,
                        "name the server with host: (an id of `infrafit catalog hosts`), or add a host row with "
                        "--catalog-dir"))
            continue
        row = catalog.hosts.set_index("id").loc[host]
        if row["accelerator_id"] != acc:
            out.append((("deployment", "owned", i, "host"), f"host {host} holds {row['accelerator_id']}, not {acc}",
                        "name a host with that accelerator"))
        elif item.count < int(row["accelerator_count"]):
            out.append((("deployment", "owned", i, "count"),
                        f"{item.count} {acc} do not fill one {host} ({int(row['accelerator_count'])} per server)",
                        "give the count of accelerators you own in whole servers, or name a smaller host"))
    return out


def current_host(catalog: Any, accelerator: str, count: int, host: str | None, provider: str | None) -> str | None:
    """The host today's platform runs on: the spec's ``host``, else the catalog's instance or server of the
    accelerator whose size divides ``count`` (the provider's own first, then the largest), else None."""
    hosts = catalog.hosts
    if host:
        return host if host in set(hosts["id"]) else None
    rows = hosts[(hosts["accelerator_id"] == accelerator) & (hosts["accelerator_count"].astype(int) <= count)]
    rows = rows[count % rows["accelerator_count"].astype(int) == 0]
    if rows.empty:
        return None
    wanted = provider_key(provider) if provider else None
    mine = rows["provider"].map(provider_key).to_numpy() == wanted
    pick = rows.assign(mine=mine).sort_values(["mine", "accelerator_count", "id"], ascending=[False, False, True])
    return str(pick["id"].iloc[0])


def _current_problems(workload: Workload, catalog: Any) -> list[Triple]:
    cur = workload.current
    if cur is None:
        return []
    if workload.inference is not None and workload.training is not None:
        return [(("current",), "current: compares one platform with one workload, this spec both trains and serves",
                 "plan the serving and the training as two specs, each with its own current:")]
    names = accelerator_names(catalog)
    acc = names.get(cur.accelerator.lower())
    if acc is None:
        return [(("current", "accelerator"),
                 f"{cur.accelerator!r} is not an accelerator in the catalog{suggest(cur.accelerator, names)}",
                 "use an id or alias from `infrafit catalog accelerators`")]
    host = current_host(catalog, acc, cur.count, cur.host, cur.provider)
    if host is None:
        what = (f"host {cur.host!r} is not in hosts.csv" if cur.host
                else f"no instance or server of {acc} in hosts.csv holds a whole share of {cur.count}")
        return [(("current", "host"), what, "name the instance with host: (an id of `infrafit catalog hosts`), "
                 "or add a host row with --catalog-dir")]
    row = catalog.hosts.set_index("id").loc[host]
    if row["accelerator_id"] != acc:
        return [(("current", "host"), f"host {host} holds {row['accelerator_id']}, not {acc}",
                 "name a host with that accelerator")]
    if cur.count % int(row["accelerator_count"]):
        return [(("current", "count"), f"{cur.count} {acc} are not whole {host} ({int(row['accelerator_count'])} each)",
                 "give the accelerators you run today in whole instances, or name the host you run")]
    return []


class AcceleratorNames(dict[str, str]):
    """Accelerator id by name, looked up as ``Catalog.resolve_accelerator_id`` does (case, space, ``_`` and ``-``
    insensitive): the spec checks and the offer filters once compared lower-cased names only, so
    ``rtx_6000_ada`` (the plan table's own name for the chip) was refused where the catalog knew it."""

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, normalize_name(str(name)))

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, normalize_name(name))

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, normalize_name(name), default)


def accelerator_names(catalog: Any) -> AcceleratorNames:
    """Every accelerator id, its id without the vendor prefix and every alias (``Catalog.aliases``, normalized)
    -> accelerator id."""
    return AcceleratorNames(catalog.aliases)


def _hardware_problems(workload: Workload, catalog: Any) -> list[Triple]:
    hw = workload.hardware
    accs = catalog.accelerators.values()
    vendors = sorted({a.vendor for a in accs})
    families = sorted({a.family for a in accs})
    names = accelerator_names(catalog)
    out: list[Triple] = []
    for i, v in enumerate(hw.vendors):
        if v.lower() not in {x.lower() for x in vendors}:
            out.append((("hardware", "vendors", i), f"{v!r} is not a vendor in the catalog{suggest(v, vendors)}",
                        f"use one of {', '.join(vendors)}"))
    for i, f in enumerate(hw.families):
        if f.lower() not in {x.lower() for x in families}:
            out.append((("hardware", "families", i), f"{f!r} is not an accelerator family{suggest(f, families)}",
                        "use a family of `infrafit catalog accelerators` (e.g. NVIDIA Hopper, Google TPU)"))
    for key, values in (("accelerators", hw.accelerators), ("exclude", hw.exclude)):
        for i, name in enumerate(values):
            if name.lower() in names or (key == "exclude" and name.lower() in {x.lower() for x in families}):
                continue
            choices = sorted(names) + (families if key == "exclude" else [])
            kind = "an accelerator or family" if key == "exclude" else "an accelerator"
            out.append((("hardware", key, i), f"{name!r} is not {kind} in the catalog{suggest(name, choices)}",
                        "use an id or alias from `infrafit catalog accelerators`"))
    return out
