"""Offer rows a workload may use: deployment modes, excluded providers and data residency.

Pruned before any performance or cost work. Each family that loses every offer gets one line
with the numbers that excluded it (how many offers, where they are). On-prem purchases have no
region: the hardware goes where the user puts it, so they are placed at the first allowed on-prem
site (a region whose name starts with ``on-prem``), else the first allowed region or country.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from infrafit.workload.names import provider_key, subdivision_cities, subdivisions

MODE_KIND = {"cloud_on_demand": "cloud", "cloud_spot": "cloud", "cloud_reserved_1y": "cloud",
             "cloud_reserved_3y": "cloud", "cloud_capacity_block": "cloud", "dedicated_monthly": "dedicated",
             "on_prem": "on_prem"}


@dataclass
class OfferFilter:
    """The kept offers (with ``family``, ``vendor``, ``kind``, ``place`` columns) and the exclusions."""

    kept: pd.DataFrame
    excluded: list[dict[str, str]] = field(default_factory=list)


def _slug(text: object) -> str:
    return str(text or "").strip().lower().replace(" ", "-")


def per_unique(values: pd.Series, fn) -> pd.Series:
    """``fn`` applied once per distinct value and mapped back (a catalog of 50,000 offers has a few
    hundred distinct providers, regions and accelerators: per-row Python calls dominated plan time)."""
    return values.map({u: fn(u) for u in pd.unique(values)})


def annotated_offers(catalog) -> pd.DataFrame:
    """The catalog's offers with family, vendor and kind, built once per loaded catalog (read-only)."""
    if "annotated_offers" not in catalog.memo:
        catalog.memo["annotated_offers"] = annotate(catalog.offers, catalog)
    return catalog.memo["annotated_offers"]


def annotate(offers: pd.DataFrame, catalog) -> pd.DataFrame:
    """Add family, vendor and accelerator kind to each offer row."""
    accs = catalog.accelerators
    out = offers.copy()
    ids = out["accelerator_id"]
    out["family"] = per_unique(ids, lambda a: accs[a].family if a in accs else "unknown")
    out["vendor"] = per_unique(ids, lambda a: accs[a].vendor if a in accs else "unknown")
    out["acc_kind"] = per_unique(ids, lambda a: accs[a].kind if a in accs else "unknown")
    return out


def place_on_prem(offers: pd.DataFrame, regions: tuple[str, ...], countries: tuple[str, ...]) -> pd.DataFrame:
    """Give region-less on-prem rows the user's on-prem site (or first allowed region/country)."""
    site = next((r for r in regions if r.startswith("on-prem")), regions[0] if regions else "on-prem")
    country = countries[0] if countries else ""
    blank = (offers["mode"] == "on_prem") & per_unique(offers["region"], lambda r: str(r or "").strip() == "" or
                                                       r != r).astype(bool)
    out = offers.copy()
    out.loc[blank, "region"] = site
    out.loc[blank, "country"] = country
    out["placed"] = blank
    return out


def residency_mask(offers: pd.DataFrame, regions: tuple[str, ...], countries: tuple[str, ...]) -> np.ndarray:
    """True where the offer's country is allowed and, when regions are given, its region or city is
    one of them, or its city lies in a US state among them (``virginia``: Ashburn's us-east-1 and us-east4,
    Azure's East US; ``names.subdivision_cities``); countries alone are enough when no region is named."""
    n = len(offers)
    if not regions and not countries:
        return np.ones(n, bool)
    wanted = set(countries)
    country_ok = (per_unique(offers["country"], lambda c: str(c if c == c else "").upper() in wanted)
                  .to_numpy(bool) if countries else np.ones(n, bool))
    if not regions:
        return country_ok
    names = {_slug(r) for r in regions}
    region_ok = (per_unique(offers["region"], lambda r: _slug(r if r == r else "") in names).to_numpy(bool)
                 | per_unique(offers["city"], lambda c: _slug(c if c == c else "") in names).to_numpy(bool))
    for name in names & set(subdivisions()):
        cities, country = subdivision_cities(name), subdivisions()[name][0]
        region_ok |= (per_unique(offers["city"], lambda c, cs=cities: _slug(c if c == c else "") in cs).to_numpy(bool)
                      & per_unique(offers["country"], lambda c, cc=country: str(c if c == c else "").upper() == cc)
                      .to_numpy(bool))
    placed = offers["placed"].to_numpy(bool) if "placed" in offers else np.zeros(n, bool)
    return (region_ok | placed) & country_ok


def _where(rows: pd.DataFrame, limit: int = 4) -> str:
    places = sorted({f"{r}" if not c else f"{r} ({c})" for r, c in zip(rows["region"].fillna(""),
                                                                          rows["country"].fillna(""), strict=True)
                     if r})
    more = f" and {len(places) - limit} more" if len(places) > limit else ""
    return ", ".join(places[:limit]) + more


def offer_verified(offers: pd.DataFrame) -> np.ndarray:
    """(rows,) True unless the offer is marked ``availability: unverified`` (copied from another region
    by a price rule; the SKU may not be sold there). Rows without the column are verified."""
    if "availability" not in offers:
        return np.ones(len(offers), bool)
    return (offers["availability"].fillna("verified").astype(str) != "unverified").to_numpy()


#: Modes whose offers are market rates for hardware sold by many resellers (not one cloud's own silicon).
MARKET_MODES: tuple[str, ...] = ("on_prem", "dedicated_monthly")


def price_older_than(offers, days: int, today: date) -> np.ndarray:
    """True for offers whose ``retrieved_on`` lies more than ``days`` before ``today``."""
    dates = pd.to_datetime(offers["retrieved_on"], errors="coerce")
    return ((pd.Timestamp(today) - dates).dt.days > days).to_numpy()


OWNED_PROVIDER = "owned"


def owned_offers(catalog, workload, today: date) -> pd.DataFrame:
    """One on-prem offer per ``deployment.owned`` entry: the servers the team already has, with no
    purchase price (sunk: no depreciation, no resale, no support contract), so only power, colocation
    and operations are priced; ``owned_instances`` caps how many servers a plan may use."""
    from infrafit.workload.names import ON_PREM_PREFIX, accelerator_names, owned_host, owned_place_country

    names = accelerator_names(catalog)
    hosts = catalog.hosts.set_index("id")
    rows = []
    for i, item in enumerate(workload.deployment.owned):
        acc = names[item.accelerator.lower()]
        host = owned_host(catalog, acc, item.count, item.host)
        per = int(hosts.at[host, "accelerator_count"])
        own_site = not item.place or item.place.startswith(ON_PREM_PREFIX)  # the team's site: in the spec's country
        countries = workload.placement.countries
        country = (countries[0] if countries else "") if own_site else owned_place_country(catalog, item.place)
        rows.append({
            "id": f"owned_{i}_{acc}", "provider": OWNED_PROVIDER, "region": item.place or "", "city": "",
            "country": country, "mode": "on_prem", "host_id": host, "accelerator_id": acc,
            "accelerator_count": per, "usd_per_hour": np.nan, "usd_per_month": np.nan, "contract_months": np.nan,
            "purchase_usd": 0.0, "host_included": True, "confidence": "high", "derived": False,
            "availability": "verified", "user_row": False, "origin_file": "spec", "origin_line": 0,
            "includes": "hardware you own: power, colocation and operations priced; the purchase is sunk",
            "notes": f"deployment.owned[{i}]: {item.count} x {acc} in {item.count // per} x {host}",
            "source": "the workload spec (deployment.owned)", "retrieved_on": today.isoformat(),
            "owned_instances": item.count // per})
    return pd.DataFrame(rows)


def filter_offers(catalog, workload, allowed_kinds: tuple[str, ...], regions: tuple[str, ...],
                  countries: tuple[str, ...], verified_only: bool = False, max_price_age_days: int | None = None,
                  today: date | None = None) -> OfferFilter:
    """Offers in an allowed mode, from an allowed provider, inside the residency constraint."""
    offers = annotated_offers(catalog)
    if workload.deployment.owned:
        owned = annotate(owned_offers(catalog, workload, today or date.today()), catalog)
        offers = pd.concat([offers, owned], ignore_index=True)
    offers = place_on_prem(offers, regions, countries)
    kind = offers["mode"].map(MODE_KIND).fillna("other").to_numpy()
    mode_ok = np.isin(kind, allowed_kinds)
    excluded_providers = {provider_key(p) for p in workload.deployment.exclude_providers}
    provider_ok = ~per_unique(offers["provider"], lambda p: provider_key(p) in excluded_providers).to_numpy(bool)
    place_ok = residency_mask(offers, regions, countries)
    # A price without its host (a GPU-only part of a cloud VM, a bare baseboard) is a component, not
    # something a team can deploy at that price: planning on it would understate the cost.
    complete = offers["host_included"].fillna(True).astype(bool).to_numpy() if "host_included" in offers \
        else np.ones(len(offers), bool)
    hardware_ok, hardware_lines = hardware_mask(offers, catalog, workload)
    billing_ok, billing_lines = pay_per_use_mask(offers, workload, mode_ok & provider_ok & place_ok & complete)
    edge_ok, edge_lines = edge_device_mask(offers, catalog, workload, mode_ok & provider_ok & place_ok & complete)
    keep = mode_ok & provider_ok & place_ok & complete & hardware_ok & billing_ok & edge_ok
    lines = list(hardware_lines) + billing_lines + edge_lines
    later: list[tuple[np.ndarray, str]] = []
    if verified_only:
        verified = offer_verified(offers)
        later.append((verified, "are unverified in their region (--verified-only)"))
        gone = int((keep & ~verified).sum())
        keep &= verified
        if gone:
            lines.append({"what": "unverified offers", "reason": f"--verified-only drops {gone} offers no source "
                          "confirms in their region (availability: unverified)"})
    if workload.deployment.require:
        from infrafit.search.require import exclusion_lines, requirement_masks

        masks = requirement_masks(offers, catalog, workload)
        lines += exclusion_lines(offers, masks, keep)
        for q, met, _no in masks:
            later.append((met, f"are from providers not known to meet deployment.require {q}"))
            keep &= met
    if max_price_age_days is not None:
        old = price_older_than(offers, max_price_age_days, today or date.today())
        later.append((~old, f"are priced more than {max_price_age_days} days ago (--max-price-age-days)"))
        gone = int((keep & old).sum())
        keep &= ~old
        if gone:
            lines.append({"what": "old prices", "reason": f"--max-price-age-days {max_price_age_days} drops {gone} "
                          f"offers priced more than {max_price_age_days} days ago"})
    lines += _owned_left_out(offers, keep, [(mode_ok, "its mode is not in deployment.allowed"),
                                            (provider_ok, "deployment.exclude_providers names it"),
                                            (place_ok, "its place is outside placement.regions/countries"),
                                            (hardware_ok, "the hardware filters (hardware:) leave it out"),
                                            (billing_ok, "deployment.billing: pay_per_use keeps purchases out"),
                                            (edge_ok, "edge devices serve only inference.mode: edge"),
                                            *[(m, f"it is among the offers that {why}") for m, why in later]])
    said = {line["what"] for line in lines}
    for family, rows in offers.groupby("family", sort=True):
        idx = rows.index.to_numpy()
        if keep[idx].any() or family in said:
            continue
        lines.append({"what": family, "reason": _family_reason(rows, mode_ok[idx], provider_ok[idx],
                                                               place_ok[idx], complete[idx], allowed_kinds,
                                                               regions, countries,
                                                               [(m[idx], why) for m, why in later])})
    return OfferFilter(offers[keep].reset_index(drop=True), lines)


def _owned_left_out(offers: pd.DataFrame, keep: np.ndarray,
                    masks: list[tuple[np.ndarray, str]]) -> list[dict[str, str]]:
    """One Excluded line per ``deployment.owned`` server a filter drops, naming the filter: hardware the
    team already has is never left out silently."""
    owned = (offers["provider"] == OWNED_PROVIDER).to_numpy()
    out = []
    for i in np.flatnonzero(owned & ~keep):
        why = next((text for mask, text in masks if not mask[i]), "a filter leaves it out")
        out.append({"what": "owned hardware", "reason": f"{offers['notes'].iloc[i]} at "
                    f"{offers['region'].iloc[i] or 'the on-prem site'}: not planned, {why}"})
    return out


def pay_per_use_mask(offers: pd.DataFrame, workload, eligible: np.ndarray) -> tuple[np.ndarray, list[dict[str, str]]]:
    """``deployment.billing: pay_per_use``, when the spec says it, keeps commitments out unless asked:
    reservations always, monthly contracts and purchases unless ``deployment.allowed`` names them."""
    dep = workload.deployment
    if "billing" not in dep.model_fields_set or dep.billing != "pay_per_use":
        return np.ones(len(offers), bool), []
    asked = set(dep.allowed) if "allowed" in dep.model_fields_set else set()
    out = ["cloud_reserved_1y", "cloud_reserved_3y"]
    out += [m for m, kind in (("dedicated_monthly", "dedicated"), ("on_prem", "on_prem")) if kind not in asked]
    ok = ~offers["mode"].isin(out).to_numpy()
    gone = int((eligible & ~ok).sum())
    if not gone:
        return ok, []
    modes = ", ".join(sorted(set(offers.loc[eligible & ~ok, "mode"])))
    why = (f"deployment.billing: pay_per_use keeps out {gone} offers that commit to a term ({modes}); list "
           "dedicated or on_prem in deployment.allowed, or drop billing, to compare them")
    return ok, [{"what": "commitments", "reason": why}]


def edge_device_mask(offers: pd.DataFrame, catalog, workload,
                     eligible: np.ndarray) -> tuple[np.ndarray, list[dict[str, str]]]:
    """Edge devices (hosts of kind ``edge_device``: a module on a developer-kit carrier) serve only
    ``inference.mode: edge``. They have no remote management, redundant power or rack mounting, so they
    are not a server for training or a datacenter service, however cheap their FLOPs."""
    inf = workload.inference
    if inf is not None and inf.mode == "edge" and workload.task == "inference":
        return np.ones(len(offers), bool), []
    edge_hosts = set(catalog.hosts.loc[catalog.hosts["host_kind"] == "edge_device", "id"])
    edge = per_unique(offers["host_id"], lambda h: h in edge_hosts).to_numpy(bool)
    gone = int((eligible & edge).sum())
    if not gone:
        return ~edge, []
    names = ", ".join(sorted(set(offers.loc[eligible & edge, "accelerator_id"])))
    why = (f"{gone} edge-device offers ({names}) serve only inference.mode: edge: a developer kit has no remote "
           "management, redundant power or rack mounting. To fix: set inference.mode: edge for inference that "
           "runs on the device")
    return ~edge, [{"what": "edge devices", "reason": why}]


def single_source_accelerators(catalog) -> set[str]:
    """Accelerators only one provider sells (once per loaded catalog). Hardware bought or rented at a
    market rate (provider "purchase", "dedicated (market rate)") is sold by many resellers and owned or
    movable: second-sourced by construction."""
    if "single_source" not in catalog.memo:
        sellers = catalog.offers.groupby("accelerator_id")["provider"].nunique()
        market = set(catalog.offers.loc[catalog.offers["mode"].isin(MARKET_MODES), "accelerator_id"])
        catalog.memo["single_source"] = {a for a, n in sellers.items() if n < 2 and a not in market}
    return catalog.memo["single_source"]


def hardware_mask(offers: pd.DataFrame, catalog, workload) -> tuple[np.ndarray, list[dict[str, str]]]:
    """Offers the spec's ``hardware`` filters and ``deployment.portability_required`` keep, and one
    exclusion line per family they remove entirely (with the rule that removed it)."""
    from infrafit.workload.names import accelerator_names

    hw, names = workload.hardware, accelerator_names(catalog)
    acc = offers["accelerator_id"].to_numpy(dtype=object)
    fam = offers["family"].to_numpy(dtype=object)
    vendor = offers["vendor"].to_numpy(dtype=object)
    rules: list[tuple[str, np.ndarray]] = []
    if hw.vendors:
        wanted = {v.lower() for v in hw.vendors}
        rules.append((f"hardware.vendors {list(hw.vendors)}", np.array([str(v).lower() in wanted for v in vendor])))
    if hw.families:
        wanted = {f.lower() for f in hw.families}
        rules.append((f"hardware.families {list(hw.families)}", np.array([str(f).lower() in wanted for f in fam])))
    if hw.accelerators:
        wanted = {names.get(a.lower(), a) for a in hw.accelerators}
        rules.append((f"hardware.accelerators {list(hw.accelerators)}", offers["accelerator_id"].isin(wanted)
                      .to_numpy()))
    if hw.exclude:
        gone = {names.get(x.lower(), x) for x in hw.exclude} | {x.lower() for x in hw.exclude}
        rules.append((f"hardware.exclude {list(hw.exclude)}",
                      np.array([a not in gone and str(f).lower() not in gone for a, f in zip(acc, fam, strict=True)])))
    if workload.deployment.portability_required:
        single = single_source_accelerators(catalog)
        rules.append(("deployment.portability_required (hardware sold by one provider only: "
                      "no second source to move to)", ~offers["accelerator_id"].isin(single).to_numpy()))
    keep = np.ones(len(offers), bool)
    lines = []
    for why, ok in rules:
        for family in sorted(set(fam[keep & ~ok])):
            if not (keep & ok & (fam == family)).any():
                lines.append({"what": str(family), "reason": f"removed by {why}"})
        keep &= ok
    return keep, lines


def _family_reason(rows, mode_ok, provider_ok, place_ok, complete, allowed_kinds, regions, countries,
                   later=()) -> str:
    """Why a family has no offer left: the first filter, in order, that took its last offers; ``later`` holds
    (mask, sentence) for the filters after completeness (--verified-only, --max-price-age-days)."""
    n = len(rows)
    if not mode_ok.any():
        modes = sorted(set(rows["mode"]))
        return (f"none of its {n} offers is in an allowed deployment ({', '.join(allowed_kinds)}); "
                f"it is sold as {', '.join(modes)}")
    if not (mode_ok & provider_ok).any():
        return f"all {int(mode_ok.sum())} offers in allowed modes come from excluded providers"
    allowed = mode_ok & provider_ok & place_ok
    if not allowed.any():
        where = ", ".join(list(regions) + list(countries))
        sub = rows[mode_ok & provider_ok]
        return f"no offer inside the residency constraint ({where}); its {len(sub)} offers are in {_where(sub)}"
    if not (allowed & complete).any():
        return (f"its {int(allowed.sum())} allowed offers are component prices without a host (a GPU-only part of "
                "a VM price, or a bare baseboard); add a complete price with --catalog-dir")
    left = allowed & complete
    for mask, sentence in later:
        if not (left & mask).any():
            return f"its {int(left.sum())} allowed offers {sentence}"
        left &= mask
    return f"its {int(left.sum())} allowed offers were all removed by the filters above"


def families_without_offers(catalog, offered_families: set[str]) -> list[dict[str, str]]:
    """Families in the accelerator table with no price in the catalog at all."""
    fams = sorted({a.family for a in catalog.accelerators.values()} - offered_families)
    return [{"what": f, "reason": "no price for it in the catalog (add an offer with --catalog-dir)"} for f in fams]


#: What makes two offers the same thing to buy: the same instance from the same seller, in the same
#: mode and place, for the same term. Among those, a higher price on every price column is never better.
DOMINANCE_KEY = ("provider", "host_id", "mode", "region", "country", "accelerator_id", "accelerator_count",
                 "contract_months")
PRICE_COLUMNS = ("usd_per_hour", "usd_per_month", "purchase_usd")


def prune_dominated(offers: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``offers`` without those dominated on every axis the plan ranks by: another offer of the same
    ``DOMINANCE_KEY`` with no higher price on any column (a missing price counts as absent for both).
    Equal prices keep the most recently retrieved, then the first in the catalog. Returns the kept
    rows (in catalog order) and how many were pruned. Runs before any performance model, so a catalog
    with many copies of one SKU plans in the time of one."""
    if offers.empty:
        return offers, 0
    cols = [c for c in DOMINANCE_KEY if c in offers]
    key = offers.groupby(cols, dropna=False, sort=False).ngroup().to_numpy()
    prices = np.column_stack([pd.to_numeric(offers[c], errors="coerce").to_numpy(float) if c in offers
                              else np.full(len(offers), np.nan) for c in PRICE_COLUMNS])
    prices = np.where(np.isnan(prices), np.inf, prices)
    fresh = pd.to_datetime(offers["retrieved_on"], errors="coerce").to_numpy()
    order = np.lexsort((np.arange(len(offers)), -fresh.astype("int64"), *prices.T[::-1], key))
    keep = np.zeros(len(offers), bool)
    sorted_key, sorted_prices = key[order], prices[order]
    starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    ends = np.r_[starts[1:], len(order)]
    # Common case, vectorised: the group's first (best-sorted) offer is no dearer on any column than
    # the group's cheapest per column, so it dominates the whole group.
    lowest = np.minimum.reduceat(sorted_prices, starts, axis=0)
    whole = np.all(sorted_prices[starts] <= lowest, axis=1)
    keep[order[starts[whole]]] = True
    for s, e in zip(starts[~whole], ends[~whole], strict=True):
        _keep_front(order[s:e], prices, keep)
    kept = offers[keep]
    return kept.reset_index(drop=True), int(len(offers) - keep.sum())


def _keep_front(idx: np.ndarray, prices: np.ndarray, keep: np.ndarray) -> None:
    """Mark the undominated rows of one group (``idx`` sorted best first): a row is dropped when an
    earlier kept row is no more expensive on every price column."""
    front: list[int] = []
    for i in idx:
        if not any(np.all(prices[j] <= prices[i]) for j in front):
            front.append(int(i))
    keep[front] = True
