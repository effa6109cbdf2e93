"""The one home of conversion factors, and the parsers that turn human strings into SI numbers.

Inside infrafit every quantity is SI and every name carries its unit (``memory_bytes``,
``ttft_s``, ``usd_per_hour``). Conversions happen only at the edges: reading a spec or a CSV,
and printing. GB is 1e9 bytes and GiB is 2**30 bytes; they are never mixed.
"""

from __future__ import annotations

import math
import re
from typing import Final

# --- bytes -------------------------------------------------------------------------------------
KB: Final = 1e3
MB: Final = 1e6
GB: Final = 1e9
TB: Final = 1e12
PB: Final = 1e15
KiB: Final = 2.0**10
MiB: Final = 2.0**20
GiB: Final = 2.0**30
TiB: Final = 2.0**40
PiB: Final = 2.0**50

# --- rates ---------------------------------------------------------------------------------------
GFLOPS: Final = 1e9
TFLOPS: Final = 1e12
PFLOPS: Final = 1e15
GBIT: Final = 1e9  # bits
BITS_PER_BYTE: Final = 8.0
HZ_PER_MHZ: Final = 1e6  # /proc/cpuinfo reports clocks in MHz

# --- counts (per-unit prices: USD per 1M tokens, per 1k requests) ---------------------------------
PER_THOUSAND: Final = 1e3
PER_MILLION: Final = 1e6
BILLION: Final = 1e9  # counts (parameters), not bytes: those are GB

# --- length --------------------------------------------------------------------------------------
M_PER_KM: Final = 1e3
SPEED_OF_LIGHT_M_PER_S: Final = 299_792_458.0  # in vacuum (SI definition of the metre)

# --- time ----------------------------------------------------------------------------------------
MS: Final = 1e-3
US: Final = 1e-6
SECONDS_PER_MINUTE: Final = 60.0
SECONDS_PER_HOUR: Final = 3600.0
SECONDS_PER_DAY: Final = 86400.0
HOURS_PER_DAY: Final = 24.0
#: Hours in a week (an int: it sizes the hour-of-week arrays of usage profiles and fleet pools).
HOURS_PER_WEEK: Final = 7 * int(HOURS_PER_DAY)
DAYS_PER_YEAR: Final = 365.0
HOURS_PER_YEAR: Final = HOURS_PER_DAY * DAYS_PER_YEAR
MONTHS_PER_YEAR: Final = 12.0
#: Average hours in a month (8760 / 12), the convention cloud providers bill monthly prices by.
HOURS_PER_MONTH: Final = HOURS_PER_YEAR / MONTHS_PER_YEAR
SECONDS_PER_MONTH: Final = HOURS_PER_MONTH * SECONDS_PER_HOUR

# --- power ---------------------------------------------------------------------------------------
W_PER_KW: Final = 1e3
#: grams in a kilogram (emissions are kept in kg CO2e, grid intensities in g CO2e per kWh)
G_PER_KG: Final = 1e3
W_PER_MILLIWATT: Final = 1e-3  # watts per milliwatt (NVML reports power in mW)

# --- precisions ------------------------------------------------------------------------------------
#: Storage bytes per element of each numeric precision infrafit knows.
BYTES_PER_ELEMENT: Final[dict[str, float]] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "fp4": 0.5,
    "int4": 0.5,
}
PRECISIONS: Final[tuple[str, ...]] = ("fp32", "bf16", "fp16", "fp8", "fp4", "int8", "int4")


def bytes_per_element(precision: str) -> float:
    """Bytes one element occupies at ``precision`` (``fp8`` -> 1.0, ``int4`` -> 0.5)."""
    try:
        return BYTES_PER_ELEMENT[precision]
    except KeyError:
        from infrafit.errors import InputError, suggest

        raise InputError(
            f"unknown precision {precision!r}",
            fix=f"use one of {', '.join(PRECISIONS)}{suggest(precision, PRECISIONS)}",
        ) from None


# --- parsing at the edges ------------------------------------------------------------------------
_BYTE_UNITS: Final[dict[str, float]] = {
    "": 1.0, "b": 1.0,
    "kb": KB, "mb": MB, "gb": GB, "tb": TB, "pb": PB,
    "kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB, "pib": PiB,
    "k": KB, "m": MB, "g": GB, "t": TB,
}
_COUNT_SUFFIX: Final[dict[str, float]] = {
    "": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "bn": 1e9, "mn": 1e6,
}
_DURATION_UNITS: Final[dict[str, float]] = {
    "": 1.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": MS, "us": US, "µs": US,
    "m": SECONDS_PER_MINUTE, "min": SECONDS_PER_MINUTE, "mins": SECONDS_PER_MINUTE,
    "minute": SECONDS_PER_MINUTE, "minutes": SECONDS_PER_MINUTE,
    "h": SECONDS_PER_HOUR, "hr": SECONDS_PER_HOUR, "hrs": SECONDS_PER_HOUR,
    "hour": SECONDS_PER_HOUR, "hours": SECONDS_PER_HOUR,
    "d": SECONDS_PER_DAY, "day": SECONDS_PER_DAY, "days": SECONDS_PER_DAY,
    "w": 7 * SECONDS_PER_DAY, "week": 7 * SECONDS_PER_DAY, "weeks": 7 * SECONDS_PER_DAY,
}
#: ASCII digits only: Python's ``\d`` also matches full-width and other scripts' digits ("２０", "٢٤"),
#: which ``float`` would then read as numbers.
_NUM_UNIT = re.compile(r"^\s*([+-]?(?:\d[\d_,]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Zµ]*)\s*$", re.ASCII)


class UnitParseError(ValueError):
    """A string that is not a quantity in the expected unit family."""


def _split(text: str, what: str) -> tuple[float, str]:
    match = _NUM_UNIT.match(text)
    if not match:
        if any(ch.isdigit() and not ch.isascii() for ch in text):
            raise UnitParseError(f"{text!r} is not a {what}: it uses non-ASCII digits; write 0-9")
        raise UnitParseError(f"{text!r} is not a {what}")
    number = float(match.group(1).replace(",", "").replace("_", ""))
    if not math.isfinite(number):
        raise UnitParseError(f"{text!r} is not a finite {what}")
    return number, match.group(2).lower()


def _finite(value: float, text: object, what: str) -> float:
    if isinstance(value, bool) or not math.isfinite(float(value)):
        raise UnitParseError(f"{text!r} is not a finite {what}")
    return float(value)


def parse_bytes(value: str | float | int) -> float:
    """``"80GB"`` -> 8e10, ``"1.5TiB"`` -> 1.5 * 2**40; a bare number is bytes."""
    if not isinstance(value, str):
        return _finite(value, value, "byte size")
    number, unit = _split(value, "byte size (e.g. 80GB, 1.5TiB)")
    if unit not in _BYTE_UNITS:
        raise UnitParseError(f"{value!r}: unknown byte unit {unit!r} (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    return number * _BYTE_UNITS[unit]


def parse_count(value: str | float | int) -> float:
    """``"4M"`` -> 4e6, ``"1.2e12"`` -> 1.2e12, ``"70B"`` -> 7e10 (counts, not bytes)."""
    if not isinstance(value, str):
        return _finite(value, value, "count")
    number, unit = _split(value, "count (e.g. 4M, 1.2e12)")
    if unit not in _COUNT_SUFFIX:
        raise UnitParseError(f"{value!r}: unknown count suffix {unit!r} (use K, M, B or T)")
    return number * _COUNT_SUFFIX[unit]


def parse_duration_s(value: str | float | int) -> float:
    """``"2h"`` -> 7200, ``"300ms"`` -> 0.3; a bare number is seconds."""
    if not isinstance(value, str):
        return _finite(value, value, "duration")
    number, unit = _split(value, "duration (e.g. 300ms, 2h)")
    if unit not in _DURATION_UNITS:
        raise UnitParseError(f"{value!r}: unknown time unit {unit!r} (use ms, s, min, h, d)")
    return number * _DURATION_UNITS[unit]


def parse_usd(value: str | float | int) -> float:
    """``"$1,200"`` -> 1200.0, ``"2.5k"`` -> 2500.0, ``"USD 40"`` -> 40.0."""
    if not isinstance(value, str):
        return _finite(value, value, "USD amount")
    text = value.strip().replace("$", "").replace("USD", "").replace("usd", "").strip()
    number, unit = _split(text, "USD amount (e.g. $1,200)")
    if unit not in ("", "k", "m"):
        raise UnitParseError(f"{value!r}: unknown USD suffix {unit!r} (use k or m)")
    return number * {"": 1.0, "k": 1e3, "m": 1e6}[unit]


# --- formatting at the edges -----------------------------------------------------------------------
def fmt_bytes(value: float) -> str:
    """Human bytes in decimal units: 8.0e10 -> ``'80.0 GB'``."""
    for unit, factor in (("PB", PB), ("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if abs(value) >= factor:
            return f"{value / factor:.1f} {unit}"
    return f"{value:.0f} B"


def fmt_duration(seconds: float) -> str:
    """Human duration: 0.0123 -> ``'12.3 ms'``, 7200 -> ``'2.0 h'``."""
    if not math.isfinite(seconds):
        return "∞"
    if seconds < 1.0:
        return f"{seconds / MS:.1f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s"
    if seconds < 2 * SECONDS_PER_HOUR:
        return f"{seconds / SECONDS_PER_MINUTE:.1f} min"
    if seconds < 3 * SECONDS_PER_DAY:
        return f"{seconds / SECONDS_PER_HOUR:.1f} h"
    return f"{seconds / SECONDS_PER_DAY:.1f} d"


def fmt_usd(value: float) -> str:
    """``1234.5`` -> ``'$1,234'``; small values keep cents."""
    if abs(value) < 100:
        return f"${value:,.2f}"
    return f"${value:,.0f}"
