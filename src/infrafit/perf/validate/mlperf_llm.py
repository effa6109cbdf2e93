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
tokens, so the OpenOrca mean must lie below that; we take 300. Mean output lengths are the reference
``tokens_per_sample`` (a row's own ``mean_output_tokens_reported`` is used when it has one).

DeepSeek-R1 (MLPerf Inference v5.1; benchmarks_reference.md §2 summary table):

- model DeepSeek-R1, 671B total / 37B active (DSBLOG), MLA, 256 routed experts top-8 + 1 shared, first
  3 layers dense (AIC config; the model library's ``deepseek-r1``); greedy decoding (IR51 FAQ);
- dataset ``mlperf_deepseek_r1``: AIME, MATH500, GPQA, MMLU-Pro, LiveCodeBench, 4,388 samples (IR51);
- max input 3136 tokens (IR51 ingress; NVBW); max output 32768 new tokens (IR51);
- mean output 3736 tokens per sample, **derived** from LG51 8xB200 Offline 33,379 tok/s / 8.93431
  samples/s (the notes' v5.1 rows report TOKENS_PER_SAMPLE 3713-3769, median 3737.8);
- Server p99 TTFT 2000 ms, TPOT 80 ms (CONF511, IR51); no Interactive scenario in v5.1.

Its mean input (``estimate``, not published): the ensemble is dominated by short prompts -- one
competition-math problem (AIME, MATH500: tens to ~200 tokens of LaTeX), multiple-choice questions with
4 (GPQA) or 10 (MMLU-Pro) options (~150-400 tokens) -- plus LiveCodeBench problem statements with
examples, constraints and format instructions (~400-1000 tokens), which set the 3136 maximum. The
per-source sample counts are not in the notes; wrapped in the chat template, the weighted mean lies
at roughly 300-700 tokens depending on that mix, so we take 500, well under the 3136 maximum. With
~3736 output tokens per sample the prefill is a small share of the work, but the searched layouts are
TP-only, which replicate the MLA cache on every chip, so the 8xB200 Offline prediction is bound by KV
capacity: since the weights are counted at their real widths (NVFP4 block scales, bf16 embedding and
LM head: 380 GB, 47.5 GB a chip at TP8) 250 instead of 500 moves it +2.8% and 1000 moves it -16%
(tests/unit/test_perf_llm_mlperf.py checks that the mean stays under the maximum and bounds the
sensitivity at 20%). Searching the wide-EP layout (attention data-parallel) as well removes the KV bound
but predicts 76.6k tokens/s against the measured 33.4k, so it is not searched until that layout's costs
are validated on rows that state it.

Workload names with an ``-interactive`` suffix (LoadGen's ``<model>-interactive.Server`` spelling in
CONF511) resolve to the base preset and the Interactive limits (``split_workload``).
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
    # the longest output a request may generate (GPT-J: max_new_tokens 128, IR41): the end-to-end p99 is that
    # of the long requests, so the limit is checked at this length (an upper bound of the p99 length)
    max_output_tokens: float | None = None
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
        MLPerfLLM("mlperf-inf/deepseek-r1", "deepseek-r1", 500.0, "estimate", 3736.0, 3136, 2.0, 0.08,
                  None, None),
        MLPerfLLM("mlperf-inf/gptj-6b", "gptj-6b", 780.0, "estimate", 69.0, 2048, None, None, None, None,
                  e2e_limit_s=20.0, beam_width=4, tokens_per_sample_metric=69.0, max_output_tokens=128.0),
    )
}


INTERACTIVE_SUFFIX = "-interactive"


def split_workload(workload: str) -> tuple[str, bool]:
    """``(base workload, interactive?)``: ``mlperf-inf/llama2-70b-interactive`` -> the llama2-70b preset
    under its Interactive limits (CONF511 names the scenario ``<model>-interactive.Server``)."""
    w = workload.strip().lower()
    if w.endswith(INTERACTIVE_SUFFIX) and w.removesuffix(INTERACTIVE_SUFFIX) in PRESETS:
        return w.removesuffix(INTERACTIVE_SUFFIX), True
    return w, False


def preset(workload: str) -> MLPerfLLM | None:
    """The preset of an MLPerf LLM workload (an ``-interactive`` suffix resolves to its base), else None."""
    return PRESETS.get(split_workload(workload)[0])
