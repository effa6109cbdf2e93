"""The catalog's values: ``Accelerator`` (one chip) and ``Catalog`` (every table, names resolved)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import pandas as pd

from infrafit.catalog.tables import PEAK_COLUMNS
from infrafit.errors import InputError, suggest

_SEPARATORS = re.compile(r"[\s_\-]+")


def normalize_name(name: str) -> str:
    """Case-, space-, ``_``- and ``-``-insensitive form of a name: ``"H100 SXM5_80GB"`` -> ``"h100-sxm5-80gb"``."""
    return _SEPARATORS.sub("-", str(name).strip().lower()).strip("-")


def _opt(value: Any) -> float:
    return float(value) if value is not None and not pd.isna(value) else math.nan


#: Most accelerators one server box holds (HGX/DGX, MI300X OAM platforms, PCIe GPU servers).
PCIE_BOX_CHIPS = 8


def known_bandwidth(value: float | None) -> bool:
    """True for a known, positive link bandwidth (the catalog writes an unknown one as NaN or empty)."""
    return value is not None and math.isfinite(value) and value > 0


def peer_link(acc: Any, chips: int) -> tuple[float, str] | None:
    """``(bytes/s per chip one way, kind)`` of the link ``chips`` accelerators of one replica exchange
    data over: the one missing-link rule every estimator uses. The scale-up fabric inside its domain;
    else PCIe through the host bridge (half the host link) inside one box of at most
    ``PCIE_BOX_CHIPS``; else the scale-out network when known; else None (unknown: a layout that
    needs it is not generated). Reads only the accelerator's link fields."""
    up, domain = acc.scaleup_bytes_per_s, int(acc.scaleup_domain_size or 1)
    if chips <= 1:
        return (up if known_bandwidth(up) else 1.0), "none"
    if known_bandwidth(up) and chips <= domain:
        return up, "scaleup"
    if chips <= PCIE_BOX_CHIPS and known_bandwidth(acc.host_bytes_per_s):
        return acc.host_bytes_per_s / 2.0, "pcie"
    if known_bandwidth(acc.scaleout_bytes_per_s):
        return acc.scaleout_bytes_per_s, "scaleout"
    return None


@dataclass(frozen=True)
class Accelerator:
    """One chip (TPU: per chip; CPU: per socket). SI units; ``nan`` means not known."""

    id: str
    name: str
    vendor: str
    family: str
    generation: str
    kind: Literal["gpu", "tpu", "asic", "cpu"]
    peak_flops_per_s: Mapping[str, float]  # dense, per chip; a missing key = no native support
    memory_bytes: float
    memory_bytes_per_s: float
    scaleup_link: str
    scaleup_bytes_per_s: float  # per chip, one direction; 0 when PCIe only
    scaleup_domain_size: int  # chips in one scale-up domain
    scaleout_bytes_per_s: float  # per chip, one direction, typical deployment; nan = not known
    host_bytes_per_s: float
    host_interface: str
    tdp_w: float  # nan = not published
    release_date: str
    cores: int | None
    source: str
    retrieved_on: str
    user_row: bool = False
    memory_type: str = ""
    form_factor: str = ""
    clock_hz: float = math.nan
    confidence: str = ""
    notes: str = ""
    derived: bool = False
    scaleup_topology: str = ""  # switch | full_mesh | torus | bridge | none | "" (not known)
    extra: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    def peak(self, precision: str) -> float:
        """Dense peak FLOP/s (ops/s for integers) at ``precision``; 0.0 when the chip has no native support."""
        return float(self.peak_flops_per_s.get(precision, 0.0))

    @property
    def has_host_link(self) -> bool:
        """True when the host interface's bandwidth is known (an unknown one is NaN in the catalog)."""
        return known_bandwidth(self.host_bytes_per_s)

    def peer_link(self, chips: int) -> tuple[float, str] | None:
        """The link ``chips`` accelerators of one replica exchange data over (``peer_link``)."""
        return peer_link(self, chips)

    def supports(self, precision: str) -> bool:
        """True when the chip has a native dense rate for ``precision``."""
        return self.peak(precision) > 0.0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (nan -> None is left to the JSON printer)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        out["peak_flops_per_s"] = dict(self.peak_flops_per_s)
        return out

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Accelerator:
        """Build from one validated accelerators.csv row (a dict of column -> value)."""
        peaks = {p: float(row[c]) for p, c in PEAK_COLUMNS.items() if not pd.isna(row[c]) and float(row[c]) > 0}
        cores = row.get("core_count")
        return cls(
            id=str(row["id"]), name=str(row["name"]), vendor=str(row["vendor"]), family=str(row["family"]),
            generation=str(row["generation"]), kind=row["kind"],  # type: ignore[arg-type]
            peak_flops_per_s=MappingProxyType(peaks),
            memory_bytes=float(row["memory_bytes"]), memory_bytes_per_s=float(row["memory_bytes_per_s"]),
            scaleup_link=str(row["scaleup_link"]), scaleup_bytes_per_s=float(row["scaleup_bytes_per_s"]),
            scaleup_domain_size=int(row["scaleup_domain_chips"]),
            scaleout_bytes_per_s=_opt(row["scaleout_bytes_per_s"]), host_bytes_per_s=_opt(row["host_bytes_per_s"]),
            host_interface=str(row["host_interface"]), tdp_w=_opt(row["tdp_w"]),
            release_date=str(row["release_date"]), cores=None if pd.isna(cores) else int(cores),  # type: ignore[arg-type]
            source=str(row["source"]), retrieved_on=str(row["retrieved_on"]), user_row=bool(row["user_row"]),
            memory_type=str(row["memory_type"]), form_factor=str(row["form_factor"]),
            clock_hz=_opt(row["clock_hz"]), confidence=str(row["confidence"]), notes=str(row["notes"]),
            derived=bool(row["derived"]),
            scaleup_topology="" if pd.isna(row.get("scaleup_topology")) else str(row.get("scaleup_topology") or ""),
        )


@dataclass
class Catalog:
    """Every catalog table, validated, with the user's overlay applied. Treat the frames as read-only."""

    accelerators: dict[str, Accelerator]
    tables: dict[str, pd.DataFrame]  # every table by file name (accelerators, hosts, offers, ...)
    aliases: dict[str, str]  # normalized alias -> accelerator id
    cost_factors: dict[str, pd.DataFrame] = field(default_factory=dict)
    overlay_dir: str | None = None
    #: frames derived from the tables once per loaded catalog (the planner's annotated offers)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def table(self, name: str) -> pd.DataFrame:
        """One table by file name; an empty frame when the catalog has no such table."""
        return self.tables.get(name, pd.DataFrame())

    @property
    def hosts(self) -> pd.DataFrame:
        return self.table("hosts")

    @property
    def offers(self) -> pd.DataFrame:
        return self.table("offers")

    @property
    def frameworks(self) -> pd.DataFrame:
        return self.table("frameworks")

    @property
    def stacks(self) -> pd.DataFrame:
        return self.table("stacks")

    def resolve_accelerator_id(self, name_or_alias: str) -> str:
        """The accelerator id for an id or alias (case-, space-, ``_``/``-``-insensitive).

        Raises ``InputError`` with close-match suggestions when nothing matches.
        """
        if name_or_alias in self.accelerators:
            return name_or_alias
        key = normalize_name(name_or_alias)
        found = self.aliases.get(key)
        if found is not None:
            return found
        choices = sorted(set(self.accelerators) | set(self.aliases))
        hint = suggest(key, choices) or suggest(name_or_alias, choices)
        raise InputError(
            f"unknown accelerator {name_or_alias!r}",
            fix=f"use an id or alias from `infrafit catalog accelerators`{hint}",
        )

    def accelerator(self, name_or_alias: str) -> Accelerator:
        """The ``Accelerator`` for an id or alias; raises ``InputError`` with suggestions."""
        return self.accelerators[self.resolve_accelerator_id(name_or_alias)]

    def user_rows(self) -> dict[str, list[str]]:
        """Per table, the keys of rows that came from the user's overlay."""
        out: dict[str, list[str]] = {}
        for name, frame in self.tables.items():
            if "user_row" in frame and frame["user_row"].any():
                out[name] = [str(v) for v in frame.loc[frame["user_row"], frame.columns[0]]]
        return out

    def price_date_range(self, offer_ids: Iterable[str] | None = None) -> tuple[str | None, str | None]:
        """(oldest, newest) ``retrieved_on`` of the given offers (all offers when None); (None, None) if none."""
        offers = self.tables.get("offers")
        if offers is None or offers.empty:
            return (None, None)
        if offer_ids is not None:
            wanted = {str(i) for i in offer_ids}
            offers = offers[offers["id"].isin(wanted)]
        if offers.empty:
            return (None, None)
        dates = offers["retrieved_on"].astype(str)
        return (str(dates.min()), str(dates.max()))


def stack_names(stacks: pd.DataFrame) -> dict[str, str]:
    """Lower-case stack id or alias -> stack id, from the stacks table (``aliases`` split on ``;``)."""
    names: dict[str, str] = {}
    aliases = stacks["aliases"].fillna("") if "aliases" in stacks else pd.Series([""] * len(stacks))
    for sid, alias in zip(stacks["id"], aliases, strict=True):
        names[str(sid).lower()] = str(sid)
        names.update({a.strip().lower(): str(sid) for a in str(alias).split(";") if a.strip()})
    return names


#: Vendor prefixes of accelerator ids; the id without one is the chip's short name (the plan table prints it).
VENDOR_PREFIXES = ("nvidia_", "amd_", "google_", "intel_", "aws_")


def short_accelerator(acc_id: str) -> str:
    """``nvidia_h100_sxm`` -> ``h100_sxm``: the id without its vendor prefix, for narrow tables."""
    for prefix in VENDOR_PREFIXES:
        if acc_id.startswith(prefix):
            return acc_id[len(prefix):]
    return acc_id


def build_aliases(accelerators: Mapping[str, Accelerator], alias_table: pd.DataFrame) -> dict[str, str]:
    """Normalized name -> id: every id, its id without the vendor prefix (the name a plan table prints, unless
    another chip's id or alias has it), and every alias row. Until 2026-12-08 the short names were not added
    (16 of 58 chips, ``xeon_spr_4core`` and ``gb200_per_gpu`` among them, were refused as printed)."""
    out: dict[str, str] = {}
    for aid in accelerators:
        out[normalize_name(aid)] = aid
    for alias, aid in zip(alias_table["alias"], alias_table["accelerator_id"], strict=True):
        out[normalize_name(alias)] = str(aid)
    for aid in accelerators:
        out.setdefault(normalize_name(short_accelerator(aid)), aid)
    return out
