import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infrafit import units
from infrafit.errors import InputError, Problem, ProblemsError, suggest


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("80GB", 80e9),
        ("80 GB", 80e9),
        ("1.5TiB", 1.5 * 2**40),
        ("512MiB", 512 * 2**20),
        ("1000", 1000.0),
        (1024, 1024.0),
    ],
)
def test_parse_bytes(text, expected):
    assert units.parse_bytes(text) == pytest.approx(expected)


def test_gb_and_gib_differ():
    assert units.parse_bytes("1GB") == 1e9
    assert units.parse_bytes("1GiB") == 2**30


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4M", 4e6), ("1.2e12", 1.2e12), ("70B", 70e9), ("2k", 2000.0), ("15T", 15e12)],
)
def test_parse_count(text, expected):
    assert units.parse_count(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2h", 7200.0), ("300ms", 0.3), ("1.5", 1.5), ("10min", 600.0), ("3d", 259200.0)],
)
def test_parse_duration(text, expected):
    assert units.parse_duration_s(text) == pytest.approx(expected)


@pytest.mark.parametrize(("text", "expected"), [("$1,200", 1200.0), ("2.5k", 2500.0), ("USD 40", 40.0), (7, 7.0)])
def test_parse_usd(text, expected):
    assert units.parse_usd(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["eighty GB", "80 parsecs", "", "1e999", float("nan")])
def test_parse_bytes_rejects(bad):
    with pytest.raises(units.UnitParseError):
        units.parse_bytes(bad)


@given(st.text(max_size=30))
def test_parsers_never_crash(text):
    for parser in (units.parse_bytes, units.parse_count, units.parse_duration_s, units.parse_usd):
        try:
            value = parser(text)
        except units.UnitParseError:
            continue
        assert math.isfinite(value)


def test_hours_per_month_is_average_month():
    assert units.HOURS_PER_MONTH == pytest.approx(730.0)


def test_bytes_per_element_unknown_precision_suggests():
    with pytest.raises(InputError) as err:
        units.bytes_per_element("bf61")
    assert "To fix:" in err.value.message


def test_suggest_close_match():
    assert "fp16" in suggest("fp61", ["fp16", "bf16", "int8"])
    assert suggest("zzzz", ["fp16"]) == ""


def test_problems_error_lists_each():
    err = ProblemsError(
        [Problem("a.b", "must be > 0 (got -1)", "use a positive number", file="s.yaml", line=3),
         Problem("c", "unknown key", "remove it")],
        source="s.yaml",
    )
    assert "s.yaml:3 a.b: must be > 0" in err.message
    assert err.message.count("To fix:") == 2
    assert err.exit_code == 2
