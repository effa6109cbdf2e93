"""The parallel-layout search: every (tp, pp, dp, ep, cp, micro-batch, interleave, ZeRO, recompute)
that divides the chips and the batch, scored at once, fastest fitting layout first.

Rules (Megatron-LM practice, Narayanan et al. 2021 sec. 3): tensor parallelism stays inside the
scale-up domain and divides the attention heads; pipeline stages at most the layer count; context
parallelism only for long sequences (>= 8k tokens); expert parallelism divides the experts and the
data-parallel group; data parallel = chips / (tp pp cp) must divide the global batch. Non-transformer
models (CNN, UNet) are trained data-parallel only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from infrafit.perf.training.memory import memory_parts
from infrafit.perf.training.profile import TrainingProfile, load_profile
from infrafit.perf.training.shape import TrainShape
from infrafit.perf.training.step import Chip, StepTimes, step_times

#: Share of device memory a training job can use (allocator fragmentation, workspaces, CUDA
#: context; PyTorch's caching allocator typically leaves 5-10% unusable).
USABLE_MEMORY_FRACTION = 0.9
LONG_CONTEXT_TOKENS = 8192
RECOMPUTE_CHOICES = ("selective", "full")


@dataclass(frozen=True)
class Layout:
    """One scored layout."""

    tp: int
    pp: int
    dp: int
    ep: int
    cp: int
    micro_batch: int
    vpp: int
    zero_stage: int
    recompute: str
    step_time_s: float
    memory_bytes: float
    fits: bool
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    shares: dict[str, float]


def _pow2_upto(n: int) -> list[int]:
    out, x = [], 1
    while x <= n:
        out.append(x)
        x *= 2
    return out


def enumerate_layouts(shape: TrainShape, count: int, seq_len: int, global_batch: int, domain: int,
                      fixed: dict[str, int] | None = None, strict: bool = True) -> dict[str, np.ndarray]:
    """All admissible layouts as parallel arrays (``fixed`` pins tp/pp/ep/cp/dp when given).

    ``strict=False`` admits data-parallel degrees that do not divide the global batch (replicas then
    run unequal micro-batch counts; the step is costed at the mean), for chip counts such as 384.
    The layouts depend only on the shape, the counts and the scale-up domain, not on the chip, so a
    planner comparing many chips enumerates each case once (cached; the arrays are read-only).
    """
    key = tuple(sorted((k, v) for k, v in (fixed or {}).items() if v))
    try:
        return _enumerate_cached(shape, count, seq_len, global_batch, domain, key, strict)
    except TypeError:  # an unhashable shape (tests build ad-hoc ones): enumerate without the cache
        return _enumerate(shape, count, seq_len, global_batch, domain, dict(key), strict)


@lru_cache(maxsize=512)
def _enumerate_cached(shape, count, seq_len, global_batch, domain, fixed_items, strict) -> dict[str, np.ndarray]:
    arrays = _enumerate(shape, count, seq_len, global_batch, domain, dict(fixed_items), strict)
    for a in arrays.values():
        a.setflags(write=False)
    return arrays


def _enumerate(shape: TrainShape, count: int, seq_len: int, global_batch: int, domain: int,
               fixed: dict[str, int], strict: bool) -> dict[str, np.ndarray]:
    if not shape.is_transformer:
        dp = count
        per_chip = max(1, global_batch // dp)
        rows = [(1, 1, dp, 1, 1, per_chip, 1, z, "none") for z in ((0, 1) if dp > 1 else (0,))]
        return _arrays(rows)
    tps = [t for t in _pow2_upto(min(domain, 64, count)) if shape.heads % t == 0]
    pps = _pow2_upto(min(shape.layers, count, 128))
    cps = _pow2_upto(min(16, count)) if seq_len >= LONG_CONTEXT_TOKENS else [1]
    eps = [e for e in _pow2_upto(min(shape.num_experts, count)) if shape.num_experts % e == 0] or [1]
    # Every combination as one mesh (lexicographic in tp, pp, cp, ep, micro-batch, interleave, ZeRO,
    # recompute: the order the nested loops had), then the admissibility rules as masks.
    grid = np.meshgrid(tps, pps, cps, eps, _pow2_upto(64), (1, 2, 4), (0, 1, 3), np.arange(len(RECOMPUTE_CHOICES)),
                       indexing="ij")
    tp, pp, cp, ep, mbs, vpp, zero, rc = (g.ravel() for g in grid)
    group = tp * pp * cp
    ok = count % group == 0
    dps = np.where(ok, count // np.maximum(group, 1), 0)
    ok &= (dps > 0) & (dps % ep == 0)
    if strict:
        ok &= global_batch % np.maximum(dps, 1) == 0
    for name, values in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep), ("dp", dps)):
        if name in fixed:
            ok &= values == fixed[name]
    per_dp = global_batch // np.maximum(dps, 1) if strict else np.ones_like(dps)
    ok &= (mbs <= np.minimum(per_dp, 64)) & (per_dp % mbs == 0)
    ok &= np.where(pp == 1, vpp == 1, shape.layers >= pp * vpp)
    ok &= np.where(dps > 1, zero > 0, zero == 0)
    keep = np.flatnonzero(ok)
    out = {"tp": tp[keep], "pp": pp[keep], "dp": dps[keep], "ep": ep[keep], "cp": cp[keep],
           "micro_batch": mbs[keep], "vpp": vpp[keep], "zero_stage": zero[keep]}
    out = {k: v.astype(int) for k, v in out.items()}
    out["recompute"] = np.asarray(RECOMPUTE_CHOICES, dtype=object)[rc[keep]]
    return out


def _arrays(rows: list[tuple]) -> dict[str, np.ndarray]:
    names = ("tp", "pp", "dp", "ep", "cp", "micro_batch", "vpp", "zero_stage", "recompute")
    if not rows:
        return {n: np.array([], dtype=object if n == "recompute" else int) for n in names}
    cols = list(zip(*rows, strict=True))
    return {n: np.array(c, dtype=object if n == "recompute" else int) for n, c in zip(names, cols, strict=True)}


def score_layouts(shape: TrainShape, chip: Chip, cand: dict[str, np.ndarray], *, seq_len: int,
                  global_batch: int, method: str, lora_rank: int = 16,
                  profile: TrainingProfile | None = None):
    """(StepTimes, MemoryParts) for every candidate."""
    profile = profile or load_profile()
    rc = cand["recompute"].astype(str)
    times = step_times(shape, chip, profile, seq_len=seq_len, global_batch=global_batch, method=method,
                       tp=cand["tp"], pp=cand["pp"], dp=cand["dp"], ep=cand["ep"], cp=cand["cp"],
                       micro_batch=cand["micro_batch"], vpp=cand["vpp"], zero_stage=cand["zero_stage"],
                       recompute=rc, lora_rank=lora_rank)
    m = global_batch / (cand["dp"] * cand["micro_batch"])
    mem = memory_parts(shape, seq_len=seq_len, micro_batch=cand["micro_batch"], tp=cand["tp"], pp=cand["pp"],
                       dp=cand["dp"], ep=cand["ep"], cp=cand["cp"], zero_stage=cand["zero_stage"],
                       recompute=rc, microbatches=m, method=method, lora_rank=lora_rank)
    return times, mem


def _layout(cand, i: int, times: StepTimes, mem, capacity: float) -> Layout:
    total = float(mem.total_bytes[i])
    return Layout(
        tp=int(cand["tp"][i]), pp=int(cand["pp"][i]), dp=int(cand["dp"][i]), ep=int(cand["ep"][i]),
        cp=int(cand["cp"][i]), micro_batch=int(cand["micro_batch"][i]), vpp=int(cand["vpp"][i]),
        zero_stage=int(cand["zero_stage"][i]), recompute=str(cand["recompute"][i]),
        step_time_s=float(times.total_s[i]), memory_bytes=total, fits=total <= capacity,
        weights_bytes=float(mem.weights_bytes[i]), gradients_bytes=float(mem.gradients_bytes[i]),
        optimizer_bytes=float(mem.optimizer_bytes[i]), activations_bytes=float(mem.activations_bytes[i]),
        shares=times.shares(i),
    )


def search(shape: TrainShape, chip: Chip, count: int, seq_len: int, global_batch: int, method: str = "full",
           *, lora_rank: int = 16, fixed: dict[str, int] | None = None, top: int = 5,
           profile: TrainingProfile | None = None, tp_max: int | None = None) -> list[Layout]:
    """Layouts sorted fitting-first by step time, then non-fitting by memory; empty when none divides
    chips and batch. ``tp_max`` caps the tensor-parallel group below the scale-up domain: the
    accelerators of one instance, which a TP group never leaves (only data and pipeline parallelism
    cross instances, over the network)."""
    domain = min(chip.scaleup_domain_size, tp_max) if tp_max else chip.scaleup_domain_size
    cand = enumerate_layouts(shape, count, seq_len, global_batch, domain, fixed)
    if cand["tp"].size == 0:
        cand = enumerate_layouts(shape, count, seq_len, global_batch, domain, fixed, strict=False)
    if cand["tp"].size == 0:
        return []
    times, mem = score_layouts(shape, chip, cand, seq_len=seq_len, global_batch=global_batch, method=method,
                               lora_rank=lora_rank, profile=profile)
    capacity = USABLE_MEMORY_FRACTION * chip.memory_bytes
    fits = mem.total_bytes <= capacity
    # fitting layouts by step time; when none fits, the smallest footprint first
    order = np.lexsort((np.where(fits, times.total_s, mem.total_bytes), ~fits))
    return [_layout(cand, int(i), times, mem, capacity) for i in order[:top]]
