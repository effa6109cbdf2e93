"""Read and validate one catalog CSV against its ``Schema``; merge a user's overlay onto built-in rows.

``read_table(path, schema)`` refuses: a missing or unknown column, a numeric header without a unit,
a missing or negative required value, a value outside its choices, a bad date (not ISO, impossible,
or a ``retrieved_on`` in the future), a duplicate id, a region without an ISO country. Each problem
names ``file:line`` and says how to fix it (``CatalogError``, exit status 2).

The csv module (not pandas' parser) reads the rows so every problem can name its physical line;
the validated records become a pandas DataFrame with three provenance columns added:
``user_row`` (bool), ``origin_file`` and ``origin_line``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from infrafit import safe_io
from infrafit.catalog.schema import NUMERIC_KINDS, Column, Schema, check_unit_header
from infrafit.countries import ISO_COUNTRIES
from infrafit.errors import CatalogError, suggest

ORIGIN_COLUMNS = ("user_row", "origin_file", "origin_line")
_PARTIAL_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n"}


@dataclass(frozen=True)
class _Issue:
    line: int
    what: str
    fix: str


class _CellError(ValueError):
    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what = what
        self.fix = fix


def _raise(label: str, issues: list[_Issue]) -> None:
    first = issues[0]
    what = first.what
    if len(issues) > 1:
        rest = "\n".join(f"  {label}:{i.line}: {i.what}. To fix: {i.fix}" for i in issues[1:20])
        more = f"\n  ... and {len(issues) - 20} more" if len(issues) > 20 else ""
        what = f"{what} (and {len(issues) - 1} more problem(s) in this file:\n{rest}{more}\n)"
    raise CatalogError(what, fix=first.fix, where=f"{label}:{first.line}")


def _looks_numeric(values: list[str]) -> bool:
    filled = [v for v in values if v.strip()]
    if not filled:
        return False
    try:
        [float(v) for v in filled]
    except ValueError:
        return False
    return True


def _check_header(header: list[str], rows: list[list[str]], schema: Schema, label: str, partial: bool) -> None:
    issues: list[_Issue] = []
    for name in schema.unitless_numeric():
        issues.append(_Issue(1, f"schema column {name!r} is numeric but its header names no unit",
                             "rename it with its unit as the last word (e.g. memory_bytes, usd_per_hour, tdp_w)"))
    known = set(schema.names)
    for pos, name in enumerate(header):
        if name in known:
            continue
        values = [r[pos] for r in rows if pos < len(r)]
        if _looks_numeric(values) and not check_unit_header(name):
            what = f"numeric column {name!r} has no unit in its header"
            fix = ("name the unit as the last word of the header (e.g. memory_bytes, usd_per_hour) "
                   "and use a known column")
        else:
            what = f"unknown column {name!r}"
            fix = f"use only the columns of {schema.name}.csv{suggest(name, schema.names)}; see docs/catalog.md"
        issues.append(_Issue(1, what, fix))
    if len(set(header)) != len(header):
        dup = sorted({h for h in header if header.count(h) > 1})
        issues.append(_Issue(1, f"column(s) {dup} appear more than once", "keep one of each column"))
    needed = [c.name for c in schema.columns if c.required or not partial]
    missing = [n for n in needed if n not in header]
    if missing:
        issues.append(_Issue(1, f"missing column(s) {', '.join(missing)}",
                             f"add them to the header of {schema.name}.csv (docs/catalog.md lists each column)"))
    if issues:
        _raise(label, issues)


def _convert(cell: str, col: Column) -> object:
    """One cell to its Python value; raises ``_CellError`` with a fix."""
    value = cell.strip()
    if not value:
        if col.required:
            raise _CellError(f"{col.name}: a value is required", f"fill {col.name} ({col.doc or col.kind})")
        return math.nan if col.kind in NUMERIC_KINDS else ("" if col.kind != "bool" else False)
    if col.kind in NUMERIC_KINDS:
        return _number(value, col)
    if col.kind == "bool":
        low = value.lower()
        if low not in _TRUE | _FALSE:
            raise _CellError(f"{col.name}: {value!r} is not true/false", "write true or false")
        return low in _TRUE
    if col.kind == "date":
        return _date(value, col)
    if col.kind == "partial_date":
        if not _PARTIAL_DATE.match(value):
            raise _CellError(f"{col.name}: {value!r} is not a date", "write YYYY, YYYY-MM or YYYY-MM-DD")
        return value
    if col.choices and value not in col.choices:
        raise _CellError(f"{col.name}: {value!r} is not allowed",
                         f"use one of {', '.join(col.choices)}{suggest(value, col.choices)}")
    return value


_FLOAT_LIMIT = 1e30  # above any real spec (a whole rack is ~1e18 FLOP/s) and far from float overflow
_INT_LIMIT = 2.0**53  # the largest whole number a float (and the int64 columns) hold exactly


def _number(value: str, col: Column) -> float | int:
    try:
        number = float(value)
    except ValueError:
        raise _CellError(f"{col.name}: {value!r} is not a number",
                         f"write a plain number in the unit of the header ({col.name}), e.g. 8e10") from None
    if not math.isfinite(number):
        raise _CellError(f"{col.name}: {value!r} is not finite", "write a finite number or leave it empty")
    if abs(number) > _FLOAT_LIMIT:  # products of such cells overflow to inf in the cost arithmetic
        raise _CellError(f"{col.name}: {value} is implausibly large",
                         f"write a value below {_FLOAT_LIMIT:.0e} in the unit of the header ({col.name})")
    if col.minimum is not None and number < col.minimum:
        raise _CellError(f"{col.name}: {value} is below the minimum {col.minimum:g}",
                         f"write a value >= {col.minimum:g} in the unit of the header ({col.name})"
                         + (" (negative values are not allowed here)" if col.minimum == 0 else ""))
    if col.kind == "int":
        if abs(number) > _INT_LIMIT:
            raise _CellError(f"{col.name}: {value} is too large for a count",
                             f"write a whole number below {_INT_LIMIT:.0e}")
        if number != int(number):
            raise _CellError(f"{col.name}: {value!r} is not a whole number", "write an integer")
        return int(number)
    return number


def _date(value: str, col: Column) -> str:
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise _CellError(f"{col.name}: {value!r} is not a valid date", "write an ISO date YYYY-MM-DD") from None
    if len(value) != 10:
        raise _CellError(f"{col.name}: {value!r} is not a valid date", "write an ISO date YYYY-MM-DD")
    if col.name == "retrieved_on" and day > dt.date.today() + dt.timedelta(days=1):
        raise _CellError(f"{col.name}: {value} is in the future", "write the date the figure was read")
    return value


def _rows(path: Path, cap: int) -> Iterator[tuple[int, list[str]]]:
    """(first physical line, cells) for each row after the header; blank lines skipped. The file is
    read through ``safe_io`` (a regular file of at most ``cap`` bytes, UTF-8, no NUL byte); a field
    longer than ``safe_io.CSV_FIELD_MAX_BYTES`` or broken quoting is an error naming the line."""
    text = safe_io.read_text_capped(path, cap, "catalog file")
    reader = csv.reader(io.StringIO(text, newline=""))
    start = 1
    try:
        for cells in reader:
            yield start, cells
            start = reader.line_num + 1
    except csv.Error as exc:
        raise CatalogError(f"not a readable CSV ({exc})", where=f"{path}:{reader.line_num}",
                           fix=f"fix the quoting; fields are at most {safe_io.CSV_FIELD_MAX_BYTES:,} bytes") from None


def _row_issues(rec: dict[str, object], schema: Schema) -> list[tuple[str, str]]:
    """Cross-column rules: a region needs an ISO 3166 alpha-2 country; per-table rules from ``ROW_CHECKS``."""
    from infrafit.catalog.tables import ROW_CHECKS

    check = ROW_CHECKS.get(schema.name)
    out: list[tuple[str, str]] = list(check(rec)) if check else []
    if "region" in rec and "country" in rec and rec["region"]:
        country = str(rec["country"])
        if not country:
            out.append((f"region {rec['region']!r} has no country",
                        "fill country with its ISO 3166 alpha-2 code (US, JP, HK, SG, DE, ...)"))
        elif not _COUNTRY.match(country) or country not in ISO_COUNTRIES:
            out.append((f"country {country!r} is not an ISO 3166 alpha-2 code",
                        "write two capital letters (US, JP, HK, SG, DE, ...)"))
    return out


def read_table(path: str | Path, schema: Schema, *, partial: bool = False, user: bool = False) -> pd.DataFrame:
    """Read ``path`` and validate it against ``schema``; returns one DataFrame row per CSV row.

    ``partial=True`` (a user's overlay) allows optional columns to be left out; they are filled
    empty. ``user=True`` marks every row ``user_row``. Raises ``CatalogError`` naming file:line.
    """
    path = Path(path)
    label = str(path)
    rows = list(_rows(path, safe_io.OVERLAY_MAX_BYTES if user else safe_io.CSV_MAX_BYTES))
    if not rows:
        raise CatalogError("the file is empty", fix="add a header row with the columns of the table",
                           where=f"{label}:1")
    header = [h.strip() for h in rows[0][1]]
    body = [(line, cells) for line, cells in rows[1:] if any(c.strip() for c in cells)]
    _check_header(header, [c for _, c in body], schema, label, partial)
    cols = [schema.column(h) for h in header]
    missing_cols = [c for c in schema.columns if c.name not in header]
    issues: list[_Issue] = []
    records: list[dict[str, object]] = []
    lines: list[int] = []
    seen: dict[tuple[object, ...], int] = {}
    for line, cells in body:
        if len(cells) != len(header):
            issues.append(_Issue(line, f"{len(cells)} cells but the header has {len(header)} columns",
                                 "quote cells that contain commas and give every column a cell"))
            continue
        rec: dict[str, object] = {}
        for col, cell in zip(cols, cells, strict=True):
            try:
                rec[col.name] = _convert(cell, col)
            except _CellError as err:
                issues.append(_Issue(line, err.what, err.fix))
        if len(rec) != len(cols):
            continue
        for col in missing_cols:  # optional columns a partial overlay left out
            rec[col.name] = math.nan if col.kind in NUMERIC_KINDS else (False if col.kind == "bool" else "")
        for what, fix in _row_issues(rec, schema):
            issues.append(_Issue(line, what, fix))
        key = tuple(rec[k] for k in schema.key)
        if key in seen:
            issues.append(_Issue(line, f"duplicate {'/'.join(schema.key)} {key if len(key) > 1 else key[0]!r} "
                                       f"(first on line {seen[key]})",
                                 "give each row its own id, or delete one of the two rows"))
            continue
        seen[key] = line
        records.append(rec)
        lines.append(line)
    if issues:
        _raise(label, issues)
    return _frame(records, lines, schema, label, user)


def _frame(records: list[dict[str, object]], lines: list[int], schema: Schema, label: str, user: bool) -> pd.DataFrame:
    """One DataFrame built column by column (much faster than per-column astype on a record frame)."""
    data: dict[str, object] = {}
    for col in schema.columns:  # a column a partial overlay left out is filled empty
        values = [rec.get(col.name) for rec in records]
        if col.kind == "int" and col.required and all(v is not None for v in values):
            data[col.name] = np.array(values, dtype=np.int64)
        elif col.kind in NUMERIC_KINDS:
            data[col.name] = np.array([math.nan if v is None else v for v in values], dtype=float)
        elif col.kind == "bool":
            data[col.name] = np.array([bool(v) for v in values], dtype=bool)
        else:
            data[col.name] = np.array(["" if v is None else v for v in values], dtype=object)
    data["user_row"] = np.full(len(records), user, dtype=bool)
    data["origin_file"] = np.full(len(records), label, dtype=object)
    data["origin_line"] = np.array(lines, dtype=int)
    return pd.DataFrame(data)


def merge_overlay(base: pd.DataFrame, overlay: pd.DataFrame, key: tuple[str, ...]) -> pd.DataFrame:
    """Built-in rows with the overlay's rows added, an overlay row replacing a built-in row of the same key."""
    if overlay.empty:
        return base
    over_keys = set(overlay[list(key)].itertuples(index=False, name=None))
    keep = [k not in over_keys for k in base[list(key)].itertuples(index=False, name=None)]
    return pd.concat([base[keep], overlay], ignore_index=True)
