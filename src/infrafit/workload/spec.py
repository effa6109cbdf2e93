"""The workload spec: a frozen pydantic model, loaded from YAML with every problem listed at once.

``load_spec(path)`` and ``parse_spec(text, source)`` return a ``Workload`` or raise
``ProblemsError`` whose problems each carry file:line, the field path, what is wrong (with
close-match suggestions) and a ``To fix:``. Numbers are SI inside, or in the unit the field's name
states (``deadline_days``, ``checkpoint_every_minutes``, ``active_hours_per_month``); human strings
such as ``"80GB"``, ``"4M"``, ``"2h"`` and ``"$40,000"`` are converted on the way in.
The field reference, with every default, is docs/workload-spec.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, model_validator

from infrafit import units
from infrafit.errors import InputError, Problem, ProblemsError
from infrafit.workload import spec_types as t
from infrafit.workload.spec_sections import (
    Availability,
    Budget,
    Current,
    Deployment,
    Growth,
    Hardware,
    Inference,
    ModelField,
    Ops,
    Placement,
    Section,
    Training,
    Usage,
    Workflow,
)
from infrafit.workload.yaml_loader import Loaded, load_yaml_text, read_spec_file

if TYPE_CHECKING:
    from infrafit.workload.arch import ModelArch

Task = Literal["inference", "training", "fine-tuning"]
Framework = Literal["pytorch", "tensorflow", "jax", "onnx", "sklearn", "xgboost"]
_NAME = r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$"


class Workload(Section):
    """A validated workload. Sections that do not apply are ``None`` (``training`` on an
    inference task); every other field has a value, given or defaulted (see ``explain()``)."""

    name: Annotated[str, Field(pattern=_NAME)] = "workload"
    task: Task
    model: ModelField
    framework: Framework = "pytorch"
    custom_ops: Annotated[tuple[Annotated[str, Field(min_length=1, max_length=100)], ...],
                          BeforeValidator(t.parse_custom_ops), Field(max_length=100)] = ()
    dynamic_shapes: bool = False
    precision: Annotated[str | tuple[str, ...], BeforeValidator(t.parse_precision)] = "auto"
    inference: Inference | None = None
    training: Training | None = None
    usage: Usage = Usage()
    growth: Growth = Growth()
    placement: Placement = Placement()
    deployment: Deployment = Deployment()
    hardware: Hardware = Hardware()
    availability: Availability = Availability()
    budget: Budget = Budget()
    horizon_months: t.HorizonMonths = 12
    ops: Ops = Ops()
    current: Current | None = None
    workflow: Workflow | None = None

    @model_validator(mode="after")
    def _derived_defaults_and_contradictions(self, info: ValidationInfo) -> Workload:
        from infrafit.workload.spec_checks import default_seq_len, default_usage, value_problems

        default_name = (info.context or {}).get("default_name")
        if "name" not in self.model_fields_set and default_name:
            self._fill("name", _name_from(default_name))
        if "usage" not in self.model_fields_set or _usage_needs_completion(self):
            usage = default_usage(self)
            if usage is not None:
                self._fill("usage", usage)
        if self.training is not None and "seq_len" not in self.training.model_fields_set:
            seq = default_seq_len(self)
            if seq is not None:
                self.training._fill("seq_len", seq)
        problems = value_problems(self)
        if problems:
            raise SpecContradictions(problems)
        return self

    # --- helpers the rest of infrafit calls -------------------------------------------------------
    @property
    def is_training(self) -> bool:
        """True for training and fine-tuning tasks."""
        return self.task in ("training", "fine-tuning")

    @property
    def allowed_precisions(self) -> tuple[str, ...]:
        """The precisions the planner may use: the listed ones, or all known when ``auto``."""
        return t.PRECISION_CHOICES if self.precision == "auto" else tuple(self.precision)

    @property
    def horizon_s(self) -> float:
        return self.horizon_months * units.SECONDS_PER_MONTH

    def model_arch(self) -> ModelArch:
        """The architecture of ``model``: a library or Hugging Face id, a config.json, or inline fields."""
        from infrafit.workload import models

        ref = self.model
        if ref.preset is not None:
            return models.resolve_model(ref.preset)
        if ref.config is not None:
            return models.from_hf_config(ref.config, model_id=Path(ref.config).stem)
        return models.from_hf_config(dict(ref.architecture or {}), model_id=self.name)

    def explain(self) -> dict[str, Any]:
        """The resolved spec as ``{field: {"value": v, "default": bool}}`` trees (sections nest)."""
        from infrafit.workload.spec_explain import explain_tree

        return explain_tree(self)

    def resolved(self) -> dict[str, Any]:
        """The resolved spec as plain JSON-ready data (what ``check --json`` and ``plan --json`` print)."""
        from infrafit.workload.spec_explain import resolved_data

        return resolved_data(self)


def _usage_needs_completion(w: Workload) -> bool:
    u = w.usage
    return u.pattern in ("periodic", "occasional") and u.active_hours_per_month is None and u.runs_per_year is None


class SpecContradictions(Exception):  # noqa: N818 - carries problems out of pydantic untouched
    """Raised from the model validator; pydantic lets non-ValueError exceptions propagate."""

    def __init__(self, problems: list[tuple[tuple[str | int, ...], str, str]]) -> None:
        super().__init__(f"{len(problems)} contradictions")
        self.problems = problems


# --- loading --------------------------------------------------------------------------------------
def is_fleet(data: Any) -> bool:
    """A fleet spec: a mapping holding ``workloads: [...]`` (``workload.fleet``)."""
    return isinstance(data, dict) and "workloads" in data


def load_spec(path: str | Path, catalog: Any = None, sets: tuple[str, ...] | list[str] = ()) -> Workload:
    """Read and validate a workload spec file; with ``catalog``, its region, place and provider
    names are checked against it too (``workload.names``); ``sets`` are ``path=value`` overrides
    (the CLI's ``--set``) applied before validation. Raises ``ProblemsError`` listing every problem."""
    text, source = read_spec_file(path)
    loaded = load_yaml_text(text, source)
    if is_fleet(loaded.data):  # several workloads: only plan and check take them
        raise InputError(f"{source} is a fleet spec (workloads: [...]), and this command takes one workload",
                         fix="run `infrafit plan` or `infrafit check` on the fleet, or put one of its workloads "
                             "in a spec file of its own")
    if sets:
        loaded = apply_sets(loaded, sets)
    return workload_from_data(loaded, base_dir=Path(path).resolve().parent, default_name=Path(path).stem,
                              catalog=catalog)


#: The longest ``--set`` value read (a list of regions fits; a pasted file does not).
SET_VALUE_MAX_CHARS = 4096


def apply_sets(loaded: Loaded, sets: tuple[str, ...] | list[str]) -> Loaded:
    """``loaded`` with each ``dotted.path=value`` set (the value read as one YAML scalar, list or
    mapping: ``40``, ``2h``, ``[tokyo, seoul]``, ``{mean: 800, p99: 2000}``; ``null`` removes the field).
    Validation then treats the value like one written in the file; its problems name ``--set``."""
    import yaml

    values: dict[str, Any] = {}
    for item in sets:
        path_text, sep, value_text = item.partition("=")
        if not sep or not all(k.strip() for k in path_text.split(".")):
            raise InputError(f"--set {item!r} is not path=value",
                             fix="write --set inference.traffic.requests_per_s=40 (dotted field path, '=', value)")
        if len(value_text) > SET_VALUE_MAX_CHARS:
            raise InputError(f"--set {path_text}: the value is over {SET_VALUE_MAX_CHARS} characters",
                             fix="put long values in the spec file")
        try:
            values[path_text.strip()] = yaml.safe_load(value_text) if value_text.strip() else ""
        except yaml.YAMLError as exc:
            raise InputError(f"--set {path_text}: {value_text!r} is not a YAML value ({exc.__class__.__name__})",
                             fix="quote strings with commas or colons, write lists as [a, b]") from None
    return with_values(loaded, values, label="with --set")


_SEGMENT = re.compile(r"^([^\[\]]+)((?:\[\d+\])*)$")


def path_keys(dotted: str) -> list[str | int]:
    """``workloads[1].inference.slo`` -> ``["workloads", 1, "inference", "slo"]``: dotted field names, each
    optionally followed by list indices (a fleet's items)."""
    keys: list[str | int] = []
    for segment in dotted.split("."):
        m = _SEGMENT.match(segment.strip())
        if m is None:
            raise InputError(f"--set {dotted}: {segment.strip()!r} is not a field name or name[index]",
                             fix="write dotted field names, e.g. inference.slo.ttft_p99_s or "
                                 "workloads[0].inference.traffic.requests_per_s")
        keys.append(m.group(1).strip())
        keys.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return keys


def _list_item(node: Any, key: int, dotted: str, keys: list[str | int], at: int) -> None:
    """Refuse an index into a value that is not a list, or past its end."""
    where = ".".join(str(k) for k in keys[:at]) or "the spec"
    if not isinstance(node, list):
        raise InputError(f"--set {dotted}: {where} is not a list, so it has no item [{key}]",
                         fix="index only lists, e.g. workloads[0] in a fleet spec")
    if key >= len(node):
        raise InputError(f"--set {dotted}: {where} has {len(node)} item(s), so there is no item [{key}]",
                         fix=f"use an index from 0 to {len(node) - 1}")


def with_values(loaded: Loaded, values: dict[str, Any], *, label: str) -> Loaded:
    """``loaded`` with each dotted path set to its value (``None`` removes the field); a path may index a
    list (``workloads[0].inference...``). The lines the file gave those paths are dropped, and the source
    says ``label``."""
    import copy

    data = copy.deepcopy(loaded.data) if isinstance(loaded.data, dict) else {}
    lines = dict(loaded.lines)
    for dotted, value in values.items():
        keys = path_keys(dotted)
        node: Any = data
        for at, key in enumerate(keys[:-1]):
            if isinstance(key, int):
                _list_item(node, key, dotted, keys, at)
                node = node[key]
                continue
            if not isinstance(node, dict):
                raise InputError(f"--set {dotted}: {'.'.join(str(k) for k in keys[:at])} is not a section",
                                 fix="set a field of a section, e.g. workloads[0].inference.slo.risk")
            child = node.get(key)
            nxt = keys[at + 1]
            if isinstance(nxt, int):  # a list must be there already: an index never makes one
                node = child
                continue
            if isinstance(child, list):
                raise InputError(f"--set {dotted}: {key} is a list, so a field of it needs an index",
                                 fix=f"write {key}[0].{'.'.join(str(k) for k in keys[at + 1:])} (items count from 0)")
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            node = child
        last = keys[-1]
        if isinstance(last, int):
            _list_item(node, last, dotted, keys, len(keys) - 1)
            if value is None:
                node.pop(last)
            else:
                node[last] = value
        elif not isinstance(node, dict):
            raise InputError(f"--set {dotted}: {'.'.join(str(k) for k in keys[:-1])} is not a section",
                             fix="set a field of a section, e.g. workloads[0].inference.slo.risk")
        elif value is None:
            node.pop(last, None)
        else:
            node[last] = value
        for known in [p for p in lines if tuple(p[: len(keys)]) == tuple(keys)]:
            del lines[known]  # the file's line no longer holds this value
    return Loaded(data=data, lines=lines, source=f"{loaded.source} ({label})")


def parse_spec(text: str, source: str = "<string>", *, base_dir: str | Path | None = None,
               default_name: str | None = None, catalog: Any = None) -> Workload:
    """Validate spec text. ``base_dir`` anchors a relative ``model: {config: ...}`` path."""
    loaded = load_yaml_text(text, source)
    return workload_from_data(loaded, base_dir=base_dir, default_name=default_name, catalog=catalog)


def workload_from_data(loaded: Loaded | dict[str, Any], *, base_dir: str | Path | None = None,
                       default_name: str | None = None, catalog: Any = None) -> Workload:
    """Validate already-parsed data (a ``Loaded`` with lines, or a plain dict)."""
    from infrafit.workload import spec_checks, spec_problems

    if not isinstance(loaded, Loaded):
        loaded = Loaded(data=loaded, source="<data>")
    data = loaded.data
    if not isinstance(data, dict):
        raise ProblemsError([Problem("", "the spec is not a mapping of fields", "write `name: ...`, `task: ...`",
                                     file=loaded.source)], source=loaded.source)
    data = _anchor_config_path(data, base_dir)
    raw: list[tuple[tuple[str | int, ...], str, str]] = spec_checks.structure_problems(data)
    workload: Workload | None = None
    try:
        workload = Workload.model_validate(data, context={"default_name": default_name})
    except ValidationError as exc:
        raw += spec_problems.from_validation_error(exc, Workload)
    except SpecContradictions as exc:
        raw += exc.problems
    if workload is not None:
        raw += spec_checks.model_problems(workload)
        if catalog is not None:
            from infrafit.workload.names import name_problems

            raw += name_problems(workload, catalog)
    if raw:
        raise ProblemsError(spec_problems.located(raw, loaded), source=loaded.source)
    assert workload is not None
    return workload


def _name_from(stem: str) -> str:
    """A valid workload name from a file name (``my spec!.yaml`` -> ``my-spec``)."""
    return (re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._") or "workload")[:100]


def _anchor_config_path(data: dict[str, Any], base_dir: str | Path | None) -> dict[str, Any]:
    model = data.get("model")
    if base_dir is None or not isinstance(model, dict) or not isinstance(model.get("config"), str):
        return data
    path = Path(model["config"]).expanduser()
    if not path.is_absolute():
        path = Path(base_dir) / path
    return {**data, "model": {**model, "config": str(path)}}
