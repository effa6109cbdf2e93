"""MLPerf Training benchmark presets: models, sequence lengths, convergence points, timed overheads.

Facts copied from the project's reference notes on MLPerf (benchmarks_reference.md sections 3-5),
which cite: MLCommons training_rules.adoc (TR40/TR51), the reference implementations
(github.com/mlcommons/training @aa344c7f) and the reference convergence points (RCP;
github.com/mlcommons/logging @7bbf7926 ``mlperf_logging/rcp_checker/training_*/rcps_*.json``).
RCP values are the olympic means (drop the lowest and highest run) per global batch size.
The v5.0/v5.1 benchmarks (llama3.1-405b, llama3.1-8b, flux1) follow TR51 (training_policies
@d4c2f58b, 2025-09-23) and the TRN READMEs ``large_language_model_pretraining/nemo``,
``small_llm_pretraining/nemo`` and ``text_to_image``; their RCP unit is samples (``metadata.samples_count``).

Time to train (a planner's decomposition of the rules' timed region):
``on-clock start-up + steps x step time + evaluations x eval time``, steps = samples to converge at
the submission's global batch size (RCP, interpolated) / GBS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from infrafit.perf.training.shape import TrainShape

#: ImageNet-1k (ILSVRC-2012) has 1,281,167 training and 50,000 validation images
#: (Russakovsky et al. 2015, IJCV, Table 2).
IMAGENET_TRAIN_IMAGES = 1_281_167
IMAGENET_VAL_IMAGES = 50_000


@dataclass(frozen=True)
class MlperfBenchmark:
    """One MLPerf Training benchmark as the time-to-train model needs it."""

    name: str
    model: str  # model-library id, or a preset below
    seq_len: int  # tokens per sample (transformers); 0 for images
    method: str  # full | lora
    lora_rank: int
    rcp_unit: str  # samples | tokens | epochs
    rcp: tuple[tuple[int, float], ...]  # (global batch, olympic mean of the unit to converge)
    eval_every_samples: str  # how often evaluation runs (a formula of GBS, in samples), "" = untimed
    eval_samples: float  # samples per evaluation (forward only); 0 = not on the clock / unknown
    eval_skip: str = "0"  # evaluations skipped at the start (a formula of GBS)
    notes: str = ""
    max_global_batch: int = 0  # largest GBS the round's rules allow; 0 = no cap
    converge_early_samples: float = 0.0  # RCP units a run may converge before the RCP mean (round's rules)


#: SD v2 UNet (865M params) forward FLOPs per training sample at 64x64x4 latents: onnx-tool
#: (github.com/ThanatosShinji/onnx-tool README, "UNet2DCondition" 888,870 M MACs for the SD 1.4
#: UNet export, which runs the classifier-free-guidance batch of 2) -> 444.4 GMACs = 0.889 TFLOPs per
#: image; SD v2's UNet has the same channel layout at 64x64 latents. The frozen OpenCLIP-ViT/H text
#: encoder (354M params x 77 tokens x 2 = 54.5 GFLOPs) runs forward only; MLPerf's dataset already
#: holds the VAE latents ("moments"), so the VAE encoder is not on the clock.
SD2_UNET_FLOPS_FWD = 888.870e9
SD2_TEXT_ENCODER_FLOPS_FWD = 2.0 * 354e6 * 77
SD2_UNET_PARAMS = 865e6

SD2_SHAPE = TrainShape(
    name="stable-diffusion-v2-unet", kind="diffusion",
    # text encoder forward counted as 1/3 of a training pass so that 3 x fwd covers it once.
    flops_per_sample_fwd=SD2_UNET_FLOPS_FWD + SD2_TEXT_ENCODER_FLOPS_FWD / 3.0,
    params_total_override=SD2_UNET_PARAMS, params_active_override=SD2_UNET_PARAMS,
    source="TRN stable_diffusion README (SD v2 UNet from random init, frozen VAE and OpenCLIP-ViT/H); "
           "onnx-tool README UNet2DCondition MACs",
)


#: FLUX.1 schnell MMDiT (MLPerf flux1; TRN text_to_image/README.md): 19 double-stream + 38 single-stream
#: blocks, hidden 3072, 24 heads of 128, MLP ratio 4 (GELU, two matrices). Every token meets 12 h^2 matmul
#: weights per block (double block: its own stream's qkv 3h^2 + proj h^2 + MLP 8h^2; single block: linear1
#: 7h^2 + linear2 5h^2), so per token it is a 57-layer non-causal transformer; the second stream's weights
#: and the per-image adaLN modulation make the parameter total 11.89B (counted from the config; the model
#: library's ``flux1-schnell`` transformer component, which also holds the forward FLOPs 6.807e12 per image
#: at 256x256; embedders and modulation, 0.2% of them, are left out here). A 256x256 image is a 32x32x16
#: latent in 2x2 patches = 256 image tokens, joined with 256 T5 tokens: 512 tokens per sample.
#: Timed work is the transformer only: the TRN README lets the frozen T5-XXL, CLIP and VAE run offline
#: ("preprocessed embeddings"), as MLPerf's stable-diffusion dataset already holds the VAE latents.
FLUX1_TOKENS_PER_SAMPLE = 256 + 256
FLUX1_TRANSFORMER_PARAMS = 11_891_178_560

FLUX1_SHAPE = TrainShape(
    # "vit": a bidirectional transformer over patch tokens (full attention, GEMM op class), which is what
    # the MMDiT executes; the UNet "diffusion" op class (convolutions) does not describe it.
    name="flux1-schnell-mmdit", kind="vit", layers=19 + 38, hidden=3072, heads=24, kv_heads=24, head_dim=128,
    ffn=4 * 3072, vocab=0, gated_mlp=False,
    params_total_override=FLUX1_TRANSFORMER_PARAMS, params_active_override=FLUX1_TRANSFORMER_PARAMS,
    source="TRN text_to_image/README.md (FLUX.1 schnell config, encoders offline); black-forest-labs/flux "
           "flux-schnell config",
)

#: Benchmark models that are presets here rather than model-library entries.
PRESET_SHAPES: dict[str, TrainShape] = {"stable-diffusion-v2": SD2_SHAPE, "flux1-schnell": FLUX1_SHAPE}


def resnet50_activation_elements() -> float:
    """Output elements of every convolution of ResNet-50 v1.5 at 224x224 (He et al. 2016, Table 1;
    v1.5 puts the stride on the 3x3 conv). Element-wise BN/ReLU traffic scales with this.

    Stem: 112^2 x 64 and max-pool 56^2 x 64; each stage (blocks, width, out size, in size) sums
    1x1 (width), 3x3 (width), 1x1 (4 width) outputs, plus the projection shortcut of block one.
    """
    total = 112 * 112 * 64 + 56 * 56 * 64
    in_size = 56
    for blocks, width, size in ((3, 64, 56), (4, 128, 28), (6, 256, 14), (3, 512, 7)):
        first = in_size * in_size * width + size * size * width + 2 * size * size * 4 * width
        rest = (blocks - 1) * (2 * size * size * width + size * size * 4 * width)
        total += first + rest
        in_size = size
    return float(total)


RESNET50_ACTIVATION_ELEMENTS = resnet50_activation_elements()

BENCHMARKS: dict[str, MlperfBenchmark] = {
    "gpt3-175b": MlperfBenchmark(
        "gpt3-175b", "gpt3-175b", 2048, "full", 0, "tokens",
        # training_4.1.0 RCPs (a superset of 3.1.0/4.0.0, same values at shared batch sizes)
        ((1536, 1.19538e9), (2048, 1.17776e9), (3072, 1.21803e9), (4096, 1.25829e9), (6144, 1.40929e9),
         (8192, 1.6232e9)),
        "ceil(24576 / gbs) * gbs", 24_567,
        notes="resumes from a checkpoint (4,000 iterations at GBS 1,536); eval on 24,567 sequences",
    ),
    # max_seq_length is 512, but padding is over 50% of the Wikipedia sequences at 512 (Krell et al.
    # 2021, arXiv:2107.02027, abstract) and submissions pack or unpad them: 256 real tokens per sample.
    "bert-large": MlperfBenchmark(
        "bert-large", "bert-large", 256, "full", 0, "samples",
        ((256, 2.54922e6), (448, 2.41442e6), (1536, 2.77628e6), (3072, 2.7645e6), (4096, 2.84399e6),
         (4608, 2.79808e6), (6144, 3.31913e6), (6912, 3.60192e6), (8192, 4.18611e6), (8704, 4.27371e6),
         (12288, 4.46507e6), (13056, 4.64533e6), (16384, 5.50542e6)),
        "floor(0.05 * (230.23 * gbs + 3000000) / 25000) * 25000", 10_000,
        notes="starts from checkpoint model.ckpt-28252; max_seq_length 512; eval on 10,000 samples",
    ),
    "resnet50": MlperfBenchmark(
        "resnet50", "resnet50", 0, "full", 0, "epochs",
        ((1632, 35.0), (3264, 35.1538), (4096, 39.875), (8192, 41.875), (13056, 45.5), (32768, 56.0),
         (49152, 68.0), (58880, 80.0), (65536, 84.5), (67840, 85.8462)),
        f"4 * {IMAGENET_TRAIN_IMAGES}", IMAGENET_VAL_IMAGES,
        notes="evaluation every 4 epochs on the 50,000 ImageNet validation images",
    ),
    "stable-diffusion": MlperfBenchmark(
        "stable-diffusion", "stable-diffusion-v2", 0, "full", 0, "samples",
        ((256, 2.048e6), (384, 2.56128e6), (512, 2.56e6), (1024, 2.83927e6), (2048, 4.00291e6)),
        "", 0.0, notes="evaluation offline, not timed (TR40); RCPs of training_4.1.0",
    ),
    "llama2-70b-lora": MlperfBenchmark(
        "llama2-70b-lora", "llama2-70b", 8192, "lora", 16, "samples",
        ((8, 3178.67), (16, 4032.0), (32, 6037.33), (128, 11264.0)),
        "384", 173.0, "floor(0.125 * gbs + 2)",
        notes="LoRA r=16 on qkv and o; eval every 384 sequences on the 173 validation sequences of "
              "regisss/scrolls_gov_report_preprocessed_mlperf_2 @21ff1233 (the revision MLPerf LoRA "
              "implementations pin in their dataset download; Hugging Face viewer: validation 173 rows)",
    ),
    # TR51 + TRN large_language_model_pretraining/nemo README: Llama 3.1 405B (MLPerf trains it with the
    # Mixtral 32,000-token vocabulary; the library's 128,256 adds 0.4% LM-head FLOPs), 8,192-token
    # sequences, continued from a checkpoint, eval on the first 5,760 C4 validation sequences every
    # 18,432 sequences after FLOOR(0.0026 GBS + 12) skipped evaluations (the v5.1 rule; v5.0 evaluated
    # every 46,080; see EARLIER_ROUNDS). RCPs: training_5.1.0 where it has the batch size, training_5.0.0
    # for 1008/6912/9216.
    "llama3.1-405b": MlperfBenchmark(
        "llama3.1-405b", "llama3.1-405b", 8192, "full", 0, "samples",
        ((1008, 324_576.0), (1152, 313_344.0), (2304, 368_640.0), (4608, 493_056.0), (6912, 604_800.0),
         (9216, 691_200.0)),
        "18432", 5_760, "floor(0.0026 * gbs + 12)",
        notes="continued pre-training from a checkpoint; log perplexity 5.6; GBS 1152 -> LR 8e-5",
    ),
    # TR51 + TRN small_llm_pretraining/nemo README: Llama 3.1 8B from scratch on C4, 8,192-token
    # sequences, eval on the first 1,024 validation sequences every CEIL(12288 / GBS) x GBS sequences.
    "llama3.1-8b": MlperfBenchmark(
        "llama3.1-8b", "llama3.1-8b", 8192, "full", 0, "samples",
        ((16, 161_109.0), (32, 178_859.0), (64, 226_645.0), (96, 278_640.0), (128, 344_747.0)),
        "ceil(12288 / gbs) * gbs", 1_024,
        notes="log perplexity 3.3; RCPs of training_5.1.0",
    ),
    # TR51 + TRN text_to_image README: FLUX.1 schnell from scratch on 1,099,776 CC12M images at 256x256;
    # validation loss 0.586 averaged over 8 timesteps on 29,696 COCO-2014 images every 262,144 samples.
    # Read as every validation image evaluated at each of the 8 timesteps: 8 x 29,696 forward passes.
    "flux1": MlperfBenchmark(
        "flux1", "flux1-schnell", FLUX1_TOKENS_PER_SAMPLE, "full", 0, "samples",
        ((512, 8.17015e6), (1024, 8.7527e6), (2048, 1.07333e7), (4096, 1.56267e7)),
        "262144", 8 * 29_696,
        notes="transformer only on the clock (encoders offline); RCPs of training_5.1.0",
    ),
}


#: Rules of earlier rounds where a benchmark's rules changed, keyed by benchmark and by the first round
#: they applied to (the preset in ``BENCHMARKS`` is the latest round's). A row of round R uses the rules of
#: the latest round here not after R; a row of a later round, or with no round, uses ``BENCHMARKS``.
#: llama3.1-405b in v5.0 (TR50 @7e298673 and TR51's v5.0 appendix, per the reference notes): evaluation
#: every 46,080 sequences with none skipped, GBS capped at 9,216, and a run may converge one evaluation
#: (46,080 samples) before the RCP mean; the submissions were checked against the training_5.0.0 RCPs
#: (olympic means; github.com/mlcommons/logging @7bbf7926 ``rcp_checker/training_5.0.0/rcps_llama31_405b.json``).
EARLIER_ROUNDS: dict[str, tuple[tuple[tuple[int, int], MlperfBenchmark], ...]] = {
    "llama3.1-405b": (
        ((5, 0), replace(
            BENCHMARKS["llama3.1-405b"],
            rcp=((1008, 324_576.0), (1152, 322_560.0), (2304, 380_160.0), (4608, 495_360.0), (6912, 604_800.0),
                 (9216, 691_200.0)),
            eval_every_samples="46080", eval_skip="0", max_global_batch=9216, converge_early_samples=46_080.0,
            notes="v5.0 rules: eval every 46,080 sequences, GBS <= 9,216, converge one eval before the RCP; "
                  "RCPs of training_5.0.0",
        )),
        # v5.1 and later: the preset in BENCHMARKS (eval every 18,432 after FLOOR(0.0026 GBS + 12) skipped)
        ((5, 1), BENCHMARKS["llama3.1-405b"]),
    ),
}


def parse_round(text: str) -> tuple[int, int] | None:
    """``"v5.0"`` (or ``"5.0"``) -> (5, 0); None when empty or not of that form."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)", (text or "").strip().lower())
    return (int(m.group(1)), int(m.group(2))) if m else None


def rules_for_round(bench: MlperfBenchmark, round_: str = "") -> MlperfBenchmark:
    """The preset under the rules of MLPerf round ``round_`` (``"v5.0"``); the latest rules when the
    round is empty, unparsable, or later than every round in ``EARLIER_ROUNDS``. A round before the
    benchmark's first known round gets its first rules."""
    variants = EARLIER_ROUNDS.get(bench.name)
    rnd = parse_round(round_)
    if not variants or rnd is None:
        return bench
    chosen = variants[0][1]
    for since, rules in variants:
        if since <= rnd:
            chosen = rules
    return chosen


def benchmark_for_workload(workload: str, round_: str = "") -> MlperfBenchmark | None:
    """``mlperf-train/<name>`` -> its preset under round ``round_``'s rules; None for any other workload."""
    prefix = "mlperf-train/"
    if not workload.startswith(prefix):
        return None
    bench = BENCHMARKS.get(workload[len(prefix):])
    return rules_for_round(bench, round_) if bench is not None else None


def _eval_formula(expr: str, gbs: float) -> float:
    """Evaluate one of the rules' small arithmetic formulas of ``gbs`` (trusted constants above)."""
    return float(eval(expr, {"__builtins__": {}}, {"gbs": gbs, "ceil": np.ceil, "floor": np.floor}))  # noqa: S307


def samples_to_converge(bench: MlperfBenchmark, global_batch: float) -> float:
    """Training samples to reach the target at ``global_batch``: RCP olympic means, linear in GBS
    between reference batch sizes, held flat below the smallest and extended linearly above the
    largest (the RCP checker interpolates between neighbours the same way), less the samples the
    round's rules let a run converge early (``converge_early_samples``; v5.0 llama3.1-405b)."""
    bs = np.array([b for b, _ in bench.rcp], dtype=float)
    vals = np.array([v for _, v in bench.rcp], dtype=float)
    if global_batch > bs[-1]:
        slope = (vals[-1] - vals[-2]) / (bs[-1] - bs[-2])
        v = vals[-1] + slope * (global_batch - bs[-1])
    else:
        v = float(np.interp(global_batch, bs, vals))
    v -= bench.converge_early_samples
    if bench.rcp_unit == "tokens":
        return v / bench.seq_len
    if bench.rcp_unit == "epochs":
        return v * IMAGENET_TRAIN_IMAGES
    return v


def evaluations(bench: MlperfBenchmark, samples: float, global_batch: float) -> float:
    """Timed evaluations during ``samples`` of training (0 when evaluation is offline)."""
    if not bench.eval_every_samples or bench.eval_samples <= 0:
        return 0.0
    every = max(_eval_formula(bench.eval_every_samples, global_batch), global_batch)
    skip = _eval_formula(bench.eval_skip, global_batch)
    return max(np.floor(samples / every) - skip, 1.0)
