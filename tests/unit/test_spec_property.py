"""Property tests: arbitrary YAML and mutated valid specs never crash the spec loader.

Every outcome is a ``Workload`` or a ``ProblemsError`` whose problems each say where and how to fix.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infrafit.errors import ProblemsError
from infrafit.workload.spec import Workload, parse_spec

EXAMPLES = sorted((Path(__file__).parent.parent.parent / "examples").glob("*.yaml"))
FIELD_NAMES = ["name", "task", "model", "inference", "traffic", "requests_per_s", "training", "tokens",
               "usage", "pattern", "budget", "monthly_usd", "precision", "mode", "slo", "ttft_p99_s"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["inference", "training", "llama3.1-70b", "4M", "80GB", "2h", "$1,200", "auto", "bf16"]),
)
keys = st.one_of(st.sampled_from(FIELD_NAMES), st.text(min_size=1, max_size=12))
trees = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=5)),
    max_leaves=25,
)


def _outcome(text: str) -> None:
    try:
        result = parse_spec(text, "p.yaml")
    except ProblemsError as exc:
        assert exc.problems
        for problem in exc.problems:
            assert "To fix:" in str(problem)
        return
    assert isinstance(result, Workload)
    result.explain()
    result.resolved()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_arbitrary_yaml_never_crashes(tree):
    _outcome(yaml.safe_dump(tree, allow_unicode=True))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(text):
    _outcome(text)


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _mutate(data, path, action, value):
    node = data
    for part in path[:-1]:
        node = node[part]
    last = path[-1]
    if action == "drop":
        if isinstance(node, dict):
            node.pop(last)
        else:
            node.pop(last)
    else:
        node[last] = value


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_examples_never_crash(data):
    spec = yaml.safe_load(data.draw(st.sampled_from(EXAMPLES)).read_text())
    paths = list(_paths(spec))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        action = data.draw(st.sampled_from(["drop", "set"]))
        _mutate(spec, path, action, data.draw(trees))
        paths = list(_paths(spec))
    _outcome(yaml.safe_dump(spec, allow_unicode=True))


def test_examples_exist():
    assert len(EXAMPLES) >= 8
