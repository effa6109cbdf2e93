"""Predict the non-LLM inference rows of a calibration CSV (``validate``).

A row names an MLPerf workload (``mlperf-inf/resnet50``, ``bert-large``, ``sdxl``), a scenario,
an accelerator and a count (chips, or CPU sockets), a declared precision and a metric
(``samples_per_s`` for Offline, ``queries_per_s`` for Server, both whole-system). The prediction is
``perf.nonllm.capacity`` of the preset's model on ``count`` replicas; nothing is looked up from the
row but these inputs. Rows that cannot be modelled honestly raise ``SkipRow`` with the reason.
"""

from __future__ import annotations

from typing import Any

from infrafit.errors import InfrafitError
from infrafit.perf.nonllm.model import Devices, capacity, devices
from infrafit.perf.nonllm.profile import NonLLMProfile
from infrafit.perf.nonllm.work import SampleWork, sample_work
from infrafit.perf.types import SkipRow
from infrafit.perf.validate.mlperf_nonllm import PRESETS, SCENARIOS, MLPerfPreset

METRIC_BY_SCENARIO = {"offline": ("samples_per_s",), "server": ("queries_per_s", "samples_per_s")}
DEFAULT_PRECISION = "bf16"  # rows that do not state one (Gaudi SDXL): the common half precision


def handles(row: dict[str, str]) -> bool:
    """Whether this module predicts the row (non-LLM MLPerf inference workloads)."""
    return row.get("task", "inference") == "inference" and row.get("workload", "") in PRESETS


def _resolve(ctx: Any, name: str) -> Any:
    fn = getattr(ctx, "resolve_model", None)
    if callable(fn):
        return fn(name)
    from infrafit.workload.models import resolve_model

    return resolve_model(name, getattr(ctx, "model_configs_dir", None))


def row_inputs(row: dict[str, str], ctx: Any) -> tuple[MLPerfPreset, SampleWork, Devices, int, str]:
    """``(preset, work, devices, count, scenario)`` of a row, or ``SkipRow``."""
    preset = PRESETS.get(row.get("workload", ""))
    if preset is None:
        raise SkipRow(f"no MLPerf preset for workload {row.get('workload')!r} (neither an LLM preset in "
                      "perf.mlperf_llm nor a non-LLM one in perf.mlperf_nonllm)")
    scenario = (row.get("scenario") or "").lower()
    if scenario not in SCENARIOS:
        raise SkipRow(f"scenario {scenario or '(empty)'!r} not modelled for {preset.workload} (offline, server)")
    if row.get("metric_kind") not in METRIC_BY_SCENARIO[scenario]:
        raise SkipRow(f"metric {row.get('metric_kind')!r} is not a throughput of the {scenario} scenario")
    try:
        acc = ctx.catalog.accelerator(row["accelerator_id"])
        model = _resolve(ctx, preset.model_id)
    except InfrafitError as exc:
        raise SkipRow(f"cannot resolve accelerator or model: {exc.what}") from None
    precision = row.get("precision_executed") or row.get("precision") or DEFAULT_PRECISION
    dev = devices([acc], precision)
    if dev.peak_flops_per_s[0] <= 0:
        raise SkipRow(f"{acc.id} lists no peak for {precision} or a fallback precision")
    try:
        count = int(float(row["accelerator_count"]))
    except (KeyError, ValueError):
        raise SkipRow("accelerator_count missing") from None
    work = sample_work(model, dev.precision_used[0], **preset.shape)
    return preset, work, dev, count, scenario


def predict(row: dict[str, str], ctx: Any, profile: NonLLMProfile | None = None) -> float:
    """Predicted whole-system throughput of the row's metric."""
    preset, work, dev, count, scenario = row_inputs(row, ctx)
    slo = preset.server_latency_p99_s if scenario == "server" else None
    cap = capacity(work, dev, [count], slo, profile)
    if not cap.fits[0]:
        raise SkipRow(f"{preset.model_id} does not fit on one {dev.ids[0]} and the model has no sharding")
    value = float(cap.server_samples_per_s[0] if scenario == "server" else cap.offline_samples_per_s[0])
    if value <= 0:
        raise SkipRow(f"no batch meets the {slo} s p99 bound on {dev.ids[0]}")
    return value
