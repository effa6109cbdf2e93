"""``precision: auto`` on a training spec tries the policy's training formats (precision_policy.csv
``plan_auto``: bf16, fp16, fp8, fp32), not every format a spec may list: a 7B pretraining plan put its #1 on
B200s at fp4, which the policy keeps for specs that ask for it (NVFP4 pretraining is research), and int8/int4
training GEMMs are not a recipe on GPUs at all. A listed format a chip has no math for trains at the first of
its policy fallback chain the chip has (fp4 on an H100: fp8)."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf import policy
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

SPEC = """\
name: pretrain-7b
task: training
model: llama2-7b
{precision}
training: {{tokens: 2e11, seq_len: 4096, deadline_days: 30}}
hardware: {{accelerators: [b200, h100]}}
deployment: {{allowed: [cloud]}}
horizon_months: 2
"""


@pytest.fixture(scope="module")
def cat():  # noqa: ANN201
    return load_catalog()


def test_auto_trains_in_the_policys_formats_only(cat):  # noqa: ANN001
    assert set(policy.plan_auto("training")) == {"bf16", "fp16", "fp8", "fp32"}
    p = plan(parse_spec(SPEC.format(precision=""), catalog=cat), cat, top=5)
    assert p.options and {o.precision for o in p.options} <= {"bf16", "fp8"}
    assert any(o.precision == "fp8" for o in p.options)  # Transformer Engine fp8 on chips with fp8 math


def test_a_listed_fp4_still_trains_at_fp4_where_the_chip_has_it(cat):  # noqa: ANN001
    p = plan(parse_spec(SPEC.format(precision="precision: [fp4]"), catalog=cat), cat, top=5)
    got = {(o.accelerator, o.precision) for o in p.options}
    assert ("nvidia_b200_sxm", "fp4") in got
    # no fp4 math on an H100: the policy's chain gives fp8 (it trained at bf16, skipping the chain)
    assert ("nvidia_h100_sxm", "fp8") in got and ("nvidia_h100_sxm", "bf16") not in got


def test_an_auto_training_format_names_its_convergence_risk_not_an_inference_check(cat):  # noqa: ANN001
    p = plan(parse_spec(SPEC.format(precision=""), catalog=cat), cat, top=5)
    fp8 = [o for o in p.options if o.precision == "fp8"]
    assert fp8
    for o in fp8:
        [line] = [r for r in o.risks if r.startswith("quality:")]
        assert "training GEMMs" in line and "loss" in line and "check-model" not in line
