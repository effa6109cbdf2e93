"""An offer whose place is unknown is not planned as if the network took no time. Prime Intellect's Iceland
offers could not be placed (no Icelandic town reached the place table's 250,000 people), so an 8B chat for users
from Sydney to Frankfurt ranked a Reykjavik H200 first with no network line; on-prem servers with no site did the
same."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from infrafit.catalog import load_catalog
from infrafit.search import network
from infrafit.search.planner import plan
from infrafit.workload.names import locate
from infrafit.workload.spec import workload_from_data

GLOBAL = {"name": "global-8b", "task": "inference", "model": "llama3.1-8b",
          "inference": {"mode": "realtime", "traffic": {"requests_per_s": 20, "input_tokens": 600,
                                                         "output_tokens": 150},
                        "slo": {"ttft_p99_s": 0.4, "tpot_p99_s": 0.04}},
          "placement": {"users_in": ["sydney", "frankfurt"]}, "horizon_months": 12}


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_every_country_an_offer_is_sold_in_can_be_placed(cat):
    for country in sorted(set(cat.offers["country"].dropna()) - {""}):
        assert locate("", country=country) is not None, country
    assert locate("", "IS", country="IS")[2].startswith("IS (at reykjavik")


def test_an_offer_with_no_known_place_has_no_network_time_not_zero():
    w = workload_from_data(GLOBAL)
    offers = pd.DataFrame({"city": ["", ""], "region": ["nowhere-1", "FI"], "country": ["", "FI"]})
    added = network.added_seconds(offers, w)
    assert np.isnan(added[0]) and added[1] > 0.2  # Helsinki to Sydney


def test_on_prem_servers_with_no_site_are_excluded_with_the_fix(cat):
    data = copy.deepcopy(GLOBAL) | {"deployment": {"allowed": ["on_prem"]}}
    result = plan(workload_from_data(data, catalog=cat), cat, top=2)
    assert not result.options
    hopper = next(e.reason for e in result.excluded if e.what == "NVIDIA Hopper")
    assert hopper.startswith("location unknown:") and "set placement.countries" in hopper
    data["placement"]["countries"] = ["DE"]  # the site's country: placed, and the network is checked
    best = plan(workload_from_data(data, catalog=cat), cat, top=1).options[0]
    assert best.deployment == "on_prem" and any(w.startswith("network: latency SLOs checked at the users")
                                                for w in best.why)


def test_every_option_of_a_users_in_plan_says_its_network(cat):
    result = plan(workload_from_data(GLOBAL, catalog=cat), cat, top=5)
    assert result.options
    for o in result.options:
        assert o.performance.get("network"), o.offer_id
        assert any(w.startswith("network: latency SLOs checked at the users") for w in o.why), o.offer_id
