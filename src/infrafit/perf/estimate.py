"""``estimate(workload, config) -> Estimate``: one configuration, fully broken down.

Dispatches on the workload: training and fine-tuning go to ``perf.training.estimate_training``,
non-LLM inference to ``perf.nonllm.estimate_nonllm``, decoder LLM inference is handled here from
``perf.capacity`` and ``perf.llm``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from infrafit.errors import InputError
from infrafit.perf.llm.capacity import lengths, llm_capacity, slos
from infrafit.perf.llm.engine import decode_step
from infrafit.perf.llm.setup import ConfigRow, build_setup, default_stack
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.perf.types import Config, Estimate, Latency, Memory, Percentiles


def estimate(workload: Any, config: Config, catalog: Any = None) -> Estimate:
    from infrafit.catalog import load_catalog

    cat = catalog or load_catalog()
    if config.count < 1:
        raise InputError(f"--count {config.count}: must be at least 1", fix="give the number of accelerators")
    from infrafit.perf.host.attach import with_server

    task = getattr(workload, "task", "inference")
    arch = workload.model_arch()
    if task in ("training", "fine-tuning"):
        from infrafit.perf.training.run import estimate_training

        est = estimate_training(workload, config, cat)
    elif arch.kind != "decoder":
        from infrafit.perf.nonllm.model import estimate_nonllm

        est = estimate_nonllm(workload, config, cat)
    else:
        est = estimate_llm(workload, config, cat)
    return with_server(workload, est, arch, cat)


#: Preference when the spec allows several precisions: inference takes the narrowest format the chip
#: runs natively (less memory traffic per token); training takes bf16 first (the standard mixed-precision
#: recipe), then the narrower formats the chip supports.
_INFERENCE_ORDER = ("fp8", "int8", "bf16", "fp16", "fp4", "int4", "fp32")
_TRAINING_ORDER = ("bf16", "fp16", "fp8", "fp32")


def choose_precision(workload: Any, acc: Any) -> str:
    """The precision ``estimate`` uses when none is given: allowed by the spec and native on the chip.

    ``precision: auto`` means the model's own checkpoint precision when it has one, else the
    preference order above. 4-bit formats are used only when the spec lists them.
    """
    training = getattr(workload, "task", "inference") in ("training", "fine-tuning")
    if workload.precision == "auto":
        default = workload.model_arch().default_precision
        if default and acc.supports(default) and not training:
            return default
        allowed = tuple(p for p in (_TRAINING_ORDER if training else _INFERENCE_ORDER) if p not in ("fp4", "int4"))
    else:
        order = _TRAINING_ORDER if training else _INFERENCE_ORDER
        allowed = tuple(p for p in order if p in workload.precision) + tuple(
            p for p in workload.precision if p not in order)
    for p in allowed:
        if acc.supports(p):
            return p
    return allowed[0] if allowed else "bf16"


def best_tp(workload: Any, config: Config, catalog: Any) -> int:
    """For decoder-LLM inference with no stated layout: the tensor-parallel degree (a power of two
    dividing the count, inside the scale-up domain) that serves the most requests/s within the SLOs,
    as a serving engineer would choose. Other workloads keep ``config.tp``."""
    task = getattr(workload, "task", "inference")
    if task != "inference" or workload.model_arch().kind != "decoder":
        return config.tp
    acc = catalog.accelerator(config.accelerator)
    domain = max(int(acc.scaleup_domain_size or 1), 1)
    options = [t for t in (1, 2, 4, 8, 16, 32, 64, 72) if t <= min(config.count, domain) and config.count % t == 0]
    if len(options) <= 1:
        return options[0] if options else 1
    shape = shape_from_arch(workload.model_arch())
    stack = config.stack or default_stack(acc)
    rows = [ConfigRow(acc, config.precision, stack, t, 1, 1, config.ep) for t in options]
    isl, osl = lengths(workload)
    ttft_slo, tpot_slo = slos(workload)
    cap = llm_capacity(shape, rows, [config.count] * len(rows), isl, osl, ttft_slo, tpot_slo)
    return options[int(np.argmax(np.where(cap.fits, cap.requests_per_s, -1.0)))]


def _check_layout(config: Config, acc: Any) -> None:
    group = config.tp * config.pp
    if group > config.count or config.count % group:
        raise InputError(
            f"tp x pp = {group} does not divide --count {config.count}",
            fix="choose --tp and --pp whose product divides the accelerator count",
        )


def _bottleneck(parts: dict[str, np.ndarray], kv_limited: bool) -> str:
    if kv_limited:
        return "kv_capacity"
    terms = {"hbm_bandwidth": float(parts["gemm_memory_s"][0] + parts["kv_read_s"][0]),
             "compute": float(parts["gemm_compute_s"][0] + parts["attention_compute_s"][0]),
             "scaleup_link": float(parts["collectives_s"][0]), "step_overhead": float(parts["overhead_s"][0])}
    return max(terms, key=terms.get)


def estimate_llm(workload: Any, config: Config, catalog: Any) -> Estimate:
    acc = catalog.accelerator(config.accelerator)
    _check_layout(config, acc)
    stack = config.stack or default_stack(acc)
    shape = shape_from_arch(workload.model_arch())
    row = ConfigRow(acc, config.precision, stack, config.tp, config.pp, 1, config.ep)
    isl, osl = lengths(workload)
    ttft_slo, tpot_slo = slos(workload)
    cap = llm_capacity(shape, [row], [config.count], isl, osl, ttft_slo, tpot_slo)
    setup, plans, _ = build_setup([row])
    c = max(float(cap.concurrency[0]), 1.0)
    parts = decode_step(shape, setup, np.array([c]), np.array([isl + osl / 2.0]))
    kv_per_gpu = c * float(shape.kv_elements(isl + osl)) * setup.kv_bytes_per_element[0] / (
        min(config.tp, shape.kv_shards_max) * config.pp)
    weights = float(cap.weights_bytes[0])
    # The runtime keeps this share of the memory left after the weights (the KV pool takes the rest).
    reserve = float(setup.memory_reserve_fraction[0] * max(acc.memory_bytes - weights, 0.0))
    fits = bool(cap.fits[0])
    kv_limited = fits and c >= float(cap.max_concurrency[0]) * 0.5
    breakdown = {key: float(v[0]) for key, v in parts.items()}
    breakdown.update({"concurrency_per_replica": c, "replicas": float(cap.replicas[0]),
                      "max_concurrency_per_replica": float(cap.max_concurrency[0]),
                      "input_tokens": isl, "output_tokens": osl, "weight_precision": plans[0].weight,
                      "gemm_precision": plans[0].gemm, "kv_precision": plans[0].kv})
    return Estimate(
        config=config, stack=stack, fits=fits,
        memory=Memory(per_accelerator_bytes=weights + kv_per_gpu + reserve, capacity_bytes=acc.memory_bytes,
                      weights_bytes=weights, kv_cache_bytes=kv_per_gpu, activations_bytes=reserve),
        throughput={"requests_per_s": float(cap.requests_per_s[0]),
                    "output_tokens_per_s": float(cap.output_tokens_per_s[0])},
        latency=Latency(ttft_s=Percentiles(float(cap.ttft_p50_s[0]), float(cap.ttft_p99_s[0])),
                        tpot_s=Percentiles(float(cap.tpot_p50_s[0]), float(cap.tpot_p99_s[0]))),
        server=None, bottleneck=_bottleneck(parts, kv_limited) if fits else "memory_capacity",
        breakdown=breakdown, notes=plans[0].notes,
    )
