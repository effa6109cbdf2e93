"""What a changing model costs on each option (``workflow:`` in the spec; docs/cost.md, Workflow maturity).

Two mechanisms, both from the economics, not a rule:

- **Porting per change** (``model_change_usd``): every model change on an accelerator or stack that is
  not first-class for the team's code repays its porting and validation effort: the option's porting
  engineer-weeks (frameworks table, custom ops, dynamic shapes: ``cost.migration``) x changes per year /
  12 each month x 40 h x the engineer rate. First-class hardware ports nothing and pays nothing.
- **Stranded commitments** (``stranded_commitment_usd``): a change that needs other hardware arrives as a
  Poisson process of ``lam`` = changes per year x ``new_hardware_share`` / 12 per month. Capacity paid in
  advance is then wasted for what is left of its term (the replacement is priced as the old capacity
  was, so only the waste is extra): a reserved month m is wasted when the change came after its term
  began and before m (P = e^(-lam ts) - e^(-lam m), ts the start of m's term), a dedicated month within the
  minimum contract when the change came before it (P = 1 - e^(-lam m)), and an owned server bought new is
  sold early, losing the resale haircut on its book value at that month (P = e^(-lam m) - e^(-lam (m+1))).
  Elastic capacity (on-demand, spot) strands nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from infrafit.catalog.loader import read_table
from infrafit.catalog.schema import Schema, num, provenance, text
from infrafit.cost.capacity_plan import Demand
from infrafit.cost.modes import additions
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.units import MONTHS_PER_YEAR

MATURITY = Schema(
    "workflow_maturity",
    (
        text("maturity", "exploring | evolving | stable", choices=("exploring", "evolving", "stable")),
        num("changes_per_year_count", "model changes a year at this maturity (default of "
            "workflow.model_changes_per_year)"),
        num("new_hardware_fraction", "fraction of changes that need other hardware (default of "
            "workflow.new_hardware_share)", ),
        text("notes", "what the level means", required=False),
        *provenance(),
    ),
    key=("maturity",),
    doc="Default model-change rates by workflow maturity (documented assumptions).",
)
MATURITY_PATH = Path(__file__).resolve().parents[1] / "catalog" / "data" / "workflow_maturity.csv"


@lru_cache(maxsize=2)
def maturity_table(path: str | None = None) -> pd.DataFrame:
    return read_table(path or MATURITY_PATH, MATURITY).set_index("maturity")


@dataclass(frozen=True)
class ChangeRates:
    """Model changes per year and the share of them that need other hardware."""

    changes_per_year: float
    new_hardware_share: float

    @property
    def hardware_changes_per_month(self) -> float:
        return self.changes_per_year * self.new_hardware_share / MONTHS_PER_YEAR


def rates(workflow) -> ChangeRates | None:
    """The spec's rates, each defaulting to its maturity's row; None without a ``workflow`` section."""
    if workflow is None:
        return None
    row = maturity_table().loc[workflow.maturity]
    changes = workflow.model_changes_per_year
    share = workflow.new_hardware_share
    return ChangeRates(float(row["changes_per_year_count"] if changes is None else changes),
                       float(row["new_hardware_fraction"] if share is None else share))


def porting_usd(offers: OfferArrays, r: ChangeRates, months: int, hours_per_week: float,
                engineer_usd_per_hour: float) -> np.ndarray:
    """(M, N) porting and validation repaid each month for the model changes on each option."""
    per_month = offers.change_engineer_weeks * r.changes_per_year / MONTHS_PER_YEAR * hours_per_week
    return np.broadcast_to(per_month * engineer_usd_per_hour, (months, len(offers))).copy()


def _waste_probability(term: np.ndarray, lam: float, months: int, whole_terms: bool) -> np.ndarray:
    """(M, N) probability that month m of a commitment is paid for hardware a change has already retired:
    reserved capacity renews in whole terms (the change came since m's term began), a dedicated contract
    binds only its minimum term (the change came before m, inside the term)."""
    m = np.arange(months, dtype=float)[:, None]
    has = (np.asarray(term, dtype=float) > 0)[None, :]
    safe = np.where(has, np.asarray(term, dtype=float)[None, :], 1.0)
    start = np.floor(m / safe) * safe if whole_terms else np.zeros_like(m * safe)
    inside = has & (m < safe) if not whole_terms else has
    return np.where(inside, np.exp(-lam * start) - np.exp(-lam * m), 0.0)


def stranded_usd(monthly: dict[str, np.ndarray], demand: Demand, offers: OfferArrays, p: CostParams,
                 r: ChangeRates) -> np.ndarray:
    """(M, N) expected cost of commitments stranded by model changes that need other hardware."""
    lam = r.hardware_changes_per_month
    months, n = demand.fixed_replicas.shape
    out = np.zeros((months, n))
    if lam <= 0:
        return out
    paid = monthly.get("compute_usd", np.zeros((months, n))) + monthly.get("idle_usd", np.zeros((months, n)))
    reserved = np.isin(offers.mode, ("cloud_reserved_1y", "cloud_reserved_3y"))
    dedicated = offers.mode == "dedicated_monthly"
    with np.errstate(invalid="ignore"):  # an infeasible candidate's infinite price stays infinite
        out += np.where(reserved[None, :], paid * _waste_probability(offers.term_months, lam, months, True), 0.0)
        out += np.where(dedicated[None, :], paid * _waste_probability(offers.term_months, lam, months, False), 0.0)
    out = np.where(np.isnan(out), np.inf, out)
    bought = (offers.mode == "on_prem") & (np.nan_to_num(offers.purchase_usd) > 0)
    if bought.any():
        out += np.where(bought[None, :], _early_sale_loss(demand, offers, p, lam), 0.0)
    return out


def _early_sale_loss(demand: Demand, offers: OfferArrays, p: CostParams, lam: float) -> np.ndarray:
    """(M, N) expected resale haircut on owned servers sold when a change retires them in month m."""
    months = demand.fixed_replicas.shape[0]
    m = np.arange(months, dtype=float)[:, None]
    fleet = np.cumsum(additions(demand.fixed_replicas), axis=0)
    life = offers.life_years * MONTHS_PER_YEAR
    with np.errstate(invalid="ignore", divide="ignore"):
        book = 1.0 - (1.0 - offers.residual_fraction[None, :]) * np.clip(m / life[None, :], 0.0, 1.0)
    chance = np.exp(-lam * m) - np.exp(-lam * (m + 1.0))
    value = fleet * np.nan_to_num(book) * np.nan_to_num(offers.purchase_usd)[None, :]
    return chance * p.onprem_resale_haircut_fraction * value
