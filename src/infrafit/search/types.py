"""The typed plan: what ``search`` hands to ``report`` and the JSON writer.

``Plan``, ``Option`` and ``Excluded`` are frozen; ``Plan.to_dict()`` is the ``plan --json`` shape of
DESIGN.md section 4 (keys added over time are listed in the README changelog). An option's
``performance`` is the ``estimate --json`` shape and its ``cost`` the cost block, kept as read-only
mappings because they *are* those JSON contracts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_OPTION_FIELDS = ("accelerator", "count", "precision", "stack", "deployment", "provider", "region", "country",
                  "family", "offer_id", "price_retrieved_on", "server", "performance", "cost", "why", "risks",
                  "part", "rank", "parts", "front_point", "user_row", "availability", "efficiency", "switch")


def _frozen(value: Any) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class Excluded:
    """A family or configuration that no option uses, and why (with its numbers)."""

    what: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "reason": self.reason}


@dataclass(frozen=True)
class Option:
    """One ranked option: a configuration on an offer, its performance at the planned operating point,
    its cost, and why it ranks where it does. A ``hybrid`` option has ``parts`` (each an option)."""

    rank: int
    accelerator: str
    count: int
    precision: str
    stack: str
    deployment: str
    provider: str
    region: str
    country: str = ""
    family: str = ""
    offer_id: str = ""
    price_retrieved_on: str = ""
    server: Mapping[str, Any] = field(default_factory=dict)
    performance: Mapping[str, Any] = field(default_factory=dict)
    cost: Mapping[str, Any] = field(default_factory=dict)
    why: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()
    front_point: Mapping[str, Any] | None = None
    part: str | None = None  # "train" or "serve" inside a hybrid option
    parts: tuple[Option, ...] = ()
    user_row: bool = False  # its offer or accelerator comes from the user's catalog overlay
    availability: str = "verified"  # its offer: verified | unverified (copied from another region)
    efficiency: Mapping[str, Any] = field(default_factory=dict)  # work per USD and per kWh, energy, emissions
    switch: Mapping[str, Any] | None = None  # with ``current:``: what moving to this option takes and pays back

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Option:
        unknown = set(d) - set(_OPTION_FIELDS)
        if unknown:
            raise ValueError(f"unknown option keys: {sorted(unknown)}")
        return cls(rank=int(d.get("rank") or 0), accelerator=str(d["accelerator"]), count=int(d["count"]),
                   precision=str(d["precision"]), stack=str(d["stack"]), deployment=str(d["deployment"]),
                   provider=str(d["provider"]), region=str(d.get("region") or ""),
                   country=str(d.get("country") or ""), family=str(d.get("family") or ""),
                   offer_id=str(d.get("offer_id") or ""), price_retrieved_on=str(d.get("price_retrieved_on") or ""),
                   server=_frozen(d.get("server")), performance=_frozen(d.get("performance")),
                   cost=_frozen(d.get("cost")), why=tuple(d.get("why") or ()), risks=tuple(d.get("risks") or ()),
                   front_point=_frozen(d["front_point"]) if d.get("front_point") is not None else None,
                   part=d.get("part"), parts=tuple(cls.from_dict(p) for p in d.get("parts") or ()),
                   user_row=bool(d.get("user_row", False)),
                   availability=str(d.get("availability") or "verified"),
                   efficiency=_frozen(d.get("efficiency")),
                   switch=_frozen(d["switch"]) if d.get("switch") is not None else None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "accelerator": self.accelerator, "count": self.count, "precision": self.precision, "stack": self.stack,
            "deployment": self.deployment, "provider": self.provider, "region": self.region,
            "country": self.country, "family": self.family, "offer_id": self.offer_id,
            "price_retrieved_on": self.price_retrieved_on, "server": dict(self.server),
            "performance": dict(self.performance), "cost": dict(self.cost), "why": list(self.why),
            "risks": list(self.risks), "user_row": self.user_row, "availability": self.availability,
            "efficiency": dict(self.efficiency)}
        if self.switch is not None:
            out["switch"] = dict(self.switch)
        if self.part is not None:
            out["part"] = self.part
        if self.rank:
            out["rank"] = self.rank
        if self.parts:
            out["parts"] = [p.to_dict() for p in self.parts]
        if self.front_point is not None:
            out["front_point"] = dict(self.front_point)
        return out


@dataclass(frozen=True)
class Plan:
    """Ranked options, what was excluded and why, and the data behind the report's charts."""

    workload: Mapping[str, Any]
    objective: str
    catalog_retrieved_on: str
    options: tuple[Option, ...]
    excluded: tuple[Excluded, ...]
    compared: tuple[Excluded, ...] = ()
    front_metric: str = ""
    evaluated: int = 0
    pruned_offers: int = 0
    front: tuple[Mapping[str, Any], ...] = ()
    tco_by_mode: Mapping[str, Any] = field(default_factory=dict)
    breakeven: Mapping[str, Any] = field(default_factory=dict)
    #: what the top-N left out: ``variants`` (family -> cheaper near-copies the diversity rule hid),
    #: ``over_tco_ratio`` and ``over_accelerator_ratio`` (candidates past the worth-showing bounds)
    hidden: Mapping[str, Any] = field(default_factory=dict)
    #: the price dates, said once: ``oldest_retrieved_on``, ``newest_retrieved_on``, ``stale_after_days``
    #: and ``stale_options`` (rank, retrieved_on, age_days of each shown option on a stale price)
    price_age: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Plan:
        return cls(workload=_frozen(d.get("workload")), objective=str(d.get("objective") or "cost"),
                   catalog_retrieved_on=str(d.get("catalog_retrieved_on") or ""),
                   options=tuple(Option.from_dict(o) for o in d.get("options") or ()),
                   excluded=tuple(Excluded(str(e["what"]), str(e["reason"])) for e in d.get("excluded") or ()),
                   compared=tuple(Excluded(str(e["what"]), str(e["reason"])) for e in d.get("compared") or ()),
                   front_metric=str(d.get("front_metric") or ""), evaluated=int(d.get("evaluated") or 0),
                   pruned_offers=int(d.get("pruned_offers") or 0),
                   front=tuple(_frozen(p) for p in d.get("front") or ()),
                   tco_by_mode=_frozen(d.get("tco_by_mode")), breakeven=_frozen(d.get("breakeven")),
                   hidden=_frozen(d.get("hidden")), price_age=_frozen(d.get("price_age")))

    def to_frame(self) -> Any:
        """One row per option (pandas DataFrame): rank, hardware, where, mode, price and the headline
        figures, in SI units with the unit in each column name."""
        import pandas as pd

        rows = []
        for o in self.options:
            lat = o.performance.get("latency") or {}
            p99 = {k: (lat.get(k) or {}).get("p99") if isinstance(lat.get(k), Mapping) else None
                   for k in ("ttft_s", "tpot_s", "e2e_s")}
            rows.append({"rank": o.rank, "accelerator": o.accelerator, "count": o.count, "precision": o.precision,
                         "stack": o.stack, "deployment": o.deployment, "provider": o.provider, "region": o.region,
                         "country": o.country, "offer_id": o.offer_id, "availability": o.availability,
                         "tco_usd": o.cost.get("tco_usd"), "monthly_usd": o.cost.get("monthly_usd"),
                         "cash_outlay_usd": o.cost.get("cash_outlay_usd"),
                         "ttft_p99_s": p99["ttft_s"], "tpot_p99_s": p99["tpot_s"], "e2e_p99_s": p99["e2e_s"],
                         "time_to_train_s": o.performance.get("time_to_train_s")})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """The ``plan --json`` shape."""
        out: dict[str, Any] = {
            "workload": dict(self.workload), "objective": self.objective,
            "catalog_retrieved_on": self.catalog_retrieved_on, "options": [o.to_dict() for o in self.options],
            "excluded": [e.to_dict() for e in self.excluded], "compared": [e.to_dict() for e in self.compared],
            "front_metric": self.front_metric, "evaluated": self.evaluated, "pruned_offers": self.pruned_offers}
        if self.front:
            out["front"] = [dict(p) for p in self.front]
        if self.tco_by_mode:
            out["tco_by_mode"] = dict(self.tco_by_mode)
        if self.breakeven:
            out["breakeven"] = dict(self.breakeven)
        if self.hidden:
            out["hidden"] = dict(self.hidden)
        if self.price_age:
            out["price_age"] = dict(self.price_age)
        return out

    @property
    def name(self) -> str:
        return str(self.workload.get("name", ""))
