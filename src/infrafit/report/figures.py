"""Plotly figures of a plan: the cost/performance front, TCO by mode, break-even, memory, bottleneck.

Each function takes the typed plan (``search.types.Plan``: its options and the chart data ``front``,
``front_metric``, ``tco_by_mode`` and ``breakeven``) and returns a ``plotly.graph_objects.Figure``,
or ``None`` when the plan holds no data for that figure. Nothing is re-derived here.
"""

from __future__ import annotations

import plotly.graph_objects as go

from infrafit.search.types import Plan
from infrafit.units import GB

_LAYOUT = {"template": "plotly_white", "height": 420, "margin": {"l": 60, "r": 20, "t": 60, "b": 50}}


def front_figure(plan: Plan) -> go.Figure | None:
    """Scatter of every feasible candidate: TCO against the latency or time metric; front highlighted."""
    points = plan.front
    if not points:
        return None
    metric = plan.front_metric or "metric"
    fig = go.Figure()
    for on_front, name, size in ((False, "other feasible options", 6), (True, "Pareto front", 10)):
        sel = [p for p in points if bool(p.get("on_front")) == on_front]
        if not sel:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p["metric_value"] for p in sel],
                y=[p["tco_usd"] for p in sel],
                mode="markers",
                name=name,
                marker={"size": size, "opacity": 0.9 if on_front else 0.35},
                text=[p["label"] for p in sel],
                hovertemplate="%{text}<br>%{x:.3g}<br>$%{y:,.0f}<extra></extra>",
            )
        )
    chosen = [(o, o.front_point) for o in plan.options if o.front_point]
    if chosen:
        fig.add_trace(
            go.Scatter(
                x=[p["metric_value"] for _, p in chosen],
                y=[p["tco_usd"] for _, p in chosen],
                mode="markers+text",
                name="ranked options",
                text=[f"#{o.rank}" for o, _ in chosen],
                textposition="top center",
                marker={"size": 14, "symbol": "star"},
            )
        )
    fig.update_layout(title=f"TCO over the horizon vs {metric}", xaxis_title=metric,
                      yaxis_title="TCO (USD)", **_LAYOUT)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


def tco_by_mode_figure(plan: Plan) -> go.Figure | None:
    """Cumulative cost month by month for each deployment mode of the top option's hardware."""
    series = plan.tco_by_mode
    if not series:
        return None
    fig = go.Figure()
    for mode, values in series.items():
        fig.add_trace(go.Scatter(x=list(range(1, len(values) + 1)), y=values, mode="lines", name=mode))
    fig.update_layout(title="Cumulative cost of the best option in each deployment mode", xaxis_title="month",
                      yaxis_title="cumulative cost (USD)", **_LAYOUT)
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
        fig.add_trace(go.Scatter(x=[u * 100 for u in util], y=values, mode="lines", name=mode))
    hardware = f" of {data['hardware']}" if data.get("hardware") else ""
    fig.update_layout(title=f"Monthly cost vs utilisation{hardware} (break-even)", xaxis_title="utilisation (%)",
                      yaxis_title="monthly cost (USD)", **_LAYOUT)
    return fig


_MEMORY_PARTS = ("weights_bytes", "kv_cache_bytes", "activations_bytes", "optimizer_bytes", "gradients_bytes")


def memory_figure(plan: Plan) -> go.Figure | None:
    """Stacked memory per accelerator of each ranked option against its capacity."""
    options = [o for o in plan.options if o.performance.get("memory")]
    if not options:
        return None
    labels = [f"#{o.rank} {o.count}x {o.accelerator}" for o in options]
    fig = go.Figure()
    for part in _MEMORY_PARTS:
        values = [((o.performance["memory"].get(part) or 0.0) / GB) for o in options]
        if any(values):
            fig.add_trace(go.Bar(x=labels, y=values, name=part.removesuffix("_bytes")))
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
    fig = go.Figure(go.Bar(x=list(shares.values()), y=list(shares.keys()), orientation="h"))
    bottleneck = top.get("bottleneck")
    fig.update_layout(title=f"Where the time goes (option #1; bottleneck: {bottleneck})",
                      xaxis_title="share of step time", **_LAYOUT)
    return fig


ALL_FIGURES = (front_figure, tco_by_mode_figure, breakeven_figure, memory_figure, bottleneck_figure)
