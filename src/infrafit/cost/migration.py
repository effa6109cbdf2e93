"""One-time migration effort of moving the user's code to an accelerator family.

Read from the catalog's frameworks table (``frameworks.csv``: ``support`` first-class | supported |
experimental | none, ``porting_effort_engineer_weeks``, ``caveats``), then:

- first-class for the framework: 0 weeks from the table (the stack runs as is);
- supported / experimental: the table's porting effort;
- custom CUDA ops on a family whose vendor is not NVIDIA: each op must be rewritten for the
  backend (HIP, Pallas, NKI, TPC kernels, a CPU kernel) -> ``CUSTOM_OP_PORT_WEEKS`` per op, and the
  level is at best ``experimental`` until they are;
- dynamic shapes on a backend that compiles per shape (the row's caveats say dynamic shapes
  recompile or static shapes are required/preferred: XLA, Neuron, SynapseAI graph mode):
  ``DYNAMIC_SHAPES_WEEKS`` to bucket or pad shapes;
- support ``none`` (or no row): ``inf`` weeks, the family is excluded, with the reason.

The cost model prices weeks x ``CostParams.hours_per_engineer_week`` x the engineer rate, once.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from infrafit.errors import InputError, suggest

#: Engineer-weeks to rewrite and validate one custom CUDA op for another backend (write, test, tune
#: one kernel). infrafit engineering judgement, not a measured figure; the same order as the
#: frameworks table's per-family efforts (the planner's ``search.compat`` uses the same 1 week).
CUSTOM_OP_PORT_WEEKS = 1.0
#: Engineer-weeks to make a dynamic-shape model run on a per-shape compiler (shape buckets, padding,
#: warm-up of the compiled graphs). infrafit engineering judgement, not a measured figure.
DYNAMIC_SHAPES_WEEKS = 1.0
LEVELS = ("first-class", "supported", "experimental", "none")
_SHAPE_CAVEAT = re.compile(r"dynamic shapes?[^;]*recompil|static shapes (required|preferred)|shape bucket",
                           re.IGNORECASE)


def _family_vendor(catalog, family: str) -> tuple[str, str]:
    """(family as the catalog spells it, its vendor); an accelerator id or alias names its family."""
    families = {a.family: a.vendor for a in catalog.accelerators.values()}
    by_lower = {f.lower(): f for f in families}
    if family.lower() in by_lower:
        name = by_lower[family.lower()]
        return name, families[name]
    try:
        acc = catalog.accelerator(family)
    except InputError:
        raise InputError(f"unknown accelerator family {family!r}{suggest(family, sorted(families))}",
                         fix=f"use one of {', '.join(sorted(families))}, or an accelerator id") from None
    return acc.family, acc.vendor


def migration_weeks(catalog, framework: str, accelerator_family: str, custom_ops: list[str],
                    dynamic_shapes: bool) -> tuple[float, str, str]:
    """(engineer_weeks, support_level, reason) to run ``framework`` code on ``accelerator_family``.

    ``support_level`` is the level after custom ops (one of ``LEVELS``); ``engineer_weeks`` is
    ``inf`` when it is ``none`` (the family is excluded) and ``reason`` says why, with numbers.
    """
    table: pd.DataFrame = catalog.frameworks
    known = sorted(set(table["framework"])) if not table.empty else []
    if framework not in known:
        raise InputError(f"unknown framework {framework!r}{suggest(framework, known)}",
                         fix=f"use one of {', '.join(known) or 'the frameworks in frameworks.csv'}")
    family, vendor = _family_vendor(catalog, accelerator_family)
    rows = table[(table["framework"] == framework) & (table["family"] == family)]
    if rows.empty:
        return math.inf, "none", f"{framework} on {family}: no entry in the frameworks table (excluded)"
    row = rows.iloc[0]
    level, caveats = str(row["support"]), "" if pd.isna(row["caveats"]) else str(row["caveats"])
    runtime = "" if pd.isna(row["runtime"]) else str(row["runtime"])
    if level == "none":
        return math.inf, "none", f"{framework} is not supported on {family}" + (f" ({caveats})" if caveats else "")
    weeks = 0.0 if level == "first-class" else float(row["porting_effort_engineer_weeks"])
    parts = [f"{framework} is {level} on {family} via {runtime}" + (f": {weeks:g} engineer-weeks" if weeks else "")]
    ops = [op for op in custom_ops if op]
    if ops and vendor != "NVIDIA":
        weeks += CUSTOM_OP_PORT_WEEKS * len(ops)
        level = level if LEVELS.index(level) >= LEVELS.index("experimental") else "experimental"
        parts.append(f"{len(ops)} custom CUDA op(s) ({', '.join(ops)}) to rewrite for {runtime or family}: "
                     f"+{CUSTOM_OP_PORT_WEEKS * len(ops):g} engineer-weeks")
    if dynamic_shapes and _SHAPE_CAVEAT.search(caveats):
        weeks += DYNAMIC_SHAPES_WEEKS
        parts.append(f"dynamic shapes recompile there ({caveats}): +{DYNAMIC_SHAPES_WEEKS:g} engineer-weeks")
    return weeks, level, "; ".join(parts)
