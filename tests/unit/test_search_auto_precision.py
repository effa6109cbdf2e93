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
    for o in quantised:  # the command checks the option's own format (check-model simulates fp8, fp4, int4)
        assert any(r.startswith("quality:") and f"--precisions fp32,{o.precision}`" in r for r in o.risks), o.risks


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


def test_auto_prefers_the_checkpoints_own_format_on_an_offer():
    """gpt-oss-120b ships MXFP4 weights: on a chip where fp4 and int8 cost the same, fp4 (the publisher's model)
    is shown, not int8 (re-quantized, no more accurate); a bf16 checkpoint keeps the widest within the margin."""
    class Part:
        def __init__(self, precs, tco):
            import numpy as np
            import pandas as pd

            self.offers = pd.DataFrame({"id": ["o"] * len(precs)})
            self.ev = type("R", (), {"rows": [{"precision": p, "count": 1} for p in precs]})()
            self.cost = type("C", (), {"tco_usd": np.array(tco)})()

    tie = Part(["int8", "fp4", "bf16"], [100.0, 100.0, 140.0])
    assert assemble._distinct_offers(tie, [0, 1, 2], auto_precision=True, native="fp4") == [1]
    assert assemble._distinct_offers(tie, [0, 1, 2], auto_precision=True) == [0]  # no checkpoint format: widest
    # the checkpoint's own format does not win beyond the margin: a narrower one saving more than 10% is kept
    dear = Part(["fp4", "int4"], [130.0, 100.0])
    assert assemble._distinct_offers(dear, [1, 0], auto_precision=True, native="fp4") == [1]
    assert assemble.precision_preference("fp8", "fp8") > assemble.precision_preference("bf16", "fp8")


def test_serving_a_quantized_checkpoint_at_its_own_format_is_no_quality_risk():
    from infrafit.search.option import _quality_risk

    w = parse_spec((ROOT / "examples" / "chatbot-asia.yaml").read_text()
                   .replace("precision: [bf16, fp8]", "precision: auto").replace("llama3.1-70b", "gpt-oss-120b"))
    assert _quality_risk(w, {"precision": "fp4"}, native="fp4") is None
    line = _quality_risk(w, {"precision": "int8"}, native="fp4")
    assert line is not None and "check-model gpt-oss-120b" in line


def test_the_quality_check_names_a_config_model_by_its_path_never_a_placeholder(tmp_path):
    from infrafit.search.option import _quality_risk

    cfg = tmp_path / "config.json"
    cfg.write_text((ROOT / "tests" / "fixtures" / "model_configs" / "Qwen--Qwen2.5-7B.json").read_text())
    text = (ROOT / "examples" / "chatbot-asia.yaml").read_text().replace("precision: [bf16, fp8]", "precision: auto")
    w = parse_spec(text.replace("model: llama3.1-70b", f"model: {{config: {cfg}}}"))
    line = _quality_risk(w, {"precision": "fp8"})
    assert line is not None and f"check-model {cfg}" in line and "MODEL" not in line


def test_a_plan_serves_gpt_oss_at_its_own_mxfp4_where_that_costs_no_more():
    text = (ROOT / "examples" / "chatbot-asia.yaml").read_text().replace("precision: [bf16, fp8]", "precision: auto")
    text = text.replace("model: llama3.1-70b", "model: gpt-oss-120b") + "hardware: {accelerators: [b200]}\n"
    cat = load_catalog()
    p = plan(parse_spec(text, catalog=cat), cat, top=3)
    assert p.options and all(o.precision == "fp4" for o in p.options)
    assert all(not any(r.startswith("quality:") for r in o.risks) for o in p.options)


def test_between_formats_of_one_width_the_policy_order_decides():
    """On a B200, fp8 and int8 cost the same for an 8B chat: the option showed int8 (whichever came first);
    the policy table lists fp8 first for LLM serving (the stacks' default where the chip has fp8 math)."""
    from infrafit.perf.policy import preference

    ranked = preference("llm_inference")
    assert ranked.index("fp8") < ranked.index("int8")
    assert assemble.precision_preference("fp8", "", ranked) > assemble.precision_preference("int8", "", ranked)

    class Part:
        def __init__(self, precs, tco):
            import numpy as np
            import pandas as pd

            self.offers = pd.DataFrame({"id": ["o"] * len(precs)})
            self.ev = type("R", (), {"rows": [{"precision": p, "count": 1} for p in precs]})()
            self.cost = type("C", (), {"tco_usd": np.array(tco)})()

    tie = Part(["int8", "fp8"], [100.0, 100.0])
    assert assemble._distinct_offers(tie, [0, 1], auto_precision=True, ranked=ranked) == [1]


def test_an_offers_operating_points_stay_apart_under_auto():
    """Under auto each offer kept one candidate, by TCO: the latency objective's lighter operating point (1x
    B200, TTFT 99.6 ms, $127k) was folded into the same offer's max-rate point (283 ms, $83k), and the
    latency plan's #1 became an 8x H100 at 134.8 ms for $243k. Points are no near-copies; precisions are."""
    class Part:
        def __init__(self, rows, tco):
            import numpy as np
            import pandas as pd

            self.offers = pd.DataFrame({"id": ["o"] * len(rows)})
            self.ev = type("R", (), {"rows": [{"count": 1, **r} for r in rows]})()
            self.cost = type("C", (), {"tco_usd": np.array(tco)})()

    part = Part([{"precision": "fp8", "operating_point": {"name": "utilisation_25"}},
                 {"precision": "fp8", "operating_point": {"name": "max_rate"}},
                 {"precision": "int8", "operating_point": {"name": "max_rate"}}], [127.0, 83.0, 83.0])
    assert assemble._distinct_offers(part, [0, 1, 2], auto_precision=True) == [0, 1]


EU_CHAT = """\
name: eu-8b-assistant
task: inference
model: llama3.1-8b
inference:
  traffic: {requests_per_s: 10, peak_requests_per_s: 25, daily_profile: business-hours,
            input_tokens: {mean: 800, p99: 4000}, output_tokens: {mean: 250, p99: 1000}}
  slo: {ttft_p99_s: 0.5, tpot_p99_s: 0.04}
placement: {countries: [DE], users_in: [berlin, munich, hamburg]}
horizon_months: 12
"""


def test_the_latency_objectives_first_option_is_the_fastest_worth_showing():
    """The EU 8B chat under --objective latency: #1 was 8x H100 at 134.8 ms for $243k while 1x B200 at a
    lighter operating point does 99.6 ms for $127k; now #1 is within the tie margin of the fastest shown."""
    cat = load_catalog()
    p = plan(parse_spec(EU_CHAT, catalog=cat), cat, top=5, objective="latency")
    ttft = [o.performance["latency"]["ttft_s"]["p99"] for o in p.options]
    assert ttft[0] <= 1.03 * min(ttft) and ttft[0] < 0.12
    # #1's why names the near tie exactly when a faster candidate exists
    tie = [w for w in p.options[0].why if w.startswith("near tie: the lowest TTFT p99")]
    assert bool(tie) == ("(within a near tie)" in p.options[0].why[0])


def test_a_latency_tie_is_broken_by_tco_and_said_so():
    """chatbot-asia under --objective latency: 8x H100 at 537 ms costs $1.07M, 8x H200 at 539 ms $1.01M; the
    0.3% gap is inside the tie margin, so the H200 leads and its why names the faster, dearer one."""
    import re

    cat = load_catalog()
    p = plan(parse_spec((ROOT / "examples" / "chatbot-asia.yaml").read_text(), catalog=cat), cat, top=3,
             objective="latency")
    first = p.options[0]
    [tie] = [w for w in first.why if w.startswith("near tie: the lowest TTFT p99 is ")]
    assert "(within a near tie)" in first.why[0] and "so the lower TCO ranks first" in tie
    faster_ms = float(re.search(r"is ([0-9.]+) ms", tie).group(1))
    faster_tco = float(re.search(r"TCO \$([0-9,]+)\)", tie).group(1).replace(",", ""))
    mine = first.performance["latency"]["ttft_s"]["p99"] * 1000
    assert faster_ms < mine <= 1.03 * faster_ms and first.cost["tco_usd"] < faster_tco


def test_latencies_within_replicate_noise_rank_by_tco():
    """134.0 ms bought for $251k and 134.8 ms rented for $243k are a tie (replicate measurements differ by ~3%):
    the cheaper ranks first; a clearly faster one still leads whatever it costs."""
    import numpy as np

    from infrafit.search.pareto import METRIC_TIE_FRACTION, order_by

    tco = np.array([251.0, 243.0, 400.0, 90.0])
    ttft = np.array([0.1340, 0.1348, 0.099, 0.283])
    assert METRIC_TIE_FRACTION == 0.03
    assert list(order_by("latency", tco, ttft)) == [2, 1, 0, 3]
    assert list(order_by("latency", tco, np.array([0.134, 0.1348, np.inf, 0.283]))) == [1, 0, 3, 2]


def test_an_mxfp4_checkpoint_is_tried_at_fp4_on_a_chip_without_fp4_math():
    """gpt-oss-120b ships MXFP4; an H100 runs it as weight-only 4-bit with 16-bit math. The plan tried it on
    Hopper only as int4 (an AWQ/GPTQ checkpoint nobody publishes) or re-quantized to fp8; now its own fp4 is a
    candidate there, and on 2x H100 it costs what fp8 does, so the published model is shown."""
    from infrafit.catalog import load_catalog as _cat
    from infrafit.perf.llm.capacity import llm_precisions

    h100 = _cat().accelerator("h100")
    assert "fp4" not in llm_precisions(h100, ("fp8", "fp4", "int4"))
    assert llm_precisions(h100, ("fp8", "fp4", "int4"), checkpoint="fp4") == ["fp8", "fp4", "int4"]
    from infrafit.workload.spec import workload_from_data

    traffic = {"requests_per_s": 5, "input_tokens": {"mean": 2000, "p99": 8000},
               "output_tokens": {"mean": 600, "p99": 2000}}
    cat = _cat()
    p = plan(workload_from_data({"name": "gpt-oss-us", "task": "inference", "model": "gpt-oss-120b",
                                 "inference": {"traffic": traffic, "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05}},
                                 "placement": {"countries": ["US"]}, "hardware": {"accelerators": ["h100"]},
                                 "horizon_months": 36}), cat, top=3)
    assert p.options and p.options[0].precision == "fp4" and p.options[0].count == 2
    assert not any(r.startswith("quality:") for r in p.options[0].risks)
