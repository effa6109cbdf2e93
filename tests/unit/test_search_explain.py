"""search.explain: the training-step line names which peak its MFU is counted against."""

from __future__ import annotations

from infrafit.search.explain import roofline_line


def test_fp8_mfu_says_it_is_against_the_bf16_peak():
    # 91% of the bf16 peak is 45% of the fp8 peak: a bare 'MFU 91%' reads as physically implausible
    line = roofline_line({"compute_share": 0.9, "traffic_share": 0.1, "mfu_fraction": 0.91, "peak_fraction": 0.45})
    assert "MFU 91% of the dense bf16 peak (45% of the peak at its own precision)" in line


def test_bf16_mfu_stays_short():
    line = roofline_line({"compute_share": 0.9, "mfu_fraction": 0.52, "peak_fraction": 0.52})
    assert line.endswith("; MFU 52%")
