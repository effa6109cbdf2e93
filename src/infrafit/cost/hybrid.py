"""Hybrid deployments: one part here, one part there, with the bytes between them priced.

Typical pairs: train on burst cloud capacity and serve on dedicated accelerators near the users;
develop in the cloud and run production on dedicated servers. Each part is priced on its own
(``price_options`` with its own demand); ``hybrid_pairs`` adds every first-part candidate to every
second-part candidate (outer sum, (N1, N2)) plus the transfer: artifacts leaving the first part's
provider pay its egress tiers each month (ingress is free at the providers in the catalog); nothing
is charged when both parts are on the same site.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import BREAKDOWN_KEYS
from infrafit.cost.storage_egress import tiered_cost
from infrafit.cost.tco import CostResult
from infrafit.errors import InputError
from infrafit.units import GB


@dataclass(frozen=True)
class HybridResult:
    """All (i, j) pairs: ``tco_usd`` and ``transfer_usd`` are (N1, N2)."""

    first: CostResult
    second: CostResult
    transfer_usd: np.ndarray

    @property
    def tco_usd(self) -> np.ndarray:
        return self.first.tco_usd[:, None] + self.second.tco_usd[None, :] + self.transfer_usd

    def best(self) -> tuple[int, int]:
        """Indices (i, j) of the cheapest pair."""
        tco = np.where(np.isfinite(self.tco_usd), self.tco_usd, np.inf)
        i, j = np.unravel_index(int(np.argmin(tco)), tco.shape)
        return int(i), int(j)

    def breakdown(self, i: int, j: int) -> dict[str, float]:
        """The pair's breakdown: the parts' sums, the transfer in ``egress_usd``."""
        a, b = self.first.breakdown, self.second.breakdown
        out = {k: float(a[k][i] + b[k][j]) for k in BREAKDOWN_KEYS}
        out["egress_usd"] += float(self.transfer_usd[i, j])
        return out

    def to_json(self, i: int, j: int, labels: tuple[str, str] = ("train", "serve")) -> dict:
        """A ``hybrid`` option's cost with its ``parts`` (DESIGN.md section 4)."""
        return {
            "deployment": "hybrid",
            "tco_usd": float(self.tco_usd[i, j]),
            "horizon_months": self.first.horizon_months,
            "transfer_usd": float(self.transfer_usd[i, j]),
            "breakdown": self.breakdown(i, j),
            "parts": {labels[0]: self.first.to_json(i), labels[1]: self.second.to_json(j)},
        }


def transfer_usd(transfer_bytes_per_month: np.ndarray, source: OfferArrays, same_site: np.ndarray,
                 same_provider: np.ndarray | None = None) -> np.ndarray:
    """(N1, N2): monthly bytes leaving each first-part candidate, summed over the horizon: zero where
    ``same_site[i, j]``; at the provider's inter-region rate where the second part is another region of
    the same provider and the catalog has that rate (``cost_interregion.csv``); else on its internet
    egress tiers."""
    gb = np.asarray(transfer_bytes_per_month, dtype=float)[:, None] / GB
    per_source = tiered_cost(np.broadcast_to(gb, (gb.shape[0], len(source))), source.egress_tier_upto_gb,
                             source.egress_usd_per_gb).sum(axis=0)
    out = np.broadcast_to(per_source[:, None], same_site.shape)
    if same_provider is not None:
        rate = np.asarray(source.interregion_usd_per_gb, dtype=float)
        inter = float(gb.sum()) * rate
        out = np.where(same_provider & np.isfinite(rate)[:, None], np.nan_to_num(inter)[:, None], out)
    return np.where(same_site, 0.0, out)


def same_site(first: OfferArrays, second: OfferArrays) -> np.ndarray:
    """(N1, N2): True where provider and region match (no bytes leave the provider)."""
    if first.provider is None or second.provider is None:
        return np.zeros((len(first), len(second)), bool)
    same = first.provider[:, None] == second.provider[None, :]
    if first.region is not None and second.region is not None:
        same &= first.region[:, None] == second.region[None, :]
    return same


def same_provider(first: OfferArrays, second: OfferArrays) -> np.ndarray:
    """(N1, N2): True where both parts are sold by the same provider (any region)."""
    if first.provider is None or second.provider is None:
        return np.zeros((len(first), len(second)), bool)
    return first.provider[:, None] == second.provider[None, :]


def hybrid_pairs(first: CostResult, first_offers: OfferArrays, second: CostResult, second_offers: OfferArrays,
                 *, transfer_bytes_per_month: np.ndarray) -> HybridResult:
    """Price every (first, second) pair; both parts must share the horizon."""
    if first.horizon_months != second.horizon_months:
        raise InputError("the two parts of a hybrid option are priced over different horizons",
                         fix="price both parts with the workload's horizon_months")
    transfer = np.broadcast_to(np.asarray(transfer_bytes_per_month, dtype=float), (first.horizon_months,))
    cost = transfer_usd(transfer, first_offers, same_site(first_offers, second_offers),
                        same_provider(first_offers, second_offers))
    return HybridResult(first, second, cost)


def artifact_transfer_bytes(artifact_bytes: float, transfers_per_year: float, months: int) -> np.ndarray:
    """(M,) bytes moved per month when each training run ships its model artifact to serving."""
    return np.full(months, artifact_bytes * transfers_per_year / 12.0)
