"""Thin adapters: the workload spec and catalog rows -> the plain arrays the cost core takes.

The core (``usage``, ``capacity_plan``, ``modes``, ``tco``) never sees a ``Workload`` or a
``Catalog``; these functions read them once and hand numbers over. Fallback factors used when the
catalog has no cost-factor table yet are listed in ``FALLBACK_FACTORS`` with their sources.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from infrafit.catalog.loader import read_table
from infrafit.catalog.schema import Column, Schema, num, provenance, text
from infrafit.cost.capacity_plan import Demand, inference_demand, training_demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import MODES, CostParams
from infrafit.cost.usage import LoadProfile, growth_factors, month_profile
from infrafit.units import HOURS_PER_MONTH

OPS_LABOUR = Schema(
    "ops_labour",
    (
        text("mode", "deployment mode", choices=MODES),
        Column("managed", "bool", doc="true: the provider manages drivers, images and scaling"),
        num("hours_per_month", "engineer hours per month, fixed part"),
        num("hours_per_replica_month", "engineer hours per replica held per month"),
        text("notes", "what the hours cover", required=False),
        *provenance(),
    ),
    key=("mode", "managed"),
    doc="Operations labour by deployment mode (documented assumptions; see docs/cost.md).",
)
OPS_LABOUR_PATH = Path(__file__).resolve().parents[1] / "catalog" / "data" / "ops_labour.csv"

#: Used only while the catalog has no cost-factor table for the site. Each value is from the
#: project's reference compilation (prices.csv) with the source named.
FALLBACK_FACTORS: dict[str, tuple[float, str]] = {
    "usd_per_kwh": (0.0892, "EIA 2023 average industrial retail price, Virginia (data-center state)"),
    "pue": (1.58, "Uptime Institute 2023 survey, industry average PUE"),
    "maintenance_share_per_year": (0.20, "DGX H100 1-year support ~20 % of list (supercluster.blog, secondary)"),
    "host_power_w_per_accelerator": (575.0, "DGX H100 10.2 kW max minus 8 x 700 W GPUs, per GPU slot (derived)"),
    "colocation_usd_per_kw_month": (0.0, "no sourced colocation rate yet: facility cost not charged (risk noted)"),
    "storage_hot_usd_per_gb_month": (0.023, "AWS S3 Standard first tier"),
}
#: First-tier internet egress by provider (USD/GB), reference prices.csv; others: included (0).
FALLBACK_EGRESS_USD_PER_GB = {"aws": 0.09, "gcp": 0.12, "azure": 0.087}
RESERVED_TERM_MONTHS = {"cloud_reserved_1y": 12.0, "cloud_reserved_3y": 36.0}


@lru_cache(maxsize=4)
def ops_labour_table(path: str | None = None) -> pd.DataFrame:
    """The validated ops_labour.csv (cached)."""
    return read_table(Path(path) if path else OPS_LABOUR_PATH, OPS_LABOUR)


def ops_hours(modes: np.ndarray, managed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(fixed, per replica) engineer hours per month for each mode: the managed row when the user
    prefers managed services and one exists, the self-managed row otherwise."""
    table = ops_labour_table()
    fixed, per = np.zeros(len(modes)), np.zeros(len(modes))
    for i, mode in enumerate(modes):
        rows = table[table["mode"] == mode]
        pick = rows[rows["managed"] == managed] if (rows["managed"] == managed).any() else rows[~rows["managed"]]
        fixed[i], per[i] = float(pick["hours_per_month"].iloc[0]), float(pick["hours_per_replica_month"].iloc[0])
    return fixed, per


def _spot_fallback(offers: pd.DataFrame) -> np.ndarray:
    """On-demand price of the same host, provider and region, for spot's realtime fallback."""
    od = offers[offers["mode"] == "cloud_on_demand"]
    key = od.groupby(["provider", "region", "host_id"], dropna=False)["usd_per_hour"].min()
    return np.array([key.get((r.provider, r.region, r.host_id), np.nan) if r.mode == "cloud_spot" else np.nan
                     for r in offers.itertuples()], dtype=float)


def offers_from_catalog(catalog, rows: pd.DataFrame, *, instances_per_replica=1, managed: bool = False,
                        params: CostParams | None = None, migration_engineer_weeks=0.0) -> OfferArrays:
    """OfferArrays for catalog offer rows (``catalog.offers`` subset); one replica = that many
    instances of the offer's host. Spot rows get the matching on-demand price as fallback."""
    p = params or CostParams()
    rows = rows.reset_index(drop=True)
    inst = np.broadcast_to(np.asarray(instances_per_replica, dtype=float), (len(rows),))
    modes = rows["mode"].to_numpy(dtype=object)
    tdp = np.array([catalog.accelerator(a).tdp_w for a in rows["accelerator_id"]], dtype=float)
    count = rows["accelerator_count"].to_numpy(dtype=float)
    hosts = catalog.hosts.set_index("id")
    server_w = np.array([hosts["power_w"].get(h, np.nan) for h in rows["host_id"]], dtype=float)
    host_w = np.where(np.isfinite(server_w) & (server_w > count * tdp), server_w - count * tdp,
                      count * FALLBACK_FACTORS["host_power_w_per_accelerator"][0])
    term = np.where(modes == "dedicated_monthly", rows["contract_months"].to_numpy(dtype=float),
                    [RESERVED_TERM_MONTHS.get(m, 0.0) for m in modes])
    fixed_h, per_h = ops_hours(modes, managed)
    egress = [FALLBACK_EGRESS_USD_PER_GB.get(str(pr).lower(), 0.0) for pr in rows["provider"]]
    return OfferArrays.build(
        modes, usd_per_hour=rows["usd_per_hour"].to_numpy(dtype=float) * inst,
        usd_per_month=rows["usd_per_month"].to_numpy(dtype=float) * inst,
        purchase_usd=rows["purchase_usd"].to_numpy(dtype=float) * inst, term_months=np.nan_to_num(term),
        fallback_usd_per_hour=_spot_fallback(rows) * inst, accelerators=count * inst,
        accel_tdp_w=np.nan_to_num(tdp), host_power_w=host_w * inst,
        usd_per_kwh=FALLBACK_FACTORS["usd_per_kwh"][0], pue=FALLBACK_FACTORS["pue"][0],
        colocation_usd_per_kw_month=FALLBACK_FACTORS["colocation_usd_per_kw_month"][0],
        maintenance_share_per_year=FALLBACK_FACTORS["maintenance_share_per_year"][0],
        life_years=p.onprem_life_years, residual_fraction=p.onprem_residual_fraction,
        ops_hours_per_month=fixed_h, ops_hours_per_replica_month=per_h,
        migration_engineer_weeks=migration_engineer_weeks, egress_usd_per_gb=np.array(egress),
        storage_usd_per_gb_month={"hot": FALLBACK_FACTORS["storage_hot_usd_per_gb_month"][0]},
        provider=rows["provider"].to_numpy(dtype=object), region=rows["region"].to_numpy(dtype=object),
    )


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
        return inference_demand(workload_profile(workload), np.asarray(capacity_rps, dtype=float),
                                growth_factors(workload.growth.traffic_per_month, months),
                                headroom_fraction=p.headroom_fraction,
                                realtime=workload.inference.mode in ("realtime", "mixed", "edge"),
                                output_tokens_per_request=out_tokens)
    runs = float(workload.usage.runs_per_year or 1.0)
    epochs = float(workload.training.epochs or 0.0) if workload.training else 0.0
    return training_demand(np.asarray(time_to_train_s, dtype=float), runs, months,
                           headroom_fraction=p.headroom_fraction, epochs_per_run=epochs)
