"""Precision policy as data (``catalog/data/precision_policy.csv``): per workload kind, the chain a
precision falls back along when a chip has no native math for it, which precisions a plan tries
under ``precision: auto``, and the order ``estimate`` prefers when none is given.

One table for every estimator, so the LLM, non-LLM and training models can disagree only where the
table says so, with its reason (int8 on a chip without int8 math: LLM serving runs weight-only int8
with 16-bit math, a CNN compiled by TensorRT runs fp8).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from infrafit.errors import CatalogError

POLICY_FILE = "precision_policy.csv"
KINDS = ("llm_inference", "nonllm_inference", "training")


@dataclass(frozen=True)
class PrecisionRule:
    kind: str
    precision: str
    fallback_chain: tuple[str, ...]
    plan_auto: bool
    estimate_auto: bool


@lru_cache(maxsize=1)
def _rules() -> tuple[PrecisionRule, ...]:
    text = resources.files("infrafit.catalog").joinpath("data", POLICY_FILE).read_text(encoding="utf-8")
    out = []
    for line, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=2):
        chain = tuple(p.strip() for p in row["fallback_chain"].split(";") if p.strip())
        if row["kind"] not in KINDS or not chain or chain[0] != row["precision"]:
            raise CatalogError(f"{POLICY_FILE}:{line}: kind must be one of {', '.join(KINDS)} and fallback_chain "
                               f"must start with the precision itself (got {row['kind']!r}, {row['fallback_chain']!r})",
                               fix="correct the row in catalog/data/precision_policy.csv")
        out.append(PrecisionRule(row["kind"], row["precision"], chain, row["plan_auto"] == "yes",
                                 row["estimate_auto"] == "yes"))
    return tuple(out)


def fallback_chain(kind: str, precision: str) -> tuple[str, ...]:
    """The precisions tried in order for ``precision`` on a chip (the first it runs natively wins)."""
    for r in _rules():
        if r.kind == kind and r.precision == precision:
            return r.fallback_chain
    return (precision,)


def first_native(kind: str, precision: str, acc: Any) -> str | None:
    """The first precision along ``precision``'s fallback chain that ``acc`` has math for (a dense peak);
    None when it has none of them."""
    return next((p for p in fallback_chain(kind, precision) if acc.peak(p) > 0), None)


def plan_auto(kind: str) -> tuple[str, ...]:
    """Precisions a plan tries under ``precision: auto`` (in the table's order)."""
    return tuple(r.precision for r in _rules() if r.kind == kind and r.plan_auto)


def preference(kind: str) -> tuple[str, ...]:
    """Every precision of ``kind`` in preference order (the table's row order)."""
    return tuple(r.precision for r in _rules() if r.kind == kind)


def estimate_auto(kind: str) -> tuple[str, ...]:
    """The order ``estimate`` picks a precision in when the spec says ``auto``."""
    return tuple(r.precision for r in _rules() if r.kind == kind and r.estimate_auto)
