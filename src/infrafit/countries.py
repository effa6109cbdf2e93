"""Country codes, shared by the spec and the catalog loader."""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from importlib import resources

#: ISO 3166-1 alpha-2 codes (officially assigned), from the ISO Online Browsing Platform
#: https://www.iso.org/obp/ui/#search/code/ (retrieved 2025). ``UK`` and ``EL`` (exceptionally
#: reserved, used by the EU) are accepted as aliases of ``GB`` and ``GR``.
ISO_COUNTRIES = frozenset(
    """AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT
    BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER
    ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID
    IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV
    LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR
    NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL
    SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC
    VE VG VI VN VU WF WS YE YT ZA ZM ZW""".split()
)


def ascii_lower(text: object) -> str:
    """``text`` without accents, in lower case (``Côte`` -> ``cote``): the first step of every name
    comparison (countries here, places in ``workload.names``)."""
    import unicodedata

    return unicodedata.normalize("NFKD", str(text or "")).encode("ascii", "ignore").decode().lower()


def alnum(text: str) -> str:
    """Letters and digits only (``new-york`` -> ``newyork``)."""
    import re

    return re.sub(r"[^a-z0-9]", "", text)


def _name_key(text: object) -> str:
    return alnum(ascii_lower(text))


@lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[str, str]]:
    """Country name or alpha-3 code (case, accents and punctuation ignored) -> (alpha-2 code, name), from
    ``catalog/data/country_names.csv`` (GeoNames countryInfo)."""
    text = resources.files("infrafit.catalog").joinpath("data", "country_names.csv").read_text(encoding="utf-8")
    out: dict[str, tuple[str, str]] = {}
    for r in csv.DictReader(io.StringIO(text, newline="")):
        if r["iso"] in ISO_COUNTRIES:
            out.setdefault(_name_key(r["name"]), (r["iso"], r["name"]))
            if r["name"].startswith("The "):  # GeoNames' "The Netherlands", "The Gambia"
                out.setdefault(_name_key(r["name"][4:]), (r["iso"], r["name"]))
            out.setdefault(_name_key(r["iso3"]), (r["iso"], r["name"]))
    return out


def country_named(text: object) -> tuple[str, str] | None:
    """(alpha-2 code, name) of a country written by its name or alpha-3 code (``Germany``, ``deu`` ->
    ``("DE", "Germany")``), for errors that say which code to write; None when it names no country."""
    return _by_name().get(_name_key(text)) if _name_key(text) else None
