"""Array rooflines and queueing formulas shared by every performance model.

Every function takes numpy arrays (or scalars that broadcast) and returns arrays, so the same code
estimates one configuration or a million. Units are SI: FLOPs, bytes, seconds, FLOP/s, bytes/s.

The roofline (Williams, Waterman & Patterson, "Roofline: an insightful visual performance model",
CACM 2009): an operation that performs ``flops`` and moves ``bytes`` takes at least
``max(flops / (peak x eff_compute), bytes / (bandwidth x eff_memory))``. The efficiencies are the
achieved fraction of the datasheet peak, fitted per physical key (see ``perf.profiles``).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

ArrayLike = np.ndarray | float | int


def compute_time_s(flops: ArrayLike, peak_flops_per_s: ArrayLike, efficiency: ArrayLike) -> np.ndarray:
    """Time to execute ``flops`` at ``efficiency`` x ``peak`` (compute-bound side of the roofline)."""
    return np.asarray(flops, dtype=float) / (np.asarray(peak_flops_per_s, dtype=float) * efficiency)


def memory_time_s(bytes_moved: ArrayLike, bytes_per_s: ArrayLike, efficiency: ArrayLike) -> np.ndarray:
    """Time to move ``bytes_moved`` at ``efficiency`` x bandwidth (memory-bound side)."""
    return np.asarray(bytes_moved, dtype=float) / (np.asarray(bytes_per_s, dtype=float) * efficiency)


def roofline_time_s(
    flops: ArrayLike,
    bytes_moved: ArrayLike,
    peak_flops_per_s: ArrayLike,
    bytes_per_s: ArrayLike,
    eff_compute: ArrayLike,
    eff_memory: ArrayLike,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(time, compute_time, memory_time)`` of one op class: time = max(compute, memory)."""
    t_c = compute_time_s(flops, peak_flops_per_s, eff_compute)
    t_m = memory_time_s(bytes_moved, bytes_per_s, eff_memory)
    return np.maximum(t_c, t_m), t_c, t_m


def ring_allreduce_time_s(
    message_bytes: ArrayLike, n: ArrayLike, link_bytes_per_s: ArrayLike, hop_latency_s: ArrayLike
) -> np.ndarray:
    """Ring all-reduce of ``message_bytes`` over ``n`` ranks.

    Each rank sends and receives ``2 (n-1)/n x bytes`` (reduce-scatter then all-gather) in
    ``2 (n-1)`` latency-bound hops (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms",
    JPDC 2009; the NCCL performance notes use the same ``2(n-1)/n`` bus-bandwidth factor).
    Zero when ``n == 1``.
    """
    n = np.asarray(n, dtype=float)
    frac = np.where(n > 1, 2.0 * (n - 1.0) / np.maximum(n, 1.0), 0.0)
    bw = np.maximum(np.asarray(link_bytes_per_s, dtype=float), 1.0)
    return frac * np.asarray(message_bytes, dtype=float) / bw + 2.0 * np.maximum(n - 1.0, 0.0) * hop_latency_s


def one_hop_allreduce_time_s(
    message_bytes: ArrayLike, n: ArrayLike, link_bytes_per_s: ArrayLike, hop_latency_s: ArrayLike
) -> np.ndarray:
    """All-reduce on a fabric where every rank reaches every other in one hop (NVSwitch, a full mesh):
    the faster of one-shot (each rank reads the ``n - 1`` peers' whole messages and reduces locally: one
    round, ``(n-1) x bytes`` over its link) and two-shot (reduce-scatter then all-gather, each one round:
    ``2 (n-1)/n x bytes``), each round a write plus a flag barrier (2 hop latencies), and never slower
    than the ring. These are the small-message strategies of TensorRT-LLM's custom all-reduce
    (``AllReduceStrategy.ONESHOT`` / ``TWOSHOT``) and vLLM's ``custom_all_reduce`` on full NVLink; at
    decode sizes (tens of kB) they take a few microseconds where a ring's ``2 (n-1)`` hops take tens.
    Zero when ``n == 1``."""
    n = np.asarray(n, dtype=float)
    b = np.asarray(message_bytes, dtype=float)
    bw = np.maximum(np.asarray(link_bytes_per_s, dtype=float), 1.0)
    lat = np.asarray(hop_latency_s, dtype=float)
    one_shot = np.maximum(n - 1.0, 0.0) * b / bw + 2.0 * lat
    two_shot = 2.0 * np.maximum(n - 1.0, 0.0) / np.maximum(n, 1.0) * b / bw + 4.0 * lat
    best = np.minimum(np.minimum(one_shot, two_shot), ring_allreduce_time_s(b, n, bw, lat))
    return np.where(n > 1, best, 0.0)


def all_to_all_time_s(
    bytes_per_rank: ArrayLike, n: ArrayLike, link_bytes_per_s: ArrayLike, hop_latency_s: ArrayLike
) -> np.ndarray:
    """All-to-all where each of ``n`` ranks holds ``bytes_per_rank`` and keeps ``1/n`` of it.

    Each rank sends ``(n-1)/n x bytes_per_rank``; with a switched fabric the exchanges proceed in
    parallel, so time = that volume / link bandwidth + one latency per peer group (log2 n rounds).
    Zero when ``n == 1``.
    """
    n = np.asarray(n, dtype=float)
    frac = np.where(n > 1, (n - 1.0) / np.maximum(n, 1.0), 0.0)
    bw = np.maximum(np.asarray(link_bytes_per_s, dtype=float), 1.0)
    rounds = np.log2(np.maximum(n, 1.0))
    return frac * np.asarray(bytes_per_rank, dtype=float) / bw + rounds * hop_latency_s


def expected_distinct_experts(num_experts: ArrayLike, top_k: ArrayLike, tokens: ArrayLike) -> np.ndarray:
    """Expected number of distinct experts a batch of ``tokens`` touches in one MoE layer.

    With uniform routing each token picks ``k`` of ``E`` experts, so an expert is missed by one token
    with probability ``1 - k/E`` and by all ``T`` with ``(1 - k/E)^T``: ``E x (1 - (1 - k/E)^T)``.
    """
    e = np.maximum(np.asarray(num_experts, dtype=float), 1.0)
    k = np.minimum(np.asarray(top_k, dtype=float), e)
    t = np.maximum(np.asarray(tokens, dtype=float), 0.0)
    return e * (1.0 - np.power(1.0 - k / e, t))


def md1_wait_s(utilisation: ArrayLike, service_s: ArrayLike) -> np.ndarray:
    """Mean queueing delay of an M/D/1 queue (Pollaczek-Khinchine with zero service variance).

    ``W = rho / (2 (1 - rho)) x service``; ``rho`` is clipped below 1 (at or above 1 the queue has
    no steady state, and the callers treat that configuration as overloaded).
    """
    rho = np.clip(np.asarray(utilisation, dtype=float), 0.0, 0.98)
    return rho / (2.0 * (1.0 - rho)) * np.asarray(service_s, dtype=float)


def erlang_c(servers: int, offered_erlangs: float) -> float:
    """Probability that an arrival waits in an M/M/c queue (Erlang C), from the Erlang B recursion
    ``B(k) = a B(k-1) / (k + a B(k-1))``, which stays finite for any number of servers; 1 at or above
    saturation (``a >= c``)."""
    c, a = int(servers), float(offered_erlangs)
    if a <= 0.0:
        return 0.0
    if a >= c:
        return 1.0
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    rho = a / c
    return b / (1.0 - rho * (1.0 - b))


def admission_limited_rate(slots: int, service_s: float, wait_budget_s: float, quantile: float = 0.99) -> float:
    """The highest Poisson arrival rate an engine admitting at most ``slots`` requests at a time (each held
    ``service_s``) serves while the ``quantile`` of the wait for a free slot stays within ``wait_budget_s``.

    M/M/c: ``P(W > t) = C(c, lambda S) exp(-(c/S - lambda) t)``, decreasing in ``t`` and increasing in
    ``lambda``, so the rate is found by bisection. Exponential service makes the wait an upper bound for
    requests of similar length (an M/D/c queue waits about half as long), so the rate is a lower bound.
    0 when even an idle engine's service misses the budget (``wait_budget_s < 0``)."""
    if slots < 1 or service_s <= 0.0 or wait_budget_s < 0.0:
        return 0.0
    mu, tail = 1.0 / service_s, 1.0 - quantile

    def late(lam: float) -> float:
        return erlang_c(slots, lam / mu) * float(np.exp(-(slots * mu - lam) * wait_budget_s))

    lo, hi = 0.0, slots * mu
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if late(mid) <= tail else (lo, mid)
    return lo


def exponential_tail_factor(quantile: float) -> float:
    """``-ln(1 - q)``: the q-quantile of an exponential distribution in units of its mean.

    The waiting time of a queue in heavy traffic is approximately exponential (Kingman 1962), so
    its p99 is ``ln(100) ~ 4.6`` times its mean.
    """
    return float(-np.log(1.0 - quantile))


#: The tail every SLO in a spec is written at, and the two shapes its factor takes: a standard normal's
#: 99th percentile (sums of many small fluctuations: batch fill, decode jitter) and an exponential's
#: (queueing waits in heavy traffic, Kingman 1962). Defined once; every estimator imports them.
P99_QUANTILE = 0.99
Z99 = float(NormalDist().inv_cdf(P99_QUANTILE))
P99_EXPONENTIAL_TAIL = exponential_tail_factor(P99_QUANTILE)


def kingman_wait_s(utilisation: ArrayLike, service_s: ArrayLike, ca2: ArrayLike, cs2: ArrayLike) -> np.ndarray:
    """Kingman's G/G/1 approximation: ``W = rho/(1-rho) x (ca^2 + cs^2)/2 x service``."""
    rho = np.clip(np.asarray(utilisation, dtype=float), 0.0, 0.98)
    return rho / (1.0 - rho) * (np.asarray(ca2) + np.asarray(cs2)) / 2.0 * np.asarray(service_s, dtype=float)
