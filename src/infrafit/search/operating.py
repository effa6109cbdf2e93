"""Operating points: at what load per replica the plan runs (and so sizes and prices) a configuration.

The SLO-limited point (``max_rate``) is the largest request rate one replica sustains with every p99
inside its SLO. It is the cheapest way to meet the SLOs, and the only point the ``cost`` and
``time`` objectives plan. Its p99 sits close to the SLO by construction, so ranking configurations
by latency there finds little: every one is near the limit.

Latency grows with load (queueing ahead of prefill, larger decode or inference batches), so lower
latency is bought with more replicas, each running lighter. The ``latency`` and ``balanced``
objectives therefore also plan every configuration at ``UTILISATION_TARGETS`` of its SLO-limited
rate: the busiest grid point (requests in flight for continuous batching, batch size for other
models) whose rate is at most that fraction of the SLO-limited rate. The cost model then sizes the
replicas for the traffic at that point's rate and prices them like any other candidate.

Why 50 % and 25 %: in an M/M/1 queue the mean wait is rho / (1 - rho) service times
(Kleinrock, Queueing Systems vol. 1, 1975, eq. 3.24): 9 at 90 % load, 1 at 50 %, 1/3 at 25 %. Below
25 % the wait is a small part of the latency, which is then the work itself, and further replicas
buy little; the grid is coarse (powers of two), so two targets give two distinct points on most
configurations.
"""

from __future__ import annotations

from typing import Any

from infrafit.perf import MAX_RATE
from infrafit.units import fmt_duration

UTILISATION_TARGETS = (0.5, 0.25)


def targets_for(objective: str) -> tuple[float, ...]:
    """Lower operating points the objective considers (none for cost and time)."""
    return UTILISATION_TARGETS if objective in ("latency", "balanced") else ()


def why_line(point: dict[str, Any] | None, label: str) -> str | None:
    """'operating point: 16 requests in flight, 2.4 requests/s per replica (47% of the 5.08 the SLOs
    allow); TTFT p99 612 ms against 988 ms at the SLO-limited load'."""
    if not point:
        return None
    rate, top = point["requests_per_s"], point["max_rate_requests_per_s"]
    if point["name"] == MAX_RATE:
        return (f"operating point: the largest load within the SLOs, {point['at']}, {rate:,.3g} requests/s "
                "per replica (replicas sized for the traffic at that rate)")
    return (f"operating point: {point['at']}, {rate:,.3g} requests/s per replica "
            f"({point['utilisation_fraction']:.0%} of the {top:,.3g} the SLOs allow; more replicas, each "
            f"lighter): {label} {fmt_duration(point['metric_value'])} against "
            f"{fmt_duration(point['metric_at_max_rate'])} at the SLO-limited load")
