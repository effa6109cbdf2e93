"""MLPerf Inference (datacenter) presets for the non-LLM benchmarks: ResNet-50, BERT-Large, SDXL.

Facts copied from the MLPerf rules and configs (as summarised with sources in the project's
benchmark reference, section 2):

* resnet50: ResNet-50 v1.5, ImageNet 224x224x3; Server p99 bound 15 ms
  (inference_rules.adoc @c58dbd6 "IR41"; mlperf.conf v4.1 ``resnet50.Server.target_latency = 15``).
* bert-large (bert-99, bert-99.9): BERT-Large 24 x 1024, SQuAD v1.1, max_seq_len 384; Server p99
  bound 130 ms (IR41; mlperf.conf v4.1 ``bert.Server.target_latency = 130``). Tokenisation is outside
  the timed path (INF ``language/bert/README.md``). Submitters remove padding, so the work is the
  real tokens: padding is 54% of the tokens of SQuAD v1.1 at max length 384 ("Removing padding in
  BERT", OpenReview id 3nzKUh9a4M), i.e. a mean of 0.46 x 384 = 177 tokens per sample.
* sdxl: Stable Diffusion XL 1.0 base, EulerDiscreteScheduler, 20 steps, guidance 8 with
  classifier-free guidance (two UNet passes per step), 1024x1024 output; Server p99 bound 20 s
  (IR41/IR51; mlperf.conf v4.1 ``stable-diffusion-xl.Server.target_latency = 20000``;
  INF ``text_to_image/backend_pytorch.py``).

Scenarios: Offline = maximum throughput; Server = Poisson arrivals, the highest rate whose p99
latency meets the bound (mlperf.conf ``*.Server.target_latency_percentile = 99``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SQUAD_V11_PADDING_FRACTION_AT_384 = 0.54


@dataclass(frozen=True)
class MLPerfPreset:
    workload: str
    model_id: str
    server_latency_p99_s: float
    shape: dict = field(default_factory=dict)
    source: str = ""


PRESETS: dict[str, MLPerfPreset] = {
    "mlperf-inf/resnet50": MLPerfPreset(
        "mlperf-inf/resnet50", "resnet50", 0.015, {},
        "IR41; mlperf.conf v4.1 resnet50.Server.target_latency = 15 (ms)"),
    "mlperf-inf/bert-large": MLPerfPreset(
        "mlperf-inf/bert-large", "bert-large", 0.130,
        {"seq_len": round(384 * (1.0 - SQUAD_V11_PADDING_FRACTION_AT_384))},
        "IR41; mlperf.conf v4.1 bert.Server.target_latency = 130 (ms); max_seq_len 384; "
        "54% padding (OpenReview 3nzKUh9a4M)"),
    "mlperf-inf/sdxl": MLPerfPreset(
        "mlperf-inf/sdxl", "sdxl", 20.0, {"steps": 20, "guidance_passes": 2},
        "IR41/IR51; mlperf.conf v4.1 stable-diffusion-xl.Server.target_latency = 20000 (ms); 20 steps, CFG"),
}

SCENARIOS = ("offline", "server")
