"""Golden tests of the non-LLM model against published figures (citations inline)."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.nonllm.work import sample_work
from infrafit.perf.validate.nonllm import predict
from infrafit.workload.models import resolve_model


class Ctx:
    catalog = load_catalog()

    @staticmethod
    def resolve_model(name):
        return resolve_model(name)


def test_resnet50_forward_is_4_1_gmacs():
    # He et al. 2016, table 1: ResNet-50 3.8e9 FLOPs (multiply-adds) ; torchvision lists 4.09 GFLOPS (MACs)
    work = sample_work(resolve_model("resnet50"), "int8")
    assert work.flops / 2 == pytest.approx(4.1e9, rel=0.03)


def test_bert_large_at_384_tokens_is_247_gops():
    # OpenVINO Open Model Zoo bert-large-uncased-whole-word-masking-squad-int8-0001: "GOps 246.93" at 384
    work = sample_work(resolve_model("bert-large"), "int8", seq_len=384)
    assert work.flops == pytest.approx(246.93e9, rel=0.02)


ROW = {"task": "inference", "accelerator_count": "8", "precision": "int8"}


@pytest.mark.parametrize("workload,scenario,metric,acc,measured", [
    # MLCommons Inference v4.1 closed, NVIDIA DGX H100 (8x H100-SXM-80GB, TensorRT): calibration rows 523, 542
    ("mlperf-inf/resnet50", "offline", "samples_per_s", "nvidia_h100_sxm", 710521.0),
    ("mlperf-inf/resnet50", "server", "queries_per_s", "nvidia_h100_sxm", 634193.0),
    # same system, bert-99: rows 509, 510
    ("mlperf-inf/bert-large", "offline", "samples_per_s", "nvidia_h100_sxm", 72876.0),
    ("mlperf-inf/bert-large", "server", "queries_per_s", "nvidia_h100_sxm", 58928.5),
])
def test_published_mlperf_throughput_within_25_percent(workload, scenario, metric, acc, measured):
    row = ROW | {"workload": workload, "scenario": scenario, "metric_kind": metric, "accelerator_id": acc}
    assert predict(row, Ctx()) == pytest.approx(measured, rel=0.25)
