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
    from infrafit.perf.estimate_one import estimate
    from infrafit.perf.types import Config
    from infrafit.units import PRECISIONS
    from infrafit.workload.spec import load_spec

    if min(count, tp or 1, pp, ep) < 1:
        raise InputError("--count, --tp, --pp and --ep must be at least 1", fix="give positive integers")
    if precision is not None and precision not in PRECISIONS:
        raise InputError(f"--precision {precision!r} is unknown", fix=f"use one of {', '.join(PRECISIONS)}")
    from infrafit.catalog import load_catalog
    from infrafit.perf.estimate_one import best_tp, choose_precision

    workload = load_spec(spec)
    catalog = load_catalog()
    acc = catalog.accelerator(accelerator)
    stack = resolve_stack(catalog, stack, acc, workload.task) if stack is not None else None
    check_ep(ep, count, workload.model_arch())
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


def resolve_stack(catalog, name: str, acc, task: str) -> str:
    """The catalog id of stack ``name`` (an id or alias from stacks.csv), refused when the stack does not
    run on the accelerator's family or the workload's task."""
    from infrafit.errors import InputError, suggest

    table = catalog.stacks
    names: dict[str, str] = {}
    for sid, aliases in zip(table["id"], table["aliases"].fillna(""), strict=True):
        names[str(sid).lower()] = str(sid)
        names.update({a.strip().lower(): str(sid) for a in str(aliases).split(";") if a.strip()})
    sid = names.get(name.strip().lower())
    if sid is None:
        raise InputError(f"--stack {name!r} is unknown{suggest(name, names)}",
                         fix=f"use one of {', '.join(map(str, table['id']))} (see `infrafit catalog stacks`)")
    row = table[table["id"] == sid].iloc[0]
    families = [f.strip() for f in str(row["families"]).split(";") if f.strip()]
    if acc.family not in families:
        raise InputError(f"--stack {name}: {row['name']} does not run on {acc.id} ({acc.family}); "
                         f"it supports {', '.join(families)}",
                         fix="pick a stack that supports this accelerator family (`infrafit catalog stacks`) "
                             "or leave --stack out for the default")
    stack_task = "training" if task in ("training", "fine-tuning") else "inference"
    tasks = [t.strip() for t in str(row["tasks"]).split(";") if t.strip()]
    if tasks and stack_task not in tasks:
        raise InputError(f"--stack {name}: {row['name']} is for {', '.join(tasks)}, not {task}",
                         fix="pick a stack made for this task (`infrafit catalog stacks`) or leave --stack out")
    return sid


def check_ep(ep: int, count: int, arch) -> None:
    """Expert parallelism shards a MoE model's experts over ``ep`` of the ``count`` accelerators:
    ``ep`` must divide the count, and (when > 1) the model must have experts that ``ep`` divides."""
    from infrafit.errors import InputError

    if ep == 1:
        return
    experts = int(getattr(arch, "num_experts", None) or 0)
    if count % ep:
        raise InputError(f"--ep {ep} does not divide --count {count}",
                         fix="give an expert-parallel degree that divides the accelerator count")
    if experts <= 1:
        raise InputError(f"--ep {ep}: {arch.id} is a dense model with no experts to shard",
                         fix="leave --ep at 1 for dense models")
    if experts % ep:
        raise InputError(f"--ep {ep} does not divide the {experts} experts of {arch.id}",
                         fix="give an expert-parallel degree that divides the number of experts")


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
    from infrafit.perf.validate.run import validate_csv

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
