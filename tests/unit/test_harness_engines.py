"""A harness that runs several independent engines on one chip is modelled as it ran (issue 15 defect 10).

Intel's MLPerf v4.1 GPT-J CPU harness (mlcommons/inference_results_v4.1 closed/Intel/code/gptj-99/pytorch-cpu)
runs one process per NUMA node and, in Offline, 4 workers a process with 12 (+1) requests each; in Server one
worker a process with 4. Each worker holds its own model on its own cores. On a 2-socket Emerald Rapids
system that is 16 engines of at most 13 requests (8 a socket) against 4 engines of at most 4 (2 a socket).
Each engine gets its share of the socket's compute, bandwidth and memory."""

from __future__ import annotations

import dataclasses

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.types import ValidateContext
from infrafit.perf.validate import llm as rows_llm


def test_an_engine_gets_its_share_of_the_chip():
    xeon = load_catalog().accelerator("intel_xeon_8592plus")
    part = rows_llm.engine_part(xeon, 8)
    assert part.memory_bytes_per_s == pytest.approx(xeon.memory_bytes_per_s / 8)
    assert part.memory_bytes == pytest.approx(xeon.memory_bytes / 8)
    assert part.peak("int8") == pytest.approx(xeon.peak("int8") / 8)
    assert rows_llm.engine_part(xeon, 1) is xeon


def test_the_harness_engines_and_their_request_caps_are_the_layout_predicted(calibration_rows):
    ctx = ValidateContext(load_catalog(), None)
    offline, server = (rows_llm.prepare(calibration_rows[k], ctx) for k in ("285", "286"))
    assert calibration_rows["286"]["engines_per_chip"] == "2" and calibration_rows["286"]["max_num_seqs"] == "4"
    assert (server.count, server.layouts, server.max_seqs) == (4, ((1, 1, 1, 1),), 4.0)
    assert (offline.count, offline.max_seqs) == (16, 13.0)
    uncapped = dataclasses.replace(offline, max_seqs=None)
    off, free = rows_llm.predict_cases([offline, uncapped])
    assert off < free  # Offline's 13 requests an engine bind: more in flight would run faster
