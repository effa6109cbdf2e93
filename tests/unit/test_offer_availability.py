"""Verified vs copied offers (issue 13 point 5): ``availability`` on offers and options, unverified
offers rank below verified ones at the same price, say so in their risks, and ``--verified-only``
drops them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.cli import app
from infrafit.search.offers import offer_verified
from infrafit.search.pareto import break_near_ties

ROOT = Path(__file__).resolve().parents[2]
CHATBOT = str(ROOT / "examples" / "chatbot-asia.yaml")


def test_region_copies_are_marked_unverified_and_nothing_else():
    offers = load_catalog().offers
    unverified = ~offer_verified(offers)
    notes = offers["notes"].fillna("")
    copies = notes.str.contains("availability in this region not checked")
    assert copies.sum() == 16 and unverified[copies].all()  # the Lambda region copies
    # every other unverified row says in its notes why no source confirms it there
    why = notes.str.contains("not verified|no location|not stated|unverified|ASSUMPTION|names no region")
    assert (why[unverified & ~copies]).all(), offers.loc[unverified & ~copies & ~why, "id"].tolist()
    assert not notes[~unverified].str.contains("not checked").any()


def test_an_unverified_offer_ranks_below_a_verified_one_at_the_same_price():
    tco = np.array([100.0, 100.5])
    order = break_near_ties([0, 1], tco, np.ones(2), np.zeros(2, bool), np.array(["cloud_on_demand"] * 2),
                            np.array([True, False]))
    assert order == [1, 0]
    far = break_near_ties([0, 1], np.array([100.0, 110.0]), np.ones(2), np.zeros(2, bool),
                          np.array(["cloud_on_demand"] * 2), np.array([True, False]))
    assert far == [0, 1]  # 10 % cheaper is not a tie: the price decides


def _plan(*extra: str) -> dict:
    # at the prediction (p50): Lambda Tokyo's copied 1x B200 is #1 there; at the default p90 a bought DGX is
    result = CliRunner().invoke(app, ["plan", CHATBOT, "--json", "--risk", "p50", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_options_say_it_and_verified_only_drops_them():
    plain = _plan()
    top = plain["options"][0]
    assert top["availability"] == "unverified"  # Lambda Tokyo, copied by the same-price rule
    assert top["risks"][0].startswith("availability unverified:")
    strict = _plan("--verified-only")
    assert all(o["availability"] == "verified" for o in strict["options"])
    assert any(e["what"] == "unverified offers" and "--verified-only drops" in e["reason"] for e in strict["excluded"])
    assert strict["options"][0]["cost"]["tco_usd"] > top["cost"]["tco_usd"]
