"""QA: every data file shipped in the package carries its sources, and numeric columns carry units.

Generic on purpose: it globs ``src/infrafit/**/data/`` so a data file added later without ``source`` and
``retrieved_on`` on every row, or with a unit-less numeric header, fails here.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from pathlib import Path

import pytest
import yaml

PKG = Path(__file__).resolve().parents[2] / "src" / "infrafit"
CSV_FILES = sorted(PKG.glob("**/data/*.csv"))
YAML_FILES = sorted(PKG.glob("**/data/*.yaml")) + sorted(PKG.glob("**/data/*.yml"))
OLDEST = dt.date(2000, 1, 1)

# A numeric column's name must say its unit: one of these endings (SI inside, DESIGN.md section 3) ...
UNIT_SUFFIXES = (
    "_per_s", "_bytes", "_w", "_hz", "_usd", "_fraction", "_ratio", "_count", "_chips", "_months", "_weeks",
    "_per_month", "_month", "_per_cycle_per_core", "_kwh", "_per_gb", "_s", "_days", "_hours", "_deg",
)
# ... or be a generic `value` beside a `unit` column, or one of these dimensionless names (counts, codes).
DIMENSIONLESS = {"rows_fitted", "fit_rows", "min_cpu_family"}


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_row(where: str, row: dict[str, object]) -> list[str]:
    problems = []
    if not str(row.get("source") or "").strip():
        problems.append(f"{where}: empty source")
    try:
        day = dt.date.fromisoformat(str(row.get("retrieved_on") or "").strip())
    except ValueError:
        problems.append(f"{where}: retrieved_on {row.get('retrieved_on')!r} is not an ISO date")
    else:
        if not OLDEST <= day <= dt.date.today():
            problems.append(f"{where}: retrieved_on {day} is in the future or implausibly old")
    return problems


def test_there_are_data_files_to_check():
    assert len(CSV_FILES) >= 10 and YAML_FILES


@pytest.mark.parametrize("path", CSV_FILES, ids=lambda p: p.name)
def test_csv_rows_have_source_and_date(path):
    header, rows = _rows(path)
    assert rows, f"{path.name}: no rows"
    assert {"source", "retrieved_on"} <= set(header), f"{path.name}: needs source and retrieved_on columns"
    problems = [p for i, row in enumerate(rows, start=2) for p in _check_row(f"{path.name}:{i}", row)]
    assert not problems, "\n".join(problems[:20])


def _unitless_numeric_columns(path: Path) -> list[str]:
    header, rows = _rows(path)
    bad = []
    for col in header:
        values = [r[col] for r in rows if (r[col] or "").strip()]
        if not values or not all(_is_number(v) for v in values):
            continue
        if col in DIMENSIONLESS or col.endswith(UNIT_SUFFIXES) or col.startswith("usd_per_"):
            continue
        if col == "value" and "unit" in header:
            continue
        bad.append(col)
    return bad


@pytest.mark.parametrize("path", CSV_FILES, ids=lambda p: p.name)
def test_csv_numeric_headers_carry_units(path):
    bad = _unitless_numeric_columns(path)
    assert not bad, f"{path.name}: numeric columns without a unit in the name: {bad}"


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.name)
def test_yaml_entries_have_source_and_date(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    entries = data if isinstance(data, list) else list((data or {}).values())
    assert entries and all(isinstance(e, dict) for e in entries), f"{path.name}: expected a list of mappings"
    problems = [p for i, e in enumerate(entries) for p in _check_row(f"{path.name}[{e.get('id', i)}]", e)]
    assert not problems, "\n".join(problems[:20])


def test_unit_rule_catches_a_unitless_header(tmp_path):
    """The header rule itself works: a bare numeric `memory` column is flagged, `memory_bytes` is not."""
    path = tmp_path / "x.csv"
    path.write_text("id,memory,memory_bytes,source,retrieved_on\na,80,8e10,s,2025-01-01\n")
    assert _unitless_numeric_columns(path) == ["memory"]


def test_llm_profiles_unit_column_is_read_and_checked(tmp_path):
    """perf_profiles_llm.csv carries a unit per row (fixed by the op class); a wrong unit is refused,
    a file without the column (an older overlay) is still read with the same values."""
    from infrafit.errors import CatalogError
    from infrafit.perf.profiles import OP_CLASS_UNITS, _parse, default_profiles_path

    rows = list(csv.DictReader(default_profiles_path().open(newline="", encoding="utf-8")))
    assert rows and all(r["unit"] == OP_CLASS_UNITS[r["op_class"]] for r in rows)
    parsed = _parse(default_profiles_path())
    assert [p.unit for p in parsed] == [r["unit"] for r in rows]
    header = [c for c in rows[0] if c != "unit"]
    no_unit = tmp_path / "no_unit.csv"
    no_unit.write_text(",".join(header) + "\n" + "*,*,*,*,step_overhead,0.004,3,s,2026-01-01\n")
    assert _parse(no_unit)[0].value == 0.004 and _parse(no_unit)[0].unit == "s"
    wrong = tmp_path / "wrong.csv"
    wrong.write_text(",".join([*header[:6], "unit", *header[6:]]) + "\n"
                     + "*,*,*,*,step_overhead,0.004,ms,3,s,2026-01-01\n")
    with pytest.raises(CatalogError, match="wrong.csv:2 unit"):
        _parse(wrong)


BARE_CONVERSION = re.compile(r"2 ?\*\* ?(10|20|30|40)\b|[*/] ?1e(3|6|9|12)\b|\b3600\b")


@pytest.mark.parametrize("area", ["bench", "catalog", "commands", "cost", "monitor", "perf", "report", "search",
                                  "workload", "cli.py", "store.py", "errors.py"])
def test_no_bare_unit_conversions(area):
    """Conversion factors come from infrafit.units (MiB, HZ_PER_MHZ, PER_MILLION...), never bare literals;
    every package is audited (units.py is the one home of the factors)."""
    root = PKG / area
    files = [root] if root.is_file() else sorted(root.rglob("*.py"))
    hits = [f"{p.relative_to(PKG)}:{i}: {line.strip()}" for p in files
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
            if BARE_CONVERSION.search(line.split("#", 1)[0])]
    assert not hits, hits


def test_package_never_reads_the_shared_reference_folder():
    """Run-time code must not read ../shared (PREAMBLE ground rule); only tests marked as reference checks."""
    pattern = re.compile(r"shared/reference|\.\./shared|/work/shared")
    hits = [f"{p.relative_to(PKG)}:{i}" for p in PKG.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
            if pattern.search(line) and not line.lstrip().startswith("#")]
    assert not hits, hits
