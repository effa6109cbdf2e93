"""Field types of the workload spec: numbers with units, names, precisions, daily profiles.

Human strings are accepted at the edge and converted to SI (or to the unit the field's name
states) with ``infrafit.units``: ``"80GB"``, ``"4M"``, ``"2h"``, ``"$40,000"``, ``"1.2e12"``, ``"8%"``.
Booleans are never numbers here (YAML reads ``yes`` as true; a count of ``true`` is a mistake).
Every number has an upper bound per field so that ``1e300`` tokens is an error, not an overflow
three stages later.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from infrafit import units
from infrafit.countries import ISO_COUNTRIES, country_named  # noqa: E402 - re-exported for the spec types
from infrafit.errors import suggest
from infrafit.workload.place_aliases import canonical_place

_COUNTRY_ALIASES = {"UK": "GB", "EL": "GR"}

PRECISION_CHOICES = ("fp32", "bf16", "fp16", "fp8", "fp4", "int8", "int4")
PROFILE_NAMES = ("flat", "business-hours", "diurnal")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: Separates what is wrong from how to fix it inside a validator's ValueError (see ``invalid``).
FIX_MARK = " To fix: "


#: Prefix naming the sub-field a model-level validator's error is about (``@lora_rank ...``).
AT_MARK = "@"


def invalid(what: str, fix: str, at: str | None = None) -> ValueError:
    """A ValueError whose message carries its own fix and, for a model-level check, the field it
    is about; ``spec_problems`` splits them out again."""
    return ValueError(f"{AT_MARK}{at} {what}{FIX_MARK}{fix}" if at else f"{what}{FIX_MARK}{fix}")


def _number(parser: Callable[[str], float] | None, what: str) -> Callable[[Any], Any]:
    """A before-validator: reject booleans, parse strings with ``parser``, pass numbers through."""

    def convert(value: Any) -> Any:
        if isinstance(value, bool):
            raise invalid(f"expected {what}, got {str(value).lower()}", f"write {what} as a number")
        if isinstance(value, str):
            text = value.strip()
            if text.endswith("%"):
                return _percent(text, what)
            if parser is None:
                return text
            try:
                return parser(text)
            except units.UnitParseError as exc:
                raise invalid(str(exc),
                              "write a number, optionally with a unit such as 80GB, 4M, 2h or $1,200") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise invalid(f"expected a finite {what}", "write a finite number")
        return value

    return convert


def _percent(text: str, what: str) -> float:
    try:
        number = float(text[:-1].replace(",", ""))
    except ValueError:
        raise invalid(f"{text!r} is not {what}", "write a percentage like 8%") from None
    if not math.isfinite(number):
        raise invalid(f"{text!r} is not a finite {what}", "write a finite percentage")
    return number / 100.0


def _scaled(parser: Callable[[str], float], factor: float) -> Callable[[str], float]:
    """Parse a duration and express it in the field's unit (``factor`` seconds per unit)."""
    return lambda text: parser(text) / factor


def quantity(parser: Callable[[str], float] | None, what: str, *, ge: float | None = None,
             gt: float | None = None, le: float) -> Any:
    """An annotated float that accepts human strings and is bounded above (and below)."""
    return Annotated[float, BeforeValidator(_number(parser, what)), Field(ge=ge, gt=gt, le=le)]


def whole(what: str, *, ge: int = 1, le: int) -> Any:
    """An annotated int that accepts ``"4M"``-style counts but must come out whole."""

    def to_int(value: Any) -> Any:
        value = _number(units.parse_count, what)(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    return Annotated[int, BeforeValidator(to_int), Field(ge=ge, le=le)]


# Bounds are far above any real workload and far below float trouble.
RequestRate = quantity(units.parse_count, "a rate in requests per second", gt=0, le=1e9)
TokenCount = quantity(units.parse_count, "a token count", gt=0, le=1e8)
ItemCount = quantity(units.parse_count, "a count of items", gt=0, le=1e15)
TrainTokens = quantity(units.parse_count, "a token count", gt=0, le=1e16)
TrainSamples = quantity(units.parse_count, "a count of samples", gt=0, le=1e15)
Epochs = quantity(units.parse_count, "a number of epochs", gt=0, le=1e4)
# Durations have a floor too: a latency under 0.1 ms, a checkpoint or batch window under a minute, or a
# deadline under an hour is a unit slip, and 1e-300 of anything turns a rate into inf.
#: The shortest latency target a spec may state (0.1 ms); the planner's least server budget too.
MIN_LATENCY_S = 1e-4
Seconds = quantity(units.parse_duration_s, "a duration in seconds", ge=MIN_LATENCY_S, le=units.SECONDS_PER_DAY)
Days = quantity(_scaled(units.parse_duration_s, units.SECONDS_PER_DAY), "a number of days",
                ge=1 / units.HOURS_PER_DAY, le=3650)
Minutes = quantity(_scaled(units.parse_duration_s, units.SECONDS_PER_MINUTE), "a number of minutes",
                   ge=1.0, le=1e6)
WindowHours = quantity(_scaled(units.parse_duration_s, units.SECONDS_PER_HOUR), "a number of hours",
                       ge=units.SECONDS_PER_MINUTE / units.SECONDS_PER_HOUR, le=units.HOURS_PER_DAY)
MonthHours = quantity(_scaled(units.parse_duration_s, units.SECONDS_PER_HOUR), "hours per month",
                      ge=0, le=1e6)
Bytes = quantity(units.parse_bytes, "a byte size", gt=0, le=1e21)
Usd = quantity(units.parse_usd, "a USD amount", gt=0, le=1e12)
UsdPerHour = quantity(units.parse_usd, "USD per hour", ge=0, le=1e5)
MonthlyFraction = quantity(None, "a fraction per month (0.08 or 8%)", ge=-1, le=10)
Fraction = quantity(None, "a fraction from 0 to 1 (0.8 or 80%)", ge=0, le=1)
SharedTokens = quantity(units.parse_count, "a token count", ge=0, le=1e8)
#: ``training.seq_len`` when neither the spec nor the model's context sets another (tokens)
TRAINING_SEQ_LEN_DEFAULT = 4096
SeqLen = whole("a sequence length in tokens", le=10_000_000)
GlobalBatch = whole("a batch size", le=100_000_000)
LoraRank = whole("a LoRA rank", le=65_536)
RunsPerYear = quantity(units.parse_count, "runs per year", gt=0, le=1e6)
HorizonMonths = whole("a number of months", le=240)


def _slug(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip().lower().replace(" ", "-")
    if not _SLUG.match(text):
        raise invalid(f"{value!r} is not a name", "use letters, digits and dashes, like hong-kong or us-east-1")
    return text


def _country(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    code = _COUNTRY_ALIASES.get(value.strip().upper(), value.strip().upper())
    if code not in ISO_COUNTRIES:
        named = country_named(value)
        if named:
            raise invalid(f"{value!r} is the country {named[1]}; the field takes its ISO 3166-1 alpha-2 code",
                          f"write {named[0]}")
        raise invalid(f"{value!r} is not an ISO 3166-1 alpha-2 country code{suggest(code, ISO_COUNTRIES)}",
                      "use the two-letter code, like JP, HK, DE, US")
    return code


def _region(value: Any) -> Any:
    """A region or place slug; a city's other name as the place table spells it (``bangalore`` ->
    ``bengaluru``: ``workload.place_aliases.canonical_place``)."""
    text = _slug(value)
    return canonical_place(text) if isinstance(text, str) else text


def _place(value: Any) -> Any:
    """A region or metro slug (a city's other name as its place), or an ISO country code (two letters, kept
    upper case)."""
    if isinstance(value, str) and len(value.strip()) == 2 and value.strip().upper() in ISO_COUNTRIES:
        return value.strip().upper()
    return _region(value)


#: A provider as the catalog names it: an id or display name ("vast.ai", "Lambda", "dedicated (market rate)").
_PROVIDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()&+-]{0,63}$")


def _provider(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not _PROVIDER.match(text):
        raise invalid(f"{value!r} is not a provider name",
                      "write the provider as the catalog does, e.g. aws or vast.ai")
    return text


Slug = Annotated[str, BeforeValidator(_slug)]
Region = Annotated[str, BeforeValidator(_region)]
Provider = Annotated[str, BeforeValidator(_provider)]
Place = Annotated[str, BeforeValidator(_place)]
PlaceList = Annotated[tuple[Place, ...], AfterValidator(lambda v: tuple(dict.fromkeys(v))), Field(max_length=250)]
Country = Annotated[str, BeforeValidator(_country)]


def _unique(values: Any) -> Any:
    return tuple(dict.fromkeys(values))


SlugList = Annotated[tuple[Region, ...], AfterValidator(_unique), Field(max_length=200)]
CountryList = Annotated[tuple[Country, ...], AfterValidator(_unique), Field(max_length=250)]


def parse_precision(value: Any) -> str | tuple[str, ...]:
    """``"auto"``, one precision or a list of them -> ``"auto"`` or a tuple of known precisions."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise invalid("expected auto or a list of precisions",
                      f"write auto or a list of: {', '.join(PRECISION_CHOICES)}")
    out: list[str] = []
    for item in items:
        name = str(item).strip().lower() if isinstance(item, str) else None
        if name not in PRECISION_CHOICES:
            raise invalid(f"unknown precision {item!r}{suggest(str(item), PRECISION_CHOICES)}",
                          f"use auto or a list of: {', '.join(PRECISION_CHOICES)}")
        out.append(name)
    return tuple(dict.fromkeys(out))


def parse_daily_profile(value: Any) -> str | tuple[float, ...]:
    """A profile name, or 24 non-negative hourly factors (hour 0 first, in the users' local time)."""
    if isinstance(value, str):
        name = value.strip().lower().replace("_", "-")
        if name not in PROFILE_NAMES:
            raise invalid(f"unknown daily profile {value!r}{suggest(name, PROFILE_NAMES)}",
                          f"use {', '.join(PROFILE_NAMES)}, or a list of 24 hourly factors")
        return name
    if not isinstance(value, list | tuple) or len(value) != 24:
        raise invalid("expected a profile name or exactly 24 hourly factors",
                      "use flat, business-hours, diurnal, or a list of 24 numbers (hour 0 first)")
    factors = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float) or not 0 <= item <= 1e6:
            raise invalid(f"hourly factor {item!r} is not a number between 0 and 1e6", "write 24 non-negative numbers")
        factors.append(float(item))
    if sum(factors) <= 0:
        raise invalid("the 24 hourly factors are all zero", "give at least one hour a positive factor")
    return tuple(factors)


def parse_custom_ops(value: Any) -> Any:
    """``false`` (or null) means none; ``true`` is refused because the checker needs names."""
    if value is False or value is None:
        return ()
    if value is True:
        raise invalid("custom_ops: true does not say which ops",
                      "list them, e.g. [flash-attn, my_cuda_ext], or write false")
    if isinstance(value, str):
        return (value,)
    return value
