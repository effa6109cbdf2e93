"""Other names of known places: a spec may write ``bangalore`` for ``bengaluru``.

``catalog/data/place_aliases.csv`` (built by ``scripts/build_places.py`` from GeoNames' alternate names) holds
only names that can mean one place: never a place's, state's, country's or catalog region's own name, never
another city's own name. Apart from ``workload.names`` so that the spec's field types can use it without
importing the catalog checks.
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from importlib import resources

ALIASES_FILE = "place_aliases.csv"


@lru_cache(maxsize=1)
def place_aliases() -> dict[str, str]:
    """Alias slug -> place slug (``bangalore`` -> ``bengaluru``, ``munchen`` -> ``munich``)."""
    text = resources.files("infrafit.catalog").joinpath("data", ALIASES_FILE).read_text(encoding="utf-8")
    return {r["alias"]: r["place"] for r in csv.DictReader(io.StringIO(text, newline=""))}


def canonical_place(name: str) -> str:
    """``name`` (a slug) as the place table spells it: an alternate name of a known place becomes that place
    (``bombay`` -> ``mumbai``); anything else (a place, a state, a catalog region) stays as written."""
    return place_aliases().get(name, name)
