"""``infrafit estimate`` (one configuration, fully broken down) and ``infrafit validate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from infrafit.commands.options import SetOpt


def _estimate(
    spec: Annotated[Path, typer.Argument(help="Workload spec (YAML).")],
    accelerator: Annotated[str | None, typer.Option("--accelerator", help="Accelerator id or alias.")] = None,
    count: Annotated[int | None, typer.Option("--count", help="Number of accelerators (one replica).")] = None,
    precision: Annotated[str | None, typer.Option("--precision", help="fp16|bf16|fp8|fp4|int8|int4")] = None,
    stack: Annotated[str | None, typer.Option("--stack", help="tensorrt-llm|vllm|sglang|...")] = None,
    tp: Annotated[int | None, typer.Option("--tp", help="Tensor-parallel degree (default: the best layout).")] = None,
    pp: Annotated[int, typer.Option("--pp", help="Pipeline-parallel degree.")] = 1,
    ep: Annotated[int, typer.Option("--ep", help="Expert-parallel degree.")] = 1,
    dp: Annotated[int | None, typer.Option("--dp", help="Training: data-parallel degree (default: the best "
                                                      "layout).")] = None,
    cp: Annotated[int, typer.Option("--cp", help="Training: context-parallel degree.")] = 1,
    offer: Annotated[str | None, typer.Option("--offer", help="Offer id: its accelerator, count and host "
                                                               "(`infrafit catalog offers`).")] = None,
    concurrency: Annotated[float | None, typer.Option("--concurrency", help="LLM serving: requests in flight "
                                                                            "per replica.")] = None,
    batch: Annotated[float | None, typer.Option("--batch", help="Non-LLM serving: batch size.")] = None,
    requests_per_s: Annotated[float | None, typer.Option("--requests-per-s", help="Serving: the rate one replica "
                                                                                  "is offered.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    sets: SetOpt = None,
) -> None:
    """Estimate one configuration: throughput, latency, memory, bottleneck and breakdown.

    With no operating point the estimate takes the SLO-limited one (the largest load within the
    SLOs), printed as the operating point: two stacks or chips are then compared each at its own
    SLO-limited load. Give --concurrency (or --batch) to compare them at the same load; a plan option's
    --concurrency/--batch reproduce its figures exactly."""
    from infrafit.catalog import load_catalog
    from infrafit.commands.output import note, print_json
    from infrafit.workload.spec import load_spec

    catalog = load_catalog()
    workload = load_spec(spec, catalog, sets or ())
    est = estimate_workload(workload, catalog, accelerator=accelerator, count=count, precision=precision,
                            stack=stack, tp=tp, pp=pp, ep=ep, dp=dp, cp=cp, offer=offer, concurrency=concurrency,
                            batch=batch, requests_per_s=requests_per_s)
    if as_json:
        print_json(est.to_json())
        return
    _print_estimate(est.to_json())
    for n in est.notes:
        note(f"note: {n}")


def estimate_workload(workload, catalog, *, accelerator: str | None = None, count: int | None = None,
                      precision: str | None = None, stack: str | None = None, tp: int | None = None, pp: int = 1,
                      ep: int = 1, dp: int | None = None, cp: int = 1, offer: str | None = None,
                      concurrency: float | None = None, batch: float | None = None,
                      requests_per_s: float | None = None):  # noqa: ANN201 - Estimate, imported lazily
    """The pure program under ``estimate`` (and ``infrafit.estimate``): one configuration, resolved the
    way the command resolves it (offer or accelerator x count, stack, precision, best TP), estimated."""
    from infrafit.perf import Config, best_tp, choose_precision, estimate

    _check_numbers(count, tp, pp, ep * cp * (dp or 1), precision, concurrency, batch, requests_per_s)
    offers = _offers(catalog, workload)
    acc, count, host = _target(catalog, offers, accelerator, count, offer)
    own_runtime = workload.model_arch().kind == "tabular" and stack == workload.framework  # served by its library
    stack = resolve_stack(catalog, stack, acc, workload.task) if stack is not None and not own_runtime else stack
    check_ep(ep, count, workload.model_arch())
    prec = precision or choose_precision(workload, acc)
    config = Config(acc.id, count, prec, stack, tp or 1, pp, dp, ep, cp)
    if tp is None:
        config = Config(acc.id, count, prec, stack, best_tp(workload, config, catalog), pp, dp, ep, cp)
    if offer is not None:
        _check_tp_fits_instance(offers, offer, config.tp)
        _check_pipeline_fabric(offers, offer, config, catalog)
    point = _point(workload, concurrency, batch, requests_per_s)
    return estimate(workload, config, catalog, point=point, host=host)


def _check_numbers(count, tp, pp, ep, precision, concurrency, batch, requests_per_s) -> None:
    from infrafit.errors import InputError
    from infrafit.units import PRECISIONS

    if min(count or 1, tp or 1, pp, ep) < 1:
        raise InputError("--count, --tp, --pp and --ep must be at least 1", fix="give positive integers")
    if precision is not None and precision not in PRECISIONS:
        raise InputError(f"--precision {precision!r} is unknown", fix=f"use one of {', '.join(PRECISIONS)}")
    given = {k: v for k, v in (("--concurrency", concurrency), ("--batch", batch),
                               ("--requests-per-s", requests_per_s)) if v is not None}
    if len(given) > 1:
        raise InputError(f"{' and '.join(given)} name two operating points", fix="give one of them")
    for name, v in given.items():
        if not v > 0 or v != v or v == float("inf"):
            raise InputError(f"{name} {v}: must be a positive number", fix=f"give {name} a value above 0")


def _offers(catalog, workload):
    """The catalog's offers, and with ``current:`` in the spec today's platform as offer ``current`` (the
    plan's stay option names it)."""
    if workload.current is None:
        return catalog.offers
    from datetime import date

    import pandas as pd

    from infrafit.search.current import current_offer

    return pd.concat([catalog.offers, current_offer(catalog, workload, date.today())], ignore_index=True)


def _target(catalog, offers, accelerator: str | None, count: int | None, offer: str | None):
    """(accelerator, count, host spec) from --accelerator/--count, or from --offer (an id of ``offers``)."""
    from infrafit.errors import InputError, suggest

    if offer is None:
        if accelerator is None or count is None:
            raise InputError("--accelerator and --count are needed (or --offer)",
                             fix="name the hardware: --accelerator ID --count N, or --offer OFFER_ID")
        return catalog.accelerator(accelerator), count, None
    rows = offers[offers["id"] == offer]
    if rows.empty:
        raise InputError(f"--offer {offer!r} is not in the catalog{suggest(offer, offers['id'])}",
                         fix="pick an id from `infrafit catalog offers`")
    row = rows.iloc[0].to_dict()
    acc = catalog.accelerator(str(row["accelerator_id"]))
    if accelerator is not None and catalog.accelerator(accelerator).id != acc.id:
        raise InputError(f"--accelerator {accelerator} contradicts --offer {offer} ({acc.id})",
                         fix="leave --accelerator out with --offer")
    per_instance = int(row["accelerator_count"])
    n = count or per_instance
    if n % per_instance:
        raise InputError(f"--count {n} is not a whole number of {offer} instances ({per_instance} each)",
                         fix=f"give a multiple of {per_instance}")
    from infrafit.search.option import host_spec

    return acc, n, host_spec(catalog, {**row, "instances_per_replica": n // per_instance})


def _check_tp_fits_instance(offers, offer: str, tp: int) -> None:
    """A tensor-parallel group lives inside one instance (the instance is the unit bought)."""
    from infrafit.errors import InputError

    per_instance = int(offers.loc[offers["id"] == offer, "accelerator_count"].iloc[0])
    if tp > per_instance:
        raise InputError(f"--tp {tp} spans instances of {offer} ({per_instance} accelerator(s) each): a TP group "
                         "needs the links inside one instance",
                         fix=f"use --tp {per_instance} or less (more instances then run data parallel), or a larger "
                             "instance")


def _check_pipeline_fabric(offers, offer: str, config, catalog) -> None:
    """Pipeline stages on separate instances exchange activations over the network: only over a fabric
    the host row declares (the planner's rule, ``search.parts.joins_instances``)."""
    from infrafit.errors import InputError
    from infrafit.search.parts import joins_instances

    row = offers.loc[offers["id"] == offer]
    per_instance = int(row["accelerator_count"].iloc[0])
    if config.pp > 1 and config.tp * config.pp > per_instance and not bool(joins_instances(row, catalog)[0]):
        raise InputError(f"--tp {config.tp} x --pp {config.pp} puts pipeline stages on separate instances of {offer}, "
                         f"whose host {row['host_id'].iloc[0]} declares no RDMA fabric between instances "
                         "(hosts.csv scaleout_fabric) that carries the chip's scale-out rate",
                         fix=f"keep tp x pp within {per_instance} accelerator(s), or use an offer whose host declares "
                             "its fabric (`infrafit catalog hosts`)")


def _point(workload, concurrency, batch, requests_per_s):
    from infrafit.errors import InputError
    from infrafit.perf import OperatingPoint

    if concurrency is None and batch is None and requests_per_s is None:
        return None
    if workload.inference is None or workload.is_training:
        raise InputError("--concurrency/--batch/--requests-per-s apply to serving workloads",
                         fix="leave them out for training and fine-tuning")
    llm = workload.model_arch().kind == "decoder"
    if concurrency is not None and not llm:
        raise InputError("--concurrency is for LLM serving (continuous batching)", fix="use --batch for this model")
    if batch is not None and llm:
        raise InputError("--batch is for non-LLM serving", fix="use --concurrency (requests in flight) for LLMs")
    return OperatingPoint(concurrency=concurrency, batch=batch, requests_per_s=requests_per_s)


def resolve_stack(catalog, name: str, acc, task: str) -> str:
    """The catalog id of stack ``name`` (an id or alias from stacks.csv), refused when the stack does not
    run on the accelerator's family or the workload's task."""
    from infrafit.catalog.model import stack_names
    from infrafit.errors import InputError, suggest

    table = catalog.stacks
    names = stack_names(table)
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


def operating_point_text(point: dict, fits: bool = True, memory: dict | None = None) -> str:
    """The operating point in words; says so when the configuration does not fit in memory or no load on
    the grid meets the SLOs (the rate is then 0 and the latencies shown are the lightest load's, not an
    operating point)."""
    from infrafit.units import fmt_bytes

    text = f"{point['at']}, {point['requests_per_s']:,.4g} requests/s per replica"
    if not fits:
        mem = memory or {}
        need, have = mem.get("per_accelerator_bytes"), mem.get("capacity_bytes")
        sizes = f" ({fmt_bytes(need)} needed per accelerator, {fmt_bytes(have)} there)" if need and have else ""
        return (f"none: the configuration does not fit in memory{sizes}; the latencies below are not reachable. "
                "To fix: more accelerators (--count), a narrower --precision, or a chip with more memory")
    if point.get("name") == "max_rate" and not point.get("max_rate_requests_per_s") and point.get("metric"):
        from infrafit.search.explain import SLO_LABEL

        label = SLO_LABEL.get(point["metric"], point["metric"])
        text += (f" (no load meets the SLOs: {label} is {point['metric_value']:.3g} s even at "
                 f"{point['at']}; compare options with --concurrency N)")
    return text


def _print_estimate(data: dict) -> None:
    from rich.table import Table

    from infrafit.commands.output import stdout
    from infrafit.units import fmt_bytes

    t = Table(title=f"{data['accelerator']} x{data['count']} {data['precision']} {data['stack']}")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("fits", str(data["fits"]))
    point = data.get("operating_point") or {}
    if point:
        t.add_row("operating point", operating_point_text(point, bool(data["fits"]), data.get("memory")))
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
    data: Annotated[Path | None, typer.Argument(help="CSV in the canonical calibration schema.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    model_configs: Annotated[
        Path | None, typer.Option("--model-configs", help="Folder of <org>--<name>.json config files.")
    ] = None,
    from_store: Annotated[bool, typer.Option("--from-store", help="Predict the measurements stored by `bench run` "
                                                                  "and `bench import` instead of DATA.")] = False,
    db: Annotated[Path | None, typer.Option("--db", help="Results database with --from-store (default: user data "
                                                         "dir or INFRAFIT_DB).")] = None,
) -> None:
    """Predict each published measurement in DATA (or the stored ones) and report the error."""
    import sys

    from infrafit.commands.output import print_json, stderr
    from infrafit.errors import InputError
    from infrafit.perf import validate_csv

    if from_store == (data is not None):
        raise InputError("give DATA or --from-store (one of them)",
                         fix="`infrafit validate DATA.csv` for published results, `infrafit validate --from-store` "
                             "for your own stored bench and load-test results")
    if db is not None and not from_store:
        raise InputError("--db is read with --from-store", fix="add --from-store, or leave --db out")
    if from_store:
        from infrafit.bench.results import history
        from infrafit.bench.validate_store import validate_store
        from infrafit.catalog import load_catalog
        from infrafit.store import connect

        result = validate_store(history(connect(db)), load_catalog(), estimate_workload)
        if not result["predicted"]:
            raise InputError("the store holds no measurement that can be predicted again",
                             fix="run `infrafit bench run MODEL`, or `infrafit bench import RESULT.json "
                                 "--option-from PLAN.json` (the same --db)")
    elif data is not None and sys.stderr.isatty():  # a large file takes a while: say what runs (on stderr)
        with stderr.status(f"validating {data.name}: predicting every row ..."):
            result = validate_csv(data, model_configs)
    elif data is not None:
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
    if r["skipped"]:
        n = len(r["skipped"])
        t = Table(title=f"skipped ({n}" + (f", the first {SKIPPED_SHOWN})" if n > SKIPPED_SHOWN else ")"))
        t.add_column("row_id")
        t.add_column("why")
        for s in r["skipped"][:SKIPPED_SHOWN]:
            t.add_row(str(s["row_id"]), str(s["reason"]))
        stdout.print(t)
        if n > SKIPPED_SHOWN:
            stdout.print(f"... and {n - SKIPPED_SHOWN} more: --json lists every skipped row with why")


#: Skipped rows the terminal view of ``validate`` lists (``--json`` has them all).
SKIPPED_SHOWN = 10


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""
    app.command("estimate")(_estimate)
    app.command("validate")(_validate)
