"""Put a bench run together: resolve and scale the model, detect the device, run, emit each result.

Scaling rule: keep every per-layer shape, keep as many layers as fit ``weight_budget_bytes``
(default: 5% of RAM, at most 1.5 GB, so a run takes minutes, not hours, and leaves the machine
usable); when the embedding tables alone would take more than half that budget the vocabulary is
cut too (recorded in the params, and the FLOP count uses the vocabulary actually run).

``--quick`` is a smoke test sized by time: the weight budget is what the quick sweep can run in
``QUICK_TIME_BUDGET_S`` at a pessimistic fraction of the detected peak (capped at 8 MB), and when one
layer alone is over half of it the layer is narrowed too (fewer heads of the same head_dim,
proportionally narrower hidden and MLP widths; ``shapes.narrow_width``). Every change is listed in
the shape's ``scaled_note`` and printed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from infrafit.bench import shapes as sh
from infrafit.bench.hardware import HostInfo
from infrafit.bench.predict import Device, cuda_device, local_cpu_device
from infrafit.bench.results import Measurement
from infrafit.bench.runner import (
    ModelBenchConfig,
    current_rss_bytes,
    inference_points,
    run_inference,
    run_training,
)
from infrafit.errors import InputError
from infrafit.units import GB

DEFAULT_RAM_FRACTION = 0.05
DEFAULT_BUDGET_CAP_BYTES = 1.5 * GB
QUICK_BUDGET_BYTES = 8e6
QUICK_IMAGE_SIZE = 64
QUICK_TIME_BUDGET_S = 20.0  # the model part of `bench run --quick`
QUICK_ASSUMED_EFFICIENCY = 0.05  # fraction of detected peak tiny eager shapes reach (calibrated here: ~0.05)
TIMED_RUNS_PER_POINT = 10  # 2 warm-ups + the repetitions the quick per-point budget allows
TRAIN_FLOPS_PER_FORWARD = 3.0  # backward = 2x forward (Kaplan et al. 2020, section 2.1)


@dataclass(frozen=True)
class Sizes:
    """The sweep of one run (``quick`` gives tiny shapes for tests and smoke checks)."""

    batch_sizes: tuple[int, ...]
    seq_lens: tuple[int, ...]
    budget_s: float
    triad_bytes: float
    storage_bytes: float
    checkpoint_bytes: float

    @classmethod
    def default(cls, quick: bool) -> Sizes:
        if quick:
            return cls((1, 2), (16, 32), 0.2, 8e6, 4e6, 2e6)
        return cls((1, 4), (128, 512), 3.0, 256e6, 256e6, 128e6)


def resolve_arch(name: str) -> Any:
    """A library model (``get_model``) or a Hugging Face ``config.json`` path."""
    from pathlib import Path

    from infrafit.workload.models import get_model

    if name.endswith(".json") and Path(name).exists():
        from infrafit.workload.hf_config import from_hf_config

        return from_hf_config(name)
    return get_model(name)


def quick_weight_budget_bytes(host: HostInfo, sizes: Sizes, precision: str = "fp32") -> float:
    """Weight bytes whose ``--quick`` sweep takes about ``QUICK_TIME_BUDGET_S``, capped at 8 MB.

    A parameter costs 2 FLOPs per token per forward (Kaplan et al. 2020), and each (batch, seq) point
    runs ``TIMED_RUNS_PER_POINT`` forwards and as many training steps (1 + 3 forwards' worth), so
    ``params = budget_s x peak x eff / (2 x sum(b x s) x 4 x runs)``.
    """
    from infrafit.bench.hardware import cpu_peak_flops_per_s
    from infrafit.units import bytes_per_element

    tokens = sum(b * s for b in sizes.batch_sizes for s in sizes.seq_lens)
    flops_per_param = 2.0 * tokens * (1.0 + TRAIN_FLOPS_PER_FORWARD) * TIMED_RUNS_PER_POINT
    params = QUICK_TIME_BUDGET_S * cpu_peak_flops_per_s(host, "fp32") * QUICK_ASSUMED_EFFICIENCY / flops_per_param
    return min(QUICK_BUDGET_BYTES, params * bytes_per_element(precision))


def scaled_shape(arch: Any, host: HostInfo, *, quick: bool, layers: int | None = None,
                 weight_budget_bytes: float | None = None, precision: str = "fp32") -> sh.BenchShape:
    """The runnable shape: the arch's per-layer shapes with as many layers as fit the budget
    (``quick``: also narrower layers when one layer is over the time-derived budget)."""
    full = sh.shape_from_arch(arch)
    shape = replace(full, image_size=QUICK_IMAGE_SIZE) if full.kind == "cnn" and quick else full
    budget = weight_budget_bytes or (quick_weight_budget_bytes(host, Sizes.default(True), precision) if quick else
                                     min(DEFAULT_RAM_FRACTION * host.memory_bytes, DEFAULT_BUDGET_CAP_BYTES))
    if shape.kind == "cnn":
        fitted = replace(shape, num_layers=min(layers or (4 if quick else shape.full_num_layers),
                                               shape.full_num_layers))
    else:
        fitted = sh.fit_to_budget(shape, budget, precision, narrow=quick)
    if layers is not None:
        if layers < 1:
            raise InputError(f"--layers must be >= 1 (got {layers})", fix="pass --layers 1 or more")
        fitted = replace(fitted, num_layers=min(layers, shape.full_num_layers))
    return replace(fitted, scaled_note=sh.scaling_note(full, fitted))


def detect_device(host: HostInfo, device: str, memory_bytes_per_s: float, threads: int | None = None) -> Device | None:
    """The predictor's view of the measured device; ``None`` when a GPU is not in the catalog."""
    if not device.startswith("cuda"):
        return local_cpu_device(host, memory_bytes_per_s, threads)
    if not host.gpus:
        return None
    try:
        from infrafit.catalog import load_catalog

        acc = load_catalog().accelerator(host.gpus[0].name)
    except Exception:  # noqa: BLE001 - an unknown GPU still gets measured, just not predicted
        return None
    return cuda_device(acc.id, dict(acc.peak_flops_per_s), acc.memory_bytes_per_s)


def check_device(device: str) -> None:
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError("--device cuda was asked for but torch sees no CUDA GPU",
                         fix="run on a machine with a GPU and a CUDA build of torch, or use --device cpu")
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise InputError(f"unknown device {device!r}", fix="use --device cpu or --device cuda")


def run_model_bench(shape: sh.BenchShape, cfg: ModelBenchConfig, device: Device | None,
                    emit: Callable[[Measurement], None], on_total: Callable[[int], None] = lambda n: None,
                    advance: Callable[[], None] = lambda: None) -> None:
    """Build the model on ``cfg.device`` in ``cfg.precision``, then run inference and training sweeps."""
    import torch

    from infrafit.bench.models import DTYPES, build_model

    if cfg.precision not in DTYPES:
        raise InputError(f"bench precision {cfg.precision!r} is not runnable here",
                         fix=f"use one of {', '.join(DTYPES)} (int8 is covered by check-model)")
    check_device(cfg.device)
    baseline = current_rss_bytes()
    model = build_model(shape).to(device=cfg.device, dtype=DTYPES[cfg.precision])
    points = inference_points(shape, cfg)
    on_total(len(points) * (2 if cfg.train else 1))
    run_inference(model, shape, cfg, device, emit, advance)
    if cfg.train:
        run_training(model, shape, cfg, device, emit, points, advance, baseline_rss_bytes=baseline)
    del model
    if cfg.device.startswith("cuda"):
        torch.cuda.empty_cache()


def run_suite(model: str, host: HostInfo, emit: Callable[[Measurement], None], *, quick: bool,
              precision: str = "fp32", device: str = "cpu", layers: int | None = None,
              batch_sizes: tuple[int, ...] | None = None, seq_lens: tuple[int, ...] | None = None,
              train: bool = True, budget_s: float | None = None,
              on_shape: Callable[[sh.BenchShape], None] = lambda s: None,
              on_total: Callable[[int], None] = lambda n: None, advance: Callable[[], None] = lambda: None,
              ) -> sh.BenchShape:
    """The whole ``bench run`` on this host (here, or on a Ray node: ``bench.fleet``): the scaled shape
    (``on_shape`` sees it first), a memory triad, then the inference and training sweeps; every
    measurement goes to ``emit``."""
    sizes = Sizes.default(quick)
    shape = scaled_shape(resolve_arch(model), host, quick=quick, layers=layers, precision=precision)
    cfg = ModelBenchConfig(batch_sizes or sizes.batch_sizes, seq_lens or sizes.seq_lens, precision, device, train,
                           budget_s or sizes.budget_s)
    on_shape(shape)
    triad_m = memory_measurement(host, sizes.triad_bytes, min(cfg.budget_s, 2.0))
    emit(triad_m)
    run_model_bench(shape, cfg, detect_device(host, device, triad_m.value), emit, on_total, advance)
    return shape


def memory_measurement(host: HostInfo, array_bytes: float, budget_s: float) -> Measurement:
    """STREAM triad; predicted = the bandwidth a previous calibration recorded for this host, if any."""
    from infrafit.bench.hostio import triad
    from infrafit.bench.predict import calibrated_bandwidth

    bandwidth, timing, params = triad(array_bytes, budget_s=budget_s)
    previous = calibrated_bandwidth(host.accelerator_id)
    spread = {"p10": params["stream_bytes"] / timing.p90_s, "p90": params["stream_bytes"] / timing.p10_s,
              **timing.summary()}
    prediction = {"source": "accelerators.csv overlay (previous calibration)"} if previous else {}
    return Measurement("memory_triad", {**params, "accelerator_id": host.accelerator_id}, bandwidth,
                       "bytes_per_s", spread, previous, prediction)


def storage_measurements(folder: Any, size_bytes: float, checkpoint_bytes: float, reps: int = 3) -> list[Measurement]:
    """Sequential write and read (cache bypassed where possible), then an fsync'd checkpoint write
    predicted from the measured sequential write throughput (size / write bandwidth)."""
    from infrafit.bench.hostio import checkpoint_write, storage_sequential

    seq = storage_sequential(folder, size_bytes, reps)
    base = {"path": str(folder), "size_bytes": seq["size_bytes"], "cache_bypass": seq["cache_bypass"]}
    out = []
    for kind, timing in (("storage_write", seq["write"]), ("storage_read", seq["read"])):
        out.append(Measurement(kind, base, seq["size_bytes"] / timing.p50_s, "bytes_per_s",
                               {"p10": seq["size_bytes"] / timing.p90_s, "p90": seq["size_bytes"] / timing.p10_s,
                                **timing.summary()}))
    write_bw = out[0].value
    ckpt = checkpoint_write(folder, checkpoint_bytes, reps)
    predicted = ckpt["size_bytes"] / write_bw
    out.append(Measurement("checkpoint_write", {"path": str(folder), "size_bytes": ckpt["size_bytes"],
                                                "fsync": True}, ckpt["timing"].p50_s, "s", ckpt["timing"].summary(),
                           predicted, {"formula": "size_bytes / measured sequential write bytes_per_s",
                                       "write_bytes_per_s": write_bw}))
    return out
