"""Assemble the ``Estimate`` of one non-LLM inference configuration (see ``perf.nonllm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from infrafit.errors import InputError
from infrafit.perf.nonllm import capacity, devices, latency_at_rate
from infrafit.perf.nonllm_profiles import NonLLMProfile
from infrafit.perf.nonllm_work import OP_CLASS_BY_KIND, sample_work
from infrafit.perf.types import Config, Estimate, Latency, Memory, Percentiles
from infrafit.units import SECONDS_PER_HOUR

#: Host-side work of each model kind, keys of ``server_profiles.csv`` (``perf.server``).
HOST_ITEM_BY_KIND = {"cnn": "jpeg_decode_imagenet", "vit": "jpeg_decode_imagenet", "encoder": "text_tokenize",
                     "speech": "audio_decode_30s", "diffusion": "text_tokenize", "tabular": "tabular_row_parse"}


def _model_of(workload: Any) -> Any:
    fn = getattr(workload, "model_arch", None)
    model = fn() if callable(fn) else getattr(workload, "model", None)
    if model is None or getattr(model, "kind", None) not in OP_CLASS_BY_KIND:
        raise InputError(f"workload model kind {getattr(model, 'kind', None)!r} is not a non-LLM kind",
                         fix=f"use a model of kind {', '.join(OP_CLASS_BY_KIND)}; decoders go through perf.llm")
    return model


def _slo_s(workload: Any) -> float | None:
    slo = getattr(getattr(workload, "inference", None), "slo", None)
    for name in ("latency_p99_s", "e2e_p99_s"):
        value = getattr(slo, name, None) if slo is not None else None
        if value:
            return float(value)
    return getattr(workload, "latency_slo_s", None)


def _offered_rate(workload: Any) -> float | None:
    """Requests per second the workload asks for (peak rate, or items per day over the window)."""
    traffic = getattr(getattr(workload, "inference", None), "traffic", None)
    if traffic is None:
        return getattr(workload, "requests_per_s", None)
    if getattr(traffic, "peak_requests_per_s", None):
        return float(traffic.peak_requests_per_s)
    items = getattr(traffic, "items", None)
    if items is not None:
        return float(items.per_day) / (float(items.window_hours) * SECONDS_PER_HOUR)
    return None


def _bottleneck(cap, i: int, slo: float | None) -> str:
    if not cap.fits[i]:
        return "memory_capacity"
    if slo and cap.server_samples_per_s[i] <= 0:
        return "latency_slo"
    if cap.memory_bound[i]:
        return "hbm_bandwidth"
    return "compute" if cap.compute_share[i] >= 0.5 else "step_overhead"


def build_estimate(workload: Any, config: Config, catalog: Any, *, shape: dict, latency_slo_s: float | None,
                   profile: NonLLMProfile) -> Estimate:
    model = _model_of(workload)
    acc = catalog.accelerator(config.accelerator)
    dev = devices([acc], config.precision, getattr(catalog, "overlay_dir", None))
    work = sample_work(model, dev.precision_used[0], **shape)
    slo = latency_slo_s if latency_slo_s is not None else _slo_s(workload)
    cap = capacity(work, dev, [config.count], slo, profile)
    notes = []
    if dev.precision_used[0] != config.precision:
        notes.append(f"{config.precision} peak not listed for {acc.id}: modelled at {dev.precision_used[0]}")
    cal = dev.calibration[0]
    if cal is not None:
        notes.append(f"efficiency calibrated on this hardware ({cal.source}, {cal.retrieved_on})")
    if dev.peak_flops_per_s[0] <= 0:
        raise InputError(f"{acc.id} lists no peak for {config.precision} or a fallback precision",
                         fix="pick a precision the accelerator supports (`infrafit catalog show ID`)")
    rate = float(cap.server_samples_per_s[0] if slo else cap.offline_samples_per_s[0])
    offered = _offered_rate(workload)
    if offered and slo and 0 < offered < rate:
        batch, p50, p99 = latency_at_rate(work, dev, offered / config.count, profile)
    else:
        batch = float(cap.server_batch[0] if slo else cap.offline_batch[0])
        p50 = float(cap.offline_batch_latency_s[0]) * 1.5
        p99 = float(cap.server_p99_s[0]) if slo else 2.0 * float(cap.offline_batch_latency_s[0])
    memory = Memory(per_accelerator_bytes=work.weight_bytes + batch * work.activation_bytes,
                    capacity_bytes=float(acc.memory_bytes), weights_bytes=work.weight_bytes,
                    activations_bytes=batch * work.activation_bytes)
    bottleneck = _bottleneck(cap, 0, slo)
    server = None
    try:
        from infrafit.perf.server import HostDemand, size_server

        demand = HostDemand(task="inference", items_per_s=rate, item_kind=HOST_ITEM_BY_KIND[model.kind],
                            tokens_per_item=float(shape.get("seq_len") or getattr(model, "reference_seq_len", 0) or 0),
                            model_weight_bytes=work.weight_bytes, accelerators=config.count,
                            input_bytes_per_item=work.io_bytes, output_bytes_per_item=work.io_bytes / 2.0)
        server = size_server(demand, None, acc, config.count)
        if server.bottleneck and server.bottleneck != "accelerator":
            bottleneck = server.bottleneck
    except ImportError:  # perf.server is optional for this estimate
        pass
    breakdown: dict[str, Any] = {
        "model_kind": model.kind, "op_class": work.op_class, "flops_per_sample": work.flops,
        "weight_bytes": work.weight_bytes, "efficiency": float(cap.efficiency[0]),
        "peak_flops_per_s": float(dev.peak_flops_per_s[0]), "precision_executed": dev.precision_used[0],
        "offline_samples_per_s": float(cap.offline_samples_per_s[0]), "offline_batch": float(cap.offline_batch[0]),
        "server_samples_per_s": float(cap.server_samples_per_s[0]) if slo else None,
        "server_batch": float(cap.server_batch[0]) if slo else None, "latency_slo_s": slo,
        "compute_share_of_step": float(cap.compute_share[0]), "detail": dict(work.detail),
        "calibration": None if cal is None else {"eff_compute": cal.eff_compute, "eff_memory": cal.eff_memory,
                                                 "op_overhead_s": cal.op_overhead_s, "source": cal.source},
        "why": _why(bottleneck, cap, server),
    }
    stack = config.stack or _default_stack(acc, model.kind, getattr(workload, "framework", None))
    return Estimate(config=config, stack=stack, fits=bool(cap.fits[0]), memory=memory,
                    throughput={"samples_per_s": rate, "requests_per_s": rate},
                    latency=Latency(e2e_s=Percentiles(p50=p50, p99=p99)), server=server, bottleneck=bottleneck,
                    breakdown=breakdown, notes=tuple(notes))


def _default_stack(acc: Any, model_kind: str | None = None, framework: str | None = None) -> str:
    """The serving stack when none is given. Tree ensembles (tabular) are served by the library that
    trained them: XGBoost's predictor runs on the CPU and, with ``device=cuda``, on NVIDIA GPUs
    (frameworks.csv, runtime column); scikit-learn on the CPU only. Other kinds: TensorRT on NVIDIA,
    JAX on TPU, PyTorch elsewhere."""
    if model_kind == "tabular" and framework:
        return str(framework)
    return {"gpu": "tensorrt" if "nvidia" in acc.id else "pytorch", "tpu": "jax", "cpu": "pytorch"}.get(
        acc.kind, "pytorch")


def _why(bottleneck: str, cap, server) -> str:
    if server is not None and bottleneck == getattr(server, "bottleneck", None) and server.reasons:
        return server.reasons[0]
    share = float(np.asarray(cap.compute_share)[0])
    return (f"{bottleneck}: compute is {share:.0%} of a batch step at batch {float(cap.offline_batch[0]):g} "
            f"(efficiency {float(cap.efficiency[0]):.0%} of peak)")
