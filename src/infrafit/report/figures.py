"""Plotly figures of a plan: the cost/performance front, TCO by mode, break-even, memory, bottleneck.

Each function takes the typed plan (``search.types.Plan``: its options and the chart data ``front``,
``front_metric``, ``tco_by_mode`` and ``breakeven``) and returns a ``plotly.graph_objects.Figure``,
or ``None`` when the plan holds no data for that figure. Nothing is re-derived here.
"""

from __future__ import annotations

import plotly.graph_objects as go

from infrafit.report.summary import MODE_SHORT
from infrafit.search.types import Plan
from infrafit.units import GB, SECONDS_PER_DAY, SECONDS_PER_HOUR

#: The axis name and unit of each front metric (values in seconds are shown in the unit that reads).
_METRIC_NAMES = {"ttft_p99_s": "TTFT p99", "latency_p99_s": "latency p99", "time_to_train_s": "time to train",
                 "tpot_p99_s": "TPOT p99"}
#: A memory chart whose tallest bar is under this share of the capacity tells nothing (a 1 MB model).
MEMORY_CHART_MIN_FRACTION = 0.02


def seconds_axis(values: list[float]) -> tuple[float, str]:
    """(divisor, unit) that shows ``values`` (seconds) as ms, s, h or days."""
    top = max(values, default=0.0)
    for divisor, unit, above in ((SECONDS_PER_DAY, "days", 2 * SECONDS_PER_DAY), (SECONDS_PER_HOUR, "h", 2 *
                                 SECONDS_PER_HOUR), (1.0, "s", 2.0), (1e-3, "ms", 0.0)):
        if top >= above:
            return divisor, unit
    return 1e-3, "ms"


def mode_name(key: str) -> str:
    """'cloud_on_demand (1x nvidia_b200_sxm)' -> 'on-demand (1x nvidia_b200_sxm)'."""
    head, sep, rest = key.partition(" ")
    return MODE_SHORT.get(head, head.replace("_", " ")) + (sep + rest if sep else "")

_LAYOUT = {"template": "plotly_white", "height": 420, "margin": {"l": 60, "r": 20, "t": 60, "b": 50}}


def front_figure(plan: Plan) -> go.Figure | None:
    """Every feasible candidate: TCO against the latency or time metric (in the unit that reads), the Pareto
    front drawn as a line, the ranked options starred."""
    points = plan.front
    if not points:
        return None
    metric = plan.front_metric or "metric"
    divisor, unit = seconds_axis([p["metric_value"] for p in points])
    name = f"{_METRIC_NAMES.get(metric, metric.replace('_', ' '))} ({unit})"
    fig = go.Figure()
    others = [p for p in points if not p.get("on_front")]
    front = sorted((p for p in points if p.get("on_front")), key=lambda p: p["metric_value"])
    for sel, label, mode, size in ((others, "other feasible options", "markers", 6),
                                   (front, "Pareto front", "lines+markers", 10)):
        if sel:
            fig.add_trace(go.Scatter(
                x=[p["metric_value"] / divisor for p in sel], y=[p["tco_usd"] for p in sel], mode=mode, name=label,
                marker={"size": size, "opacity": 0.9 if label == "Pareto front" else 0.35},
                line={"shape": "hv"} if mode != "markers" else None, text=[p["label"] for p in sel],
                hovertemplate=f"%{{text}}<br>%{{x:.3g}} {unit}<br>$%{{y:,.0f}}<extra></extra>"))
    chosen = [(o, o.front_point) for o in plan.options if o.front_point]
    if chosen:
        fig.add_trace(go.Scatter(
            x=[p["metric_value"] / divisor for _, p in chosen], y=[p["tco_usd"] for _, p in chosen],
            mode="markers+text", name="ranked options", text=[f"#{o.rank}" for o, _ in chosen],
            textposition="top center", marker={"size": 14, "symbol": "star"}))
    fig.update_layout(title=f"TCO over the horizon vs {name}", xaxis_title=name, yaxis_title="TCO over the horizon ($)",
                      **_LAYOUT)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", tickprefix="$")
    return fig


def tco_by_mode_figure(plan: Plan) -> go.Figure | None:
    """Cumulative cost month by month for each deployment mode of the top option's hardware."""
    series = plan.tco_by_mode
    if not series:
        return None
    fig = go.Figure()
    for mode, values in series.items():
        fig.add_trace(go.Scatter(x=list(range(1, len(values) + 1)), y=values, mode="lines", name=mode_name(mode)))
    fig.update_layout(title="Cumulative cost of the best option in each deployment mode (cash out, ending at "
                            "its TCO)", xaxis_title="month", yaxis_title="cumulative cost ($)", **_LAYOUT)
    fig.update_yaxes(tickprefix="$")
    return fig


def breakeven_figure(plan: Plan) -> go.Figure | None:
    """Monthly cost against utilisation per mode: where the lines cross is the break-even."""
    data = plan.breakeven
    util = data.get("utilisation") or []
    by_mode = data.get("monthly_usd_by_mode") or {}
    if not util or not by_mode:
        return None
    fig = go.Figure()
    for mode, values in by_mode.items():
        fig.add_trace(go.Scatter(x=[u * 100 for u in util], y=values, mode="lines", name=mode_name(mode)))
    hardware = f" of {data['hardware']}" if data.get("hardware") else ""
    fig.update_layout(title=f"Monthly cost vs utilisation{hardware} (break-even)", xaxis_title="utilisation (%)",
                      yaxis_title="monthly cost ($)", **_LAYOUT)
    fig.update_yaxes(tickprefix="$")
    return fig


_MEMORY_PARTS = ("weights_bytes", "kv_cache_bytes", "activations_bytes", "optimizer_bytes", "gradients_bytes")


def memory_figure(plan: Plan) -> go.Figure | None:
    """Stacked memory per accelerator of each ranked option against its capacity."""
    options = [o for o in plan.options if o.performance.get("memory")]
    used = [(o.performance["memory"].get("per_accelerator_bytes") or 0.0) /
            max(o.performance["memory"].get("capacity_bytes") or 1.0, 1.0) for o in options]
    if not options or max(used) < MEMORY_CHART_MIN_FRACTION:
        return None
    labels = [f"#{o.rank} {o.count}x {o.accelerator}" for o in options]
    fig = go.Figure()
    for part in _MEMORY_PARTS:
        values = [((o.performance["memory"].get(part) or 0.0) / GB) for o in options]
        if any(values):
            fig.add_trace(go.Bar(x=labels, y=values, name=part.removesuffix("_bytes").replace("_", " ")))
    fig.add_trace(
        go.Scatter(x=labels, y=[o.performance["memory"]["capacity_bytes"] / GB for o in options],
                   mode="markers", name="capacity", marker={"symbol": "line-ew-open", "size": 30})
    )
    fig.update_layout(barmode="stack", title="Memory per accelerator (GB)", yaxis_title="GB", **_LAYOUT)
    return fig


def bottleneck_figure(plan: Plan) -> go.Figure | None:
    """Time shares of the top option's step (the roofline terms behind its bottleneck)."""
    if not plan.options:
        return None
    top = plan.options[0].performance
    shares = (top.get("breakdown") or {}).get("time_shares") or {}
    if not shares:
        return None
    fig = go.Figure(go.Bar(x=[100.0 * float(v) for v in shares.values()],
                           y=[str(k).replace("_", " ") for k in shares], orientation="h"))
    bottleneck = str(top.get("bottleneck") or "").replace("_", " ")
    fig.update_layout(title=f"Where the time goes (option #1; bottleneck: {bottleneck})",
                      xaxis_title="share of step time (%)", **_LAYOUT)
    return fig


ALL_FIGURES = (front_figure, tco_by_mode_figure, breakeven_figure, memory_figure, bottleneck_figure)
