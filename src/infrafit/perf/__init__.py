"""infrafit.perf: the one performance engine, behind one face.

Other packages import from here only (never ``infrafit.perf.<module>``):

- ``estimate(workload, config, catalog, point=, host=) -> Estimate``: one configuration, broken down;
- ``evaluate(workload, task, pairs, ...) -> (Evaluated, pruned)``: many configurations at once, what
  ``search`` ranks; ``estimate`` runs the same evaluators on one configuration;
- the value types (``Config``, ``Estimate``, ``Evaluated``, ``OperatingPoint``, ``HostSpec``,
  ``HostDemand``) and the few helpers a caller needs to build a configuration (``choose_precision``,
  ``best_tp``, ``default_stack``, ``size_server``) or check one (``peak_fraction``);
- ``validate_csv`` for ``infrafit validate``.

Names resolve lazily (PEP 562) so ``import infrafit.perf`` stays cheap on the CLI's start-up path.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "estimate": "infrafit.perf.estimate_one", "best_tp": "infrafit.perf.estimate_one",
    "choose_precision": "infrafit.perf.estimate_one",
    "evaluate": "infrafit.perf.evaluate_many", "serving_kind": "infrafit.perf.evaluate_many",
    "Config": "infrafit.perf.types", "Estimate": "infrafit.perf.types", "Evaluated": "infrafit.perf.types",
    "OperatingPoint": "infrafit.perf.types", "SkipRow": "infrafit.perf.types",
    "ValidateContext": "infrafit.perf.types",
    "HostSpec": "infrafit.perf.host.server", "HostDemand": "infrafit.perf.host.server",
    "size_server": "infrafit.perf.host.server", "host_fed_factor": "infrafit.perf.host.attach",
    "host_item_rate": "infrafit.perf.host.server", "core_s_per_item": "infrafit.perf.host.attach",
    "default_stack": "infrafit.perf.llm.setup",
    "MAX_RATE": "infrafit.perf.operating",
    "MODEL_ERROR_PREFIX": "infrafit.perf.training.capacity", "DEADLINE_P90_KEY": "infrafit.perf.training.capacity",
    "peak_fraction": "infrafit.perf.training.capacity",
    "RISK_FACTOR_PREFIX": "infrafit.perf.llm.capacity",
    "validate_csv": "infrafit.perf.validate.run",
    "CALIBRATION_COLUMNS": "infrafit.perf.calibrated", "CALIBRATION_FILE": "infrafit.perf.calibrated",
    "OPS_PER_LAYER": "infrafit.perf.calibrated", "roofline_time_s": "infrafit.perf.core",
    "fit_llm_profiles": "infrafit.perf.fit.llm", "fit_nonllm_profiles": "infrafit.perf.fit.nonllm",
    "fit_training_profiles": "infrafit.perf.fit.training", "fit_bands": "infrafit.perf.fit.bands",
    "serve": "infrafit.perf.llm.engine", "build_setup": "infrafit.perf.llm.setup",
    "ConfigRow": "infrafit.perf.llm.setup",
    "shape_from_arch": "infrafit.perf.llm.shape",
    "round_trip": "infrafit.perf.network", "network_fit": "infrafit.perf.network",
    "NEW_CONNECTION_RTTS": "infrafit.perf.network",
    "ProfileRow": "infrafit.perf.profiles", "Profiles": "infrafit.perf.profiles",
    "load_profiles": "infrafit.perf.profiles", "using_profiles": "infrafit.perf.profiles",
    "PROFILE_COLUMNS": "infrafit.perf.profiles", "PROFILE_KEYS": "infrafit.perf.profiles",
    "PROFILE_OVERLAY_FILE": "infrafit.perf.profiles", "OP_CLASS_UNITS": "infrafit.perf.profiles",
    "plan_precision": "infrafit.perf.llm.setup",
    "precision_order": "infrafit.perf.policy",
}
#: Exported names that differ from the module's own name for the object.
_ALIASES = {"fit_bands": "main", "fit_llm_profiles": "main", "fit_nonllm_profiles": "main",
            "fit_training_profiles": "main",
            "network_fit": "fit", "precision_order": "preference", "PROFILE_KEYS": "KEYS",
            "PROFILE_OVERLAY_FILE": "OVERLAY_FILE"}
__all__ = [
    "CALIBRATION_COLUMNS",
    "CALIBRATION_FILE",
    "Config",
    "ConfigRow",
    "DEADLINE_P90_KEY",
    "Estimate",
    "Evaluated",
    "HostDemand",
    "HostSpec",
    "MAX_RATE",
    "MODEL_ERROR_PREFIX",
    "NEW_CONNECTION_RTTS",
    "OPS_PER_LAYER",
    "OP_CLASS_UNITS",
    "OperatingPoint",
    "PROFILE_COLUMNS",
    "PROFILE_KEYS",
    "PROFILE_OVERLAY_FILE",
    "ProfileRow",
    "RISK_FACTOR_PREFIX",
    "Profiles",
    "SkipRow",
    "ValidateContext",
    "best_tp",
    "build_setup",
    "choose_precision",
    "default_stack",
    "estimate",
    "evaluate",
    "fit_bands",
    "fit_llm_profiles",
    "fit_nonllm_profiles",
    "fit_training_profiles",
    "load_profiles",
    "network_fit",
    "peak_fraction",
    "plan_precision",
    "precision_order",
    "roofline_time_s",
    "round_trip",
    "serve",
    "serving_kind",
    "shape_from_arch",
    "host_fed_factor",
    "host_item_rate",
    "core_s_per_item",
    "size_server",
    "using_profiles",
    "validate_csv",
]

if TYPE_CHECKING:
    from infrafit.perf.calibrated import CALIBRATION_COLUMNS, CALIBRATION_FILE, OPS_PER_LAYER
    from infrafit.perf.core import roofline_time_s
    from infrafit.perf.estimate_one import best_tp, choose_precision, estimate
    from infrafit.perf.evaluate_many import evaluate, serving_kind
    from infrafit.perf.fit.bands import main as fit_bands
    from infrafit.perf.fit.llm import main as fit_llm_profiles
    from infrafit.perf.fit.nonllm import main as fit_nonllm_profiles
    from infrafit.perf.fit.training import main as fit_training_profiles
    from infrafit.perf.host.attach import core_s_per_item, host_fed_factor
    from infrafit.perf.host.server import HostDemand, HostSpec, host_item_rate, size_server
    from infrafit.perf.llm.capacity import RISK_FACTOR_PREFIX
    from infrafit.perf.llm.engine import serve
    from infrafit.perf.llm.setup import ConfigRow, build_setup, default_stack, plan_precision
    from infrafit.perf.llm.shape import shape_from_arch
    from infrafit.perf.network import NEW_CONNECTION_RTTS, round_trip
    from infrafit.perf.network import fit as network_fit
    from infrafit.perf.operating import MAX_RATE
    from infrafit.perf.policy import preference as precision_order
    from infrafit.perf.profiles import KEYS as PROFILE_KEYS
    from infrafit.perf.profiles import (
        OP_CLASS_UNITS,
        PROFILE_COLUMNS,
        ProfileRow,
        Profiles,
        load_profiles,
        using_profiles,
    )
    from infrafit.perf.profiles import OVERLAY_FILE as PROFILE_OVERLAY_FILE
    from infrafit.perf.training.capacity import DEADLINE_P90_KEY, MODEL_ERROR_PREFIX, peak_fraction
    from infrafit.perf.types import Config, Estimate, Evaluated, OperatingPoint, SkipRow, ValidateContext
    from infrafit.perf.validate.run import validate_csv


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'infrafit.perf' has no attribute {name!r}")
    value = getattr(import_module(module), _ALIASES.get(name, name))
    globals()[name] = value
    return value
