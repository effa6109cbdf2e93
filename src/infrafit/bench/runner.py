"""Run the scaled model: inference latency/throughput over batch x sequence, and training steps.

Every measurement goes to ``emit`` the moment it is complete (the CLI commits it to the store), so
an interrupted sweep keeps what it finished. Timing: warm-up, ``torch.cuda.synchronize`` around
each repetition on CUDA, adaptive repetition (:func:`infrafit.bench.stats.time_repeated`).
Peak training memory: ``torch.cuda.max_memory_allocated`` on CUDA; on the CPU the peak of the
process RSS sampled every 2 ms during the steps, minus the RSS before them (tracemalloc cannot see
torch's allocator).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from infrafit.bench import shapes as sh
from infrafit.bench.predict import Device, predict_step
from infrafit.bench.results import Measurement
from infrafit.bench.stats import time_repeated

Emit = Callable[[Measurement], None]


@dataclass(frozen=True)
class ModelBenchConfig:
    batch_sizes: tuple[int, ...] = (1, 4)
    seq_lens: tuple[int, ...] = (128, 512)
    precision: str = "fp32"
    device: str = "cpu"  # "cpu" | "cuda"
    train: bool = True
    budget_s: float = 3.0  # per measured point
    min_reps: int = 5
    max_reps: int = 200
    rel_ci: float = 0.02


class PeakRss:
    """Peak resident set size of this process while the ``with`` block runs (sampled thread)."""

    def __init__(self, baseline_bytes: float | None = None, interval_s: float = 0.002) -> None:
        import psutil

        self._proc = psutil.Process()
        self._interval = interval_s
        self._stop = threading.Event()
        self.start_bytes = baseline_bytes or 0.0
        self._baseline = baseline_bytes
        self.peak_bytes = 0.0

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_bytes = max(self.peak_bytes, float(self._proc.memory_info().rss))
            self._stop.wait(self._interval)

    def __enter__(self) -> PeakRss:
        self.peak_bytes = float(self._proc.memory_info().rss)
        if self._baseline is None:
            self.start_bytes = self.peak_bytes
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_bytes = max(self.peak_bytes, float(self._proc.memory_info().rss))

    @property
    def delta_bytes(self) -> float:
        return self.peak_bytes - self.start_bytes


def _sync(device: str) -> Callable[[], None] | None:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return None


def _params(shape: sh.BenchShape, cfg: ModelBenchConfig, batch: int, seq: int, phase: str) -> dict[str, Any]:
    return {"model": shape.model_id, "kind": shape.kind, "phase": phase, "batch_size": batch,
            "seq_len": seq if shape.kind != "cnn" else None,
            "image_size": shape.image_size if shape.kind == "cnn" else None,
            "precision": cfg.precision, "device": cfg.device, "num_layers": shape.num_layers,
            "full_num_layers": shape.full_num_layers, "vocab_size": shape.vocab_size or None,
            "accelerator_id": None}


def _spread(timing: Any) -> dict[str, float]:
    return timing.summary()


def inference_points(shape: sh.BenchShape, cfg: ModelBenchConfig) -> list[tuple[int, int]]:
    seqs = cfg.seq_lens if shape.kind != "cnn" else (1,)
    return [(b, s) for b in cfg.batch_sizes for s in seqs]


def run_inference(model: Any, shape: sh.BenchShape, cfg: ModelBenchConfig, device: Device | None,
                  emit: Emit, advance: Callable[[], None] = lambda: None) -> None:
    """Latency (p50/p99) and throughput at each batch x sequence point; two measurements per point."""
    import torch

    from infrafit.bench.models import make_inputs

    sync = _sync(cfg.device)
    for batch, seq in inference_points(shape, cfg):
        x = make_inputs(shape, batch, seq, cfg.device)
        with torch.inference_mode():
            timing = time_repeated(partial(model, x), sync=sync, warmup=2, min_reps=cfg.min_reps,
                                   max_reps=cfg.max_reps, budget_s=cfg.budget_s, rel_ci=cfg.rel_ci)
        counts = sh.forward_counts(shape, batch, seq, cfg.precision)
        pred = predict_step(device, cfg.precision, counts, shape.kind, shape.num_layers) if device else None
        params = {**_params(shape, cfg, batch, seq, "inference"), "accelerator_id": device and device.accelerator_id}
        emit(Measurement("inference_latency", params, timing.p50_s, "s", _spread(timing),
                         pred["time_s"] if pred else None, pred or {}))
        unit = "samples_per_s" if shape.kind == "cnn" else "tokens_per_s"
        emit(Measurement("inference_throughput", params, counts["tokens"] / timing.p50_s, unit,
                         {"p10": counts["tokens"] / timing.p90_s, "p90": counts["tokens"] / timing.p10_s},
                         counts["tokens"] / pred["time_s"] if pred else None, pred or {}))
        advance()


def _train_step(model: Any, optimizer: Any, x: Any, kind: str) -> None:
    optimizer.zero_grad(set_to_none=True)
    out = model(x, all_positions=True)
    loss = out.float().pow(2).mean()  # a synthetic loss: the step's cost does not depend on the target
    loss.backward()
    optimizer.step()


def current_rss_bytes() -> float:
    """This process's resident set size now (the baseline taken before the model is built)."""
    import psutil

    return float(psutil.Process().memory_info().rss)


def _peak_memory(cfg: ModelBenchConfig, baseline_bytes: float | None) -> tuple[Any, Callable[[Any], float]]:
    if cfg.device.startswith("cuda"):
        import contextlib

        import torch

        torch.cuda.reset_peak_memory_stats()
        return contextlib.nullcontext(), lambda _: float(torch.cuda.max_memory_allocated())
    ctx = PeakRss(baseline_bytes)
    return ctx, lambda c: c.delta_bytes


def run_training(model: Any, shape: sh.BenchShape, cfg: ModelBenchConfig, device: Device | None,
                 emit: Emit, points: Iterable[tuple[int, int]], advance: Callable[[], None] = lambda: None,
                 baseline_rss_bytes: float | None = None) -> None:
    """Training throughput (AdamW steps) and peak memory at each point.

    CPU peak memory is the process RSS above ``baseline_rss_bytes`` (taken before the model was
    built, so weights, gradients and optimizer state all count); freed pages stay with the allocator,
    so a later point never reads lower than an earlier one.
    """
    import torch

    from infrafit.bench.models import make_inputs

    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sync = _sync(cfg.device)
    try:
        for batch, seq in points:
            x = make_inputs(shape, batch, seq, cfg.device)
            ctx, read_peak = _peak_memory(cfg, baseline_rss_bytes)
            with ctx:
                timing = time_repeated(partial(_train_step, model, optimizer, x, shape.kind), sync=sync,
                                       warmup=1, min_reps=max(3, cfg.min_reps // 2), max_reps=cfg.max_reps,
                                       budget_s=cfg.budget_s, rel_ci=cfg.rel_ci * 2)
            counts = sh.training_counts(shape, batch, seq, cfg.precision)
            pred = predict_step(device, cfg.precision, counts, shape.kind, shape.num_layers,
                                passes=3) if device else None
            params = {**_params(shape, cfg, batch, seq, "training"), "accelerator_id": device and device.accelerator_id}
            unit = "samples_per_s" if shape.kind == "cnn" else "tokens_per_s"
            emit(Measurement("training_throughput", params, counts["tokens"] / timing.p50_s, unit,
                             {"p10": counts["tokens"] / timing.p90_s, "p90": counts["tokens"] / timing.p10_s,
                              **_spread(timing)},
                             counts["tokens"] / pred["time_s"] if pred else None, pred or {}))
            predicted_mem = sh.training_memory_bytes(shape, batch, seq)
            method = "torch.cuda.max_memory_allocated" if cfg.device.startswith("cuda") else "psutil_rss_peak"
            emit(Measurement("training_peak_memory", {**params, "memory_method": method}, read_peak(ctx), "bytes",
                             {}, predicted_mem, {"formula": "16 B/param (fp32 AdamW) + Korthikanti et al. 2022 "
                                             "activations", "bytes": predicted_mem}))
            advance()
    finally:
        model.eval()
