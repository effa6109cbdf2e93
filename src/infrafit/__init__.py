"""infrafit: plan, price and prove the infrastructure for an AI workload.

The Python API (``infrafit.plan``, ``infrafit.estimate``, ``infrafit.check``; docs/api.md) imports its
machinery (``infrafit.api``) on first call, so ``import infrafit`` stays cheap for the CLI.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "check", "estimate", "plan", "plan_fleet"]


def plan(spec: Any, **kwargs: Any) -> Any:
    """``infrafit.api.plan``: the typed plan of a spec (a YAML path or a dict)."""
    return import_module("infrafit.api").plan(spec, **kwargs)


def plan_fleet(spec: Any, **kwargs: Any) -> Any:
    """``infrafit.api.plan_fleet``: a fleet spec's plans apart and combined (a dict)."""
    return import_module("infrafit.api").plan_fleet(spec, **kwargs)


def estimate(spec: Any, **kwargs: Any) -> Any:
    """``infrafit.api.estimate``: one configuration of a spec, broken down."""
    return import_module("infrafit.api").estimate(spec, **kwargs)


def check(spec: Any, **kwargs: Any) -> Any:
    """``infrafit.api.check``: the validated workload of a spec."""
    return import_module("infrafit.api").check(spec, **kwargs)
