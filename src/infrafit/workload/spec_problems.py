"""Turn pydantic's validation errors into infrafit ``Problem``s with file:line, a field path,
close-match suggestions and a ``To fix:``.

An unknown key gets the nearest names of its own section (``trafic`` -> ``traffic``); a key that
belongs to another section is pointed there (``deadline_days`` at the top level -> ``training``).
"""

from __future__ import annotations

import re
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from infrafit.errors import Problem, suggest
from infrafit.workload.spec_types import AT_MARK, FIX_MARK
from infrafit.workload.yaml_loader import FieldPath, Loaded, dotted

Triple = tuple[tuple[str | int, ...], str, str]

#: Values to show in a "To fix" when a required field is missing.
_EXAMPLES = {
    "task": "inference", "model": "llama3.1-70b", "traffic": "{requests_per_s: 10}", "mean": "1500",
    "per_day": "1e6", "requests_per_s": "10",
}


def _submodels(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models inside an annotation (through Optional, Annotated, unions, tuples)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out += _submodels(arg)
    return out


def model_at(root: type[BaseModel], loc: FieldPath) -> type[BaseModel] | None:
    """The section model at a field path (``("inference", "traffic")`` -> ``Traffic``)."""
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        subs = _submodels(field.annotation)
        model = subs[0] if subs else None
    return model


@cache
def field_homes(root: type[BaseModel]) -> dict[str, list[str]]:
    """Every field name of every section, with the dotted paths where it lives."""
    homes: dict[str, list[str]] = {}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            path = f"{prefix}.{name}" if prefix else name
            homes.setdefault(name, []).append(path)
            for sub in _submodels(field.annotation):
                if sub is not model:
                    walk(sub, path)

    walk(root, "")
    return homes


def from_validation_error(exc: ValidationError, root: type[BaseModel]) -> list[Triple]:
    out: list[Triple] = []
    for err in exc.errors(include_url=False):
        out.append(_one(dict(err), tuple(err["loc"]), root))
    return out


def _one(err: dict[str, Any], loc: FieldPath, root: type[BaseModel]) -> Triple:
    kind, given = err["type"], err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        return _unknown_key(loc, root)
    if kind == "missing":
        name = str(loc[-1]) if loc else "field"
        return loc, "missing required field", f"add `{name}: {_EXAMPLES.get(name, '...')}`"
    if kind in ("literal_error", "enum"):
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return loc, f"{given!r} is not one of {', '.join(choices)}{suggest(str(given), choices)}", \
            f"use one of: {', '.join(choices)}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return _bound(kind, ctx, given, loc)
    msg = str(err.get("msg", "invalid value"))
    if kind == "value_error":
        what, _, fix = msg.removeprefix("Value error, ").partition(FIX_MARK)
        if what.startswith(AT_MARK):
            at, _, what = what[len(AT_MARK):].partition(" ")
            loc = (*loc, at)
        return loc, what, fix or "correct this value (see docs/workload-spec.md)"
    return loc, f"{msg[:1].lower() + msg[1:]} (got {_short(given)})", _type_fix(kind)


def _bound(kind: str, ctx: dict[str, Any], given: Any, loc: FieldPath) -> Triple:
    op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
    limit = next(iter(ctx.values()), "?")
    if op in ("<", "<="):
        return loc, f"must be {op} {limit:g} (got {_short(given)}); that is beyond any real workload", \
            f"use a realistic value {op} {limit:g}; check the unit (the field name says it)"
    return loc, f"must be {op} {limit:g} (got {_short(given)})", f"use a value {op} {limit:g}"


def _type_fix(kind: str) -> str:
    if "bool" in kind:
        return "write true or false"
    if kind.startswith(("int", "float")):
        return "write a number (human units are fine: 80GB, 4M, 2h, $1,200)"
    if kind in ("tuple_type", "list_type"):
        return "write a list, e.g. [a, b]"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return "write a mapping of fields, e.g. {key: value}"
    if kind.startswith("string"):
        return "write a short name: letters, digits, spaces, dots, dashes"
    return "correct this value (see docs/workload-spec.md)"


def _unknown_key(loc: FieldPath, root: type[BaseModel]) -> Triple:
    key = str(loc[-1]) if loc else "?"
    parent = model_at(root, loc[:-1])
    names = sorted(parent.model_fields) if parent is not None else []
    hint = suggest(key, names)
    homes = [h for h in field_homes(root).get(key, []) if h != dotted(loc)]
    if homes and not hint:
        home = homes[0].rsplit(".", 1)[0]
        where = "the top level" if "." not in homes[0] else f"`{home}:`"
        return loc, f"unknown field {key!r} here; {key} belongs under {where}", f"move it under {where}"
    return loc, f"unknown field {key!r}{hint}", f"use one of: {', '.join(names)}" if names else "remove it"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def located(raw: list[Triple], loaded: Loaded) -> list[Problem]:
    """Problems with file:line from the YAML marks, de-duplicated, in file order."""
    seen: set[tuple[str, str]] = set()
    out: list[Problem] = []
    for loc, what, fix in raw:
        path = dotted(loc)
        if (path, what) in seen:
            continue
        seen.add((path, what))
        out.append(Problem(path=path, what=what, fix=fix, file=loaded.source, line=loaded.line_of(loc)))
    return sorted(out, key=lambda p: (p.line or 0, p.path))
