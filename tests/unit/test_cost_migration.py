"""migration_weeks: porting effort from the frameworks table, custom CUDA ops and dynamic shapes."""

from __future__ import annotations

import math

import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.migration import CUSTOM_OP_PORT_WEEKS, DYNAMIC_SHAPES_WEEKS, migration_weeks
from infrafit.errors import InputError


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _row(catalog, framework: str, family: str):
    t = catalog.frameworks
    return t[(t["framework"] == framework) & (t["family"] == family)].iloc[0]


def test_pytorch_custom_cuda_ops_cost_weeks_on_tpu_not_on_nvidia(catalog):
    ops = ["fused_rope", "paged_attn"]
    tpu_weeks, tpu_level, tpu_reason = migration_weeks(catalog, "pytorch", "Google TPU", ops, False)
    nv_weeks, nv_level, _ = migration_weeks(catalog, "pytorch", "NVIDIA Hopper", ops, False)
    table_weeks = float(_row(catalog, "pytorch", "Google TPU")["porting_effort_engineer_weeks"])
    assert tpu_weeks == table_weeks + 2 * CUSTOM_OP_PORT_WEEKS
    assert tpu_level == "experimental"  # the ops must be rewritten before it runs
    assert "fused_rope" in tpu_reason and "PyTorch/XLA" in tpu_reason
    assert _row(catalog, "pytorch", "NVIDIA Hopper")["support"] == "first-class"
    assert (nv_weeks, nv_level) == (0.0, "first-class")
    no_ops_weeks, no_ops_level, _ = migration_weeks(catalog, "pytorch", "Google TPU", [], False)
    assert no_ops_weeks == table_weeks and no_ops_level == "supported"


def test_dynamic_shapes_add_effort_only_where_the_backend_recompiles(catalog):
    static, _, _ = migration_weeks(catalog, "pytorch", "Google TPU", [], False)
    dynamic, _, reason = migration_weeks(catalog, "pytorch", "Google TPU", [], True)
    assert dynamic == static + DYNAMIC_SHAPES_WEEKS and "recompile" in reason
    assert migration_weeks(catalog, "pytorch", "NVIDIA Hopper", [], True)[0] == 0.0


def test_none_support_is_excluded_with_the_reason(catalog):
    weeks, level, reason = migration_weeks(catalog, "onnx", "Google TPU", [], False)
    assert math.isinf(weeks) and level == "none"
    assert "not supported" in reason and "execution provider" in reason


def test_accelerator_alias_names_its_family(catalog):
    assert migration_weeks(catalog, "jax", "v5e", [], False) == migration_weeks(catalog, "jax", "Google TPU", [],
                                                                              False)


def test_bad_names_raise_input_errors(catalog):
    with pytest.raises(InputError, match="To fix"):
        migration_weeks(catalog, "pytorhc", "Google TPU", [], False)
    with pytest.raises(InputError, match="To fix"):
        migration_weeks(catalog, "pytorch", "quantum annealer", [], False)
