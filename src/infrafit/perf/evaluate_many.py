"""``evaluate(workload, pairs, ...)``: many configurations of one workload at once.

The dispatcher ``plan`` uses and ``estimate`` uses for one configuration: LLM serving
(``perf.llm.capacity``), other serving (``perf.nonllm.capacity``) and training
(``perf.training.capacity``). Which precisions ``precision: auto`` tries is the policy table's
(``perf.policy``); the lengths and SLOs come from the spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from infrafit.errors import InputError
from infrafit.perf import policy
from infrafit.perf.llm.capacity import evaluate_llm
from infrafit.perf.nonllm.capacity import evaluate_nonllm
from infrafit.perf.training.capacity import evaluate_training
from infrafit.perf.types import Evaluated, OperatingPoint

if TYPE_CHECKING:
    from infrafit.catalog import Accelerator
    from infrafit.workload.arch import ModelArch
    from infrafit.workload.spec import Workload
    from infrafit.workload.spec_sections import Inference, Training


def _inference(workload: Workload) -> Inference:
    if workload.inference is None:
        raise InputError(f"{workload.name}: no inference section to evaluate serving for",
                         fix="add an inference: block (mode, traffic, slo) to the spec")
    return workload.inference


def _training(workload: Workload) -> Training:
    if workload.training is None:
        raise InputError(f"{workload.name}: no training section to evaluate training for",
                         fix="add a training: block (tokens or samples, seq_len, method) to the spec")
    return workload.training


def serving_kind(arch: ModelArch) -> str:
    return "llm_inference" if arch.kind == "decoder" else "nonllm_inference"


def precisions_for(workload: Workload, kind: str) -> tuple[str, ...]:
    """The precisions to evaluate: the spec's list, or the policy's ``plan_auto`` set for ``auto``."""
    if workload.precision == "auto":
        return policy.plan_auto(kind)
    return tuple(workload.allowed_precisions)


def nonllm_work_shape(workload: Workload, arch: ModelArch) -> dict[str, Any]:
    """Work-ladder inputs a non-LLM model takes from the spec: an encoder's sequence length, the
    tokens a speech model decodes per 30 s window."""
    traffic = _inference(workload).traffic
    if arch.kind == "encoder" and traffic.input_tokens is not None:
        return {"seq_len": float(traffic.input_tokens.mean)}
    if arch.kind == "speech" and traffic.output_tokens is not None:
        return {"output_tokens": float(traffic.output_tokens.mean)}
    return {}


def serving_slo_s(workload: Workload) -> tuple[float | None, bool]:
    """(latency p99 SLO, realtime?) of a non-LLM serving workload."""
    inf = _inference(workload)
    slo = inf.slo.latency_p99_s or inf.slo.e2e_p99_s
    return slo, inf.mode in ("realtime", "edge", "mixed") and bool(slo)


def evaluate(workload: Workload, task: str, pairs: Sequence[tuple[Accelerator, int]], *,
             stacks_for: Callable[[Any], list[str]], targets: tuple[float, ...] = (),
             precisions: tuple[str, ...] | None = None, tps: Sequence[int] | None = None,
             point: OperatingPoint | None = None, fixed: dict[str, int] | None = None,
             max_counts_per_acc: int | None = None,
             instance_chips: dict[tuple[str, int], int] | None = None,
             host_items_per_s: dict[tuple[str, int], float] | None = None) -> tuple[Evaluated, dict[str, str]]:
    """Every (accelerator, chips per replica) in ``pairs``, for ``task`` ``"serve"`` or ``"train"``.
    ``instance_chips`` (training) caps each pair's TP group at one instance's accelerators; serving
    evaluates every TP degree and the planner keeps those that fit the instance it rents. ``host_items_per_s``
    (training) is, per pair, the most samples/s the best host that builds it feeds (``host_fed_factor``), so the
    count search does not stop at a count no host can feed in time.

    Returns the evaluated rows and, for training, why accelerators were pruned (with numbers)."""
    arch = workload.model_arch()
    if task == "train":  # under auto the policy's training formats, never 4-bit or int8 GEMMs unasked
        precs = precisions or precisions_for(workload, "training")
        extra = {} if max_counts_per_acc is None else {"max_counts_per_acc": max_counts_per_acc}
        tr = _training(workload)
        return evaluate_training(workload, arch, pairs, precs, tr.deadline_s, fixed=fixed,
                                 instance_chips=instance_chips, risk=tr.risk, host_items_per_s=host_items_per_s,
                                 **extra)
    inf = _inference(workload)
    kind = serving_kind(arch)
    precs = precisions or precisions_for(workload, kind)
    if kind == "llm_inference":
        lay = fixed or {}
        # a caller's layout fixes the stages; without one (the planner) they are searched
        stages = int(lay["pp"]) if lay.get("pp") else None
        return evaluate_llm(arch, pairs, precs, stacks_for, inf.traffic, inf.slo, targets=targets, tps=tps,
                            point=point, pp=stages, ep=int(lay.get("ep", 1)),
                            speculative=inf.speculative, offline=inf.mode == "batch"), {}
    slo, realtime = serving_slo_s(workload)
    return evaluate_nonllm(arch, pairs, precs, slo, realtime, nonllm_work_shape(workload, arch), targets=targets,
                           framework=workload.framework, point=point, risk=inf.slo.risk), {}
