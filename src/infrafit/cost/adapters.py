"""Thin adapters: the workload spec and catalog rows -> the plain arrays the cost core takes.

The core (``usage``, ``capacity_plan``, ``modes``, ``tco``) never sees a ``Workload`` or a
``Catalog``; these functions read them once and hand numbers over. Cost factors (egress tiers, storage, electricity,
PUE,
colocation, maintenance) come from the catalog's cost tables through ``cost.factors``; where the
catalog lacks a figure for the offer's provider or place, the stand-in is named in ``OfferArrays.notes``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from infrafit.catalog.loader import read_table
from infrafit.catalog.schema import Column, Schema, num, provenance, text
from infrafit.cost.capacity_plan import Demand, inference_demand, training_demand
from infrafit.cost.carbon import facility_pue, grid_intensity
from infrafit.cost.factors import (
    BLOCK_COLUMNS,
    LOCAL_STORAGE_MODES,
    billing_rule,
    colocation_usd_per_kw_month,
    egress_tiers,
    electricity_usd_per_kwh,
    maintenance_share,
    norm_name,
    pue_ratio,
    purchase_limits,
    spot_hazard,
    storage_prices,
)
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import MODES, PER_START_MODES, CostParams
from infrafit.cost.usage import LoadProfile, batch_starts_per_month, growth_factors, month_profile
from infrafit.units import HOURS_PER_MONTH, HOURS_PER_WEEK, SECONDS_PER_HOUR

OPS_LABOUR = Schema(
    "ops_labour",
    (
        text("mode", "deployment mode", choices=MODES),
        Column("managed", "bool", doc="true: the provider manages drivers, images and scaling"),
        text("host_kind", "any | edge_device: a row for one kind of host overrides the any row",
             choices=("any", "edge_device")),
        text("work", "any | batch: a row for scheduled batch inference (unattended between runs: no on-call, "
             "autoscaler or health checks) overrides the any row", choices=("any", "batch")),
        num("hours_per_month", "engineer hours per month, fixed part"),
        num("hours_per_instance_month", "engineer hours per instance (VM, server) held per month"),
        text("notes", "what the hours cover", required=False),
        *provenance(),
    ),
    key=("mode", "managed", "host_kind", "work"),
    doc="Operations labour by deployment mode (documented assumptions; see docs/cost.md).",
)
OPS_LABOUR_PATH = Path(__file__).resolve().parents[1] / "catalog" / "data" / "ops_labour.csv"

#: Host power when the catalog's hosts table has no ``power_w`` for the server (genuinely missing
#: data): DGX H100 10.2 kW max minus 8 x 700 W GPUs, per accelerator slot (derived).
FALLBACK_HOST_POWER_W_PER_ACCELERATOR = (575.0, "DGX H100 10.2 kW max minus 8 x 700 W GPUs, per GPU slot (derived)")
RESERVED_TERM_MONTHS = {"cloud_reserved_1y": 12.0, "cloud_reserved_3y": 36.0}


@lru_cache(maxsize=4)
def ops_labour_table(path: str | None = None) -> pd.DataFrame:
    """The validated ops_labour.csv (cached)."""
    return read_table(Path(path) if path else OPS_LABOUR_PATH, OPS_LABOUR)


def ops_hours(modes: np.ndarray, managed, host_kinds=None, work: str = "any") -> tuple[np.ndarray, np.ndarray]:
    """(fixed, per instance) engineer hours per month for each mode: the managed row where ``managed``
    (one flag, or one per row: the row runs on its provider's managed platform) and one exists, the
    self-managed row otherwise; a row for the host's kind (``edge_device``) overrides the ``any`` row of
    its mode, and a row for the work (``batch``: scheduled batch inference) the ``any`` row of that."""
    table = ops_labour_table()
    kinds = np.full(len(modes), "any", dtype=object) if host_kinds is None else np.asarray(host_kinds, dtype=object)
    flags = np.broadcast_to(np.asarray(managed, dtype=bool), (len(modes),))
    by_key: dict[tuple[str, str, bool], tuple[float, float]] = {}
    for mode, kind, flag in set(zip(modes, kinds, flags.tolist(), strict=True)):
        rows = table[table["mode"] == mode]
        kind_rows = rows["host_kind"] == kind
        rows = rows[kind_rows] if kind_rows.any() else rows[rows["host_kind"] == "any"]
        work_rows = rows["work"] == work
        rows = rows[work_rows] if work_rows.any() else rows[rows["work"] == "any"]
        pick = rows[rows["managed"] == flag] if (rows["managed"] == flag).any() else rows[~rows["managed"]]
        by_key[(mode, kind, flag)] = (float(pick["hours_per_month"].iloc[0]),
                                      float(pick["hours_per_instance_month"].iloc[0]))
    hours = np.array([by_key[(m, k, f)] for m, k, f in zip(modes, kinds, flags.tolist(), strict=True)],
                     dtype=float).reshape(len(modes), 2)
    return hours[:, 0], hours[:, 1]


def managed_modes() -> frozenset[str]:
    """Modes whose operations change on a managed platform (ops_labour.csv has a managed row for them)."""
    table = ops_labour_table()
    return frozenset(table.loc[table["managed"], "mode"])


def _platform_table(catalog, work: str) -> pd.DataFrame | None:
    """cost_managed.csv rows for ``work``: its own rows where it has any, else the ``any`` rows."""
    table = catalog.cost_factors.get("managed")
    if table is None or table.empty:
        return None
    kind = table["work"] if "work" in table else pd.Series("any", index=table.index)
    return table[kind == work] if (kind == work).any() else table[kind == "any"]


def platform_for(catalog, provider: str, work: str = "any") -> str:
    """The managed platform ``provider`` runs ``work`` on (cost_managed.csv), "" when none."""
    table = _platform_table(catalog, work)
    if table is None:
        return ""
    names = [str(n) for p, n in zip(table["provider"], table["platform"], strict=True)
             if norm_name(str(p)) == norm_name(provider)]
    return names[0] if names else ""


def managed_platforms(catalog, rows: pd.DataFrame, prefer: bool,
                      work: str = "any") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N,) per offer row: whether it runs on its provider's managed platform, the platform's name ("" when
    not) and its fee in USD per month. Only when the workload prefers managed services
    (``deployment.managed_preferred``), only for a provider with a platform in ``cost_managed.csv`` for the
    ``work`` (``batch``: its managed batch service, else its ``any`` platform) and only in a mode whose
    operations a platform changes; every other row is self-managed at no fee."""
    n = len(rows)
    table = _platform_table(catalog, work)
    if not prefer or table is None or n == 0:
        return np.zeros(n, bool), np.full(n, "", dtype=object), np.zeros(n)
    by = {norm_name(str(p)): (str(name), float(fee)) for p, name, fee in
          zip(table["provider"], table["platform"], table["usd_per_cluster_hour"], strict=True)}
    found = [by.get(norm_name(str(p))) for p in rows["provider"]]
    ok = np.array([f is not None for f in found], bool) & np.isin(rows["mode"].to_numpy(dtype=object),
                                                                 sorted(managed_modes()))
    # a platform that sells instances at its own rate (SageMaker AI's ml.* instances) runs only the on-demand
    # offers of the hosts and regions it has a rate for
    rated = rated_platforms(catalog)
    if rated:
        sells = np.isfinite(managed_instance_rates(catalog, rows, [f[0] if f else "" for f in found]))
        on_rated = np.array([f is not None and (norm_name(str(p)), f[0]) in rated
                             for p, f in zip(rows["provider"], found, strict=True)], bool)
        ok &= ~on_rated | sells
    names = np.array([f[0] if f and k else "" for f, k in zip(found, ok, strict=True)], dtype=object)
    fees = np.array([f[1] * HOURS_PER_MONTH if f and k else 0.0 for f, k in zip(found, ok, strict=True)])
    return ok, names, fees


def rated_platforms(catalog) -> set[tuple[str, str]]:
    """(provider, platform) pairs that sell instances at their own rate (``cost_managed_instances.csv``)."""
    table = catalog.cost_factors.get("managed_instances")
    if table is None or table.empty:
        return set()
    return {(norm_name(str(p)), str(n)) for p, n in zip(table["provider"], table["platform"], strict=True)}


def managed_instance_rates(catalog, rows: pd.DataFrame, platforms=None) -> np.ndarray:
    """(N,) USD per instance-hour each on-demand offer row pays on a managed platform that sells the row's
    host in the row's region at its own rate (``cost_managed_instances.csv``: SageMaker AI's ml.g5.xlarge
    for EC2's g5.xlarge); NaN for every other row. With ``platforms`` ((N,) platform names), only that
    platform's rate counts for each row (AWS Batch bills the VM's rate, not SageMaker's)."""
    out = np.full(len(rows), np.nan)
    table = catalog.cost_factors.get("managed_instances")
    if table is None or table.empty or len(rows) == 0:
        return out
    rate: dict[tuple[str, str, str], tuple[str, float]] = {}
    for p, n, h, r, u in zip(table["provider"], table["platform"], table["host_id"], table["region"],
                             table["usd_per_hour"], strict=True):
        rate.setdefault((norm_name(str(p)), str(h), str(r)), (str(n), float(u)))
    names = [None] * len(rows) if platforms is None else list(platforms)
    for i, (p, h, r, m, want) in enumerate(zip(rows["provider"], rows["host_id"], rows["region"], rows["mode"],
                                               names, strict=True)):
        hit = rate.get((norm_name(str(p)), str(h), str(r))) if m == "cloud_on_demand" else None
        if hit is not None and (want is None or hit[0] == str(want)):
            out[i] = hit[1]
    return out


def _spot_hazards(catalog, rows: pd.DataFrame) -> np.ndarray:
    """(N,) published interruptions per instance-hour of each spot row (``factors.spot_hazard``); NaN
    where none is published (``CostParams.spot_interruptions_per_hour_default`` applies)."""
    out = np.full(len(rows), np.nan)
    spot = np.flatnonzero(rows["mode"].to_numpy(dtype=object) == "cloud_spot")
    cache: dict[tuple[str, str, str], float] = {}
    for i in spot:
        key = (str(rows["provider"].iloc[i]), str(rows["host_id"].iloc[i]), str(rows["region"].iloc[i]))
        if key not in cache:
            cache[key] = spot_hazard(catalog.cost_factors, *key)[0]
        out[i] = cache[key]
    return out


def _spot_fallback(offers: pd.DataFrame) -> np.ndarray:
    """On-demand price of the same host, provider and region, for spot's realtime fallback."""
    keys = ["provider", "region", "host_id"]
    od = offers[offers["mode"] == "cloud_on_demand"].groupby(keys, dropna=False, as_index=False)["usd_per_hour"].min()
    merged = offers[keys].merge(od, on=keys, how="left")["usd_per_hour"].to_numpy(dtype=float)
    return np.where(offers["mode"].to_numpy(dtype=object) == "cloud_spot", merged, np.nan)


def _site(row, site_region: str, site_country: str) -> tuple[str, str]:
    """Where an owned or rented server draws power: the offer's region and country, or the user's
    site for rows that have none (on-prem purchase prices are not tied to a place)."""
    region = "" if pd.isna(row.region) else str(row.region)
    country = "" if pd.isna(row.country) else str(row.country)
    return (region or site_region, country or site_country)


def _column(rows: pd.DataFrame, name: str) -> pd.Series:
    """A text column with missing cells as ""; all "" when the rows have no such column."""
    if name not in rows:
        return pd.Series([""] * len(rows))
    return rows[name].where(rows[name].notna(), "").astype(str)


def _pays_power(mode: str, includes: object) -> bool:
    """On-prem always pays its power; a dedicated rental only when its price does not include it."""
    return mode == "on_prem" or (mode == "dedicated_monthly" and "power" not in str(includes or "").lower())


def _site_factors(catalog, rows: pd.DataFrame, site_region: str, site_country: str, sector: str,
                  facility: str, maintenance_item: str | None) -> tuple[dict[str, np.ndarray], list[list[str]]]:
    """Per row: USD/kWh, PUE, colocation USD/kW-month, maintenance share (0 where not paid), notes.
    One lookup per distinct (mode, place), applied to its rows at once."""
    f = catalog.cost_factors
    n = len(rows)
    out = {k: np.zeros(n) for k in ("usd_per_kwh", "colocation_usd_per_kw_month", "maintenance_share_per_year")}
    out["pue"] = np.ones(n)
    notes: list[list[str]] = [[] for _ in range(n)]
    includes = rows["includes"] if "includes" in rows else pd.Series([""] * n)
    modes = rows["mode"].to_numpy(dtype=object)
    pays = np.array([_pays_power(m, inc) for m, inc in zip(modes, includes, strict=True)], dtype=bool)
    region = rows["region"].where(rows["region"].notna(), "").astype(str).replace("", site_region)
    country = rows["country"].where(rows["country"].notna(), "").astype(str).replace("", site_country)
    keys = pd.MultiIndex.from_arrays([modes, region.to_numpy(), country.to_numpy()])
    codes, uniques = pd.factorize(keys)
    for k, (mode, reg, ctry) in enumerate(uniques):
        idx = np.flatnonzero((codes == k) & pays)
        if idx.size == 0:
            continue
        kwh, note = electricity_usd_per_kwh(f, reg, ctry, sector)
        found = [note] if note else []
        colo, share = 0.0, 0.0
        if mode == "on_prem":
            colo, note = colocation_usd_per_kw_month(f, reg, ctry)
            share = maintenance_share(f, maintenance_item)
            found += [note] if note else []
        for name, value in (("usd_per_kwh", kwh), ("pue", pue_ratio(f, facility)),
                            ("colocation_usd_per_kw_month", colo), ("maintenance_share_per_year", share)):
            out[name][idx] = value
        for i in idx:
            notes[i] += found
    return out, notes


def _table_providers(factors: dict, name: str) -> list[str]:
    table = factors.get(name)
    return [] if table is None or table.empty else [norm_name(v) for v in table["provider"].unique()]


def _provider_factors(catalog, rows: pd.DataFrame, notes: list[list[str]]):
    """Egress tiers (N, T) and storage prices by tier (N,) from the provider's catalog rows: one lookup
    per provider (and per provider and mode for storage), applied to its rows at once."""
    f = catalog.cost_factors
    n = len(rows)
    storage = {"hot": np.zeros(n), "archive": np.zeros(n)}
    providers = rows["provider"].to_numpy(dtype=object)
    modes = rows["mode"].to_numpy(dtype=object)
    p_codes, p_uniques = pd.factorize(providers)
    # A provider with no row in a factor table gets that table's stand-in: look it up in an empty table
    # (no scan of the whole table per unknown provider, which a catalog of many resellers has plenty of).
    listed = {name: set(_table_providers(f, name)) for name in ("egress", "storage")}
    ladders = [egress_tiers(f if norm_name(prov) in listed["egress"] else {}, prov) for prov in p_uniques]
    width = max((len(u) for u, _, _ in ladders), default=1)
    upto_gb = np.full((n, width), np.inf)
    usd_per_gb = np.zeros((n, width))
    for k, (upto, price, note) in enumerate(ladders):  # shorter ladders padded with ($0, inf) tiers
        idx = np.flatnonzero(p_codes == k)
        upto_gb[idx, :len(upto)], usd_per_gb[idx, :len(price)] = upto, price
        if note:
            for i in idx:
                notes[i].append(note)
    pm_codes, pm_uniques = pd.factorize(pd.MultiIndex.from_arrays([providers, modes]))
    local: dict[str, tuple[dict[str, float], str]] = {}
    for k, (prov, mode) in enumerate(pm_uniques):
        idx = np.flatnonzero(pm_codes == k)
        if mode in LOCAL_STORAGE_MODES:  # the server's own NVMe: the same for every provider
            if mode not in local:
                local[mode] = storage_prices(f, prov, mode)
            prices, note = local[mode]
        else:
            prices, note = storage_prices(f if norm_name(prov) in listed["storage"] else {}, prov, mode)
        for tier, usd in prices.items():
            storage[tier][idx] = usd
        if note:
            for i in idx:
                notes[i].append(note)
    return upto_gb, usd_per_gb, storage


def lead_weeks(catalog, host_kinds: np.ndarray) -> np.ndarray:
    """(N,) order-to-delivery weeks of bought hardware per host kind (``cost_lead_time.csv``: the host
    kind's row, else the ``any`` row; 0 without the table)."""
    table = catalog.cost_factors.get("lead_time")
    if table is None or table.empty:
        return np.zeros(len(host_kinds))
    by_kind = dict(zip(table["host_kind"], table["lead_weeks"].astype(float), strict=True))
    return np.array([by_kind.get(str(k), by_kind.get("any", 0.0)) for k in host_kinds], dtype=float)


def bridge_prices(rows: pd.DataFrame) -> np.ndarray:
    """(N,) USD per hour for each row's accelerators at the cheapest on-demand rent of the same accelerator
    among ``rows`` (the candidates the spec allows: its regions, countries and deployments; per
    accelerator-hour x the row's count): what serves a purchase's load until it is delivered. NaN where
    no allowed on-demand offer has that accelerator (the service then starts at delivery)."""
    od = rows[rows["mode"] == "cloud_on_demand"]
    per_acc = (od["usd_per_hour"] / od["accelerator_count"]).groupby(od["accelerator_id"]).min()
    return (rows["accelerator_id"].map(per_acc).to_numpy(dtype=float)
            * rows["accelerator_count"].to_numpy(dtype=float))


def _spans_fabric(catalog, rows: pd.DataFrame) -> np.ndarray:
    """Rows whose host joins instances on one scale-up fabric (``fabric_spans_instances``): a
    multi-host TPU slice, provisioned and preempted as one unit."""
    hosts = catalog.hosts
    if "fabric_spans_instances" not in hosts:
        return np.zeros(len(rows), bool)
    by_host = dict(zip(hosts["id"], hosts["fabric_spans_instances"].astype(bool), strict=True))
    return rows["host_id"].map(lambda h: bool(by_host.get(h, False))).to_numpy(dtype=bool)


def _billing_factors(catalog, rows: pd.DataFrame, p: CostParams, load_bytes_per_instance,
                     notes: list[list[str]]) -> dict[str, np.ndarray]:
    """Per row of an elastic mode: billing increment and minimum (hours) from cost_billing.csv, and the
    start-up time of one instance (hours) = boot + image pull + weights load at the host's network
    rate. Fixed modes get zeros (their capacity is held, not started per run)."""
    n = len(rows)
    out = {k: np.zeros(n) for k in ("billing_increment_h", "billing_minimum_h", "startup_h")}
    out |= {field: np.full(n, empty) for field, empty in BLOCK_COLUMNS.values()}
    out["max_instances"] = np.full(n, np.inf)
    modes = rows["mode"].to_numpy(dtype=object)
    elastic = np.isin(modes, PER_START_MODES)
    if not elastic.any():
        return out
    net = catalog.hosts.set_index("id")["network_bits_per_s"] if "network_bits_per_s" in catalog.hosts else None
    bits = rows["host_id"].map(net).to_numpy(dtype=float) if net is not None else np.full(n, np.nan)
    load_bw = np.minimum(np.where(np.isfinite(bits) & (bits > 0), bits / 8.0, p.model_load_bytes_per_s_default),
                         p.object_store_bytes_per_s_max)
    load = np.broadcast_to(np.asarray(load_bytes_per_instance, dtype=float), (n,))
    keys = pd.MultiIndex.from_arrays([rows["provider"].to_numpy(dtype=object), modes])
    codes, uniques = pd.factorize(keys)
    for k, (prov, mode) in enumerate(uniques):
        idx = np.flatnonzero((codes == k) & elastic)
        if idx.size == 0:
            continue
        (inc_s, min_s, boot_s), note = billing_rule(catalog.cost_factors, prov, mode)
        out["billing_increment_h"][idx] = inc_s / SECONDS_PER_HOUR
        out["billing_minimum_h"][idx] = min_s / SECONDS_PER_HOUR
        start_s = boot_s + p.image_bytes / p.image_pull_bytes_per_s + np.nan_to_num(load[idx]) / load_bw[idx]
        out["startup_h"][idx] = start_s / SECONDS_PER_HOUR
        for field, value in purchase_limits(catalog.cost_factors, prov, mode).items():
            out[field][idx] = value
        if note:
            for i in idx:
                notes[i].append(note)
    return out


def offers_from_catalog(catalog, rows: pd.DataFrame, *, instances_per_replica=1, managed: bool = False,
                        params: CostParams | None = None, migration_engineer_weeks=0.0,
                        load_bytes_per_instance=0.0,
                        site_region: str = "", site_country: str = "", electricity_sector: str = "commercial",
                        facility: str = "industry_average", maintenance_item: str | None = None,
                        work: str = "any") -> OfferArrays:
    """OfferArrays for catalog offer rows (``catalog.offers`` subset); one replica = that many
    instances of the offer's host. Spot rows get the matching on-demand price as fallback.

    Cost factors come from ``catalog.cost_factors`` per row: egress tiers and object-storage price
    of the row's provider; for rows that pay power (on-prem; dedicated rentals whose price does not
    include power) USD/kWh of the row's region/country (``site_region``/``site_country`` for rows
    without a place, e.g. purchase prices) and the PUE of ``facility``; for on-prem the colocation
    rate of the place and the maintenance share (``maintenance_item``, default the largest).
    On-prem life and residual value come from ``params`` (the catalog has no such table).
    Elastic rows get their provider's billing increment and minimum (cost_billing.csv) and the
    start-up time of an instance, whose weights load is ``load_bytes_per_instance`` (per row or one value).
    ``OfferArrays.notes`` names every stand-in used for a row (empty when all came from the catalog).
    """
    p = params or CostParams()
    rows = rows.reset_index(drop=True)
    inst = np.broadcast_to(np.asarray(instances_per_replica, dtype=float), (len(rows),))
    modes = rows["mode"].to_numpy(dtype=object)
    acc_tdp = {a: catalog.accelerator(a).tdp_w for a in set(rows["accelerator_id"])}
    tdp = rows["accelerator_id"].map(acc_tdp).to_numpy(dtype=float)
    count = rows["accelerator_count"].to_numpy(dtype=float)
    power_by_host = catalog.hosts.set_index("id")["power_w"]
    server_w = rows["host_id"].map(power_by_host).to_numpy(dtype=float)
    # a module whose stated power is the accelerator's own (an SoC: server_w == tdp) has no host beyond it
    host_w = np.where(np.isfinite(server_w) & (server_w >= count * tdp), server_w - count * tdp,
                      count * FALLBACK_HOST_POWER_W_PER_ACCELERATOR[0])
    term = np.where(modes == "dedicated_monthly", rows["contract_months"].to_numpy(dtype=float),
                    [RESERVED_TERM_MONTHS.get(m, 0.0) for m in modes])
    kind_by_host = catalog.hosts.set_index("id")["host_kind"] if "host_kind" in catalog.hosts else None
    host_kinds = (rows["host_id"].map(kind_by_host).fillna("any").to_numpy(dtype=object)
                  if kind_by_host is not None else None)
    kinds = host_kinds if host_kinds is not None else np.full(len(rows), "any", dtype=object)
    bought = (modes == "on_prem") & (np.nan_to_num(rows["purchase_usd"].to_numpy(dtype=float)) > 0)
    lead = np.where(bought, lead_weeks(catalog, kinds) * HOURS_PER_WEEK / HOURS_PER_MONTH, 0.0)
    bridge = np.where(bought, bridge_prices(rows), np.nan)
    on_platform, _platform, platform_fee = managed_platforms(catalog, rows, managed, work)
    fixed_h, per_h = ops_hours(modes, on_platform, host_kinds, work)
    site, notes = _site_factors(catalog, rows, site_region, site_country, electricity_sector, facility,
                                maintenance_item)
    for i in np.flatnonzero((lead > 0) & ~np.isfinite(bridge)):
        notes[i].append(f"no allowed on-demand offer of {rows['accelerator_id'].iloc[i]} to bridge the "
                        f"{lead[i] * HOURS_PER_MONTH / HOURS_PER_WEEK:.0f}-week lead time: the service starts at "
                        "delivery")
    includes = rows["includes"].to_numpy(dtype=object) if "includes" in rows else np.full(len(rows), "")
    host_ids = rows["host_id"].to_numpy(dtype=object)
    for i in np.flatnonzero(~(np.isfinite(server_w) & (server_w >= count * tdp))):
        if _pays_power(modes[i], includes[i]):
            notes[i].append(f"no server power for host {host_ids[i]!r}: "
                            f"{FALLBACK_HOST_POWER_W_PER_ACCELERATOR[0]:g} W per accelerator slot for the host "
                            f"({FALLBACK_HOST_POWER_W_PER_ACCELERATOR[1]})")
    upto_gb, usd_per_gb, storage = _provider_factors(catalog, rows, notes)
    billing = _billing_factors(catalog, rows, p, load_bytes_per_instance, notes)
    pays = np.array([_pays_power(m, inc) for m, inc in zip(modes, includes, strict=True)], dtype=bool)
    carbon = {"carbon_pue": facility_pue(catalog, rows["provider"], pays, site["pue"]),
              "grid_co2e_g_per_kwh": grid_intensity(catalog, _column(rows, "city"),
                                                    _column(rows, "country").replace("", site_country))}
    # on a platform that sells its own instance rate the offer is billed at that rate, not the VM's
    platform_rate = np.where(on_platform, managed_instance_rates(catalog, rows, _platform), np.nan)
    hourly = np.where(np.isfinite(platform_rate), platform_rate, rows["usd_per_hour"].to_numpy(dtype=float))
    return OfferArrays.build(
        modes, usd_per_hour=hourly * inst,
        usd_per_month=rows["usd_per_month"].to_numpy(dtype=float) * inst,
        purchase_usd=rows["purchase_usd"].to_numpy(dtype=float) * inst, term_months=np.nan_to_num(term),
        fallback_usd_per_hour=_spot_fallback(rows) * inst, accelerators=count * inst,
        interruptions_per_hour=_spot_hazards(catalog, rows),
        instances=np.where(_spans_fabric(catalog, rows), 1.0, inst),
        accel_tdp_w=np.nan_to_num(tdp), host_power_w=host_w * inst, **site,
        life_years=p.onprem_life_years, residual_fraction=p.onprem_residual_fraction,
        ops_hours_per_month=fixed_h, platform_usd_per_month=platform_fee,
        lead_months=lead, bridge_usd_per_hour=bridge * inst,
        ops_hours_per_replica_month=per_h * np.where(_spans_fabric(catalog, rows), 1.0, inst),  # per instance run
        migration_engineer_weeks=migration_engineer_weeks, egress_usd_per_gb=usd_per_gb,
        egress_tier_upto_gb=upto_gb, storage_usd_per_gb_month=storage, **billing, **carbon,
        interregion_usd_per_gb=interregion_prices(catalog.cost_factors, rows["provider"].to_numpy(dtype=object)),
        provider=rows["provider"].to_numpy(dtype=object), region=rows["region"].to_numpy(dtype=object),
        notes=np.array(["; ".join(dict.fromkeys(n)) for n in notes], dtype=object),
    )


def interregion_prices(factors: dict, providers: np.ndarray) -> np.ndarray:
    """(N,) USD/GB each row's provider charges to send data to another of its regions
    (``cost_interregion.csv``); NaN where the table has no row (internet egress applies then)."""
    table = factors.get("interregion")
    if table is None or table.empty:
        return np.full(len(providers), np.nan)
    by = {norm_name(str(p)): float(v) for p, v in zip(table["provider"], table["usd_per_gb"], strict=True)}
    return np.array([by.get(norm_name(str(p)), np.nan) for p in providers], dtype=float)


def workload_profile(workload) -> LoadProfile:
    """The representative month of an inference workload's traffic."""
    traffic = workload.inference.traffic
    hours = workload.usage.active_hours_per_month or HOURS_PER_MONTH
    return month_profile(float(traffic.requests_per_s or 0.0), traffic.peak_requests_per_s,
                         traffic.daily_profile, min(float(hours), HOURS_PER_MONTH))


def workload_demand(workload, *, capacity_rps=None, time_to_train_s=None, params: CostParams | None = None) -> Demand:
    """Demand of N candidates: inference from capacity per replica (requests/s within the SLOs),
    training from the performance model's time to train."""
    p = params or CostParams()
    months = int(workload.horizon_months)
    if workload.task == "inference":
        traffic = workload.inference.traffic
        out_tokens = float(traffic.output_tokens.mean) if traffic.output_tokens else 0.0
        profile = workload_profile(workload)
        return inference_demand(profile, np.asarray(capacity_rps, dtype=float),
                                growth_factors(workload.growth.traffic_per_month, months),
                                headroom_fraction=p.headroom_fraction,
                                realtime=workload.inference.mode in ("realtime", "mixed", "edge"),
                                output_tokens_per_request=out_tokens,
                                starts_per_month=batch_starts_per_month(profile.active_hours,
                                                                        workload.usage.runs_per_year),
                                min_replicas=int(workload.availability.min_replicas),
                                zones=int(workload.availability.zones))
    runs = float(workload.usage.runs_per_year or 1.0)
    epochs = float(workload.training.epochs or 0.0) if workload.training else 0.0
    return training_demand(np.asarray(time_to_train_s, dtype=float), runs, months,
                           headroom_fraction=p.headroom_fraction, epochs_per_run=epochs)
