"""A run at another board power than the catalog's sustains another clock (calibration column ``power_limit_w``).

NVIDIA's MLPerf Inference v4.1 H200 "CTS" systems run at a 1,000 W TGP (their system descriptions'
``hw_notes``), the air-cooled H200 systems at 700 W, the catalog value. Compute-bound work scales with the
clock that power sustains (``power^(1/3)``); HBM bandwidth does not move."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.types import ValidateContext
from infrafit.perf.validate import llm as rows_llm
from infrafit.perf.validate.run import screen_row


def test_compute_peaks_scale_with_the_cube_root_of_power_and_bandwidth_does_not():
    h200 = load_catalog().accelerator("nvidia_h200_sxm")
    assert h200.tdp_w == 700
    cts = rows_llm.power_limited(h200, 1000.0)
    factor = (1000.0 / 700.0) ** (1.0 / 3.0)
    for precision in ("bf16", "fp8"):
        assert cts.peak(precision) == pytest.approx(h200.peak(precision) * factor)
    assert cts.memory_bytes_per_s == h200.memory_bytes_per_s and cts.memory_bytes == h200.memory_bytes
    assert cts.tdp_w == 1000.0 and cts.id == h200.id  # the same chip: a held-out accelerator stays one group
    capped = rows_llm.power_limited(h200, 350.0)
    assert capped.peak("fp8") == pytest.approx(h200.peak("fp8") * 0.5 ** (1.0 / 3.0))


def test_no_stated_power_or_the_catalog_power_leaves_the_chip_alone():
    h200 = load_catalog().accelerator("nvidia_h200_sxm")
    assert rows_llm.power_limited(h200, None) is h200
    assert rows_llm.power_limited(h200, 700.0) is h200


def test_the_1000_w_h200_system_is_predicted_faster_by_the_power_factor_only(calibration_rows):
    cts_row, air_row = calibration_rows["369"], calibration_rows["385"]
    assert cts_row["power_limit_w"] == "1000" and air_row["power_limit_w"] == ""
    assert "H200 TGP 1000W" in cts_row["accelerator_mapping_note"]
    ctx = ValidateContext(load_catalog(), None)
    cts, air = rows_llm.prepare(cts_row, ctx), rows_llm.prepare(air_row, ctx)
    assert cts.acc.peak("fp8") / air.acc.peak("fp8") == pytest.approx((1000 / 700) ** (1 / 3))
    fast, slow = rows_llm.predict_cases([cts, air])
    measured = float(cts_row["metric_value"]) / float(air_row["metric_value"])  # 34,864 / 31,303 = 1.114
    # Offline at full batch is compute-bound: nearly the whole clock factor shows, as it did in the measurement
    assert 1.05 < fast / slow <= (1000 / 700) ** (1 / 3) + 1e-9
    assert fast / slow == pytest.approx(measured, rel=0.05)


@pytest.mark.parametrize("value", ["-5", "0", "abc", "1e6", "nan"])
def test_validate_refuses_a_power_that_is_not_a_board_power(value):
    row = {"row_id": "r1", "metric_value": "1.0", "power_limit_w": value, "_csv_line": "7"}
    reason = screen_row(row)
    assert reason is not None and "power_limit_w" in reason and "CSV line 7" in reason


def test_validate_accepts_a_board_power():
    assert screen_row({"row_id": "r1", "metric_value": "1.0", "power_limit_w": "1000"}) is None


def test_a_stated_power_on_a_chip_without_a_published_power_is_skipped_with_the_reason(calibration_rows):
    """Every column acts or is refused: the clock scaling needs the chip's own board power."""
    from infrafit.perf.types import SkipRow

    row = dict(calibration_rows["369"], accelerator_id="aws_trainium2")
    assert not load_catalog().accelerator("aws_trainium2").tdp_w > 0
    with pytest.raises(SkipRow, match="power_limit_w 1000 is stated but the catalog has no tdp_w"):
        rows_llm.prepare(row, ValidateContext(load_catalog(), None))
    row["power_limit_w"] = ""
    try:  # without the power the row is prepared, or skipped for another reason
        rows_llm.prepare(row, ValidateContext(load_catalog(), None))
    except SkipRow as exc:
        assert "power_limit_w" not in exc.reason
