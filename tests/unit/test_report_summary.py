"""A forwarded report says the recommendation and the workload first (issue 17 point 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.report.render import render_html, render_markdown, render_terminal
from infrafit.report.summary import headline
from infrafit.search.planner import plan
from infrafit.units import fmt_usd
from infrafit.workload.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def chat():
    catalog = load_catalog()
    return plan(load_spec(EXAMPLES / "chatbot-asia.yaml", catalog), catalog, top=3)


def test_headline_names_the_pick_its_cost_its_slo_and_why(chat):
    o = chat.options[0]
    line = headline(chat)
    assert line.startswith(f"Recommended: {o.count}x {o.accelerator} {o.precision}")
    assert o.provider in line and o.region in line
    assert fmt_usd(o.cost["monthly_usd"]) in line and fmt_usd(o.cost["tco_usd"]) in line
    assert "within the 1.00 s SLO" in line
    # the pay-per-use H200 is the cheapest by more than the 10 % the fixed-monthly preference allows a bought box
    assert min(x.cost["tco_usd"] for x in chat.options) == o.cost["tco_usd"]
    assert line.endswith(f"because it is the {o.why[0].split(':')[0]}.") and "because it is the cheapest of" in line


def test_headline_says_when_the_billing_preference_put_a_dearer_option_first():
    """At 3.5 requests/s the bought DGX B200 is within 10 % of the cheapest pay-per-use option, and chatbot-asia
    prefers fixed monthly billing: the headline names the preference, not 'cheapest'."""
    catalog = load_catalog()
    spec = load_spec(EXAMPLES / "chatbot-asia.yaml", catalog, ("inference.traffic.requests_per_s=3.5",))
    pref = plan(spec, catalog, top=3)
    o = pref.options[0]
    line = headline(pref)
    assert o.deployment == "on_prem" and min(x.cost["tco_usd"] for x in pref.options) < o.cost["tco_usd"]
    assert "because it is the first by the spec's fixed-monthly billing preference, of" in line


def test_the_report_opens_with_the_headline_then_the_workload(chat):
    md = render_markdown(chat)
    first = md.index("**Recommended:")
    work = md.index("## Workload")
    table = md.index("| # |")
    assert first < work < table
    for text in ("llama3.1-70b", "3 requests/s", "8 at peak", "1500 mean", "TTFT p99 1.00 s", "TPOT p99 50.0 ms",
                 "hong-kong", "24 months", "$90,000/month"):
        assert text in md[work:table], text
    page = render_html(chat)
    assert page.index("Recommended:") < page.index("Workload") < page.index("<table")


def test_the_terminal_says_the_recommendation_before_the_table(chat):
    from io import StringIO

    from rich.console import Console

    buf = StringIO()
    render_terminal(chat, Console(file=buf, width=200))
    text = buf.getvalue()
    assert text.lstrip().startswith("Recommended:") and text.index("Recommended:") < text.index("infrafit plan:")


def test_explain_prints_one_option_in_full(capsys):
    from infrafit.cli import main

    assert main(["plan", str(EXAMPLES / "chatbot-asia.yaml"), "--top", "3", "--json"]) == 0
    options = json.loads(capsys.readouterr().out)["options"]
    assert any(o["risks"] for o in options)  # a risks section is exercised
    for o in options:
        assert main(["plan", str(EXAMPLES / "chatbot-asia.yaml"), "--top", "3", "--explain", str(o["rank"])]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"#{o['rank']} ") and sum(f"#{r} " in out for r in (1, 2, 3)) == 1
        for section in ("why", "cost over 24 months", "efficiency", "server:"):
            assert section in out
        assert ("\nrisks\n" in out) == bool(o["risks"])
        assert all(r[:40] in " ".join(out.split()) for r in o["risks"])
    assert "| # |" not in out and "┃" not in out  # no table
    assert main(["plan", str(EXAMPLES / "chatbot-asia.yaml"), "--top", "3", "--explain", "4"]) == 2
    assert "To fix" in capsys.readouterr().err


def test_explain_reaches_the_stay_option_ranked_after_top(capsys):
    """"stay as is" ranks after the --top options when it costs more (the switch example's #4 at --top 3): the
    table shows it, so --explain 4 prints it (it was refused before planning as past --top); a rank the plan
    lacks is refused with the ranks it has."""
    from infrafit.cli import main

    spec = str(EXAMPLES / "switch-from-gpu-contract.yaml")
    assert main(["plan", spec, "--top", "3", "--explain", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#4 8x nvidia_a100_80gb_sxm") and "stay as is: today's 16 x nvidia_a100_80gb_sxm" in out
    assert main(["plan", spec, "--top", "3", "--explain", "9"]) == 2
    assert "ranked 1, 2, 3, 4" in capsys.readouterr().err


def test_shell_completion_is_on():
    from typer.testing import CliRunner

    from infrafit.cli import app

    result = CliRunner().invoke(app, ["--help"])
    assert "--install-completion" in result.output and "--show-completion" in result.output


def test_terminal_why_is_a_few_bullets_and_shared_warnings_are_said_once(chat):
    from io import StringIO

    from rich.console import Console

    from infrafit.report.render import TERMINAL_WHY, short_why
    from infrafit.search.types import Plan

    for o in chat.options:
        lines = short_why(o)
        assert 1 <= len(lines) <= TERMINAL_WHY and lines[0] == o.why[0]
    d = chat.to_dict()
    shared = "prices in this plan are from the catalog of 2026-12-01 (a warning every option carries)"
    for o in d["options"]:
        o["risks"] = [*o["risks"], shared]
    buf = StringIO()
    render_terminal(Plan.from_dict(d), Console(file=buf, width=200))
    text = buf.getvalue()
    assert text.count(shared) == 1 and "Applies to every option" in text
    assert "--explain 1" in text  # the rest of option 1's reasoning is one flag away
