"""Commands of the bench area: ``bench run|memory|storage|history``, ``calibrate``, ``check-model``.

Each measurement is committed to the results store as soon as it completes. Heavy imports (torch)
stay inside the functions so ``infrafit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from infrafit.errors import InputError

DbOpt = Annotated[Path | None, typer.Option("--db", help="Results database (default: user data dir or INFRAFIT_DB).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="JSON on stdout.")]
QuickOpt = Annotated[bool, typer.Option("--quick", help="Tiny sizes (seconds): smoke tests and CI; big models are "
                                        "narrowed too (printed).")]

bench_app = typer.Typer(help="Measure this machine: a scaled model, memory bandwidth, storage.", no_args_is_help=True)


def _ints(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"{what} {text!r} is not a comma-separated list of integers",
                         fix=f"pass e.g. {what} 1,4,16") from None
    if not values or min(values) < 1:
        raise InputError(f"{what} must list integers >= 1 (got {text!r})", fix=f"pass e.g. {what} 1,4")
    return values


def _names(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    from infrafit.errors import suggest

    names = tuple(v.strip() for v in text.split(",") if v.strip())
    for name in names:
        if name not in allowed:
            raise InputError(f"unknown {what} {name!r}{suggest(name, allowed)}",
                             fix=f"use some of {', '.join(allowed)}")
    return names


class _Recorder:
    """Opens the store, starts a run, commits each measurement and shows it on stderr."""

    def __init__(self, db: Path | None, command: str) -> None:
        from infrafit.bench.hardware import detect_host
        from infrafit.bench.results import start_run
        from infrafit.store import connect

        self.host = detect_host()
        self.conn = connect(db)
        self.run_id = start_run(self.conn, self.host.to_json(), command)
        self.measurements: list[Any] = []

    def __call__(self, m: Any) -> None:
        from infrafit.bench.results import record

        record(self.conn, self.run_id, m)
        self.measurements.append(m)

    def result(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "host": self.host.to_json(),
                "measurements": [m.to_json() for m in self.measurements]}


def _progress(total: int, label: str) -> Any:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from infrafit.commands.output import stderr

    progress = Progress(TextColumn(label), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                        TimeElapsedColumn(), console=stderr, transient=True)
    return progress


def _show(result: dict[str, Any], as_json: bool) -> None:
    from rich.table import Table

    from infrafit.commands.output import print_json, stdout

    if as_json:
        print_json(result)
        return
    table = Table(title=f"bench run {result['run_id']}")
    for col in ("kind", "params", "measured", "unit", "predicted", "error"):
        table.add_column(col)
    for m in result["measurements"]:
        p = m["params"]
        keys = ("batch_size", "seq_len", "phase", "size_bytes", "array_bytes")
        desc = " ".join(f"{k}={p[k]:g}" if isinstance(p[k], float) else f"{k}={p[k]}" for k in keys if p.get(k))
        pred = f"{m['predicted']:.4g}" if m["predicted"] is not None else "-"
        err = f"{m['error']:+.0%}" if m["error"] is not None else "-"
        table.add_row(m["kind"], desc, f"{m['value']:.4g}", m["unit"], pred, err)
    stdout.print(table)


@bench_app.command("run")
def bench_run(
    model: Annotated[str, typer.Argument(help="Library model id (llama3.1-8b, bert-large, resnet50) or config.json.")],
    quick: QuickOpt = False,
    precision: Annotated[str, typer.Option(help="fp32 | bf16 | fp16")] = "fp32",
    device: Annotated[str, typer.Option(help="cpu | cuda")] = "cpu",
    batch_sizes: Annotated[str | None, typer.Option("--batch-sizes", help="e.g. 1,4,16")] = None,
    seq_lens: Annotated[str | None, typer.Option("--seq-lens", help="e.g. 128,512")] = None,
    layers: Annotated[int | None, typer.Option(help="Layers to run (default: as many as fit the budget).")] = None,
    train: Annotated[bool, typer.Option("--train/--no-train", help="Also measure training steps.")] = True,
    budget_s: Annotated[float | None, typer.Option("--budget-s", help="Time budget per measured point.")] = None,
    executor: Annotated[str, typer.Option(help="local (this machine) | ray (once on each node type of the Ray "
                                               "cluster at RAY_ADDRESS, or a local Ray)")] = "local",
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the scaled model (inference sweep + training steps) after a memory triad; store everything."""
    if executor not in ("local", "ray"):
        raise InputError(f"unknown executor {executor!r}", fix="use local or ray")
    if executor == "ray":
        _bench_fleet(model, quick, precision, device, db, as_json,
                     custom=[x for x in (batch_sizes, seq_lens, layers, budget_s) if x is not None] or not train)
        return
    from infrafit.bench.models import DTYPES
    from infrafit.bench.options import positive_int, positive_seconds
    from infrafit.bench.suite import check_device, resolve_arch, run_suite
    from infrafit.commands.output import note

    if precision not in DTYPES:
        raise InputError(f"--precision {precision!r} is not runnable by bench run",
                         fix=f"use one of {', '.join(DTYPES)} (int8 is covered by check-model)")
    check_device(device)
    positive_int(layers, "--layers")
    positive_seconds(budget_s, "--budget-s")
    batches, seqs = _ints(batch_sizes, "--batch-sizes"), _ints(seq_lens, "--seq-lens")
    resolve_arch(model)  # an unknown model fails before the store opens a run
    rec = _Recorder(db, f"bench run {model}")

    def said(shape) -> None:  # noqa: ANN001 - a bench.shapes.BenchShape
        if shape.scaled_note:
            note(f"{shape.model_id} scaled to fit{' --quick' if quick else ''}: {shape.scaled_note}")
        if quick:
            note("--quick is a smoke test: tiny shapes timed a few times on this (possibly busy) host, each point "
                 "after untimed warm-up runs; its errors against the predictions are not an accuracy "
                 "measurement (run without --quick to calibrate)")

    with _progress(1, f"bench {model}") as progress:
        task = progress.add_task("bench", total=1)
        shape = run_suite(model, rec.host, rec, quick=quick, precision=precision, device=device, layers=layers,
                          batch_sizes=batches or None, seq_lens=seqs or None, train=train, budget_s=budget_s,
                          on_shape=said, on_total=lambda n: progress.update(task, total=n),
                          advance=lambda: progress.advance(task))
    _show({**rec.result(), "shape": shape.to_json()}, as_json)


def _bench_fleet(model: str, quick: bool, precision: str, device: str, db: Path | None, as_json: bool,
                 custom: Any) -> None:
    """``bench run --executor ray``: once per node type, every measurement gathered here."""
    from infrafit.bench.fleet import RUNNABLE_PRECISIONS, run_fleet
    from infrafit.bench.suite import resolve_arch
    from infrafit.commands.output import note, print_json, stdout
    from infrafit.store import connect

    if custom:
        raise InputError("--executor ray runs the standard suite on every node type",
                         fix="drop --batch-sizes/--seq-lens/--layers/--budget-s/--no-train, or run locally")
    if precision not in RUNNABLE_PRECISIONS:
        raise InputError(f"--precision {precision!r} is not runnable by bench run",
                         fix=f"use one of {', '.join(RUNNABLE_PRECISIONS)}")
    if device not in ("cpu", "cuda"):
        raise InputError(f"--device {device!r} is unknown", fix="use cpu or cuda")
    resolve_arch(model)  # an unknown model fails here, before any node runs
    nodes = run_fleet(model, quick=quick, precision=precision, device=device, conn=connect(db))
    note(f"bench fleet: {len(nodes)} node type(s) measured")
    if as_json:
        print_json({"nodes": nodes})
        return
    from rich.table import Table

    table = Table(title=f"bench run {model} on {len(nodes)} node type(s)")
    for col in ("run_id", "node", "CPU", "resources", "measurements"):
        table.add_column(col)
    for n in nodes:
        table.add_row(n["run_id"], n["node_id"][:12], str(n["host"].get("cpu_model", "?")),
                      ", ".join(f"{k}={v:g}" for k, v in n["node_type"].items()), str(n["measurements"]))
    stdout.print(table)


@bench_app.command("memory")
def bench_memory(
    size: Annotated[str, typer.Option(help="Bytes per array (3 arrays), e.g. 256MB; >> last-level cache.")] = "256MB",
    quick: QuickOpt = False, db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Host memory bandwidth: a STREAM-style triad a = b + s*c."""
    from infrafit.bench.options import positive_bytes
    from infrafit.bench.suite import Sizes, memory_measurement

    nbytes = positive_bytes(size, "--size")
    if quick:
        nbytes = Sizes.default(True).triad_bytes
    rec = _Recorder(db, "bench memory")
    rec(memory_measurement(rec.host, nbytes, 0.5 if quick else 3.0))
    _show(rec.result(), as_json)


@bench_app.command("storage")
def bench_storage(
    path: Annotated[Path, typer.Option(help="Folder on the storage to test.")] = Path("."),
    size: Annotated[str, typer.Option(help="Sequential test file size, e.g. 1GB.")] = "256MB",
    checkpoint_size: Annotated[str, typer.Option("--checkpoint-size", help="Checkpoint size, e.g. 512MB.")] = "128MB",
    quick: QuickOpt = False, db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Sequential write/read throughput (page cache bypassed where possible) and an fsync'd checkpoint."""
    from infrafit.bench.options import positive_bytes
    from infrafit.bench.suite import Sizes, storage_measurements

    sizes = Sizes.default(quick)
    seq, ckpt = positive_bytes(size, "--size"), positive_bytes(checkpoint_size, "--checkpoint-size")
    if quick:
        seq, ckpt = sizes.storage_bytes, sizes.checkpoint_bytes
    rec = _Recorder(db, f"bench storage {path}")
    for m in storage_measurements(path, seq, ckpt, reps=2 if quick else 3):
        rec(m)
    _show(rec.result(), as_json)


@bench_app.command("import")
def bench_import(
    file: Annotated[Path, typer.Argument(help="A load-test result JSON (vllm bench serve --save-result, guidellm "
                                              "--output-path, aiperf's profile export).", show_default=False)],
    fmt: Annotated[str | None, typer.Option("--format", help="vllm-bench | guidellm | aiperf (default: "
                                                             "detected).")] = None,
    option_from: Annotated[Path | None, typer.Option("--option-from", help="The `plan --json` output whose "
                                                                          "option was load-tested.")] = None,
    rank: Annotated[int, typer.Option(help="The option's rank in --option-from.")] = 1,
    spec: Annotated[Path | None, typer.Option("--spec", help="The plan's spec: predict the option at the load "
                                                             "the test measured (else its planned figures).")] = None,
    db: DbOpt = None, as_json: JsonOpt = False,
) -> None:
    """Store measured serving results (TTFT/TPOT/e2e percentiles, throughput) beside the plan's prediction."""
    from infrafit.bench.serving_import import import_file
    from infrafit.commands.output import note, print_json, stdout
    from infrafit.errors import InputError
    from infrafit.store import connect

    if rank < 1:
        raise InputError(f"--rank {rank} must be at least 1", fix="give the option's rank, e.g. --rank 1")
    out = import_file(connect(db), file, fmt, option_from, rank, spec)
    note(f"stored {len(out['measurements'])} measurements from {len(out['results'])} {out['tool']} result(s) "
         f"as run {out['run_id']}")
    if as_json:
        print_json(out)
        return
    from rich.table import Table

    table = Table(title=f"imported {file.name}" + (f" against option #{rank}" if out["option"] else ""))
    for col in ("kind", "statistic", "measured", "predicted", "error"):
        table.add_column(col)
    for m in out["measurements"]:
        table.add_row(m["kind"], m["params"]["statistic"], f"{m['value']:.4g}",
                      "-" if m["predicted"] is None else f"{m['predicted']:.4g}",
                      "-" if m["error"] is None else f"{m['error']:+.0%}")
    stdout.print(table)


@bench_app.command("history")
def bench_history(
    db: DbOpt = None, as_json: JsonOpt = False,
    csv_file: Annotated[Path | None, typer.Option("--csv", help="Export to this CSV file.")] = None,
    run: Annotated[str | None, typer.Option(help="Only this run id.")] = None,
    kind: Annotated[str | None, typer.Option(help="Only this kind (inference_latency, memory_triad, ...).")] = None,
    limit: Annotated[int | None, typer.Option(help="Newest N rows.")] = None,
) -> None:
    """List stored measurements; export them as JSON or CSV."""
    from infrafit.bench.options import output_file, positive_int, write_error
    from infrafit.bench.results import export_csv, history
    from infrafit.commands.output import note, print_json, stdout
    from infrafit.store import connect

    positive_int(limit, "--limit", example="20")
    if csv_file is not None:
        output_file(csv_file, "--csv")
    rows = history(connect(db), run_id=run, kind=kind, limit=limit)
    if csv_file is not None:
        try:
            export_csv(rows, csv_file)
        except OSError as exc:
            raise write_error(exc, csv_file, "--csv") from None
        note(f"wrote {len(rows)} rows to {csv_file}")
    if as_json:
        print_json({"rows": rows})
    elif csv_file is None:
        from rich.table import Table

        table = Table(title=f"{len(rows)} measurements")
        for col in ("id", "run_id", "kind", "value", "unit", "predicted", "error"):
            table.add_column(col)
        for r in rows:
            table.add_row(str(r["id"]), r["run_id"], r["kind"], f"{r['value']:.4g}", r["unit"],
                          "-" if r["predicted"] is None else f"{r['predicted']:.4g}",
                          "-" if r["error"] is None else f"{r['error']:+.0%}")
        stdout.print(table)


def calibrate_cmd(
    db: DbOpt = None,
    out: Annotated[Path, typer.Option(help="Overlay folder to write (use it as --catalog-dir).")] = Path(
        "infrafit-calibration"),
    as_json: JsonOpt = False,
) -> None:
    """Fit efficiencies from stored bench runs and imported load tests; write a catalog overlay; report MdAPE."""
    from infrafit.bench.calibrate import NOTHING_TO_FIT, NOTHING_TO_FIT_FIX, calibrate_rows, write_overlay
    from infrafit.bench.calibrate_serving import calibrate_serving
    from infrafit.bench.options import output_dir, write_error
    from infrafit.bench.results import history
    from infrafit.catalog import load_catalog
    from infrafit.commands.estimate import estimate_workload
    from infrafit.commands.output import print_json, stdout
    from infrafit.errors import InputError
    from infrafit.store import connect

    output_dir(out, "--out")
    rows = history(connect(db))
    fits = calibrate_rows(rows, required=False)
    serving = calibrate_serving(rows, load_catalog(), estimate_workload)
    if not fits and not serving:
        raise InputError(NOTHING_TO_FIT, fix=NOTHING_TO_FIT_FIX)
    try:
        written = write_overlay(out, fits, rows, serving)
    except OSError as exc:
        raise write_error(exc, out, "--out") from None
    from infrafit.bench.calibrate_serving import warnings

    result: dict[str, Any] = {"fits": fits, "serving_fits": serving, "warnings": warnings(serving),
              "written": [str(p) for p in written], "catalog_dir": str(out)}
    if as_json:
        print_json(result)
        return
    from infrafit.commands.output import note

    for w in result["warnings"]:
        note(w)
    _print_serving_fits(serving)
    for f in fits:
        before = "n/a" if f["mdape_before"] is None else f"{f['mdape_before']:.1%}"
        stdout.print(f"{f['accelerator_id']} {f['precision']}: eff_compute={f['eff_compute']:.3f} "
                     f"eff_memory={f['eff_memory']:.3f} op_overhead={f['op_overhead_s']:.2e}s  "
                     f"MdAPE {before} -> {f['mdape_after']:.1%} over {f['rows']} rows")
    stdout.print(f"overlay written to {out} (use --catalog-dir {out})")


def _print_serving_fits(serving: list[dict[str, Any]]) -> None:
    from infrafit.commands.output import stdout

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1%}"

    for f in serving:
        values = ", ".join(f"{name} {v['before']:.3g} -> {v['after']:.3g}" for name, v in f["values"].items())
        loo = "" if f["loo_mdape"] is None else f", leave-one-result-out {pct(f['loo_mdape'])}"
        stdout.print(f"{f['generation']} {f['stack']} {f['precision']}: {values}  MdAPE {pct(f['mdape_before'])} "
                     f"-> {pct(f['mdape_after'])}{loo} over {f['rows']} p99 rows of {f['results']} load tests")


def check_model_cmd(
    model: Annotated[str, typer.Argument(help="Library model id or config.json.")],
    precisions: Annotated[str, typer.Option(
        help="Comma list of fp32,bf16,fp16,int8 and the simulated serving formats fp8,fp4,int4.")
    ] = "fp32,bf16,fp16,int8",
    targets: Annotated[str, typer.Option(help="Comma list of runtimes.")] = ",".join(
        ("onnxruntime-cpu", "onnxruntime-cuda", "onnxruntime-rocm", "openvino", "xla-tpu", "neuron", "gaudi")),
    batch: Annotated[int, typer.Option(help="Inputs per check.")] = 4,
    seq_len: Annotated[int, typer.Option("--seq-len", help="Tokens per input (decoders, encoders).")] = 32,
    quick: QuickOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Precision consistency (fp32 vs bf16/fp16/int8, simulated fp8/fp4/int4) and operator coverage per runtime."""
    from infrafit.bench.check_model import PRECISIONS, RUNTIMES, coverage, graph_ops, precision_consistency
    from infrafit.bench.hardware import detect_host
    from infrafit.bench.models import build_model, make_inputs
    from infrafit.bench.options import positive_int
    from infrafit.bench.suite import resolve_arch, scaled_shape
    from infrafit.commands.output import print_json, stdout

    positive_int(batch, "--batch", example="4")
    positive_int(seq_len, "--seq-len", example="32")
    precs, runtimes = _names(precisions, PRECISIONS, "precision"), _names(targets, RUNTIMES, "target")
    shape = scaled_shape(resolve_arch(model), detect_host(), quick=quick, layers=1 if quick else 2)
    from infrafit.commands.output import stderr

    net = build_model(shape)
    x = make_inputs(shape, batch, seq_len)
    # Full-width layers of a large model take about a minute on a CPU: say what runs while it does.
    with stderr.status(f"{shape.model_id} x{shape.num_layers} layers: {len(precs)} precision(s), graph export"):
        consistency = precision_consistency(net, x, precs)
        layers = graph_ops(net, x)
    result: dict[str, Any] = {"model": shape.model_id, "shape": shape.to_json(), "precision": consistency}
    result["ops_by_layer"] = layers
    result["coverage"] = coverage(layers, runtimes)
    if as_json:
        print_json(result)
        return
    for prec, r in result["precision"].items():
        if r["status"] == "ok":
            stdout.print(f"{prec}: cosine {r['cosine_similarity']:.5f}  top-1 {r['top1_agreement']:.0%}  "
                         f"max|err| {r['max_abs_error']:.3g}  rel L2 {r['rel_l2_error']:.3g}")
        else:
            stdout.print(f"{prec}: {r['status']} ({r['reason']})")
    for runtime, c in result["coverage"].items():
        stdout.print(f"{runtime}: {c['supported']}/{c['ops']} ops supported, {c['unsupported']} unsupported, "
                     f"{c['unknown']} unknown")
        for layer, bad in c["problems_by_layer"].items():
            stdout.print(f"   {layer}: " + ", ".join(f"{b['op']} ({b['status']})" for b in bad))


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""
    app.add_typer(bench_app, name="bench")
    app.command("calibrate")(calibrate_cmd)
    app.command("check-model")(check_model_cmd)
