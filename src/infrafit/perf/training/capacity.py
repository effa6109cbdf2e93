"""Training candidates at once: the best layout of each (accelerator, count, precision), pruned by
the ideal-time lower bound, with the checkpoint stalls ``estimate`` counts. The one path ``plan``
and ``estimate`` share for training and fine-tuning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from infrafit.errors import InfrafitError
from infrafit.perf.policy import first_native
from infrafit.perf.training.layout import USABLE_MEMORY_FRACTION
from infrafit.perf.training.run import (
    checkpointed_time_s,
    default_global_batch,
    model_flops_per_sample,
    train_run,
)
from infrafit.perf.training.shape import TrainShape, from_model_arch
from infrafit.perf.types import Evaluated
from infrafit.units import SECONDS_PER_DAY

#: Keys of ``evaluate_training``'s pruned dict for physically impossible estimates (MFU > 1).
MODEL_ERROR_PREFIX = "model-error:"
#: Counts of one chip tried from the smallest that trains (within the deadline, at the spec's risk):
#: more chips only shorten the run.
MAX_COUNTS_PER_ACCELERATOR = 3


def ideal_train_s(shape: TrainShape, acc: Any, count: int, precision: str, seq_len: int, total_samples: float) -> float:
    """Time to train at 100 % of the chips' peak (PaLM model FLOPs): a lower bound for early pruning."""
    peak = acc.peak(precision) or acc.peak("bf16") or acc.peak("fp16")
    return model_flops_per_sample(shape, seq_len) * total_samples / max(count * peak, 1.0)


def peak_fraction(acc: Any, mfu_fraction: float | None, precision: str) -> float:
    """Model FLOP/s as a fraction of the dense peak of the precision the run uses.

    ``perf.training`` reports MFU against the dense bf16 peak (its convention), so an fp8 run may
    show MFU above 1 while using about half of its fp8 peak; above 1 of the run's own precision is
    physically impossible."""
    if not mfu_fraction:
        return 0.0
    bf16 = acc.peak("bf16") or acc.peak("fp16")
    own = acc.peak(precision) or bf16
    return float(mfu_fraction) * bf16 / own if own else float(mfu_fraction)


def _group_by_accelerator(pairs: Sequence[tuple[Any, int]]) -> dict[str, list[tuple[Any, int]]]:
    by_acc: dict[str, list[tuple[Any, int]]] = {}
    for acc, n in sorted(pairs, key=lambda x: x[1]):
        by_acc.setdefault(acc.id, []).append((acc, n))
    return by_acc


def _native_precisions(acc: Any, precisions: Sequence[str]) -> list[str]:
    """What each requested precision trains at on ``acc``: the first of its policy fallback chain the chip
    has math for (fp4 on an H100: fp8, not bf16), each once; bf16 when none."""
    out: list[str] = []
    for p in precisions:
        q = first_native("training", p, acc)
        if q is not None and q not in out:
            out.append(q)
    return out or ["bf16"]


def evaluate_training(workload: Any, arch: Any, pairs: Sequence[tuple[Any, int]], precisions: tuple[str, ...],
                      deadline_s: float | None, max_counts_per_acc: int = MAX_COUNTS_PER_ACCELERATOR,
                      fixed: dict[str, int] | None = None,
                      instance_chips: dict[tuple[str, int], int] | None = None,
                      risk: str = "p50",
                      host_items_per_s: dict[tuple[str, int], float] | None = None) -> tuple[Evaluated, dict[str, str]]:
    """Best layout of each (accelerator, count, precision); pruned by the ideal-time lower bound.
    ``fixed`` pins layout degrees (``estimate --tp/--pp/--ep``); ``instance_chips`` gives, per
    (accelerator id, count), the accelerators of one instance of the offers that build it: the TP
    group stays inside one instance.

    The deadline is checked at ``risk`` (``deadline_slo``): at ``p90`` a run must finish by it at the
    90th percentile of its time-to-train band, which is wider for a model or chip outside the fit.

    Returns the evaluated rows and, per accelerator id, why it was pruned (with its numbers)."""
    tr = workload.training
    shape = from_model_arch(arch)
    seq = int(tr.seq_len) if shape.is_transformer else 0
    total = float(tr.total_samples)
    rank = int(tr.lora_rank or 16)
    pruned: dict[str, str] = {}
    impossible: dict[str, str] = {}
    out = []
    factors: list[float] = []
    for acc_id, items in _group_by_accelerator(pairs).items():
        taken = 0
        factor = deadline_factor(str(arch.id), acc_id, risk)
        precs = _native_precisions(items[0][0], precisions)
        for acc, n in items:
            if taken >= max_counts_per_acc:
                break
            gbs = int(tr.global_batch or default_global_batch(seq, n))
            ran: list[tuple[float, str]] = []
            for p in precs:
                lb = ideal_train_s(shape, acc, n, p, seq, total)
                if deadline_s and lb > deadline_s:
                    pruned[acc_id] = f"{n} chips need at least {lb / SECONDS_PER_DAY:,.1f} days at 100 % of peak"
                    continue
                try:
                    run = train_run(shape, acc, n, seq_len=seq, global_batch=gbs, method=tr.method, precision=p,
                                    lora_rank=rank, total_samples=total, top=1, fixed=fixed or {},
                                    tp_max=(instance_chips or {}).get((acc.id, n)))
                except InfrafitError as exc:  # a layout the model cannot build is one fewer candidate
                    pruned[acc_id] = str(exc).split(". To fix")[0]
                    continue
                lay = run.layout
                used = peak_fraction(acc, run.mfu_fraction, run.precision)
                if used > 1.0:  # more FLOP/s than the chips have: a model error, never ranked
                    impossible[acc_id] = (f"model error: {n} chips, {run.precision}: model FLOP/s = "
                                          f"{used:.0%} of the {run.precision} dense peak (excluded, not ranked)")
                    continue
                ttt, save_s, saves = checkpointed_time_s(shape, tr.method, n, float(run.time_to_train_s or np.nan),
                                                         float(tr.checkpoint_every_minutes), rank)
                out.append(({"accelerator": acc.id, "count": n, "precision": run.precision, "stack": "default",
                             "tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "ep": lay.ep, "cp": lay.cp,
                             "global_batch": gbs, "notes": list(run.notes)},
                            lay.fits, ttt, lay.memory_bytes,
                            acc.memory_bytes * USABLE_MEMORY_FRACTION,
                            {**lay.shares, "mfu_fraction": run.mfu_fraction, "peak_fraction": used,
                             "checkpoint_save_s": save_s, "checkpoints": saves,
                             "weights_bytes": float(lay.weights_bytes)}))
                factors.append(factor)
                if lay.fits and run.time_to_train_s:
                    ran.append((ttt, p))
            if not ran:
                continue
            # the time the best host that builds this count feeds (a 16-vCPU instance decodes fewer JPEGs than one
            # H100 takes): a count only its accelerators could finish in time does not end the search
            fed = (host_items_per_s or {}).get((acc.id, n), float("inf"))
            best = max(min(ran)[0], total / fed if fed > 0 else float("inf"))
            if not deadline_s or best * factor <= deadline_s:
                taken += 1  # a count that misses the deadline does not use up one of the counts tried
            # Larger counts of the same chip keep the precision that won at the smallest count (the
            # step's compute/memory balance per chip changes little with data parallelism).
            precs = [min(ran)[1]]
            if deadline_s and best * factor <= deadline_s / 2:
                break  # comfortably inside the deadline: more chips only cost more
    pruned.update({MODEL_ERROR_PREFIX + k: v for k, v in impossible.items()})
    if not out:
        return Evaluated.empty(), pruned
    cfg, fits, ttt_l, mem, capb, terms = zip(*out, strict=True)
    ttt_a = np.asarray(ttt_l, float)
    slo = deadline_slo(ttt_a, np.asarray(factors, float), deadline_s, risk)
    ev = Evaluated(list(cfg), np.asarray(fits), np.full(len(cfg), np.nan), ttt_a, ttt_a, np.asarray(mem, float),
                   np.asarray(capb, float), slo, list(terms))
    return ev, pruned


#: The ``Evaluated.slo`` key of a deadline checked at p90: the time at the band's p90, not the prediction.
DEADLINE_P90_KEY = "time_to_train_p90_s"


def deadline_factor(model_id: str, accelerator_id: str, risk: str) -> float:
    """What a predicted time to train is multiplied by before it is compared with the deadline at
    ``risk``: the p90 ratio of the model-on-chip's time-to-train band (``perf.bands.slo_factor``), 1 at
    ``p50``."""
    from infrafit.perf.bands import slo_factor

    return slo_factor("training", "time_to_train_s", model_id, accelerator_id, risk)


def deadline_slo(ttt_s: np.ndarray, factors: np.ndarray, deadline_s: float | None,
                 risk: str) -> dict[str, tuple[np.ndarray, float]]:
    """The deadline check of ``Evaluated.slo``: the predicted time to train against the deadline at
    ``p50`` (key ``time_to_train_s``); at ``p90`` the band's p90 of it (key ``time_to_train_p90_s``), so
    what the planner compares, and what its binding-constraint and exclusion lines quote, is the same
    number."""
    if not deadline_s:
        return {}
    if risk == "p50":
        return {"time_to_train_s": (ttt_s, float(deadline_s))}
    return {DEADLINE_P90_KEY: (ttt_s * factors, float(deadline_s))}
