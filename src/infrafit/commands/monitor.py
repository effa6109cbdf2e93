"""`infrafit monitor`: watch a command, a pid or the machine; summarise the bottleneck and cost."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command(
        "monitor",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="Observe a running workload: `infrafit monitor -- CMD ...`, `--pid PID`, or the machine.",
    )(monitor_cmd)


def monitor_cmd(
    ctx: typer.Context,
    pid: Annotated[int | None, typer.Option("--pid", help="Watch this process and its children.")] = None,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between samples.")] = 1.0,
    duration: Annotated[float | None, typer.Option("--duration", help="Stop after this many seconds.")] = None,
    db: Annotated[Path | None, typer.Option("--db", help="Results database (default: user data dir).")] = None,
    usd_per_hour: Annotated[float | None, typer.Option("--usd-per-hour", help="Machine price for costs.")] = None,
    offer: Annotated[str | None, typer.Option("--offer", help="Catalog offer id giving the machine's price.")] = None,
    prometheus: Annotated[int | None, typer.Option("--prometheus", help="Serve metrics on this port.")] = None,
    bind: Annotated[str, typer.Option("--bind", help="Address for --prometheus.")] = "127.0.0.1",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    import sys

    from infrafit.commands.output import note, print_json, stdout
    from infrafit.monitor.live import LiveView
    from infrafit.monitor.rightsize import cpu_advice
    from infrafit.monitor.run import monitor

    command = list(ctx.args)
    if command and command[0] == "--":
        command = command[1:]
    price = usd_per_hour
    if offer is not None:
        price = _offer_price(offer)
    exporter = None
    if prometheus is not None:
        from infrafit.monitor.prometheus import Exporter

        exporter = Exporter(prometheus, bind)
        note(f"serving Prometheus metrics on http://{bind}:{prometheus}/metrics")
    live = LiveView() if sys.stderr.isatty() and not as_json else None

    def on_sample(sample, bottleneck):  # type: ignore[no-untyped-def]
        if exporter:
            exporter.update(sample, bottleneck)
        if live:
            live.update(sample, bottleneck)

    import psutil

    try:
        result = monitor(command=command or None, pid=pid, interval_s=interval, duration_s=duration, db=db,
                         usd_per_hour=price, on_sample=on_sample,
                         advise=lambda s, _p: cpu_advice(s, psutil.cpu_count() or 1))
    finally:
        if live:
            live.stop()
        if exporter:
            exporter.close()
    data = result.to_json()
    if as_json:
        print_json(data)
    else:
        _print_summary(data, stdout)
    if result.gpu_note:
        note(result.gpu_note)


def _offer_price(offer_id: str) -> float:
    from infrafit.catalog import load_catalog
    from infrafit.errors import InputError, suggest

    offers = load_catalog().offers
    match = offers[offers["offer_id"] == offer_id] if "offer_id" in offers.columns else offers.iloc[0:0]
    if match.empty:
        ids = list(offers["offer_id"]) if "offer_id" in offers.columns else []
        raise InputError(f"--offer {offer_id!r}: no such offer{suggest(offer_id, ids)}",
                         fix="list offers with `infrafit catalog offers`, or pass --usd-per-hour")
    row = match.iloc[0]
    if "usd_per_hour" in row and row["usd_per_hour"] == row["usd_per_hour"]:
        return float(row["usd_per_hour"])
    raise InputError(f"--offer {offer_id!r} has no hourly price", fix="pass --usd-per-hour instead")


def _print_summary(data, console) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    from infrafit.units import fmt_bytes, fmt_duration, fmt_usd

    console.print(f"[bold]{data['target']}[/bold]: {fmt_duration(data['duration_s'])}, "
                  f"{data['samples']} samples, bottleneck [bold]{data['bottleneck']}[/bold]", highlight=False)
    table = Table("bottleneck", "share of time", "evidence")
    for name, share in sorted(data["shares"].items(), key=lambda kv: -kv[1]):
        table.add_row(name, f"{share:.0%}", data["evidence"].get(name, ""))
    console.print(table)
    load = data["load"]
    line = f"CPU p95 {load['cpu_busy_cores_p95']:.2f} cores"
    if load["rss_peak_bytes"]:
        line += f", peak RSS {fmt_bytes(load['rss_peak_bytes'])}"
    if load["gpu_util_mean"] is not None:
        line += f", GPU busy {load['gpu_util_mean']:.0%}"
    console.print(line, highlight=False)
    if data["cost"]["usd_per_hour"] is not None:
        console.print(f"cost: {fmt_usd(data['cost']['run_usd'])} this run at "
                      f"{fmt_usd(data['cost']['usd_per_hour'])}/h", highlight=False)
    for advice in data["right_sizing"]:
        console.print(f"right-size: {advice}", highlight=False)
