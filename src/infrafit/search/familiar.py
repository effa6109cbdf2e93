"""``ops.familiar_stacks``: a serving or training engine the team does not run yet costs a week to adopt.

When the spec lists the stacks the team already operates, every option whose engine is not among
them (nor the workload's own framework, which the team runs by definition) carries a one-time
``STACK_ADOPTION_WEEKS`` in its migration line and a risk that says so. Without the list nothing is
assumed either way and no option pays it. Names are checked against the catalog's stacks (ids and
aliases) and the common operations tools, with close-match suggestions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from infrafit.catalog.model import stack_names
from infrafit.errors import InputError, suggest

#: One-time engineer-weeks to adopt an engine the team does not run: stand it up in the team's images
#: and deployment tooling, load-test it against the SLOs, learn its failure modes and metrics. infrafit
#: engineering judgement (the same order as the frameworks table's porting efforts), not a measurement.
STACK_ADOPTION_WEEKS = 1.0
#: Operations tools a team may list beside engines; they name no option's engine, so they only pass the check.
OPS_TOOLS: tuple[str, ...] = ("kubernetes", "k8s", "slurm", "ray", "skypilot", "docker", "terraform", "nomad")
#: Option stacks that are the workload's own code path rather than a separate engine.
OWN_STACKS: tuple[str, ...] = ("default", "pytorch", "tensorflow", "jax", "onnx", "sklearn", "xgboost")


def resolve_familiar(names: Iterable[str], stacks: pd.DataFrame) -> frozenset[str]:
    """Stack ids (and tools) the team runs; an unknown name is refused with suggestions."""
    known = stack_names(stacks)
    out = set()
    for name in names:
        key = name.strip().lower()
        if key in OPS_TOOLS:
            out.add(key)
        elif key in known:
            out.add(known[key])
        else:
            choices = sorted(set(known.values()) | set(OPS_TOOLS))
            raise InputError(f"ops.familiar_stacks: unknown stack {name!r}{suggest(key, choices)}",
                             fix=f"use stack ids or aliases from `infrafit catalog stacks` ({', '.join(choices)})")
    return frozenset(out)


def adoption_weeks(option_stacks: Sequence[str], familiar: frozenset[str], framework: str,
                   stacks: pd.DataFrame) -> np.ndarray:
    """(rows,) one-time engineer-weeks per option: ``STACK_ADOPTION_WEEKS`` for an engine outside the
    familiar set when a set is given, else 0."""
    if not familiar:
        return np.zeros(len(option_stacks))
    known = stack_names(stacks)
    own = set(OWN_STACKS) | {framework.lower()}
    return np.array([0.0 if (s := str(st).lower()) in own or known.get(s, s) in familiar else STACK_ADOPTION_WEEKS
                     for st in option_stacks], dtype=float)


def adoption_risk(stack: str, familiar: frozenset[str], weeks: float, usd: float) -> str | None:
    """The risk line of an option that pays to adopt an engine (None when it does not)."""
    if weeks <= 0:
        return None
    return (f"new stack: {stack} is not among ops.familiar_stacks ({', '.join(sorted(familiar))}); "
            f"{weeks:g} engineer-week(s) to adopt it priced in migration (${usd:,.0f})")
