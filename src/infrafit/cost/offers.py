"""``OfferArrays``: N priced candidates as a struct of numpy arrays, the cost core's only input type
for prices. Build it from plain numbers (tests, a user's quote) or from catalog rows
(``cost.adapters``). A *replica* is the unit that serves or trains (one configuration of the
performance model); every price here is per replica, so a configuration spanning two 8-GPU instances
carries twice the instance price.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

import numpy as np

from infrafit.cost.params import MODES
from infrafit.errors import InputError, suggest

# Columns and their default when a caller leaves them out (NaN: "not applicable to this mode").
_DEFAULTS: dict[str, float] = {
    "usd_per_hour": np.nan,  # on-demand, spot, reserved (effective hourly of the commitment)
    "usd_per_month": np.nan,  # dedicated monthly rental
    "purchase_usd": np.nan,  # on-prem purchase of the replica's servers
    "term_months": 0.0,  # reserved term (12/36) or dedicated minimum contract
    "setup_usd": 0.0,  # one-time per replica: dedicated setup fee, on-prem installation
    "fallback_usd_per_hour": np.nan,  # on-demand price used as spot's realtime fallback
    "interruptions_per_hour": np.nan,  # spot, per instance; NaN -> CostParams default
    "instances": 1.0,  # instances per replica that fail independently (a multi-host TPU slice is one)
    "accelerators": 0.0,  # per replica
    "accel_tdp_w": 0.0,  # per accelerator
    "host_power_w": 0.0,  # per replica: CPUs, memory, NICs, fans beyond the accelerators
    "usd_per_kwh": 0.0,
    "pue": 1.0,
    "colocation_usd_per_kw_month": 0.0,  # on provisioned IT kW
    "maintenance_share_per_year": 0.0,  # of purchase price, per year
    "life_years": np.nan,  # on-prem straight-line depreciation life
    "residual_fraction": 0.0,  # of purchase price, left at the end of the life
    "ops_hours_per_month": 0.0,  # engineer hours per month, fixed part
    "ops_hours_per_replica_month": 0.0,  # engineer hours per replica per month
    "migration_engineer_weeks": 0.0,  # one-time, when the target is not first-class for the stack
    "billing_increment_h": 0.0,  # elastic modes: run time per start rounds up to a multiple (0 = exact)
    "billing_minimum_h": 0.0,  # elastic modes: least time billed per instance start
    "startup_h": 0.0,  # per start: boot + image pull + model load, billed before any work is done
    "billing_long_after_h": 0.0,  # prepaid blocks: runs longer than this round up to the long increment (0 = none)
    "billing_long_increment_h": 0.0,
    "billing_maximum_h": np.inf,  # the longest run one purchase covers
    "billing_end_margin_h": 0.0,  # paid at the end of a purchase, not runnable (blocks terminate early)
    "max_instances": np.inf,  # the most instances one purchase holds
    "change_engineer_weeks": 0.0,  # porting repaid at every model change (cost.workflow): not first-class
    "carbon_pue": 1.0,  # the facility PUE energy is counted at (cost.carbon)
    "grid_co2e_g_per_kwh": np.nan,  # the grid's carbon intensity; NaN = no source
    "interregion_usd_per_gb": np.nan,  # to another region of the same provider; NaN = internet egress applies
    "platform_usd_per_month": 0.0,  # a managed platform's own fee (one cluster), paid with the fixed ops hours
    "lead_months": 0.0,  # on-prem purchases: order to delivery; the cloud bridges it (cost_lead_time.csv)
    "bridge_usd_per_hour": np.nan,  # per replica: the cheapest on-demand rent of the same accelerators
}


@dataclass(frozen=True)
class OfferArrays:
    """N candidates; every numeric field is a float array of shape (N,)."""

    mode: np.ndarray
    usd_per_hour: np.ndarray
    usd_per_month: np.ndarray
    purchase_usd: np.ndarray
    term_months: np.ndarray
    setup_usd: np.ndarray
    fallback_usd_per_hour: np.ndarray
    interruptions_per_hour: np.ndarray
    instances: np.ndarray
    accelerators: np.ndarray
    accel_tdp_w: np.ndarray
    host_power_w: np.ndarray
    usd_per_kwh: np.ndarray
    pue: np.ndarray
    colocation_usd_per_kw_month: np.ndarray
    maintenance_share_per_year: np.ndarray
    life_years: np.ndarray
    residual_fraction: np.ndarray
    ops_hours_per_month: np.ndarray
    ops_hours_per_replica_month: np.ndarray
    migration_engineer_weeks: np.ndarray
    billing_increment_h: np.ndarray
    billing_minimum_h: np.ndarray
    startup_h: np.ndarray
    billing_long_after_h: np.ndarray
    billing_long_increment_h: np.ndarray
    billing_maximum_h: np.ndarray
    billing_end_margin_h: np.ndarray
    max_instances: np.ndarray
    change_engineer_weeks: np.ndarray
    carbon_pue: np.ndarray
    grid_co2e_g_per_kwh: np.ndarray
    interregion_usd_per_gb: np.ndarray
    platform_usd_per_month: np.ndarray
    lead_months: np.ndarray
    bridge_usd_per_hour: np.ndarray
    egress_tier_upto_gb: np.ndarray  # (N, T) cumulative upper bounds, last inf
    egress_usd_per_gb: np.ndarray  # (N, T)
    storage_usd_per_gb_month: Mapping[str, np.ndarray] = field(default_factory=dict)
    provider: np.ndarray | None = None
    region: np.ndarray | None = None
    notes: np.ndarray | None = None  # (N,) str: stand-ins used for missing catalog factors ("" = none)

    @classmethod
    def build(cls, mode, *, egress_usd_per_gb=0.0, egress_tier_upto_gb=None,
              storage_usd_per_gb_month: Mapping[str, object] | None = None,
              provider=None, region=None, notes=None, **columns) -> OfferArrays:
        """Broadcast scalars and lists to N candidates; unknown column names raise ``InputError``."""
        modes = np.atleast_1d(np.asarray(mode, dtype=object))
        n = len(modes)
        unknown = set(columns) - set(_DEFAULTS)
        if unknown:
            name = sorted(unknown)[0]
            raise InputError(f"unknown offer column {name!r}{suggest(name, _DEFAULTS)}",
                             fix=f"use the columns {', '.join(_DEFAULTS)}")
        bad = [m for m in modes if m not in MODES]
        if bad:
            raise InputError(f"unknown deployment mode {bad[0]!r}{suggest(str(bad[0]), MODES)}",
                             fix=f"use one of {', '.join(MODES)}")
        cols = {k: _column(columns.get(k, v), n, k) for k, v in _DEFAULTS.items()}
        price = np.asarray(egress_usd_per_gb, dtype=float)
        if price.ndim < 2:
            price = np.broadcast_to(price.reshape(-1, 1) if price.ndim == 1 else price, (n, 1)).copy()
        upto = (np.full(price.shape, np.inf) if egress_tier_upto_gb is None
                else np.broadcast_to(np.asarray(egress_tier_upto_gb, dtype=float), price.shape).copy())
        storage = {t: _column(v, n, f"storage_usd_per_gb_month[{t}]")
                   for t, v in (storage_usd_per_gb_month or {}).items()}
        text = {k: None if v is None else np.broadcast_to(np.asarray(v, dtype=object), (n,)).copy()
                for k, v in (("provider", provider), ("region", region), ("notes", notes))}
        return cls(mode=modes, egress_tier_upto_gb=upto, egress_usd_per_gb=price,
                   storage_usd_per_gb_month=storage, **cols, **text)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.mode)

    def take(self, index) -> OfferArrays:
        """The subset of candidates at ``index`` (an int array or boolean mask)."""
        changes = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                changes[f.name] = value[index]
            elif isinstance(value, Mapping):
                changes[f.name] = {k: v[index] for k, v in value.items()}
        return replace(self, **changes)

    def scaled_prices(self, factor: float) -> OfferArrays:
        """Every market price x ``factor`` (sensitivity): rates, purchases, power, egress, storage."""
        names = ("usd_per_hour", "usd_per_month", "purchase_usd", "setup_usd", "fallback_usd_per_hour",
                 "usd_per_kwh", "colocation_usd_per_kw_month", "egress_usd_per_gb", "platform_usd_per_month",
                 "bridge_usd_per_hour")
        changes = {k: getattr(self, k) * factor for k in names}
        changes["storage_usd_per_gb_month"] = {k: v * factor for k, v in self.storage_usd_per_gb_month.items()}
        return replace(self, **changes)


def _column(value, n: int, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    try:
        arr = np.broadcast_to(arr, (n,)).copy()
    except ValueError:
        raise InputError(f"offer column {name} has {arr.size} values for {n} candidates",
                         fix="give one value per candidate or a single value for all") from None
    if np.any(arr[np.isfinite(arr)] < 0):
        raise InputError(f"offer column {name} has a negative value", fix="prices, powers and hours are >= 0")
    return arr
