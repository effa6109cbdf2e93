"""precision: auto (issue 12 point 8): a 4- or 8-bit option carries a quality risk naming the check
to run, and on each offer the widest precision within 10% of that offer's cheapest is the one shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.search import assemble
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def auto_plan():
    text = (ROOT / "examples" / "chatbot-asia.yaml").read_text().replace("precision: [bf16, fp8]", "precision: auto")
    cat = load_catalog()
    return plan(parse_spec(text, catalog=cat), cat, top=5)


def test_quantised_options_under_auto_carry_the_quality_risk(auto_plan):
    quantised = [o for o in auto_plan.options if o.precision in ("fp8", "int8", "fp4", "int4")]
    assert quantised
    for o in quantised:
        assert any(r.startswith("quality:") and "infrafit check-model" in r for r in o.risks), o.risks


def test_a_listed_precision_carries_no_quality_risk():
    cat = load_catalog()
    p = plan(parse_spec((ROOT / "examples" / "chatbot-asia.yaml").read_text(), catalog=cat), cat, top=3)
    assert all(not any(r.startswith("quality:") for r in o.risks) for o in p.options)


def test_auto_keeps_the_widest_precision_within_the_margin():
    class Rows:
        def __init__(self, precs):
            self.rows = [{"precision": p, "count": 8} for p in precs]

    class Part:
        def __init__(self, precs, tco):
            import numpy as np
            import pandas as pd

            self.offers = pd.DataFrame({"id": ["o"] * len(precs)})
            self.ev = Rows(precs)
            self.cost = type("C", (), {"tco_usd": np.array(tco)})()

    cheap_fp4 = Part(["fp4", "fp8", "bf16"], [100.0, 108.0, 130.0])
    assert assemble._distinct_offers(cheap_fp4, [0, 1, 2], auto_precision=True) == [1]  # fp8 within 10%
    assert assemble._distinct_offers(cheap_fp4, [0, 1, 2], auto_precision=False) == [0]
    far = Part(["fp4", "fp8"], [100.0, 125.0])
    assert assemble._distinct_offers(far, [0, 1], auto_precision=True) == [0]
