"""The network between the users and each offer (issue 13 point 1): per-offer round trips from every
``placement.users_in`` place, and what a user's latency percentiles gain from them.

A request's time at the client = its time at the server + one round trip (+ the TCP and TLS 1.3
handshakes, one round trip each, when ``traffic.new_connection_per_request``). The planner checks
SLOs ``measured_at: client`` (the default when ``users_in`` is given) against the worst place that
sends at least ``P99_PLACE_SHARE`` of the requests, so a p99 target holds for the users a p99
describes. Round trips come from ``perf.round_trip`` (measured Azure P95 where the path is in the
data, else the fitted distance model).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from infrafit.perf import NEW_CONNECTION_RTTS, round_trip
from infrafit.workload.names import locate

#: A place sending less than this share of requests cannot set a p99 by itself.
P99_PLACE_SHARE = 0.01
#: Offers are grouped by their added network time rounded *up* to this step (each group is evaluated
#: against its own server budget; rounding up keeps the check conservative).
BIN_S = 0.005
#: The latency targets a network round trip adds to (TPOT is per token inside a stream: unchanged).
NETWORK_SLOS = ("ttft_p99_s", "e2e_p99_s", "latency_p99_s")


def applies(workload: Any) -> bool:
    """True when the plan checks latency at the users: interactive serving with ``users_in`` and
    ``slo.measured_at`` client (its default then)."""
    inf = workload.inference
    if inf is None or inf.mode not in ("realtime", "mixed") or not workload.placement.users_in:
        return False
    return (inf.slo.measured_at or "client") == "client"


def round_trips_per_request(workload: Any) -> int:
    new = bool(workload.inference is not None and workload.inference.traffic.new_connection_per_request)
    return 1 + (NEW_CONNECTION_RTTS if new else 0)


@lru_cache(maxsize=1024)
def _where(city: str, region: str, country: str) -> tuple[float, float, str] | None:
    return locate(city, region, country=country)


def user_points(workload: Any) -> list[tuple[str, float, tuple[float, float], str]]:
    """(place, share, (lat, lon), how it was located) for every users_in place."""
    out = []
    for place, share in workload.placement.user_places():
        found = _where(place, "", "")
        if found:
            out.append((place, share, (found[0], found[1]), found[2]))
    return out


def offer_point(row: Any) -> tuple[tuple[float, float], str] | None:
    found = _where(_text(row.get("city")), _text(row.get("region")), _text(row.get("country")))
    return ((found[0], found[1]), found[2]) if found else None


def _text(value: Any) -> str:
    return "" if value is None or value != value else str(value)


def added_seconds(offers: pd.DataFrame, workload: Any) -> np.ndarray:
    """(offers,) seconds the network adds to a request at the p99 users: the worst place with at least
    ``P99_PLACE_SHARE`` of the requests; NaN for offers that cannot be located (their latency at the users is
    unknown: ``planner.build_part`` excludes them, where they once counted as no network at all)."""
    users = user_points(workload)
    heavy = [u for u in users if u[1] >= P99_PLACE_SHARE] or users
    k = round_trips_per_request(workload)
    cache: dict[tuple[str, str, str], float] = {}
    out = np.zeros(len(offers))
    for i, (city, region, country) in enumerate(zip(offers["city"], offers["region"], offers["country"],
                                                   strict=True)):
        key = (_text(city), _text(region), _text(country))
        if key not in cache:
            at = _where(*key)
            cache[key] = (np.nan if heavy else 0.0) if at is None else \
                max((round_trip(u[2], (at[0], at[1])).rtt_s for u in heavy), default=0.0) * k
        out[i] = cache[key]
    return out


def bins(added: np.ndarray) -> np.ndarray:
    """Each offer's added time rounded up to ``BIN_S``."""
    return np.ceil(np.round(added / BIN_S, 9)) * BIN_S


def detail(row: Any, workload: Any, server: dict[str, float | None]) -> dict[str, Any]:
    """``performance.network``: per user place its round trip, where it came from, its share, and the
    option's p99 latencies as that place sees them (``server`` holds the server-side p99s)."""
    at = offer_point(row)
    k = round_trips_per_request(workload)
    out: dict[str, Any] = {}
    for place, share, point, how in user_points(workload):
        if at is None:
            out[place] = {"rtt_s": None, "source": "the offer's region has no location", "share": share}
            continue
        rt = round_trip(point, at[0])
        seen = {name: value + rt.rtt_s * k for name, value in server.items() if value is not None}
        out[place] = {"rtt_s": rt.rtt_s, "round_trips_per_request": k, "source": rt.source, "share": share,
                      "distance_m": rt.distance_m, "user_located_at": how, "server_located_at": at[1],
                      **{f"{name}_at_user": v for name, v in seen.items()}}
    return out


def farthest(row: Any, workload: Any) -> tuple[str, float] | None:
    """(place, round trip s) of the farthest user place from the offer (None when it cannot be located)."""
    at = offer_point(row)
    users = user_points(workload)
    if at is None or not users:
        return None
    return max(((place, round_trip(point, at[0]).rtt_s) for place, _, point, _ in users), key=lambda t: t[1])
