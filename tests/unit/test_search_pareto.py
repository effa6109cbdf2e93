import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafit.search.pareto import diverse_top, pareto_mask


def test_pareto_two_objectives():
    obj = np.array([[1, 5], [2, 3], [3, 4], [4, 1], [2, 3.5], [np.nan, 0]])
    assert pareto_mask(obj).tolist() == [True, True, False, True, False, False]


def test_pareto_three_objectives():
    obj = np.array([[1, 1, 5], [1, 1, 6], [0, 2, 9], [2, 2, 2]])
    assert pareto_mask(obj).tolist() == [True, False, True, True]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), min_size=1, max_size=30))
def test_front_members_are_not_dominated(points):
    obj = np.array(points)
    mask = pareto_mask(obj)
    assert mask.any()
    for i in np.flatnonzero(mask):
        dominated = np.all(obj <= obj[i], axis=1) & np.any(obj < obj[i], axis=1)
        assert not dominated.any()
    for i in np.flatnonzero(~mask):
        dominated = np.all(obj <= obj[i], axis=1) & np.any(obj < obj[i], axis=1)
        assert dominated.any() or any(np.array_equal(obj[i], obj[j]) for j in np.flatnonzero(mask))


def test_diverse_top_prefers_distinct_families_then_modes():
    keys = [("nvidia", "od", "aws"), ("nvidia", "od", "gcp"), ("nvidia", "res", "aws"),
            ("amd", "od", "azure"), ("tpu", "od", "gcp")]
    order = [0, 1, 2, 3, 4]
    assert diverse_top(order, keys, 3) == [0, 3, 4]
    assert diverse_top(order, keys, 4) == [0, 2, 3, 4]
    assert diverse_top(order, keys, 10) == [0, 1, 2, 3, 4]
