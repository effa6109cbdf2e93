"""``infrafit sweep``: plan every point of a grid of spec overrides, on a process pool or on Ray.

A grid axis is ``path=v1,v2,...`` (each value read as ``--set`` reads it: a YAML scalar or list). The points
are the Cartesian product of the axes; each is planned exactly as ``infrafit plan SPEC --set ...`` plans it
(``plan_point``), and gives one row per option rank. Executors: ``local`` (a ``ProcessPoolExecutor``),
``ray`` (one Ray task per point on the cluster at ``RAY_ADDRESS``, or a local Ray started for the run).
Both call the same pure function, so their rows are equal; rows are sorted by point, then rank.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infrafit.errors import InputError

EXECUTORS = ("local", "ray")
#: The most points one sweep plans (a grid past this is a typo more often than a plan).
MAX_POINTS = 2000


@dataclass(frozen=True)
class Axis:
    path: str
    values: tuple[str, ...]


def parse_axis(text: str) -> Axis:
    """``path=v1,v2`` (a value holding a list keeps its brackets: ``placement.regions=[tokyo],[osaka]``)."""
    path, sep, rest = text.partition("=")
    if not sep or not path.strip() or not rest.strip():
        raise InputError(f"--grid {text!r} is not path=v1,v2,...", fix="write e.g. --grid horizon_months=12,24,36")
    values, depth, cur = [], 0, ""
    for ch in rest:
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            values.append(cur.strip())
            cur = ""
        else:
            cur += ch
    values.append(cur.strip())
    if any(not v for v in values):
        raise InputError(f"--grid {text!r} has an empty value", fix="drop the extra comma")
    return Axis(path.strip(), tuple(values))


def points(axes: list[Axis]) -> list[tuple[str, ...]]:
    """Every ``--set`` combination of the axes (``path=value`` strings), in grid order."""
    if not axes:
        raise InputError("sweep needs at least one --grid", fix="add e.g. --grid inference.traffic.requests_per_s=5,10")
    paths = [a.path for a in axes]
    if len(set(paths)) < len(paths):
        raise InputError("two --grid axes set the same field", fix="give each field one --grid")
    combos = list(itertools.product(*(a.values for a in axes)))
    if len(combos) > MAX_POINTS:
        raise InputError(f"the grid has {len(combos):,} points, more than {MAX_POINTS:,}",
                         fix="sweep fewer values, or split the grid into several sweeps")
    return [tuple(f"{p}={v}" for p, v in zip(paths, combo, strict=True)) for combo in combos]


def plan_point(spec: str, sets: tuple[str, ...], top: int, objective: str, index: int) -> list[dict[str, Any]]:
    """The rows of one grid point: one per option rank, or one row saying why there is none."""
    from infrafit.catalog import load_catalog
    from infrafit.errors import InfrafitError
    from infrafit.search.planner import plan
    from infrafit.workload.spec import load_spec

    base = {"point": index, **{s.partition("=")[0]: s.partition("=")[2] for s in sets}}
    catalog = load_catalog()
    try:
        result = plan(load_spec(spec, catalog, sets), catalog, objective=objective, top=top).to_dict()
    except InfrafitError as exc:
        return [base | {"rank": None, "error": str(exc)}]
    if not result["options"]:
        why = "; ".join(f"{e['what']}: {e['reason']}" for e in result["excluded"][:3])
        return [base | {"rank": None, "error": f"no option meets the hard constraints ({why})"}]
    return [base | _row(o) for o in result["options"]]


def _row(o: dict) -> dict[str, Any]:
    perf = o["performance"]
    lat = (perf.get("latency") or {})
    return {"rank": o["rank"], "accelerator": o["accelerator"], "count": o["count"], "precision": o["precision"],
            "stack": o["stack"], "deployment": o["deployment"], "provider": o["provider"], "region": o["region"],
            "tco_usd": o["cost"]["tco_usd"], "monthly_usd": o["cost"]["monthly_usd"],
            "ttft_p99_s": ((lat.get("ttft_s") or {}).get("p99")), "tpot_p99_s": ((lat.get("tpot_s") or {}).get("p99")),
            "time_to_train_s": perf.get("time_to_train_s"),
            "co2e_kg_per_month": (o.get("efficiency") or {}).get("co2e_kg_per_month"), "error": None}


Progress = Callable[[int, int], None]


def run_local(spec: str, grid: list[tuple[str, ...]], top: int, objective: str, workers: int | None,
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """Every point on a process pool (``workers`` processes, default the CPU count)."""
    rows: list[dict[str, Any]] = []
    n = len(grid)
    with ProcessPoolExecutor(max_workers=workers or min(n, os.cpu_count() or 1)) as pool:
        futures = [pool.submit(plan_point, spec, sets, top, objective, i) for i, sets in enumerate(grid)]
        for done, f in enumerate(futures, start=1):
            rows += f.result()
            if progress:
                progress(done, n)
    return rows


def run_ray(spec: str, grid: list[tuple[str, ...]], top: int, objective: str,
            progress: Progress | None = None) -> list[dict[str, Any]]:
    """Every point as a Ray task (``infrafit.raycluster.ray_session``: RAY_ADDRESS or a local Ray)."""
    from infrafit.raycluster import ray_session

    with ray_session() as ray:
        task = ray.remote(plan_point)
        pending = {task.remote(spec, sets, top, objective, i): i for i, sets in enumerate(grid)}
        rows: list[dict[str, Any]] = []
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                rows += ray.get(ref)
                del pending[ref]
                done += 1
                if progress:
                    progress(done, len(grid))
        return rows


def sweep(spec: str | Path, axes: list[Axis], *, top: int = 1, objective: str = "cost", executor: str = "local",
          workers: int | None = None, progress: Progress | None = None) -> list[dict[str, Any]]:
    """Rows of every grid point (sorted by point, then rank). The spec is checked once before fanning out."""
    from infrafit.catalog import load_catalog
    from infrafit.search.planner import OBJECTIVES
    from infrafit.workload.spec import load_spec

    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r}", fix=f"use one of {', '.join(EXECUTORS)}")
    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r}", fix=f"use one of {', '.join(OBJECTIVES)}")
    if top < 1:
        raise InputError(f"--top {top} must be at least 1", fix="ask for 1 or more options")
    grid = points(axes)
    load_spec(spec, load_catalog(), grid[0])  # a broken spec or a bad path fails here, once, with its lines
    path = str(Path(spec).resolve())
    rows = run_ray(path, grid, top, objective, progress) if executor == "ray" else \
        run_local(path, grid, top, objective, workers, progress)
    return sorted(rows, key=lambda r: (r["point"], r["rank"] or 0))


def check_out(out: Path) -> None:
    """Refuse an output the sweep could not write, before any planning."""
    import importlib.util

    suffix = out.suffix.lower()
    if suffix not in (".csv", ".json", ".parquet"):
        raise InputError(f"--out {out}: unknown file type {suffix or '(none)'!r}",
                         fix="name it .csv, .json or .parquet")
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise InputError(f"--out {out}: Parquet needs pyarrow, which is not installed",
                         fix="pip install 'infrafit[parquet]', or write .csv or .json")


def write_rows(rows: Iterable[dict[str, Any]], out: Path) -> None:
    """CSV, JSON or Parquet by the file's extension (Parquet needs pyarrow)."""
    import pandas as pd

    check_out(out)
    frame = pd.DataFrame(list(rows))
    suffix = out.suffix.lower()
    if suffix == ".csv":
        frame.to_csv(out, index=False)
    elif suffix == ".json":
        frame.to_json(out, orient="records", indent=1)
    else:
        frame.to_parquet(out, index=False)


def report_html(rows: list[dict[str, Any]], axes: list[Axis], spec_name: str) -> str:
    """A self-contained HTML page: the top option's TCO against the first swept field, one trace per chosen
    hardware (a plotly figure with its script inline)."""
    import pandas as pd
    import plotly.graph_objects as go

    frame = pd.DataFrame([r for r in rows if r.get("rank") == 1])
    axis = axes[0].path
    fig = go.Figure()
    if not frame.empty:
        frame["hardware"] = frame["count"].astype(int).astype(str) + "x " + frame["accelerator"] + " " + \
            frame["deployment"]
        for hw, g in frame.groupby("hardware", sort=True):
            fig.add_trace(go.Scatter(x=g[axis], y=g["tco_usd"], mode="markers+lines", name=str(hw),
                                     hovertemplate=f"{axis}=%{{x}}<br>TCO $%{{y:,.0f}}<extra>{hw}</extra>"))
    fig.update_layout(title=f"infrafit sweep: {spec_name} — top option's TCO by {axis}",
                      xaxis_title=axis, yaxis_title="TCO over the horizon (USD)", legend_title="chosen hardware")
    return fig.to_html(full_html=True, include_plotlyjs=True)
