"""Known conditions on serving users in one country from another (issue 13 point 1): data-transfer law
and cross-border networks, from ``catalog/data/place_borders.csv``, each with its source.

A condition is stated as a risk on every option whose serving country it covers, naming the user places
it is about. It is never turned into a price or a delay: the sources give rules, not figures.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from infrafit.workload.names import place_country


def user_countries(workload: Any) -> dict[str, list[str]]:
    """ISO country -> the ``users_in`` places in it (places whose country is unknown are left out)."""
    out: dict[str, list[str]] = {}
    for place, _share in workload.placement.user_places():
        cc = place_country(place)
        if cc:
            out.setdefault(cc, []).append(place)
    return out


def conditions(table: pd.DataFrame, users: dict[str, list[str]]) -> list[tuple[dict, list[str]]]:
    """The border rows that concern at least one user country, each with the user places it names."""
    if table.empty or not users:
        return []
    out = []
    for rec in table.to_dict("records"):
        places = [p for cc in str(rec["users_countries"]).split() for p in users.get(cc, [])]
        if places:
            out.append((rec, places))
    return out


def holds(rec: dict, served_country: str) -> bool:
    """Whether a row covers an option served from ``served_country`` (users inside it are not a transfer)."""
    inside, outside = str(rec.get("served_in") or "").split(), str(rec.get("served_outside") or "").split()
    if not served_country:
        return False
    return served_country in inside if inside else served_country not in outside


def risks(found: list[tuple[dict, list[str]]], served_country: str, provider: str) -> list[str]:
    """The risk lines of one option served from ``served_country`` by ``provider``."""
    out = []
    for rec, places in found:
        if holds(rec, served_country):
            text = str(rec["risk"]).format(users=", ".join(places), country=served_country, provider=provider)
            source = str(rec["source"])
            if rec.get("user_row") is True:
                source = f"your catalog overlay, {rec.get('origin_file')}:{rec.get('origin_line')}: {source}"
            out.append(f"{rec['condition']}: {text} (source: {source})")
    return out
