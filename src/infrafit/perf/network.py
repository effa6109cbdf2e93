"""Round-trip time from a user place to a serving region: measured where the data has the path, else
estimated from great-circle distance with a route factor fitted on the measured paths.

- **Measured**: ``catalog/data/network_rtt.csv`` (Azure backbone P95 between 54 regions, 30 days to
  2026-07-30). A user place and a serving site each within ``MEASURED_RADIUS_M`` of two measured
  regions take that pair's P95 (a backbone figure: the user's own access network comes on top).
- **Estimated**: ``rtt = intercept + slope x great-circle distance``, least squares over the Azure
  P95 pairs whose two ends have coordinates. Light in silica fibre travels at about c / 1.47 (2.04e8
  m/s), so a straight fibre gives 9.8 us of round trip per km; ``slope`` over that is the route
  factor (paths are not great circles, and routers queue). The leave-one-out error of this fit is
  what an estimate carries (``fit().loo_mdape``).

Pure functions over cached tables; ``round_trip`` is what the planner and reports call.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from infrafit.units import M_PER_KM, MS, SPEED_OF_LIGHT_M_PER_S

EARTH_RADIUS_M = 6_371_008.8  # IUGG mean Earth radius
FIBRE_GROUP_INDEX = 1.47  # silica fibre near 1550 nm
FIBRE_M_PER_S = SPEED_OF_LIGHT_M_PER_S / FIBRE_GROUP_INDEX
MEASURED_RADIUS_M = 150 * M_PER_KM  # a place this close to a measured region counts as that region
#: Each request on a fresh connection waits one round trip for the TCP handshake and one for the
#: TLS 1.3 handshake (RFC 8446 section 2: a full handshake takes 1 RTT) before its bytes go out.
NEW_CONNECTION_RTTS = 2


@dataclass(frozen=True)
class RoundTrip:
    rtt_s: float
    source: str  # "measured: ..." or "estimate: ..."
    distance_m: float


@dataclass(frozen=True)
class DistanceFit:
    intercept_s: float
    slope_s_per_m: float
    pairs: int
    loo_mdape: float  # median |error| / measured, each pair predicted by a fit without it

    @property
    def route_factor(self) -> float:
        """The fitted slope over a straight fibre's round trip per metre."""
        return self.slope_s_per_m / (2.0 / FIBRE_M_PER_S)


def great_circle_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Haversine distance on the mean-radius sphere (metres)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def _azure_code(display: str) -> str:
    return display.lower().replace(" ", "")


@lru_cache(maxsize=1)
def measured_sites() -> dict[str, tuple[float, float]]:
    """Azure region display name -> (lat, lon): its curator city label, else the city of its region code
    in ``cloud_regions.csv``; regions neither names are left out (their pairs cannot be placed). A label's
    town in parentheses comes first (``Washington (Quincy)``: Quincy, WA), and a US state's name is the state
    (at its most populous known place: ``Virginia``, ``Iowa``), never a namesake city (``Washington``: not DC)."""
    from infrafit.catalog.loader import read_table
    from infrafit.catalog.network import rtt_table
    from infrafit.catalog.refresh import REGIONS, REGIONS_PATH

    regions = read_table(REGIONS_PATH, REGIONS)
    azure_city = {r: c for p, r, c in zip(regions["provider"], regions["region"], regions["city"], strict=True)
                  if p == "Azure" and c}
    table = rtt_table()
    table = table[table["network"] == "azure_backbone"]
    out: dict[str, tuple[float, float]] = {}
    for region, city in set(zip(table["from_region"], table["from_city"], strict=True)):
        found = next(filter(None, map(_site, _labels(city) + _labels(azure_city.get(_azure_code(region), "")))),
                     None)
        if found:
            out[region] = (found[0], found[1])
    return out


def _labels(label: object) -> list[str]:
    """A location label's names, most specific first: ``Tokyo (Saitama)`` -> ``[Saitama, Tokyo]``."""
    text = str(label or "")
    inner = [t.strip() for t in re.findall(r"\((.*?)\)", text) if t.strip()]
    outer = re.sub(r"\(.*?\)", "", text).strip()
    return inner + ([outer] if outer else [])


def _site(name: str) -> tuple[float, float, str] | None:
    """Where a region's location label puts it: a US state at its most populous known place, a place by
    name, else a country's name (``Ireland``: North Europe; ``Netherlands``: West Europe) at the country's
    most populous place."""
    from infrafit.countries import country_named
    from infrafit.workload.names import locate, state_named, subdivision_anchor

    state = state_named(name)
    if state:
        return subdivision_anchor(state)
    found = locate(name)
    country = None if found else country_named(name)
    return locate(country[0]) if country else found


@lru_cache(maxsize=1)
def _pairs() -> tuple[tuple[str, str, float, float], ...]:
    """(from, to, distance m, P95 RTT s) for every placed Azure pair."""
    from infrafit.catalog.network import rtt_table

    sites = measured_sites()
    table = rtt_table()
    table = table[table["network"] == "azure_backbone"]
    out = []
    for a, b, rtt in zip(table["from_region"], table["to_region"], table["rtt_s"], strict=True):
        if a in sites and b in sites and a != b:
            out.append((a, b, great_circle_m(*sites[a], *sites[b]), float(rtt)))
    return tuple(out)


@lru_cache(maxsize=1)
def fit() -> DistanceFit:
    """RTT = intercept + slope x distance over the placed Azure P95 pairs, minimising the *relative*
    error (each pair weighted by 1 / its RTT: an unweighted fit lets the many long paths set a 30 ms
    intercept that doubles every short one), with its closed-form leave-one-out relative error."""
    pairs = _pairs()
    d = np.array([p[2] for p in pairs])
    y = np.array([p[3] for p in pairs])
    design = np.column_stack([np.ones_like(d), d]) / y[:, None]
    target = np.ones_like(y)  # y / y
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    hat = design @ np.linalg.pinv(design.T @ design) @ design.T
    loo = (target - design @ coef) / (1.0 - np.diag(hat))  # relative residual of each pair left out
    return DistanceFit(float(coef[0]), float(coef[1]), len(pairs), float(np.median(np.abs(loo))))


def _nearest(lat: float, lon: float) -> tuple[str, float] | None:
    best = min(((name, great_circle_m(lat, lon, *xy)) for name, xy in measured_sites().items()),
               key=lambda t: t[1], default=None)
    return best if best and best[1] <= MEASURED_RADIUS_M else None


@lru_cache(maxsize=4096)
def round_trip(user: tuple[float, float], server: tuple[float, float]) -> RoundTrip:
    """The round trip between two points: the measured P95 of the Azure pair both sit at, else the
    distance estimate (same metro: the fit's intercept, the time for the routers and the last miles)."""
    distance = great_circle_m(*user, *server)
    near_u, near_s = _nearest(*user), _nearest(*server)
    if near_u and near_s and near_u[0] != near_s[0]:
        measured = {(a, b): rtt for a, b, _, rtt in _pairs()}
        rtt = measured.get((near_u[0], near_s[0]))
        if rtt is not None:
            return RoundTrip(rtt, f"measured: Azure backbone P95 {near_u[0]} -> {near_s[0]} (30 days to "
                                  "2026-07-30)", distance)
    f = fit()
    rtt = f.intercept_s + f.slope_s_per_m * distance
    return RoundTrip(rtt, f"estimate: {distance / M_PER_KM:,.0f} km great circle x fitted route factor "
                          f"{f.route_factor:.2f} + {f.intercept_s / MS:.0f} ms (LOO error {f.loo_mdape:.0%})",
                     distance)
