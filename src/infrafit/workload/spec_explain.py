"""The resolved spec, for people (``check --explain``) and for scripts (``check --json``).

``explain_tree(w)`` nests sections as dicts; every leaf is ``{"value": v, "default": bool}``, with
``default`` true when the user did not write the field (a section the user left out is default
throughout). ``resolved_data(w)`` is the same without the markers: plain JSON-ready values.
``render_yaml(tree)`` prints the tree as YAML with ``# default`` comments.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from infrafit.workload.spec_sections import ModelRef

if TYPE_CHECKING:
    from infrafit.workload.spec import Workload


def _plain(value: Any) -> Any:
    if isinstance(value, ModelRef):
        return value.display()
    if isinstance(value, BaseModel):
        return {k: _plain(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def resolved_data(w: Workload) -> dict[str, Any]:
    """Every field with its resolved value, JSON-ready (tuples -> lists, the model as written)."""
    return _plain(w)


def _tree(model: BaseModel, all_default: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        default = all_default or name not in model.model_fields_set
        if isinstance(value, BaseModel) and not isinstance(value, ModelRef):
            out[name] = _tree(value, default)
        else:
            out[name] = {"value": _plain(value), "default": default}
    return out


def explain_tree(w: Workload) -> dict[str, Any]:
    return _tree(w, False)


def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and set(node) == {"value", "default"}


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e15 else f"{value:.4g}"
    if isinstance(value, list) and all(isinstance(v, float) for v in value):
        return "[" + ", ".join(f"{v:.3g}" for v in value) + "]"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(value) + "]"
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def render_yaml(tree: dict[str, Any], indent: int = 0) -> list[str]:
    """YAML-like lines; defaulted values end with ``# default``, unused sections with ``# not used``."""
    pad = "  " * indent
    lines: list[str] = []
    for name, node in tree.items():
        if not _is_leaf(node):
            lines.append(f"{pad}{name}:")
            lines += render_yaml(node, indent + 1)
            continue
        value, default = node["value"], node["default"]
        mark = ""
        if default:
            mark = "  # not used" if value is None and name in ("inference", "training") else "  # default"
        lines.append(f"{pad}{name}: {_scalar(value) if value is not None else 'null'}{mark}")
    return lines
