"""Inference of non-LLM models: encoders, CNNs, ViTs, diffusion, speech, tabular; GPUs, TPUs, CPUs.

The model, one accelerator serving batches (replicas on ``count`` chips, no model parallelism):

* Step time of a batch of ``b`` (roofline plus a fixed per-invocation overhead; Williams et al.,
  CACM 2009 for the roofline)::

      S(b) = passes x overhead + b x F_pre / (peak x eff)
             + max(b x (F - F_pre) / (peak x eff),  (passes x (W + b x kv) + b x io) / (bw x eff_mem))

  ``F`` forward FLOPs per sample (all passes), ``W`` weight bytes read per pass, ``io`` bytes in/out
  per sample, ``F_pre`` FLOPs of a phase run once before the passes (Whisper's encoder), ``kv``
  bytes per sample read on every pass (a decoder's attention caches). The overhead is what makes
  small batches slow: utilisation = ``w / (w + w_half)`` with ``w = b x F`` and
  ``w_half = passes x overhead x peak x eff`` (the saturating curve).
* Offline (MLPerf Offline, batch jobs): throughput ``count x b / S(b)`` at the smallest batch that
  reaches 98% of the largest batch that fits in memory; ``b / S(b)`` never falls as ``b`` grows.
* Server (MLPerf Server, realtime under a p99 SLO): Poisson arrivals split evenly over the chips,
  greedy dynamic batching. In steady state at utilisation 1 each batch holds the arrivals during
  the previous batch, so ``lambda = b / S(b)`` and a request waits for the batch in flight and
  then its own: ``p99 ~ S(b) + S(b + z99 sqrt(b))`` (Poisson count fluctuation, ``z99 = 2.326``).
  The sustained rate is the largest ``lambda(b)`` whose p99 meets the bound, at the smallest batch
  within 2% of it (as offline); below it the queue is not saturated and latency falls.

CPUs use the same ladder with their AMX/AVX-512 peak per socket (catalog ``peak``) and ``count`` =
sockets. Efficiencies come from ``perf.nonllm_profiles``, except for an accelerator that ``infrafit
calibrate`` measured (``perf.calibrated``, from the catalog overlay): there its fitted compute and
memory fractions replace the profile's, and its per-operator overhead x operators per pass replaces
the per-step overhead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from infrafit.errors import InputError
from infrafit.perf.calibrated import Calibration, calibration_for
from infrafit.perf.core import Z99
from infrafit.perf.nonllm.profile import NonLLMProfile, load_profile
from infrafit.perf.nonllm.work import OP_CLASS_BY_KIND, SampleWork, sample_work
from infrafit.perf.policy import first_native
from infrafit.perf.types import Config, Estimate, Latency, Memory

if TYPE_CHECKING:
    from infrafit.catalog import Catalog
    from infrafit.workload.arch import ModelArch
    from infrafit.workload.spec import Workload
from infrafit.units import TFLOPS

BATCH_GRID = np.unique(np.concatenate([2.0 ** np.arange(0, 17), np.round(1.5 * 2.0 ** np.arange(0, 16))]))
MEMORY_RESERVE_FRACTION = 0.1  # runtime, workspace and fragmentation kept free on the device



@dataclass(frozen=True)
class Devices:
    """Struct of arrays over accelerators: what the non-LLM model reads from the catalog."""

    ids: tuple[str, ...]
    peak_flops_per_s: np.ndarray
    memory_bytes: np.ndarray
    memory_bytes_per_s: np.ndarray
    kind: np.ndarray
    w_per_tflops: np.ndarray
    precision_used: tuple[str, ...]
    calibration: tuple[Calibration | None, ...] = ()  # per device, from the overlay (perf.calibrated)
    core_clock_hz: np.ndarray | None = None  # CPUs: cores x clock (cycles/s per socket); NaN elsewhere

    def tree_node_visits_per_s(self, profile: NonLLMProfile) -> np.ndarray:
        """Tree-ensemble node visits per second: CPU cores x clock / cycles per visit; elsewhere the
        memory bandwidth / bytes moved per visit (each visit is a dependent gather)."""
        cycles = self.core_clock_hz if self.core_clock_hz is not None else np.full(len(self.ids), np.nan)
        cpu = cycles / profile.tree_cycles_per_node_visit
        other = self.memory_bytes_per_s * profile.memory_efficiency / profile.tree_bytes_per_node_visit
        return np.where((self.kind == "cpu") & np.isfinite(cpu), cpu, other)

    def calibrated(self, field: str, default) -> np.ndarray:
        """Per device: the calibrated ``field`` where a calibration exists, else ``default``."""
        cal = self.calibration or (None,) * len(self.ids)
        base = np.broadcast_to(np.asarray(default, dtype=float), (len(self.ids),))
        return np.array([getattr(c, field) if c is not None else d for c, d in zip(cal, base, strict=True)])


def executed_precision(acc: Any, precision: str) -> tuple[str, float]:
    """``(precision that runs, its peak)``: the first the chip runs natively along the precision's
    fallback chain (``perf.policy``)."""
    p = first_native("nonllm_inference", precision, acc)
    return (p, float(acc.peak(p))) if p is not None else (precision, 0.0)


def devices(accelerators: Sequence[Any], precision: str, overlay_dir: Any = None) -> Devices:
    """Gather the arrays the model needs from catalog ``Accelerator`` objects (and their calibration
    in the overlay folder, default ``INFRAFIT_CATALOG``)."""
    used, peaks = zip(*(executed_precision(a, precision) for a in accelerators), strict=True)
    peak = np.array(peaks, dtype=float)
    tdp = np.array([float(a.tdp_w) if a.tdp_w and a.tdp_w == a.tdp_w else np.nan for a in accelerators])
    return Devices(
        ids=tuple(a.id for a in accelerators), peak_flops_per_s=peak,
        memory_bytes=np.array([a.memory_bytes for a in accelerators], dtype=float),
        memory_bytes_per_s=np.array([a.memory_bytes_per_s for a in accelerators], dtype=float),
        kind=np.array([a.kind for a in accelerators], dtype=object),
        w_per_tflops=tdp / np.where(peak > 0, peak / TFLOPS, np.nan), precision_used=tuple(used),
        calibration=tuple(calibration_for(a.id, p, overlay_dir) for a, p in zip(accelerators, used, strict=True)),
        core_clock_hz=np.array([_core_cycles_per_s(a) for a in accelerators]))


def _core_cycles_per_s(acc: Any) -> float:
    """Cores x clock of a CPU (NaN for other chips, or when the catalog row lacks either)."""
    cores, clock = getattr(acc, "cores", None), getattr(acc, "clock_hz", None)
    if acc.kind != "cpu" or not cores or clock is None or clock != clock:
        return float("nan")
    return float(cores) * float(clock)


def step_time_s(batch, work: SampleWork, dev: Devices, eff, profile: NonLLMProfile):
    """``(S, compute, memory, overhead)`` of one batch step; arrays broadcast (devices x batches)."""
    b = np.asarray(batch, dtype=float)
    peak = dev.peak_flops_per_s[:, None]
    bw = dev.memory_bytes_per_s[:, None] * dev.calibrated("eff_memory", profile.memory_efficiency)[:, None]
    t_pre = np.zeros_like(b * peak)
    if work.op_class == "tabular":  # node visits at the measured per-visit cost, no matrix units
        t_c = b * work.flops / dev.tree_node_visits_per_s(profile)[:, None]
    else:  # a precision the chip lacks has peak 0: infinite time, so never feasible (no warning)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = peak * np.asarray(eff)[:, None]
            t_pre = b * work.prefix_flops / rate  # an encoder phase: compute-bound, not overlapped
            t_c = b * (work.flops - work.prefix_flops) / rate
    t_m = (work.passes * (work.weight_bytes + b * work.kv_bytes_per_pass) + b * work.io_bytes) / bw
    overhead: Any = profile.overhead_s(work.op_class)
    if work.operators_per_pass > 0:  # calibrated: seconds per operator x operators per invocation
        per_op = dev.calibrated("op_overhead_s", np.nan)
        overhead = np.where(np.isfinite(per_op), per_op * work.operators_per_pass, overhead)
    t_o = work.passes * np.asarray(overhead, dtype=float).reshape(-1, 1) * np.ones_like(t_c)
    return t_o + t_pre + np.maximum(t_c, t_m), t_pre + t_c, t_m, t_o


def max_batch_fitting(work: SampleWork, dev: Devices) -> np.ndarray:
    """Largest batch whose weights + activations fit on one device (0 when the weights do not)."""
    free = dev.memory_bytes * (1.0 - MEMORY_RESERVE_FRACTION) - work.weight_bytes
    return np.floor(np.maximum(free, 0.0) / max(work.activation_bytes, 1.0))


@dataclass(frozen=True)
class Capacity:
    """Per configuration (arrays over devices): throughput and the batch and latency behind it."""

    offline_samples_per_s: np.ndarray
    offline_batch: np.ndarray
    offline_batch_latency_s: np.ndarray
    server_samples_per_s: np.ndarray
    server_batch: np.ndarray
    server_p99_s: np.ndarray
    compute_share: np.ndarray  # of the offline step: compute / (overhead + max(compute, memory))
    memory_bound: np.ndarray
    efficiency: np.ndarray
    fits: np.ndarray


def capacity(work: SampleWork, dev: Devices, counts, latency_slo_s: float | None,
             profile: NonLLMProfile | None = None, batch_sizes=None) -> Capacity:
    """Offline and SLO-bound (server) throughput of ``counts`` replicas on each device."""
    prof = profile or load_profile()
    eff = dev.calibrated("eff_compute", prof.efficiency(work.op_class, dev.kind, dev.w_per_tflops))
    grid = np.asarray(batch_sizes if batch_sizes is not None else BATCH_GRID, dtype=float)[None, :]
    s, t_c, t_m, t_o = step_time_s(grid, work, dev, eff, prof)
    fits_b = grid <= max_batch_fitting(work, dev)[:, None]
    rate = np.where(fits_b, grid / s, 0.0)
    best = rate.max(axis=1)
    i_off = np.argmax(rate >= 0.98 * best[:, None], axis=1)
    rows = np.arange(len(dev.ids))
    s_off = s[rows, i_off]
    n = np.asarray(counts, dtype=float)
    if latency_slo_s:
        s_tail, *_ = step_time_s(grid + Z99 * np.sqrt(grid), work, dev, eff, prof)
        p99 = s + s_tail
        ok = fits_b & (p99 <= latency_slo_s)
        srate = np.where(ok, rate, 0.0)
        # the smallest batch within 2% of the best SLO-bound rate: a larger one buys no throughput and
        # only lengthens every step (SDXL on an H100: batch 1 and 4 sustain the same 1.09 images/s,
        # at p99 4.0 s and 11.6 s)
        i_srv = np.argmax(srate >= np.maximum(0.98 * srate.max(axis=1, keepdims=True), 1e-300), axis=1)
        server = srate[rows, i_srv]
        server_b = np.where(server > 0, grid[0, i_srv], 0.0)
        server_p99 = np.where(server > 0, p99[rows, i_srv], np.nan)
    else:
        server, server_b, server_p99 = best, grid[0, i_off], 2.0 * s_off
    with np.errstate(divide="ignore", invalid="ignore"):
        share = t_c[rows, i_off] / s_off
    return Capacity(
        offline_samples_per_s=n * rate[rows, i_off], offline_batch=grid[0, i_off], offline_batch_latency_s=s_off,
        server_samples_per_s=n * server, server_batch=server_b, server_p99_s=server_p99,
        compute_share=share, memory_bound=t_m[rows, i_off] > t_c[rows, i_off],
        efficiency=np.asarray(eff, dtype=float), fits=max_batch_fitting(work, dev) >= 1)


def nonllm_capacity(model: Any, accelerators: Sequence[Any], counts, precision: str,
                    batch_sizes=None, latency_slo_s: float | None = None, **shape: Any) -> dict[str, np.ndarray]:
    """Vectorized planner entry: samples/s each (accelerator, count) sustains within the SLO.

    ``shape`` passes ``seq_len``, ``steps``, ``guidance_passes``, ``output_tokens`` to the work ladder.
    Returns arrays: ``samples_per_s`` (SLO-bound when ``latency_slo_s`` is given, else offline),
    ``offline_samples_per_s``, ``batch``, ``p99_s``, ``fits``.
    """
    work = sample_work(model, precision, **shape)
    cap = capacity(work, devices(accelerators, precision), counts, latency_slo_s, batch_sizes=batch_sizes)
    return {"samples_per_s": np.where(cap.fits, cap.server_samples_per_s, 0.0),
            "offline_samples_per_s": np.where(cap.fits, cap.offline_samples_per_s, 0.0),
            "batch": cap.server_batch, "p99_s": cap.server_p99_s, "fits": cap.fits}


def latency_at_rate(work: SampleWork, dev: Devices, rate_per_chip: float, profile: NonLLMProfile | None = None):
    """``(batch, p50, p99)`` of greedy batching at an offered rate below capacity (one device).

    The batch is the smallest whose rate ``b / S(b)`` covers the offered rate; a request waits on
    average half a step and then its own (p50 ~ 1.5 S), at p99 a whole step of the larger batch.
    """
    prof = profile or load_profile()
    grid = BATCH_GRID[None, :]
    sub = Devices(dev.ids[:1], dev.peak_flops_per_s[:1], dev.memory_bytes[:1], dev.memory_bytes_per_s[:1],
                  dev.kind[:1], dev.w_per_tflops[:1], dev.precision_used[:1], dev.calibration[:1])
    eff = sub.calibrated("eff_compute", prof.efficiency(work.op_class, dev.kind[:1], dev.w_per_tflops[:1]))
    s, *_ = step_time_s(grid, work, sub, eff, prof)
    ok = grid[0] / s[0] >= rate_per_chip
    i = int(np.argmax(ok)) if ok.any() else len(BATCH_GRID) - 1
    b = float(BATCH_GRID[i])
    s_tail, *_ = step_time_s(np.array([[b + Z99 * np.sqrt(b)]]), work, sub, eff, prof)
    return b, 1.5 * float(s[0, i]), float(s[0, i] + s_tail[0, 0])


def _model_of(workload: Workload) -> ModelArch:
    model = workload.model_arch()
    if model.kind not in OP_CLASS_BY_KIND:
        raise InputError(f"workload model kind {model.kind!r} is not a non-LLM kind",
                         fix=f"use a model of kind {', '.join(OP_CLASS_BY_KIND)}; decoders go through perf.llm")
    return model


def _slo_s(workload: Workload) -> float | None:
    inf = workload.inference
    if inf is None:
        return None
    value = inf.slo.latency_p99_s or inf.slo.e2e_p99_s
    return float(value) if value else None


def _bottleneck(cap, i: int, slo: float | None) -> str:
    if not cap.fits[i]:
        return "memory_capacity"
    if slo and cap.server_samples_per_s[i] <= 0:
        return "latency_slo"
    if cap.memory_bound[i]:
        return "hbm_bandwidth"
    return "compute" if cap.compute_share[i] >= 0.5 else "step_overhead"


def build_estimate(workload: Workload, config: Config, catalog: Catalog, *, shape: dict[str, Any],
                   profile: NonLLMProfile) -> Estimate:
    """The model's breakdown of one configuration (work per sample, efficiency, offline and SLO-bound
    rates over the whole batch grid, calibration); ``perf.estimate`` puts the figures of its operating
    point (``perf.nonllm.capacity``) on top."""
    model = _model_of(workload)
    acc = catalog.accelerator(config.accelerator)
    dev = devices([acc], config.precision)
    work = sample_work(model, dev.precision_used[0], **shape)
    slo = _slo_s(workload)
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
    batch = float(cap.server_batch[0] if slo else cap.offline_batch[0])
    memory = Memory(per_accelerator_bytes=work.weight_bytes + batch * work.activation_bytes,
                    capacity_bytes=float(acc.memory_bytes), weights_bytes=work.weight_bytes,
                    activations_bytes=batch * work.activation_bytes)
    bottleneck = _bottleneck(cap, 0, slo)
    breakdown: dict[str, Any] = {
        "model_kind": model.kind, "op_class": work.op_class, "flops_per_sample": work.flops,
        "io_bytes_per_item": work.io_bytes,
        "tokens_per_item": float(shape.get("seq_len") or model.reference_seq_len or 0),
        "weight_bytes": work.weight_bytes, "efficiency": float(cap.efficiency[0]),
        "peak_flops_per_s": float(dev.peak_flops_per_s[0]), "precision_executed": dev.precision_used[0],
        "offline_samples_per_s": float(cap.offline_samples_per_s[0]), "offline_batch": float(cap.offline_batch[0]),
        "server_samples_per_s": float(cap.server_samples_per_s[0]) if slo else None,
        "server_batch": float(cap.server_batch[0]) if slo else None, "latency_slo_s": slo,
        "compute_share_of_step": float(cap.compute_share[0]), "detail": dict(work.detail),
        "calibration": None if cal is None else {"eff_compute": cal.eff_compute, "eff_memory": cal.eff_memory,
                                                 "op_overhead_s": cal.op_overhead_s, "source": cal.source},
        "why": _why(bottleneck, cap),
    }
    stack = config.stack or default_stack(acc, model.kind, workload.framework)
    return Estimate(config=config, stack=stack, fits=bool(cap.fits[0]), memory=memory,
                    throughput={"samples_per_s": rate, "requests_per_s": rate},
                    latency=Latency(), server=None, bottleneck=bottleneck, breakdown=breakdown, notes=tuple(notes))


#: The serving runtime of a non-LLM model by accelerator kind (and vendor for ASICs), each one
#: that stacks.csv lists for the family: TensorRT on NVIDIA, JAX on TPU, the Neuron SDK on
#: Trainium/Inferentia, PyTorch elsewhere (AMD Instinct, Gaudi, CPUs).
_ASIC_STACK_BY_VENDOR = {"AWS": "neuron"}


def default_stack(acc: Any, model_kind: str | None = None, framework: str | None = None) -> str:
    """The serving stack when none is given. Tree ensembles (tabular) are served by the library that
    trained them: XGBoost's predictor runs on the CPU and, with ``device=cuda``, on NVIDIA GPUs
    (frameworks.csv, runtime column); scikit-learn on the CPU only. Other kinds: TensorRT on NVIDIA,
    JAX on TPU, the Neuron SDK on AWS silicon, PyTorch elsewhere."""
    if model_kind == "tabular" and framework:
        return str(framework)
    if acc.kind == "asic":
        return _ASIC_STACK_BY_VENDOR.get(str(acc.vendor), "pytorch")
    return {"gpu": "tensorrt" if "nvidia" in acc.id else "pytorch", "tpu": "jax", "cpu": "pytorch"}.get(
        acc.kind, "pytorch")


def _why(bottleneck: str, cap: Capacity) -> str:
    share = float(np.asarray(cap.compute_share)[0])
    return (f"{bottleneck}: compute is {share:.0%} of a batch step at batch {float(cap.offline_batch[0]):g} "
            f"(efficiency {float(cap.efficiency[0]):.0%} of peak)")
