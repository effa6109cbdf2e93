"""Fuzzers for plan and for catalog overlays (bounded: a few dozen examples, no deadline).

- A mutated example (numbers scaled by wide factors, list entries dropped, enum values swapped)
  either fails ``check`` with problems, or plans: options or none, never an exception other than
  infrafit's own error family.
- An offers overlay whose cells are replaced by hostile strings either loads or is refused with a
  ``CatalogError`` naming the file and line; it never crashes.
"""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infrafit.catalog import DATA_DIR, load_catalog
from infrafit.errors import InfrafitError
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
CATALOG = load_catalog()
SWAPS = {"mode": ["realtime", "batch", "edge", "mixed"], "pattern": ["continuous", "periodic", "occasional"],
         "method": ["full", "lora", "qlora"], "framework": ["pytorch", "jax", "tensorflow", "onnx", "xgboost"],
         "billing": ["pay_per_use", "prefer_fixed_monthly"]}
HOSTILE = ["", "-1", "0", "1e308", "nan", "inf", "x" * 300, "２０", "$-5", "1,2,3", "true", "\t", "ü", "1e-300"]


def _numbers(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _numbers(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, (*path, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path


def _set(data, path, value):
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_examples_plan_or_fail_cleanly(data):
    spec = copy.deepcopy(yaml.safe_load(data.draw(st.sampled_from(EXAMPLES)).read_text()))
    paths = list(_numbers(spec))
    for _ in range(data.draw(st.integers(1, 3))):
        if paths:
            path = data.draw(st.sampled_from(paths))
            node = spec
            for part in path[:-1]:
                node = node[part]
            factor = data.draw(st.sampled_from([0, 1e-6, 0.01, 0.5, 2, 100, 1e6]))
            _set(spec, path, node[path[-1]] * factor)
    for key, choices in SWAPS.items():
        for section in (spec, spec.get("inference") or {}, spec.get("usage") or {}, spec.get("training") or {},
                        spec.get("deployment") or {}):
            if isinstance(section, dict) and key in section and data.draw(st.booleans()):
                section[key] = data.draw(st.sampled_from(choices))
    try:
        workload = parse_spec(yaml.safe_dump(spec), catalog=CATALOG)
    except InfrafitError:
        return
    PLANNED.append(workload.name)
    try:
        result = plan(workload, CATALOG, top=3)
    except InfrafitError:
        return
    assert all(o.rank >= 1 and o.count >= 1 for o in result.options)


PLANNED: list[str] = []


def test_the_plan_fuzzer_reaches_the_planner():
    """Guard against a fuzzer whose mutations all fail the check (it would then test nothing)."""
    test_mutated_examples_plan_or_fail_cleanly()
    assert len(PLANNED) >= 5


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_overlays_load_or_are_refused_cleanly(tmp_path_factory, data):
    with (DATA_DIR / "offers.csv").open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        rows = [r for _, r in zip(range(3), reader, strict=False)]
    for _ in range(data.draw(st.integers(1, 4))):
        row = data.draw(st.sampled_from(rows))
        row[data.draw(st.sampled_from(fields))] = data.draw(st.sampled_from(HOSTILE) | st.text(max_size=30))
    folder = tmp_path_factory.mktemp("overlay")
    with (folder / "offers.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    try:
        load_catalog(folder)
    except InfrafitError as exc:
        assert "To fix" in str(exc)
