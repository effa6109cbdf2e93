"""Top-N worth showing (issue 12 point 7): no option over 5x #1's TCO, or holding over 4x the
accelerators of the same chip that carry the load, fills a slot; the plan says what it hid."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from infrafit.catalog import load_catalog
from infrafit.report.render import hidden_lines
from infrafit.search.pareto import hidden_variants, worth_showing
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SINGLE = [p for p in sorted(EXAMPLES.glob("*.yaml")) if "\nworkloads:" not in p.read_text()]  # not fleet specs


def test_bounds_drop_far_dearer_and_far_bigger_options():
    tco = np.array([100.0, 120.0, 600.0, 110.0, 130.0])
    held = np.array([4.0, 32.0, 4.0, 1.0, 16.0])
    chip = np.array(["b200", "b200", "h100", "cpu", "h100"], dtype=object)
    kept, left = worth_showing([0, 3, 1, 4, 2], tco, held, chip)
    assert kept == [0, 3, 4]  # 32x b200 is 8x the 4x b200 that also carries the load; 600 is 6x #1
    assert left == {"over_tco_ratio": 1, "over_accelerator_ratio": 1}
    # one CPU socket is no yardstick for GPUs: the 16x h100 stays (the fewest h100 is 4)


def test_hidden_variants_count_cheaper_near_copies_per_family():
    tco = np.array([1.0, 2.0, 3.0, 4.0])
    fam = np.array(["Hopper", "Hopper", "Hopper", "Ampere"], dtype=object)
    assert hidden_variants([0, 1, 2, 3], [0, 2, 3], tco, fam) == {"Hopper": 1}


def test_every_example_respects_the_bounds_and_says_what_it_hid():
    cat = load_catalog()
    for spec in SINGLE:
        p = plan(load_spec(spec), cat, top=5)
        if not p.options or p.options[0].parts:
            continue
        best = p.options[0].cost["tco_usd"]
        # stay as is (current:) is the yardstick and always shown, whatever it costs
        assert all(o.cost["tco_usd"] <= 5.0 * best for o in p.options
                   if not (o.switch and o.switch.get("kind") == "stay")), spec.stem
        lines = hidden_lines(p)
        n_hidden = sum((p.hidden.get("variants") or {}).values())
        assert (n_hidden > 0) == any("--all" in x for x in lines)


def test_all_shows_near_copies_the_diversity_rule_hides():
    cat = load_catalog()
    found = 0
    for spec in SINGLE:
        w = load_spec(spec)
        diverse = plan(w, cat, top=5)
        if not sum((diverse.hidden.get("variants") or {}).values()):
            continue
        found += 1
        every = plan(w, cat, top=5, diverse=False)
        ranked = [o.cost["tco_usd"] for o in every.options]
        shown = {(o.offer_id, o.count) for o in diverse.options}
        # --all shows at least one option the diversity rule hid (an offer at another count counts)
        assert any((o.offer_id, o.count) not in shown for o in every.options), spec.stem
        if w.inference is not None and not w.is_training and ranked:
            assert ranked[0] <= diverse.options[0].cost["tco_usd"] + 1e-6
    assert found, "no example hides a variant: the check needs one"


def test_near_equal_costs_are_ordered_by_fewer_accelerators_then_sourced_then_simpler():
    from infrafit.search.pareto import COST_TIE_FRACTION, break_near_ties

    tco = np.array([100.0, 100.5, 101.0, 150.0, 101.5])
    held = np.array([4.0, 1.0, 1.0, 1.0, 1.0])
    derived = np.array([False, True, False, False, False])
    mode = np.array(["cloud_on_demand", "cloud_on_demand", "cloud_on_demand", "cloud_on_demand", "cloud_spot"],
                    dtype=object)
    assert COST_TIE_FRACTION == 0.02
    # within 2% of 100: 1 accelerator before 4; sourced before derived; on-demand before spot; 150 stays last
    assert break_near_ties([0, 1, 2, 4, 3], tco, held, derived, mode) == [2, 4, 1, 0, 3]
