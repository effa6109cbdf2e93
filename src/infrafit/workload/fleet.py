"""A fleet spec: several workloads planned apart and together (``workloads: [...]``; ``search.fleet``).

Every item of ``workloads`` is a full workload spec. The fields written beside ``workloads`` (placement,
deployment, horizon, ops, ...) are defaults every item takes unless it says otherwise (an item's own
value wins; sections merge field by field). All items share one horizon: a pooled fleet is bought once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infrafit.errors import Problem, ProblemsError
from infrafit.workload.yaml_loader import Loaded

#: Workloads one fleet spec may hold (each is planned, then pooled).
MAX_FLEET_WORKLOADS = 20


@dataclass(frozen=True)
class Fleet:
    name: str
    workloads: tuple[Any, ...]  # Workload


def _merge(shared: dict, own: dict) -> dict:
    out = dict(shared)
    for key, value in own.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _item(loaded: Loaded, i: int, shared: dict, item: dict) -> Loaded:
    """Item ``i`` as a workload document: the shared defaults merged in, each line where it was written."""
    prefix = ("workloads", i)
    lines = {k: v for k, v in loaded.lines.items() if k and k[0] not in ("workloads", "name")}
    lines |= {k[2:]: v for k, v in loaded.lines.items() if k[:2] == prefix and len(k) > 2}
    return Loaded(data=_merge(shared, item), lines=lines, source=f"{loaded.source} (workloads[{i}])")


def fleet_from_data(loaded: Loaded, *, base_dir: str | Path | None, default_name: str, catalog: Any) -> Fleet:
    """Every item validated (all problems listed at once, each at its line), then the fleet's own rules."""
    from infrafit.workload.spec import workload_from_data

    data = loaded.data
    items = data.get("workloads")
    where = loaded.line_of(("workloads",))

    def refuse(what: str, fix: str) -> ProblemsError:
        return ProblemsError([Problem("workloads", what, fix, file=loaded.source, line=where)], source=loaded.source)

    if not isinstance(items, list) or not items or not all(isinstance(x, dict) for x in items):
        raise refuse("workloads must be a non-empty list of workload specs", "write `workloads:` then `- name: ...`")
    if len(items) > MAX_FLEET_WORKLOADS:
        raise refuse(f"{len(items)} workloads, at most {MAX_FLEET_WORKLOADS}", "split the fleet into several specs")
    shared = {k: v for k, v in data.items() if k not in ("workloads", "name")}
    problems: list[Problem] = []
    workloads = []
    for i, item in enumerate(items):
        try:
            workloads.append(workload_from_data(_item(loaded, i, shared, item), base_dir=base_dir,
                                                default_name=f"{default_name}-{i + 1}", catalog=catalog))
        except ProblemsError as exc:
            problems += exc.problems
    if problems:
        raise ProblemsError(problems, source=loaded.source)
    names = [w.name for w in workloads]
    if len(set(names)) < len(names):
        raise refuse(f"two workloads share a name ({', '.join(sorted({n for n in names if names.count(n) > 1}))})",
                     "give every workload its own name")
    if len({w.horizon_months for w in workloads}) > 1:
        raise refuse("the workloads have different horizon_months", "give the fleet one horizon_months (beside "
                     "workloads:), a pooled fleet is bought once")
    for w in workloads:
        if w.inference is not None and w.training is not None:
            raise refuse(f"{w.name} both trains and serves", "write its training and its serving as two workloads")
        if w.current is not None:
            raise refuse(f"{w.name} has current:", "compare today's platform one workload at a time (current: is "
                         "not pooled)")
    return Fleet(str(data.get("name") or default_name), tuple(workloads))


def load_spec_or_fleet(path: str | Path, catalog: Any = None, sets: tuple[str, ...] | list[str] = ()):
    """A workload (``workload.spec.load_spec``), or a ``Fleet`` when the file holds ``workloads: [...]``."""
    from infrafit.workload.spec import apply_sets, is_fleet, workload_from_data
    from infrafit.workload.yaml_loader import load_yaml_text, read_spec_file

    text, source = read_spec_file(path)
    loaded = load_yaml_text(text, source)
    if sets:
        loaded = apply_sets(loaded, sets)
    base, name = Path(path).resolve().parent, Path(path).stem
    if is_fleet(loaded.data):
        return fleet_from_data(loaded, base_dir=base, default_name=name, catalog=catalog)
    return workload_from_data(loaded, base_dir=base, default_name=name, catalog=catalog)
