"""``infrafit estimate`` (one configuration, fully broken down) and ``infrafit validate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def _estimate(
    spec: Annotated[Path, typer.Argument(help="Workload spec (YAML).")],
    accelerator: Annotated[str, typer.Option("--accelerator", help="Accelerator id or alias.")],
    count: Annotated[int, typer.Option("--count", help="Number of accelerators.")],
    precision: Annotated[str | None, typer.Option("--precision", help="fp16|bf16|fp8|fp4|int8|int4")] = None,
    stack: Annotated[str | None, typer.Option("--stack", help="tensorrt-llm|vllm|sglang|...")] = None,
    tp: Annotated[int | None, typer.Option("--tp", help="Tensor-parallel degree (default: the best layout).")] = None,
    pp: Annotated[int, typer.Option("--pp", help="Pipeline-parallel degree.")] = 1,
    ep: Annotated[int, typer.Option("--ep", help="Expert-parallel degree.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """Estimate one configuration: throughput, latency, memory, bottleneck and breakdown."""
    from infrafit.commands.output import note, print_json
    from infrafit.errors import InputError
    from infrafit.perf.estimate import estimate
    from infrafit.perf.types import Config
    from infrafit.units import PRECISIONS
    from infrafit.workload.spec import load_spec

    if min(count, tp or 1, pp, ep) < 1:
        raise InputError("--count, --tp, --pp and --ep must be at least 1", fix="give positive integers")
    if precision is not None and precision not in PRECISIONS:
        raise InputError(f"--precision {precision!r} is unknown", fix=f"use one of {', '.join(PRECISIONS)}")
    from infrafit.catalog import load_catalog
    from infrafit.perf.estimate import best_tp, choose_precision

    workload = load_spec(spec)
    catalog = load_catalog()
    acc = catalog.accelerator(accelerator)
    prec = precision or choose_precision(workload, acc)
    config = Config(acc.id, count, prec, stack, tp or 1, pp, None, ep)
    if tp is None:
        config = Config(acc.id, count, prec, stack, best_tp(workload, config, catalog), pp, None, ep)
    est = estimate(workload, config, catalog)
    if as_json:
        print_json(est.to_json())
        return
    _print_estimate(est.to_json())
    for n in est.notes:
        note(f"note: {n}")


def _print_estimate(data: dict) -> None:
    from rich.table import Table

    from infrafit.commands.output import stdout
    from infrafit.units import fmt_bytes

    t = Table(title=f"{data['accelerator']} x{data['count']} {data['precision']} {data['stack']}")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("fits", str(data["fits"]))
    t.add_row("bottleneck", str(data["bottleneck"]))
    for k, v in data["throughput"].items():
        t.add_row(k, f"{v:,.3g}" if v is not None else "-")
    for k in ("ttft_s", "tpot_s", "e2e_s"):
        p = (data["latency"] or {}).get(k)
        if p:
            t.add_row(f"{k} p50 / p99", f"{p['p50']:.4g} / {p['p99']:.4g}")
    for k, v in data["memory"].items():
        if v is not None:
            t.add_row(f"memory {k}", fmt_bytes(v))
    if data.get("time_to_train_s"):
        t.add_row("time_to_train_s", f"{data['time_to_train_s']:.4g}")
    stdout.print(t)


def _validate(
    data: Annotated[Path, typer.Argument(help="CSV in the canonical calibration schema.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    model_configs: Annotated[
        Path | None, typer.Option("--model-configs", help="Folder of <org>--<name>.json config files.")
    ] = None,
) -> None:
    """Predict each published measurement in DATA and report the error."""
    from infrafit.commands.output import print_json
    from infrafit.perf.validate import validate_csv

    result = validate_csv(data, model_configs)
    if as_json:
        print_json(result)
        return
    _print_validate(result)


def _print_validate(r: dict) -> None:
    from rich.table import Table

    from infrafit.commands.output import stdout

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    stdout.print(f"rows {r['rows']}, predicted {r['predicted']}, skipped {len(r['skipped'])}, "
                 f"MdAPE {pct(r['mdape'])}")
    for group, values in r["by"].items():
        t = Table(title=f"by {group}")
        t.add_column(group)
        t.add_column("rows", justify="right")
        t.add_column("MdAPE", justify="right")
        for name, g in values.items():
            t.add_row(name, str(g["rows"]), pct(g["mdape"]))
        stdout.print(t)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""
    app.command("estimate")(_estimate)
    app.command("validate")(_validate)
