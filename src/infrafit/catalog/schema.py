"""Column contracts of the catalog CSV files.

A ``Schema`` names every column of one file, its type, whether it is required, its allowed range
and choices. ``loader.read_table`` enforces it. Numeric headers must carry their unit as the last
word of their name (``memory_bytes``, ``usd_per_hour``, ``tdp_w``); ``check_unit_header`` is the
rule, applied both to the schemas themselves and to unexpected columns in a user's file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ColumnKind = Literal["str", "float", "int", "bool", "date", "partial_date"]

#: Last words of a header that name a unit (SI base units or an explicit counted thing).
UNIT_WORDS: frozenset[str] = frozenset(
    {
        "bytes", "bits", "s", "flops", "ops", "w", "kw", "kwh", "usd", "hz", "month", "months", "day",
        "days", "weeks", "hour", "hours", "chips", "count", "fraction", "ratio", "gb", "cores", "cycle",
    }
)

NUMERIC_KINDS: frozenset[str] = frozenset({"float", "int"})


def check_unit_header(name: str) -> bool:
    """True when a numeric column's header ends with a unit word (``memory_bytes``, ``usd_per_hour``)."""
    return name.rsplit("_", 1)[-1] in UNIT_WORDS


@dataclass(frozen=True)
class Column:
    """One column: its type, whether it must be filled, its lower bound and allowed values."""

    name: str
    kind: ColumnKind = "str"
    required: bool = True
    minimum: float | None = 0.0  # numeric lower bound; None allows negatives
    choices: tuple[str, ...] | None = None
    doc: str = ""


@dataclass(frozen=True)
class Schema:
    """The contract of one catalog file; ``key`` names the id column(s) that must be unique."""

    name: str  # file name without .csv
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ("id",)
    doc: str = ""
    references: dict[str, str] = field(default_factory=dict)  # column -> table whose ids it must name

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def unitless_numeric(self) -> list[str]:
        """Numeric columns whose header names no unit (a bug in the schema itself)."""
        return [c.name for c in self.columns if c.kind in NUMERIC_KINDS and not check_unit_header(c.name)]


def provenance() -> tuple[Column, ...]:
    """The two columns every catalog row carries: where the figure comes from and when it was read."""
    return (
        Column("source", doc="where the row's figures come from (URL, document, repository@commit)"),
        Column("retrieved_on", "date", doc="ISO date (YYYY-MM-DD) the figures were read or the source is dated"),
    )


def num(name: str, doc: str, *, required: bool = True, kind: ColumnKind = "float",
        minimum: float | None = 0.0) -> Column:
    """A numeric column (shorthand used by the table definitions)."""
    return Column(name, kind, required=required, minimum=minimum, doc=doc)


def text(name: str, doc: str, *, required: bool = True, choices: tuple[str, ...] | None = None) -> Column:
    """A text column (shorthand used by the table definitions)."""
    return Column(name, "str", required=required, choices=choices, doc=doc)
