"""MLPerf Inference LLM workloads as presets: model, sequence lengths, decoding, latency limits.

Facts copied from the project's reference notes on the MLPerf rules (benchmarks_reference.md §1-2,
which cite the MLPerf Inference rules v4.1/v5.1 (IR41/IR51) and the LoadGen ``mlperf.conf`` files
(CONF41/CONF511)). Latency limits apply to the 99th percentile (``target_latency_percentile = 99``).

MEAN INPUT LENGTHS ARE NOT PUBLISHED (the reference notes searched the rules, READMEs and issues and
found only maxima). The values below are our estimates, marked ``input_tokens_source =
"estimate"``: OpenOrca GPT-4 prompts (system prompt + question) for Llama 2 70B; CNN-DailyMail
articles truncated to the model window for GPT-J and Llama 3.1 8B; the mixed OpenOrca/GSM8K/MBXP
set for Mixtral. For Llama 2 70B the estimate is bounded by physics: the best v4.1 8xH200 Offline
result (34,864 tokens/s) would need more than the fp8 dense peak at a mean input above ~390
tokens, so the OpenOrca mean must lie below that; we take 300. Mean output lengths are the reference ``tokens_per_sample`` (a row's own
``mean_output_tokens_reported`` is used when it has one).
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "MLPerf Inference rules v4.1/v5.1 and mlperf.conf via benchmarks_reference.md (retrieved 2026-08-01)"


@dataclass(frozen=True)
class MLPerfLLM:
    workload: str
    model: str  # model library id
    mean_input_tokens: float
    input_tokens_source: str
    mean_output_tokens: float
    max_input_tokens: int
    ttft_limit_s: float | None  # Server p99
    tpot_limit_s: float | None  # Server p99
    interactive_ttft_limit_s: float | None
    interactive_tpot_limit_s: float | None
    e2e_limit_s: float | None = None  # GPT-J: 20 s end-to-end
    beam_width: int = 1
    tokens_per_sample_metric: float | None = None  # GPT-J LoadGen infers tokens = 69 x samples


PRESETS: dict[str, MLPerfLLM] = {
    p.workload: p
    for p in (
        MLPerfLLM("mlperf-inf/llama2-70b", "llama2-70b", 300.0, "estimate", 294.45, 1024, 2.0, 0.2, 0.45, 0.04),
        MLPerfLLM("mlperf-inf/llama3.1-405b", "llama3.1-405b", 9400.0, "estimate", 684.68, 20000, 6.0, 0.175,
                  4.5, 0.08),
        MLPerfLLM("mlperf-inf/llama3.1-8b", "llama3.1-8b", 780.0, "estimate", 129.0, 2048, 2.0, 0.1, 0.5, 0.03),
        MLPerfLLM("mlperf-inf/mixtral-8x7b", "mixtral-8x7b", 600.0, "estimate", 144.84, 2048, 2.0, 0.2,
                  None, None),
        MLPerfLLM("mlperf-inf/gptj-6b", "gptj-6b", 780.0, "estimate", 69.0, 2048, None, None, None, None,
                  e2e_limit_s=20.0, beam_width=4, tokens_per_sample_metric=69.0),
    )
}


def preset(workload: str) -> MLPerfLLM | None:
    return PRESETS.get(workload)
