"""Cost of capital (issue 12 point 5): owned servers pay the spec's rate on the cash still tied up in them
(their book value), so buying carries what the money would earn or cost elsewhere; rentals pay nothing."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.capacity_plan import Demand
from infrafit.cost.modes import book_value_by_month
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.cost.tco import price_options
from infrafit.errors import InputError
from infrafit.units import HOURS_PER_MONTH


def _steady(months: int) -> Demand:
    hours = np.full((months, 2), HOURS_PER_MONTH)
    zeros = np.zeros(months)
    return Demand(hours, hours.copy(), np.ones((months, 2)), HOURS_PER_MONTH, True, zeros, zeros)


def _offers() -> OfferArrays:
    return OfferArrays.build(["on_prem", "cloud_on_demand"], purchase_usd=[313_000, 0], usd_per_hour=[0, 50],
                             life_years=4, residual_fraction=0.10)


def test_book_value_falls_straight_line_from_the_purchase():
    d = _steady(36)
    bv = book_value_by_month(d.fixed_replicas, _offers())
    monthly_dep = 313_000 * 0.9 / 48
    assert bv[0, 0] == pytest.approx(313_000)
    assert bv[12, 0] == pytest.approx(313_000 - 12 * monthly_dep)
    assert bv[35, 0] == pytest.approx(313_000 - 35 * monthly_dep)
    assert (bv[:, 1] == 0).all()  # nothing bought for the rental


def test_capital_is_the_rate_on_the_book_value_and_only_for_owned_servers():
    d, o = _steady(36), _offers()
    free = price_options(d, o, horizon_months=36, engineer_usd_per_hour=0.0)
    dear = price_options(d, o, horizon_months=36, engineer_usd_per_hour=0.0,
                         params=CostParams(capital_rate_per_year=0.08))
    bv = book_value_by_month(d.fixed_replicas, o)
    assert dear.breakdown["capital_usd"][0] == pytest.approx(bv[:, 0].sum() * 0.08 / 12)
    assert dear.breakdown["capital_usd"][1] == 0.0 and free.breakdown["capital_usd"][0] == 0.0
    assert dear.tco_usd[0] - free.tco_usd[0] == pytest.approx(dear.breakdown["capital_usd"][0])
    assert dear.tco_usd[1] == pytest.approx(free.tco_usd[1])
    # ~8% a year on a ~$220k average balance over 3 years: ~$53k
    assert 40_000 < dear.breakdown["capital_usd"][0] < 70_000


def test_the_rate_is_validated():
    with pytest.raises(InputError, match="capital_rate_per_year"):
        CostParams(capital_rate_per_year=-0.1)
