"""The Python API: what the CLI does, as functions that return typed values (docs/api.md).

    import infrafit
    p = infrafit.plan("examples/chatbot-asia.yaml", objective="cost", inference__traffic__requests_per_s=6)
    p.options[0].accelerator, p.options[0].cost["tco_usd"]
    p.to_frame()                      # one row per option (pandas)
    w = infrafit.check({"name": "x", "task": "inference", ...})   # a dict spec works too
    e = infrafit.estimate("spec.yaml", accelerator="h100", count=2, precision="fp8")

A spec is a path to a YAML file or a dict of the same fields. Keyword overrides name a field path with
``__`` between the parts (``inference__traffic__requests_per_s=6``), or pass ``overrides={"a.b": v}``;
they are applied before validation, like ``--set``. Errors are the CLI's: ``infrafit.errors`` types
(``ProblemsError`` lists every problem, each with a ``fix``), never a traceback from inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infrafit.search.types import Plan


def _workload(spec: str | Path | dict[str, Any], overrides: dict[str, Any] | None, kwargs: dict[str, Any],
              catalog: Any) -> Any:
    from infrafit.workload.spec import with_values, workload_from_data
    from infrafit.workload.yaml_loader import Loaded, load_yaml_text, read_spec_file

    values = {**(overrides or {}), **{k.replace("__", "."): v for k, v in kwargs.items()}}
    if isinstance(spec, dict):
        loaded, base_dir, name = Loaded(data=spec, source="<dict>"), None, None
    else:
        text, source = read_spec_file(spec)
        loaded = load_yaml_text(text, source)
        base_dir, name = Path(spec).resolve().parent, Path(spec).stem
    from infrafit.workload.spec import is_fleet

    if is_fleet(loaded.data):
        from infrafit.errors import InputError

        raise InputError(f"{loaded.source} is a fleet spec (workloads: [...]), and this call takes one workload",
                         fix="call infrafit.plan_fleet(spec) for a fleet")
    if values:
        loaded = with_values(loaded, values, label="with overrides")
    return workload_from_data(loaded, base_dir=base_dir, default_name=name, catalog=catalog)


def check(spec: str | Path | dict[str, Any], *, overrides: dict[str, Any] | None = None, **fields: Any) -> Any:
    """The validated ``Workload`` (names checked against the catalog), or ``ProblemsError``."""
    from infrafit.catalog import load_catalog

    return _workload(spec, overrides, fields, load_catalog())


def plan(spec: str | Path | dict[str, Any], *, objective: str = "cost", top: int = 5, diverse: bool = True,
         verified_only: bool = False, max_price_age_days: int | None = None,
         overrides: dict[str, Any] | None = None, **fields: Any) -> Plan:
    """The typed ``Plan`` ``infrafit plan`` prints (``.to_dict()`` is its ``--json``; ``.to_frame()``).
    Raises ``NoFeasibleOption`` (the CLI's exit 3) when nothing meets the hard constraints."""
    from infrafit.catalog import load_catalog
    from infrafit.errors import NoFeasibleOption
    from infrafit.search.planner import plan as run

    catalog = load_catalog()
    workload = _workload(spec, overrides, fields, catalog)
    result = run(workload, catalog, objective=objective, top=top, diverse=diverse, verified_only=verified_only,
                 max_price_age_days=max_price_age_days)
    if not result.options:
        reasons = "; ".join(f"{e.what}: {e.reason}" for e in result.excluded)
        raise NoFeasibleOption(f"no option meets the hard constraints of {workload.name} ({reasons})",
                               fix="relax an SLO, the deadline, the budget, placement or allowed deployments")
    return result


def estimate(spec: str | Path | dict[str, Any], *, accelerator: str | None = None, count: int | None = None,
             precision: str | None = None, stack: str | None = None, tp: int | None = None, pp: int = 1,
             ep: int = 1, dp: int | None = None, cp: int = 1, offer: str | None = None,
             concurrency: float | None = None, batch: float | None = None, requests_per_s: float | None = None,
             overrides: dict[str, Any] | None = None, **fields: Any) -> Any:
    """The ``Estimate`` ``infrafit estimate`` prints (``.to_json()`` is its ``--json``)."""
    from infrafit.catalog import load_catalog
    from infrafit.commands.estimate import estimate_workload

    catalog = load_catalog()
    workload = _workload(spec, overrides, fields, catalog)
    return estimate_workload(workload, catalog, accelerator=accelerator, count=count, precision=precision,
                             stack=stack, tp=tp, pp=pp, ep=ep, dp=dp, cp=cp, offer=offer, concurrency=concurrency,
                             batch=batch, requests_per_s=requests_per_s)


def plan_fleet(spec: str | Path | dict[str, Any], *, top: int = 3) -> dict[str, Any]:
    """The fleet plan ``infrafit plan FLEET --json`` prints for a spec with ``workloads: [...]``: each
    workload's plan, ``separate_tco_usd`` and the ``combined`` plan (``search.fleet``)."""
    from infrafit.catalog import load_catalog
    from infrafit.errors import InputError
    from infrafit.search.fleet import plan_fleet as run
    from infrafit.workload.fleet import fleet_from_data
    from infrafit.workload.spec import is_fleet
    from infrafit.workload.yaml_loader import Loaded, load_yaml_text, read_spec_file

    if isinstance(spec, dict):
        loaded, base_dir, name = Loaded(data=spec, source="<dict>"), None, "fleet"
    else:
        text, source = read_spec_file(spec)
        loaded, base_dir, name = load_yaml_text(text, source), Path(spec).resolve().parent, Path(spec).stem
    if not is_fleet(loaded.data):
        raise InputError(f"{loaded.source} has no workloads: list", fix="use infrafit.plan for one workload")
    catalog = load_catalog()
    return run(fleet_from_data(loaded, base_dir=base_dir, default_name=name, catalog=catalog), catalog, top=top)
