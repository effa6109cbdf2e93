"""Storage (bytes kept, by tier) and egress (bytes leaving a provider, by tiered price).

Egress is billed per calendar month on tiers that reset each month (AWS: first 100 GB free, then
$0.09/GB up to 10 TB, ...; GCP Premium $0.12/GB for the first TB): the cost of q GB is
``sum_t price_t x clip(q - lower_t, 0, upper_t - lower_t)``, a free allowance being a tier at $0.
Storage is ``sum_tier GB_tier x USD/GB-month_tier``. GB are 1e9 bytes (providers bill decimal GB).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from infrafit.errors import InputError
from infrafit.units import GB

STORAGE_TIERS: tuple[str, ...] = ("hot", "archive")


def tiered_cost(quantity_gb: np.ndarray, tier_upto_gb: np.ndarray, usd_per_gb: np.ndarray) -> np.ndarray:
    """Cost of ``quantity_gb`` (M, N) on per-candidate tiers (N, T): cumulative upper bounds
    ``tier_upto_gb`` (the last one ``inf``) and prices ``usd_per_gb``; candidates with fewer tiers
    are padded with ``(inf, $0)`` tiers. Returns (M, N)."""
    q = np.asarray(quantity_gb, dtype=float)
    upper = np.atleast_2d(np.asarray(tier_upto_gb, dtype=float))
    price = np.atleast_2d(np.asarray(usd_per_gb, dtype=float))
    with np.errstate(invalid="ignore"):  # inf - inf in padded (inf, $0) tiers: nan, not a descent
        descending = np.any(np.diff(upper, axis=1) < 0)
    if upper.shape != price.shape or descending or np.any(price < 0):
        raise InputError(
            "egress tiers must be ascending upper bounds with one non-negative price each",
            fix="list each provider's tiers from the smallest bound up, the last bound empty (no limit)",
        )
    lower = np.concatenate([np.zeros((upper.shape[0], 1)), upper[:, :-1]], axis=1)
    width = np.where(np.isinf(lower), 0.0, upper - np.where(np.isinf(lower), 0.0, lower))
    in_tier = np.clip(q[..., None] - lower, 0.0, None)
    in_tier = np.minimum(in_tier, width)
    return (np.where(price > 0, in_tier, 0.0) * price).sum(axis=-1)


@dataclass(frozen=True)
class StorageNeeds:
    """Bytes kept each month (M,) by tier, and bytes moved between sites per month (M,)."""

    bytes_by_tier: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for tier in self.bytes_by_tier:
            if tier not in STORAGE_TIERS:
                raise InputError(f"unknown storage tier {tier!r}", fix=f"use one of {', '.join(STORAGE_TIERS)}")


def storage_needs(
    months: int,
    *,
    dataset_bytes: float = 0.0,
    checkpoint_bytes: float = 0.0,
    retained_checkpoints: int = 0,
    artifact_bytes: float = 0.0,
    archive_bytes: float = 0.0,
    data_growth_per_month: float = 0.0,
) -> StorageNeeds:
    """Datasets, retained checkpoints and model artifacts on hot storage (datasets grow by
    ``data_growth_per_month`` compounding); older data on the archive tier."""
    growth = (1.0 + data_growth_per_month) ** np.arange(months, dtype=float)
    hot = dataset_bytes * growth + checkpoint_bytes * retained_checkpoints + artifact_bytes
    return StorageNeeds({"hot": np.asarray(hot, dtype=float), "archive": np.full(months, float(archive_bytes))})


def storage_usd(needs: StorageNeeds, usd_per_gb_month: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """(M, N) monthly storage cost: sum over tiers of GB kept x the candidate's USD/GB-month."""
    total = None
    for tier, kept in needs.bytes_by_tier.items():
        price = np.broadcast_to(np.asarray(usd_per_gb_month.get(tier, 0.0), dtype=float), (n,))
        cost = np.outer(np.asarray(kept, dtype=float) / GB, price)
        total = cost if total is None else total + cost
    return total if total is not None else np.zeros((1, n))


def response_bytes(output_tokens_per_month: np.ndarray, bytes_per_output_token: float) -> np.ndarray:
    """Bytes of responses sent to users each month (M,): output tokens x bytes per token."""
    return np.asarray(output_tokens_per_month, dtype=float) * bytes_per_output_token
