"""The loader refuses bad data with file:line and 'To fix:'; overlays add or replace rows by id."""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog, read_table
from infrafit.catalog.schema import Schema, check_unit_header, num, text
from infrafit.catalog.tables import ACCELERATORS, OFFERS, TABLES
from infrafit.errors import CatalogError

FIXTURE = Path(__file__).parents[1] / "fixtures" / "catalog"


def _copy_fixture(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    shutil.copytree(FIXTURE, base)
    return base


def _edit_line(path: Path, line_no: int, old: str, new: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    assert old in lines[line_no - 1], (old, lines[line_no - 1][:120])
    lines[line_no - 1] = lines[line_no - 1].replace(old, new, 1)
    path.write_text("".join(lines))


def _error(path: Path, schema: Schema) -> str:
    with pytest.raises(CatalogError) as info:
        read_table(path, schema)
    message = info.value.message
    assert "To fix:" in message
    return message


def test_every_builtin_schema_has_unit_headers_and_provenance() -> None:
    for schema in TABLES.values():
        assert schema.unitless_numeric() == [], schema.name
        assert {"source", "retrieved_on"} <= set(schema.names), schema.name


def test_unit_header_rule() -> None:
    assert check_unit_header("memory_bytes") and check_unit_header("usd_per_hour") and check_unit_header("tdp_w")
    assert not check_unit_header("memory") and not check_unit_header("price")


def test_fixture_and_builtin_load_with_every_row_sourced_and_dated() -> None:
    for base in (None, FIXTURE):
        cat = load_catalog(overlay_dir="", base_dir=base)
        for name, frame in cat.tables.items():
            assert len(frame) > 0, name
            assert (frame["source"].str.strip() != "").all(), name
            assert frame["retrieved_on"].str.match(r"^\d{4}-\d{2}-\d{2}$").all(), name
            assert not frame["user_row"].any(), name


def test_unknown_column(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "accelerators.csv"
    _edit_line(path, 1, "memory_type", "memory_kind")
    msg = _error(path, ACCELERATORS)
    assert f"{path}:1" in msg and "unknown column 'memory_kind'" in msg and "memory_type" in msg


def test_unitless_numeric_header(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,memory,source,retrieved_on\na,80,x,2025-01-01\n")
    schema = Schema("t", (text("id", ""), text("source", ""), text("retrieved_on", "")))
    msg = _error(path, schema)
    assert f"{path}:1" in msg and "no unit" in msg


def test_schema_with_unitless_numeric_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,memory\na,80\n")
    schema = Schema("t", (text("id", ""), num("memory", "")))
    assert "names no unit" in _error(path, schema)


def test_missing_column(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "offers.csv"
    lines = path.read_text().splitlines()
    cols = lines[0].split(",")
    drop = cols.index("confidence")
    rows = list(csv.reader(io.StringIO(path.read_text())))
    out = io.StringIO()
    csv.writer(out).writerows([r[:drop] + r[drop + 1:] for r in rows])
    path.write_text(out.getvalue())
    msg = _error(path, OFFERS)
    assert f"{path}:1" in msg and "missing column(s) confidence" in msg


@pytest.mark.parametrize(
    ("line", "old", "new", "expect"),
    [
        (2, ",8e+10,", ",-80000000000,", "below the minimum"),  # negative memory
        (2, ",8e+10,", ",,", "a value is required"),  # missing required value
        (2, ",8e+10,", ",eighty,", "not a number"),
        (2, ",gpu,", ",fpga,", "is not allowed"),
    ],
)
def test_bad_values_name_the_line(tmp_path: Path, line: int, old: str, new: str, expect: str) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "accelerators.csv"
    text_ = path.read_text().splitlines()
    line = next(i for i, row in enumerate(text_, 1) if row.startswith("nvidia_h100_sxm,"))
    _edit_line(path, line, old, new)
    msg = _error(path, ACCELERATORS)
    assert f"{path}:{line}" in msg and expect in msg


def test_bad_dates(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "offers.csv"
    body = path.read_text()
    first = re.search(r",(\d{4}-\d{2}-\d{2})\n", body).group(1)
    path.write_text(body.replace(f",{first}\n", ",2025-13-45\n", 1))
    assert "not a valid date" in _error(path, OFFERS)
    path.write_text(body.replace(f",{first}\n", ",2999-01-01\n", 1))
    assert "in the future" in _error(path, OFFERS)


def test_duplicate_id(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "accelerators.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines + [lines[1]]))
    msg = _error(path, ACCELERATORS)
    assert f"{path}:{len(lines) + 1}" in msg and "duplicate id" in msg and "first on line 2" in msg


def test_region_without_country(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "offers.csv"
    lines = path.read_text().splitlines()
    line = next(i for i, row in enumerate(lines, 1) if ",Tokyo,JP," in row)
    _edit_line(path, line, ",Tokyo,JP,", ",Tokyo,,")
    msg = _error(path, OFFERS)
    assert f"{path}:{line}" in msg and "has no country" in msg


def test_offer_price_must_match_mode(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "offers.csv"
    lines = path.read_text().splitlines()
    line = next(i for i, row in enumerate(lines, 1) if ",cloud_on_demand," in row)
    _edit_line(path, line, ",cloud_on_demand,", ",on_prem,")
    assert "needs a price in purchase_usd" in _error(path, OFFERS)


def test_reference_to_unknown_accelerator(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "hosts.csv"
    lines = path.read_text().splitlines()
    line = next(i for i, row in enumerate(lines, 1) if ",nvidia_l4," in row)
    _edit_line(path, line, ",nvidia_l4,", ",nvidia_l5,")
    with pytest.raises(CatalogError) as info:
        load_catalog(overlay_dir="", base_dir=base)
    assert f"hosts.csv:{line}" in info.value.message and "nvidia_l4" in info.value.message


def test_overlay_replaces_and_adds_rows_marked_as_user(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "offers.csv").write_text(
        "id,provider,region,city,country,mode,host_id,accelerator_id,accelerator_count,usd_per_month,"
        "contract_months,host_included,confidence,derived,source,retrieved_on\n"
        "hk_quote,HKDC,hong-kong,Hong Kong,HK,dedicated_monthly,server_hgx_h100_8gpu,nvidia_h100_sxm,8,15000,"
        "24,true,high,false,private quote 2025-05,2025-05-01\n"
    )
    (overlay / "accelerators.csv").write_text(
        (FIXTURE / "accelerators.csv").read_text().splitlines()[0] + "\n"
        + next(r for r in (FIXTURE / "accelerators.csv").read_text().splitlines() if r.startswith("nvidia_l4,"))
        .replace(",72,", ",75,", 1) + "\n"
    )
    base = load_catalog(overlay_dir="", base_dir=FIXTURE)
    cat = load_catalog(overlay_dir=overlay, base_dir=FIXTURE)
    assert len(cat.offers) == len(base.offers) + 1
    quote = cat.offers.set_index("id").loc["hk_quote"]
    assert bool(quote["user_row"]) and quote["usd_per_month"] == 15000 and math.isnan(quote["usd_per_hour"])
    assert cat.accelerator("l4").tdp_w == 75 and cat.accelerator("l4").user_row
    assert base.accelerator("l4").tdp_w == 72 and not base.accelerator("l4").user_row
    assert cat.user_rows() == {"accelerators": ["nvidia_l4"], "offers": ["hk_quote"]}


def test_overlay_is_validated_and_env_var_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    overlay = tmp_path / "bad"
    overlay.mkdir()
    (overlay / "ofers.csv").write_text("id\n")
    monkeypatch.setenv("INFRAFIT_CATALOG", str(overlay))
    with pytest.raises(CatalogError) as info:
        load_catalog(base_dir=FIXTURE)
    assert "did you mean 'offers'" in info.value.message
    (overlay / "ofers.csv").unlink()
    (overlay / "offers.csv").write_text("id,provider\nx,y\n")
    with pytest.raises(CatalogError) as info:
        load_catalog(base_dir=FIXTURE)
    assert "offers.csv:1" in info.value.message and "missing column" in info.value.message


def test_price_date_range() -> None:
    cat = load_catalog(overlay_dir="", base_dir=FIXTURE)
    ids = list(cat.offers["id"][:3])
    lo, hi = cat.price_date_range(ids)
    dates = sorted(cat.offers.set_index("id").loc[ids, "retrieved_on"])
    assert (lo, hi) == (dates[0], dates[-1])
    assert cat.price_date_range(["nope"]) == (None, None)


@pytest.mark.parametrize("huge", ["1e308", "9.1e18", "-1e300"])
def test_huge_count_is_refused_not_overflowed(tmp_path: Path, huge: str) -> None:
    """A count no float holds exactly (1e308 GPUs) is a clear error, never an OverflowError."""
    base = _copy_fixture(tmp_path)
    path = base / "offers.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    col = rows[0].index("accelerator_count")
    rows[1][col] = huge
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    path.write_text(out.getvalue())
    msg = _error(path, OFFERS)
    assert f"{path}:2" in msg and "accelerator_count" in msg


def test_huge_price_is_refused(tmp_path: Path) -> None:
    base = _copy_fixture(tmp_path)
    path = base / "offers.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    col = rows[0].index("usd_per_hour")
    line = next(i for i, r in enumerate(rows) if i and r[col])
    rows[line][col] = "1e300"
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    path.write_text(out.getvalue())
    assert "implausibly large" in _error(path, OFFERS)
