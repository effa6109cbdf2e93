"""``deployment.require``: keep only offers whose provider is *known* to meet every requirement.

The catalog's ``providers.csv`` says, per provider and with its source, ``yes``, ``no`` or nothing (not
known) for each quality; ``confidential_computing`` is met only on the instance types (hosts) the
provider sells as confidential-computing VMs. An unknown is never assumed: the offer is excluded with "not known to
meet". On-prem purchases and owned hardware sit in the team's own facility, which the catalog cannot
know: they meet what ``deployment.own_facility_meets`` says.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from infrafit.catalog.tables import PROVIDER_QUALITIES

CONFIDENTIAL = "confidential_computing"


def _provider_table(catalog) -> dict[str, dict]:
    table = catalog.table("providers")
    return {} if table.empty else {str(r["provider"]): r for r in table.to_dict("records")}


def _answer(row: dict | None, quality: str, host: str) -> str:
    """'yes', 'no' or '' (not known) for one provider row."""
    if row is None:
        return ""
    if quality == CONFIDENTIAL:
        listed = {a.strip() for a in str(row.get("confidential_computing_hosts") or "").split(";") if a.strip()}
        return "yes" if host in listed else ""
    return str(row.get(quality) or "")


def requirement_masks(offers: pd.DataFrame, catalog, workload) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Per requirement: (name, met, known_no) over the offers, in the spec's order."""
    dep = workload.deployment
    rows = _provider_table(catalog)
    providers = offers["provider"].astype(str).to_numpy()
    hosts = offers["host_id"].astype(str).to_numpy()
    own = offers["mode"].astype(str).to_numpy() == "on_prem"
    out = []
    for q in dict.fromkeys(dep.require):
        answers = np.array([_answer(rows.get(p), q, a) for p, a in zip(providers, hosts, strict=True)],
                           dtype=object)
        met = np.where(own, q in dep.own_facility_meets, answers == "yes")
        out.append((q, met.astype(bool), ~own & (answers == "no")))
    return out


def describe(quality: str) -> str:
    if quality == CONFIDENTIAL:
        return "confidential computing (a confidential VM with GPU TEE and attestation)"
    return PROVIDER_QUALITIES[quality]


def exclusion_lines(offers: pd.DataFrame, masks, eligible: np.ndarray) -> list[dict[str, str]]:
    """One line per requirement that removes offers still eligible: how many, and whose."""
    lines = []
    for q, met, known_no in masks:
        gone = eligible & ~met
        if not gone.any():
            eligible = eligible & met
            continue
        unknown = sorted(set(offers.loc[gone & ~known_no, "provider"].astype(str)))
        refused = sorted(set(offers.loc[gone & known_no, "provider"].astype(str)))
        parts = []
        if refused:
            parts.append(f"known not to meet it: {', '.join(refused)}")
        if unknown:
            parts.append(f"not known to meet it: {', '.join(unknown[:8])}{' ...' if len(unknown) > 8 else ''}")
        own = " (on-prem: list it in deployment.own_facility_meets if your facility meets it)" \
            if (gone & (offers["mode"].astype(str).to_numpy() == "on_prem")).any() else ""
        lines.append({"what": f"deployment.require {q}",
                      "reason": f"{describe(q)}: drops {int(gone.sum())} offers; " + "; ".join(parts) + own +
                      " (providers.csv; an unknown is never assumed; see `infrafit catalog providers`)"})
        eligible = eligible & met
    return lines
