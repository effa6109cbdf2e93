"""Training and fine-tuning estimates: step time, throughput, MFU, time to train, memory, checkpoints.

The core works on plain numbers (a ``TrainShape``, a ``Chip``, counts, batch and sequence length):
``train_run`` picks the fastest fitting layout (``training_layout.search``) and derives throughput,
MFU and time to train. ``estimate_training(workload, config, catalog)`` is the thin adapter the
``estimate`` command calls; ``best_layouts`` is what the planner calls.

MFU follows the PaLM definition (Chowdhery et al. 2022, appendix B): model FLOPs per token
``6 N + 6 L H Q T`` x tokens/s / (chips x dense bf16 peak), no recomputation; causal attention is
counted as executed, half the score matrix (MaxText's count since its PR #1988; PaLM's ``12 L H Q T``
counts the full square and is kept only to compare with published MFUs, ``causal=False``), so model
FLOPs never exceed the executed FLOPs and MFU at the executed precision never exceeds the compute
efficiency, itself at most ``COMPUTE_EFFICIENCY_MAX`` (training_profile). ``peak_fraction`` is the
same model FLOP/s over the dense peak of the precision the matmuls run at (equal to MFU in bf16).
Checkpoint save time: the full training state (weights + optimizer, ZeRO sec. 3.1) written by all
nodes in parallel, each at ``CHECKPOINT_WRITE_BYTES_PER_S_PER_NODE`` unless a rate is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from infrafit.errors import InputError
from infrafit.perf.policy import first_native
from infrafit.perf.training.layout import USABLE_MEMORY_FRACTION, Layout, search
from infrafit.perf.training.memory import GRAD_BYTES_PER_PARAM, WEIGHT_BYTES_PER_PARAM
from infrafit.perf.training.profile import TrainingProfile, load_profile
from infrafit.perf.training.shape import TrainShape, from_model_arch
from infrafit.perf.training.step import Chip
from infrafit.perf.types import Config, Estimate, Latency, Memory
from infrafit.units import SECONDS_PER_MINUTE

#: The 8-bit matmul format a stack trains in, by chip kind. GPUs and Gaudi: fp8 (Transformer Engine
#: style mixed fp8 training, Micikevicius et al. 2022 "FP8 Formats for Deep Learning"). TPUs: int8
#: through Accurate Quantized Training (AQT; Lew & Zhang 2023, Google Cloud blog "Accurate Quantized
#: Training (AQT) for accelerated ML training on TPU v5e"), MaxText's ``quantization=int8``; every
#: Google MLPerf Training GPT-3 submission ran it (training_results_v3.1 Google/benchmarks/gpt3/PAX
#: quant_aqt_v2.py; v4.0 and v4.1 maxtext v5p-*.sh and trillium-*.sh: ``quantization=int8``).
QUANTIZED_TRAINING_FORMAT = {"tpu": "int8"}
_DEFAULT_QUANTIZED_FORMAT = "fp8"


def _bf16_peak(acc: Any) -> float:
    return float(acc.peak("bf16") or acc.peak("fp16") or 0.0)


def quantized_training_precision(acc: Any) -> str | None:
    """The chip's 8-bit training format when it runs faster than bf16, else None."""
    fmt = QUANTIZED_TRAINING_FORMAT.get(str(getattr(acc, "kind", "")), _DEFAULT_QUANTIZED_FORMAT)
    return fmt if acc.peak(fmt) > _bf16_peak(acc) else None


#: Formats that store weights but never run a training GEMM: the matmuls run at 16 bits.
STORAGE_ONLY_FORMATS = ("int4",)
#: QLoRA's compute dtypes (bitsandbytes ``bnb_4bit_compute_dtype``; Dettmers et al. 2023 sec. 3).
QLORA_COMPUTE_FORMATS = ("bf16", "fp16", "fp32")


def training_precision(acc: Any, requested: str | None, shape: TrainShape,
                       fastest: bool = False, method: str = "full") -> tuple[str, list[str]]:
    """The precision the matmuls run at, with notes on any fallback.

    With none requested: bf16, except for decoder LLMs on a chip whose 8-bit format is faster than
    bf16: fp8 on GPUs (the default of Transformer Engine recipes) always; int8 (AQT) on TPUs only when
    ``fastest`` (a time-to-train competition, where submitters use it; MaxText's default is bf16).
    QLoRA stores the frozen base in 4-bit NF4 but dequantises it to bf16/fp16 for every GEMM, so its
    matmuls run at the 16-bit peak whatever is requested; int4 is a storage format for any method.
    """
    notes: list[str] = []
    want = requested or "bf16"
    if method == "qlora":
        if want not in QLORA_COMPUTE_FORMATS:
            notes.append(f"QLoRA stores the base weights in 4-bit NF4 and dequantises them to 16 bits before "
                         f"each GEMM: matmuls run at bf16/fp16, not {want}")
            want = "bf16"
        requested = want  # no 8-bit default: the compute dtype is 16-bit
    elif want in STORAGE_ONLY_FORMATS:
        notes.append(f"{want} is a weight-storage format, not a training GEMM precision: matmuls run at bf16")
        want = "bf16"
    if not requested and shape.kind == "decoder":
        q = quantized_training_precision(acc)
        if q and (fastest or q == "fp8"):
            want = q
    p = first_native("training", want, acc)
    if p is None:
        raise InputError(f"{acc.id} has no dense peak for {want} or any fallback precision",
                         fix="choose another accelerator or add its peak to the catalog")
    if p != want:
        notes.append(f"{want} not native on {acc.id}: fell back to {p}")
    return p, notes


@dataclass(frozen=True)
class TrainRun:
    """The best layout and what it achieves."""

    layout: Layout
    precision: str
    count: int
    step_time_s: float
    tokens_per_s: float
    samples_per_s: float
    mfu_fraction: float
    model_flops_per_s_per_chip: float
    time_to_train_s: float | None
    notes: tuple[str, ...] = ()
    alternatives: tuple[Layout, ...] = field(default_factory=tuple)
    peak_fraction: float = 0.0  # model FLOP/s over the dense peak of the executed precision


def model_flops_per_sample(shape: TrainShape, seq_len: int, causal: bool = False) -> float:
    """Model FLOPs of one training sample (no recomputation); ``causal=False``: PaLM's full square."""
    if shape.is_transformer:
        return (seq_len * shape.train_flops_per_token(seq_len, causal=causal and shape.kind == "decoder")
                + 3.0 * shape.encoder_flops_fwd_per_sample)
    return 3.0 * float(shape.flops_per_sample_fwd or 0.0)


def train_run(shape: TrainShape, acc: Any, count: int, *, seq_len: int, global_batch: int,
              method: str = "full", precision: str | None = None, lora_rank: int = 16,
              fixed: dict[str, int] | None = None, total_samples: float | None = None,
              profile: TrainingProfile | None = None, top: int = 5, fastest: bool = False,
              tp_max: int | None = None) -> TrainRun:
    """Search layouts and report the fastest fitting one (raises ``InputError`` when none exists).

    ``fastest``: with no precision given, use the chip's 8-bit training format (as MLPerf submitters do).
    """
    prec, notes = training_precision(acc, precision, shape, fastest, method)
    prof = profile or load_profile()
    how, _eff = prof.resolve_generation(str(acc.generation))
    if how != str(acc.generation):
        notes.append(f"no calibration rows for {acc.generation}: compute efficiency from {how}")
    chip = Chip.from_accelerator(acc, prec)
    layouts = search(shape, chip, count, seq_len, global_batch, method, lora_rank=lora_rank, fixed=fixed, tp_max=tp_max,
                     top=top, profile=prof)
    if not layouts:
        raise InputError(f"no parallel layout splits global batch {global_batch} over {count} chips",
                         fix="use a global batch divisible by the data-parallel degree, or another count")
    best = layouts[0]
    if not best.fits:
        notes.append("no layout fits in memory; the layout with the smallest footprint is shown")
    if not 0 < best.step_time_s < math.inf:
        raise InputError(f"the step-time model gives no finite step on {acc.id} (step {best.step_time_s:g} s)",
                         fix="check the accelerator's peak, memory bandwidth and link columns in accelerators.csv")
    samples_per_s = global_batch / best.step_time_s
    tokens_per_s = samples_per_s * seq_len if shape.is_transformer else 0.0
    model_fps = samples_per_s * model_flops_per_sample(shape, seq_len, causal=True) / count
    if method != "full":  # adapters: the frozen weights get no weight-gradient GEMMs
        model_fps *= 2.0 / 3.0
    bf16_peak = acc.peak("bf16") or acc.peak("fp16") or chip.peak_flops_per_s
    ttt = total_samples / samples_per_s if total_samples else None
    return TrainRun(best, prec, count, best.step_time_s, tokens_per_s, samples_per_s, model_fps / bf16_peak,
                    model_fps, ttt, tuple(notes), tuple(layouts[1:]), model_fps / chip.peak_flops_per_s)


def best_layouts(model: Any, accelerator: Any, count: int, seq_len: int, global_batch: int,
                 method: str = "full", precision: str | None = None, *, lora_rank: int = 16,
                 top: int = 5, profile: TrainingProfile | None = None) -> list[Layout]:
    """The ``top`` layouts (fitting first, then fastest) for a model (``ModelArch`` or ``TrainShape``)."""
    shape = model if isinstance(model, TrainShape) else from_model_arch(model)
    prec, _ = training_precision(accelerator, precision, shape, method=method)
    chip = Chip.from_accelerator(accelerator, prec)
    return search(shape, chip, count, seq_len, global_batch, method, lora_rank=lora_rank, top=top,
                  profile=profile or load_profile())


def checkpoint_save_s(shape: TrainShape, method: str, write_bytes_per_s: float, lora_rank: int = 16) -> float:
    """Seconds to write one checkpoint: weights + fp32 optimizer state (16 B/param for full training;
    the adapters' state only for LoRA) at ``write_bytes_per_s`` aggregate."""
    from infrafit.perf.training.memory import ADAM_STATE_BYTES_PER_PARAM, lora_adapter_params

    if method == "full":
        state = shape.params_total() * (WEIGHT_BYTES_PER_PARAM + ADAM_STATE_BYTES_PER_PARAM)
    else:
        state = lora_adapter_params(shape, lora_rank) * (WEIGHT_BYTES_PER_PARAM + ADAM_STATE_BYTES_PER_PARAM)
    return state / max(write_bytes_per_s, 1.0)


#: Sustained write per node to checkpoint storage when none is given: 2 GB/s, about one PCIe Gen4
#: datacenter NVMe's sequential write (Samsung PM9A3 3.84 TB: 4,000 MB/s read, 2,000 MB/s write, datasheet).
CHECKPOINT_WRITE_BYTES_PER_S_PER_NODE = 2e9
CHIPS_PER_NODE = 8


#: Tokens per optimizer step when the spec gives no global batch (Llama 3 405B trained at 4M-16M
#: tokens per step; Dubey et al. 2024 sec. 3.4).
DEFAULT_TOKENS_PER_STEP = 4_000_000


def default_global_batch(seq_len: int, count: int) -> int:
    """About ``DEFAULT_TOKENS_PER_STEP`` tokens per step, rounded to a multiple of the chip count."""
    seqs = max(1, round(DEFAULT_TOKENS_PER_STEP / max(seq_len, 1)))
    return max(count, (seqs // count) * count) if count else seqs


def checkpointed_time_s(shape: TrainShape, method: str, count: int, time_to_train_s: float,
                        checkpoint_every_minutes: float, lora_rank: int = 16) -> tuple[float, float, float]:
    """``(time to train with checkpoint stalls, one save's seconds, saves)``: a synchronous save every
    ``checkpoint_every_minutes`` at ``CHECKPOINT_WRITE_BYTES_PER_S_PER_NODE`` per node."""
    nodes = -(-count // CHIPS_PER_NODE)
    save_s = checkpoint_save_s(shape, method, nodes * CHECKPOINT_WRITE_BYTES_PER_S_PER_NODE, lora_rank)
    saves = time_to_train_s / max(checkpoint_every_minutes * SECONDS_PER_MINUTE, 1.0)
    return time_to_train_s + saves * save_s, save_s, saves


def estimate_training(workload: Any, config: Config, catalog: Any) -> Estimate:
    """The ``estimate`` command's training / fine-tuning estimate for one configuration."""
    tr = workload.training
    arch = workload.model_arch()
    shape = arch if isinstance(arch, TrainShape) else from_model_arch(arch)
    acc = catalog.accelerator(config.accelerator)
    seq_len = int(tr.seq_len) if shape.is_transformer else 0
    gbs = int(tr.global_batch or default_global_batch(seq_len, config.count))
    fixed = {"tp": config.tp, "pp": config.pp, "ep": config.ep, "cp": config.cp, "dp": config.dp or 0}
    fixed = {k: v for k, v in fixed.items() if v and v > 1}
    run = train_run(shape, acc, config.count, seq_len=seq_len, global_batch=gbs, method=tr.method,
                    precision=config.precision, lora_rank=int(tr.lora_rank or 16), fixed=fixed,
                    total_samples=float(tr.total_samples))
    lay = run.layout
    ttt, ckpt_s, n_ckpt = checkpointed_time_s(shape, tr.method, config.count, run.time_to_train_s or 0.0,
                                              tr.checkpoint_every_minutes, int(tr.lora_rank or 16))
    memory = Memory(per_accelerator_bytes=lay.memory_bytes, capacity_bytes=acc.memory_bytes * USABLE_MEMORY_FRACTION,
                    weights_bytes=lay.weights_bytes, activations_bytes=lay.activations_bytes,
                    optimizer_bytes=lay.optimizer_bytes, gradients_bytes=lay.gradients_bytes)
    shares = lay.shares
    bottleneck = _bottleneck(shares)
    cfg = Config(accelerator=acc.id, count=config.count, precision=run.precision, stack=config.stack,
                 tp=lay.tp, pp=lay.pp, dp=lay.dp, ep=lay.ep, cp=lay.cp)
    throughput = {"training_samples_per_s": run.samples_per_s, "mfu_fraction": run.mfu_fraction,
                  "model_flops_per_s_per_accelerator": run.model_flops_per_s_per_chip}
    if shape.is_transformer:
        throughput["training_tokens_per_s"] = run.tokens_per_s
    breakdown = {"step_time_s": run.step_time_s, "peak_fraction": run.peak_fraction, "global_batch": gbs,
                 "micro_batch": lay.micro_batch,
                 "interleave": lay.vpp, "zero_stage": lay.zero_stage, "recompute": lay.recompute,
                 **shares, "checkpoint_save_s": ckpt_s, "checkpoints": n_ckpt,
                 "gradient_bytes_per_param": GRAD_BYTES_PER_PARAM, "method": tr.method}
    return Estimate(config=cfg, stack=config.stack or "default", fits=lay.fits, memory=memory,
                    throughput=throughput, latency=Latency(), server=None, bottleneck=bottleneck,
                    breakdown=breakdown, time_to_train_s=ttt, notes=run.notes)


def _bottleneck(shares: dict[str, float]) -> str:
    """Name the largest term of the step: compute, hbm_bandwidth, scaleup_link, pipeline_bubble ..."""
    names = {"compute_share": "compute", "traffic_share": "hbm_bandwidth", "tp_comm_share": "scaleup_link",
             "bubble_share": "pipeline_bubble", "dp_comm_share": "scaleout_network",
             "optimizer_share": "hbm_bandwidth", "overhead_share": "step_overhead"}
    key = max(shares, key=lambda k: shares[k])
    return names.get(key, key)
