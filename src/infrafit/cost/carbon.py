"""Energy and emissions of N candidates: what the hardware draws, at the facility, on its grid.

``energy_kwh(demand, offers, params)`` (M, N): for every replica held (elastic capacity: paid hours /
730; fixed modes: the fleet) accelerators x TDP x (idle + (1 - idle) x utilisation) + host power, x the
facility's PUE, x 730 h. The same formula on-prem power is paid by (``cost.modes.onprem_power_kw``).

Per offer (``carbon_factors``): the grid's carbon intensity (``grid_carbon.csv``: the data centre's city,
else its country where the country is one grid; NaN when no source gives it, never guessed), and the
facility PUE: the team's own site's for rows that pay their power (on-prem, dedicated without power), the
provider's facility class (``providers.csv`` ``facility`` -> ``cost_pue.csv``) for the rest, else the
industry average (a sourced survey figure, not the provider's own).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from infrafit.cost.capacity_plan import Demand
from infrafit.cost.factors import pue_ratio
from infrafit.cost.modes import replicas_held
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.units import HOURS_PER_MONTH, W_PER_KW

DEFAULT_FACILITY = "industry_average"


def _key(text: object) -> str:
    return "" if text is None or (isinstance(text, float) and np.isnan(text)) else str(text).strip().casefold()


def grid_intensity(catalog, cities: pd.Series, countries: pd.Series) -> np.ndarray:
    """(N,) grams CO2e per kWh of each (city, country): the city's row, else the country's row, else NaN."""
    table = catalog.table("grid_carbon")
    if table.empty:
        return np.full(len(cities), np.nan)
    by_city = {(_key(r.country), _key(r.city)): float(r.co2e_g_per_kwh) for r in table.itertuples() if _key(r.city)}
    by_country = {_key(r.country): float(r.co2e_g_per_kwh) for r in table.itertuples() if not _key(r.city)}
    return np.array([by_city.get((_key(c), _key(t)), by_country.get(_key(c), np.nan))
                     for t, c in zip(cities, countries, strict=True)], dtype=float)


def facility_pue(catalog, providers: pd.Series, pays_power: np.ndarray, site_pue: np.ndarray) -> np.ndarray:
    """(N,) the PUE energy is counted at (see the module docstring)."""
    table = catalog.table("providers")
    facility = {} if table.empty else {str(r.provider): str(r.facility or "") for r in table.itertuples()}
    cache: dict[str, float] = {}

    def pue_of(provider: str) -> float:
        kind = facility.get(provider) or DEFAULT_FACILITY
        if kind not in cache:
            cache[kind] = pue_ratio(catalog.cost_factors, kind)
        return cache[kind]

    rented = np.array([pue_of(str(p)) for p in providers], dtype=float)
    return np.where(pays_power, site_pue, rented)


def energy_kwh(d: Demand, o: OfferArrays, p: CostParams) -> np.ndarray:
    """(M, N) facility energy per month, kWh."""
    held = replicas_held(d, o)
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.clip(np.where(held > 0, d.busy_replica_hours / (held * HOURS_PER_MONTH), 0.0), 0.0, 1.0)
    idle = p.accel_idle_power_fraction
    watts = o.accelerators * o.accel_tdp_w * (idle + (1.0 - idle) * util) + o.host_power_w
    return held * HOURS_PER_MONTH * watts * o.carbon_pue / W_PER_KW
