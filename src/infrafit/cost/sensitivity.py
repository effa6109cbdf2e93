"""Which option wins as prices, utilisation or growth move by +/-30 %.

The planner passes an ``evaluate(scenario) -> CostResult`` (``inference_evaluator`` builds one);
each driver is moved down and up by ``delta`` on its own, the candidates are re-priced, and the
winner (lowest TCO among feasible candidates) is reported with its margin. A decision is *robust*
when the winner is the same in every scenario.

Drivers: ``cloud_price`` (hourly rates of on-demand, spot, reserved), ``owned_price`` (dedicated
rent, purchase, setup, power, colocation), ``utilisation`` (every load x factor), ``growth`` (the
monthly growth rate x factor).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from infrafit.cost.capacity_plan import inference_demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.cost.storage_egress import StorageNeeds
from infrafit.cost.tco import CostResult, price_options
from infrafit.cost.usage import LoadProfile, growth_factors

CLOUD_MODES = ("cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "cloud_capacity_block")
DRIVERS = ("cloud_price", "owned_price", "utilisation", "growth")


@dataclass(frozen=True)
class Scenario:
    cloud_price: float = 1.0
    owned_price: float = 1.0
    utilisation: float = 1.0
    growth: float = 1.0


def scale_offer_prices(offers: OfferArrays, cloud: float, owned: float) -> OfferArrays:
    """Cloud candidates' prices x ``cloud``, dedicated and on-prem candidates' prices x ``owned``."""
    is_cloud = np.isin(offers.mode, CLOUD_MODES)
    factor = np.where(is_cloud, cloud, owned)
    names = ("usd_per_hour", "usd_per_month", "purchase_usd", "setup_usd", "fallback_usd_per_hour",
             "usd_per_kwh", "colocation_usd_per_kw_month")
    return replace(offers, **{k: getattr(offers, k) * factor for k in names})


def inference_evaluator(profile: LoadProfile, capacity_rps: np.ndarray, offers: OfferArrays, *,
                        growth_per_month: float, horizon_months: int, engineer_usd_per_hour: float,
                        params: CostParams | None = None, realtime: bool = True,
                        output_tokens_per_request: float = 0.0,
                        storage: StorageNeeds | None = None) -> Callable[[Scenario], CostResult]:
    """A re-pricing function over scenarios for an inference workload."""
    p = params or CostParams()

    def evaluate(s: Scenario) -> CostResult:
        demand = inference_demand(profile.scaled(s.utilisation), capacity_rps,
                                  growth_factors(growth_per_month * s.growth, horizon_months),
                                  headroom_fraction=p.headroom_fraction, realtime=realtime,
                                  output_tokens_per_request=output_tokens_per_request)
        return price_options(demand, scale_offer_prices(offers, s.cloud_price, s.owned_price),
                             horizon_months=horizon_months, engineer_usd_per_hour=engineer_usd_per_hour,
                             storage=storage, params=p)

    return evaluate


def _winner(tco: np.ndarray) -> tuple[int, float]:
    finite = np.where(np.isfinite(tco), tco, np.inf)
    order = np.argsort(finite, kind="stable")
    second_ok = len(order) > 1 and np.isfinite(finite[order[1]])
    margin = float(finite[order[1]] / finite[order[0]] - 1) if second_ok else np.nan
    return int(order[0]), margin


def sensitivity(evaluate: Callable[[Scenario], CostResult], labels: list[str], *, delta: float = 0.3) -> dict:
    """Winner and TCO of every candidate at the base case and with each driver at 1 -/+ delta."""
    base = evaluate(Scenario()).tco_usd
    winner, margin = _winner(base)
    out: dict[str, Any] = {"base": {"winner": labels[winner], "margin": margin, "tco_usd": base.tolist()},
                           "drivers": {}}
    winners = {winner}
    for driver in DRIVERS:
        out["drivers"][driver] = {}
        for sign, factor in (("-", 1 - delta), ("+", 1 + delta)):
            tco = evaluate(Scenario(**{driver: factor})).tco_usd
            w, m = _winner(tco)
            winners.add(w)
            out["drivers"][driver][f"{sign}{delta:.0%}"] = {"winner": labels[w], "margin": m, "tco_usd": tco.tolist()}
    out["robust"] = len(winners) == 1
    return out
