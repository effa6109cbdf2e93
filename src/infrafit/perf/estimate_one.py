"""``estimate(workload, config) -> Estimate``: one configuration, fully broken down.

The same evaluators ``plan`` ranks with (``perf.evaluate``), run on one configuration at one
operating point: the SLO-limited point by default, or the one named by ``point`` (requests in
flight, batch size or request rate). So ``estimate`` at a plan option's operating point returns that
option's figures. Training and fine-tuning take their layout breakdown from ``perf.training.run``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from infrafit.errors import InputError
from infrafit.perf import policy
from infrafit.perf.evaluate_many import evaluate, serving_kind
from infrafit.perf.host.attach import with_server
from infrafit.perf.host.server import HostSpec
from infrafit.perf.llm.setup import default_stack
from infrafit.perf.types import Config, Estimate, Evaluated, Latency, Memory, OperatingPoint, Percentiles

if TYPE_CHECKING:
    from infrafit.catalog import Accelerator, Catalog
    from infrafit.workload.spec import Workload


def estimate(workload: Workload, config: Config, catalog: Catalog | None = None, *, point: OperatingPoint | None = None,
             host: HostSpec | None = None) -> Estimate:
    """``config`` for ``workload`` at ``point`` (default: the SLO-limited point), with the whole server
    sized on ``host`` (the offer's instance) when given."""
    from infrafit.catalog import load_catalog

    cat = catalog or load_catalog()
    if config.count < 1:
        raise InputError(f"--count {config.count}: must be at least 1", fix="give the number of accelerators")
    arch = workload.model_arch()
    if workload.task in ("training", "fine-tuning"):
        from infrafit.perf.training.run import estimate_training

        est = estimate_training(workload, config, cat)
    elif arch.kind != "decoder":
        est = estimate_nonllm(workload, config, cat, point)
    else:
        est = estimate_llm(workload, config, cat, point)
    return with_band(workload, with_server(workload, est, arch, cat, host=host))


def with_band(workload: Workload, est: Estimate) -> Estimate:
    """``est`` with its uncertainty block (``perf.bands``): the p10/p50/p90 of every figure it reports."""
    from infrafit.perf.bands import uncertainty

    arch = workload.model_arch()
    kind = "training" if workload.task in ("training", "fine-tuning") else "llm" if arch.kind == "decoder" else "nonllm"
    lat = est.latency
    figures: dict[str, float | None] = {
        "ttft_p99_s": lat.ttft_s.p99 if lat.ttft_s else None, "tpot_p99_s": lat.tpot_s.p99 if lat.tpot_s else None,
        ("e2e_p99_s" if kind == "llm" else "latency_p99_s"): lat.e2e_s.p99 if lat.e2e_s else None,
        "time_to_train_s": est.time_to_train_s, **{k: v for k, v in est.throughput.items() if v}}
    return replace(est, uncertainty=uncertainty(kind, str(arch.id), est.config.accelerator, figures))


def choose_precision(workload: Workload, acc: Accelerator) -> str:
    """The precision ``estimate`` uses when none is given: allowed by the spec and native on the chip.

    ``precision: auto`` means the model's own checkpoint precision when it has one, else the policy
    table's ``estimate_auto`` order (``perf.policy``); a list is taken in the table's preference order.
    """
    training = workload.task in ("training", "fine-tuning")
    kind = "training" if training else serving_kind(workload.model_arch())
    if kind == "nonllm_inference":
        kind = "llm_inference"  # one preference for serving: narrowest native format first
    if workload.precision == "auto":
        default = workload.model_arch().default_precision
        if default and acc.supports(default) and not training:
            return str(default)
        allowed = policy.estimate_auto(kind)
    else:
        order = policy.preference(kind)
        allowed = tuple(p for p in order if p in workload.precision) + tuple(
            p for p in workload.precision if p not in order)
    for p in allowed:
        if acc.supports(p):
            return p
    return allowed[0] if allowed else "bf16"


def _one_stack(stack: str) -> Any:
    return lambda acc: [stack]


def best_tp(workload: Workload, config: Config, catalog: Catalog) -> int:
    """For decoder-LLM inference with no stated layout: the tensor-parallel degree that serves the
    most requests/s within the SLOs at the SLO-limited point, chosen by the planner's own evaluator.
    Other workloads keep ``config.tp``."""
    if workload.task != "inference" or workload.model_arch().kind != "decoder":
        return config.tp
    acc = catalog.accelerator(config.accelerator)
    ev, _ = evaluate(workload, "serve", [(acc, config.count)], precisions=(config.precision,),
                     stacks_for=_one_stack(config.stack or default_stack(acc)),
                     fixed={"pp": config.pp, "ep": config.ep})
    if not len(ev):
        return config.tp
    score = np.where(ev.fits & (ev.capacity > 0), ev.capacity, -1.0)
    return int(ev.rows[int(np.argmax(score))]["tp"])


def _check_layout(config: Config) -> None:
    group = config.tp * config.pp
    if group > config.count or config.count % group:
        raise InputError(
            f"tp x pp = {group} does not divide --count {config.count}",
            fix="choose --tp and --pp whose product divides the accelerator count",
        )


def _one(ev: Evaluated, what: str) -> None:
    if not len(ev):
        raise InputError(f"{what}: no configuration to evaluate (the precision or layout is not possible here)",
                         fix="pick another precision (`infrafit catalog show ID`) or layout")


def _pct(ev: Evaluated, p99_key: str, p50_key: str) -> Percentiles | None:
    if p99_key not in ev.slo:
        return None
    p50 = ev.p50.get(p50_key)
    return Percentiles(float(p50[0]) if p50 is not None else float("nan"), float(ev.slo[p99_key][0][0]))


def _llm_bottleneck(t: dict[str, float], fits: bool) -> str:
    if not fits:
        return "memory_capacity"
    if t["concurrency"] >= 0.5 * t["kv_max_concurrency"]:
        return "kv_capacity"
    terms = {"hbm_bandwidth": t["weights_read_s"] + t["kv_read_s"],
             "compute": t["gemm_compute_s"] + t["attention_compute_s"],
             "scaleup_link": t["collectives_s"], "step_overhead": t["overhead_s"]}
    return max(terms, key=lambda k: terms[k])


def estimate_llm(workload: Workload, config: Config, catalog: Catalog,
                 point: OperatingPoint | None = None) -> Estimate:
    acc = catalog.accelerator(config.accelerator)
    _check_layout(config)
    stack = config.stack or default_stack(acc)
    ev, _ = evaluate(workload, "serve", [(acc, config.count)], precisions=(config.precision,),
                     stacks_for=_one_stack(stack), tps=[config.tp], point=point,
                     fixed={"pp": config.pp, "ep": config.ep})
    _one(ev, f"{config.count}x {acc.id} {config.precision}")
    r, t = ev.rows[0], ev.terms[0]
    fits = bool(ev.fits[0])
    weights, kv = t["weights_bytes"], t["kv_cache_bytes"]
    # The runtime keeps a share of the memory left after the weights (the KV pool takes the rest).
    reserve = t["memory_reserve_bytes"]
    plan = r["precision_plan"]
    breakdown: dict[str, Any] = {k: v for k, v in t.items()}
    breakdown.update({"concurrency_per_replica": t["concurrency"], "replicas": 1.0,
                      "max_concurrency_per_replica": t["kv_max_concurrency"],
                      "weight_precision": plan["weight"], "gemm_precision": plan["gemm"], "kv_precision": plan["kv"]})
    cfg = replace(config, stack=stack, dp=int(r["dp"]), ep=int(r.get("ep", config.ep) or config.ep))
    return Estimate(
        config=cfg, stack=stack, fits=fits,
        memory=Memory(per_accelerator_bytes=weights + kv + reserve, capacity_bytes=float(acc.memory_bytes),
                      weights_bytes=weights, kv_cache_bytes=kv, activations_bytes=reserve),
        throughput={"requests_per_s": float(ev.capacity[0]),
                    "output_tokens_per_s": float(t["throughput_output_tokens_per_s"])},
        latency=Latency(ttft_s=_pct(ev, "ttft_p99_s", "ttft_s"), tpot_s=_pct(ev, "tpot_p99_s", "tpot_s"),
                        e2e_s=_pct(ev, "e2e_p99_s", "e2e_s")),
        server=None, bottleneck=_llm_bottleneck(t, fits), breakdown=breakdown, notes=tuple(r.get("notes", ())),
        operating_point=r["operating_point"],
    )


def estimate_nonllm(workload: Workload, config: Config, catalog: Catalog,
                    point: OperatingPoint | None = None) -> Estimate:
    """A non-LLM serving configuration at its operating point (``perf.nonllm.capacity``), with the
    model's breakdown (``perf.nonllm.model.build_estimate``)."""
    from infrafit.perf.nonllm.model import build_estimate, load_profile

    acc = catalog.accelerator(config.accelerator)
    ev, _ = evaluate(workload, "serve", [(acc, config.count)], precisions=(config.precision,),
                     stacks_for=_one_stack(config.stack or ""), point=point)
    _one(ev, f"{config.count}x {acc.id} {config.precision}")
    base = build_estimate(workload, config, catalog, shape=_work_shape(workload), profile=load_profile())
    r = ev.rows[0]
    rate, p99 = float(ev.capacity[0]), float(ev.metric[0])
    p50 = float(ev.p50["e2e_s"][0])
    memory = replace(base.memory, per_accelerator_bytes=float(ev.memory_bytes[0]),
                     activations_bytes=float(ev.memory_bytes[0]) - base.memory.weights_bytes)
    return replace(base, config=replace(config, stack=config.stack or r["stack"]), stack=config.stack or r["stack"],
                   memory=memory, throughput={"samples_per_s": rate, "requests_per_s": rate},
                   latency=Latency(e2e_s=Percentiles(p50=p50, p99=p99)),
                   breakdown={**base.breakdown, "batch": r["batch"]}, operating_point=r["operating_point"])


def _work_shape(workload: Workload) -> dict[str, Any]:
    from infrafit.perf.evaluate_many import nonllm_work_shape

    return nonllm_work_shape(workload, workload.model_arch())
