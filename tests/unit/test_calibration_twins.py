"""One measurement counts once, at the layout it ran (issue 15, honest leave-one-out).

AIConfigurator's silicon sample lists some runs twice: as DeepSeek-R1 and as DeepSeek-V3, and with
their parallel fields multiplied by the expert-parallel degree (``count_check = id_suggests_N``).
``scripts/mark_twin_measurements.py`` marks the repeats (``exact_duplicate_of``, dropped by the fits),
``validate`` re-reads a flagged row's layout from its id, and the leave-one-model-out folds hold out an
architecture, not a name."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.fit.llm import architecture
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.perf.validate.llm import SkipRow, ValidateContext, layout_from_id, prepare
from infrafit.workload.models import get_model

ROOT = Path(__file__).resolve().parents[2]
LATENCY = ROOT / "benchmarks" / "data" / "latency_calibration.csv"
FIELDS = ("tp", "attention_dp", "ep", "accelerator_count", "batch_size", "concurrency")


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, str]]:
    return {r["row_id"]: r for r in csv.DictReader(LATENCY.open(newline=""))}


def _layout(row: dict[str, str]) -> tuple[str, ...]:
    return tuple((row.get(k) or "").strip() or "1" for k in FIELDS)


def _row(row_id: str, tp: str, adp: str, ep: str, count: str, flag: str = "id_suggests_8") -> dict[str, str]:
    return {"row_id": row_id, "tp": tp, "attention_dp": adp, "ep": ep, "accelerator_count": count,
            "count_check": flag, "batch_size": "", "concurrency": ""}


def test_a_multiplied_layout_is_re_read_from_the_id():
    assert _layout(layout_from_id(_row("r1_b200_trtllm_c8_tp8_ep8_9:ttft_s", "64", "1", "8", "64"))) == (
        "8", "1", "8", "8", "1", "1")
    # attention-DP runs lose the factor from DP, where it divides, and each rank's batch grows by it
    dp = {**_row("r1_c64_tp8_ep8_3:ttft_s", "1", "64", "8", "64"), "batch_size": "1", "concurrency": "64"}
    assert _layout(layout_from_id(dp)) == ("1", "8", "8", "8", "8", "64")
    assert _layout(layout_from_id(_row("r1_c4_tp4_ep4_3:ttft_s", "4", "4", "16", "16", "id_suggests_4"))) == (
        "4", "1", "4", "4", "1", "1")
    # an unflagged row is left as stated
    same = _row("r1_c4_tp8_ep8_3:ttft_s", "64", "1", "8", "64", "no_id_hint")
    assert layout_from_id(same) is same


def test_a_flagged_row_without_a_readable_id_is_skipped_with_the_reason():
    with pytest.raises(SkipRow, match="GPU count uncertain"):
        layout_from_id(_row("r1_cfg201:ttft_s", "64", "1", "8", "64"))
    with pytest.raises(SkipRow, match="GPU count uncertain"):
        layout_from_id(_row("r1_c4_tp3_ep3_1:ttft_s", "64", "1", "8", "64"))


def test_the_re_read_layout_is_the_one_the_same_measurement_states_elsewhere(rows):
    """Every flagged row that repeats, digit for digit, a run whose count the source does not question
    re-reads to exactly that run's layout: the evidence the rule rests on."""
    checked = 0
    for r in rows.values():
        twin = rows.get(r["exact_duplicate_of"])
        if r["count_check"].startswith("id_suggests") and twin and twin["count_check"] == "ok":
            assert _layout(layout_from_id(r)) == _layout(twin), r["row_id"]
            checked += 1
    assert checked >= 100


def test_a_flagged_row_is_predicted_at_the_ids_gpu_count(rows):
    ctx = ValidateContext(load_catalog(), str(ROOT / "tests" / "fixtures" / "model_configs"))
    flagged = next(r for r in rows.values() if r["count_check"] == "id_suggests_8" and r["tp"] == "64"
                   and not r["exact_duplicate_of"])
    case = prepare(flagged, ctx)
    assert case.count == 8 and case.layouts == ((8, 1, 1, 8),)


def test_twins_are_marked_once_and_the_shipped_set_is_already_marked(rows, load_script):
    mod = load_script("mark_twin_measurements")

    def pair(config: str, ttft: str, tpot: str, flag: str, model: str = "deepseek-v3-arch") -> list[dict]:
        common = {"accelerator_id": "nvidia_b200_sxm", "software_stack_family": "sglang", "precision": "fp4",
                  "input_tokens": "1024", "output_tokens": "1024", "concurrency": "4", "model_arch_group": model,
                  "count_check": flag, "exact_duplicate_of": ""}
        return [{**common, "row_id": f"{config}:ttft_s", "metric_value": ttft},
                {**common, "row_id": f"{config}:tpot_s", "metric_value": tpot}]

    synthetic = (pair("v3_cfg1", "0.3171", "0.0087", "no_id_hint") + pair("r1_tp4_ep4_1", "0.3171", "0.0087", "ok")
                 + pair("r1_tp16_ep4_2", "0.3171", "0.0087", "id_suggests_4")
                 + pair("other", "0.3171", "0.0091", "ok")  # same TTFT, another TPOT: another run
                 + pair("qwen", "0.3171", "0.0087", "ok", "qwen3-32b"))  # another architecture
    marks = mod.twins(synthetic)
    assert marks == {"v3_cfg1:ttft_s": "r1_tp4_ep4_1:ttft_s", "v3_cfg1:tpot_s": "r1_tp4_ep4_1:tpot_s",
                     "r1_tp16_ep4_2:ttft_s": "r1_tp4_ep4_1:ttft_s", "r1_tp16_ep4_2:tpot_s": "r1_tp4_ep4_1:tpot_s"}
    assert mod.twins(list(rows.values())) == {}  # the shipped file carries its marks
    assert sum(1 for r in rows.values() if r["exact_duplicate_of"]) >= 1000


def test_a_held_out_model_is_its_architecture():
    r1, v3 = shape_from_arch(get_model("deepseek-r1")), shape_from_arch(get_model("deepseek-v3"))
    assert architecture(r1) == architecture(v3)
    assert architecture(r1) != architecture(shape_from_arch(get_model("llama-3.1-70b")))
