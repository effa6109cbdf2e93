"""infrafit.cost: usage profiles, capacity plans, TCO per deployment mode, break-even, sensitivity,
hybrid pairs. The core takes plain numbers and numpy arrays; ``cost.adapters`` reads a Workload and
catalog rows. See docs/cost.md for every formula and assumption."""

from infrafit.cost.capacity_plan import Demand, capacity_events, inference_demand, training_demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import BREAKDOWN_KEYS, MODES, CostParams
from infrafit.cost.tco import CostResult, price_options
from infrafit.cost.usage import LoadProfile, growth_factors, month_profile

__all__ = [
    "BREAKDOWN_KEYS", "MODES", "CostParams", "CostResult", "Demand", "LoadProfile", "OfferArrays",
    "capacity_events", "growth_factors", "inference_demand", "month_profile", "price_options", "training_demand",
]
