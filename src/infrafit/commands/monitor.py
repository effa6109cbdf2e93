"""`infrafit monitor`: watch a command, a pid or the machine; summarise the bottleneck and cost."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from infrafit.errors import ExitCode


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
    from infrafit.monitor.run import monitor

    _check_options(duration, usd_per_hour, prometheus)
    command = list(ctx.args)
    if command and command[0] == "--":
        command = command[1:]
    price = usd_per_hour
    offer_row = _offer_row(offer) if offer is not None else None
    if offer_row is not None and price is None:
        price = float(offer_row["usd_per_hour"])
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
                         advise=_advise(offer_row, psutil.cpu_count() or 1))
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
    if result.stopped_by == "SIGTERM":  # summary stored, watched command stopped: exit as a terminated process
        note("stopped by SIGTERM: summary stored, the watched command was stopped")
        raise typer.Exit(code=ExitCode.TERMINATED)


def _check_options(duration: float | None, usd_per_hour: float | None, port: int | None) -> None:
    """Reject option values that cannot mean anything before any sampling or binding starts."""
    import math

    from infrafit.errors import InputError

    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise InputError(f"--duration {duration}: must be > 0 seconds",
                         fix="use e.g. --duration 60, or leave it out to watch until the workload ends")
    if usd_per_hour is not None and not (math.isfinite(usd_per_hour) and usd_per_hour >= 0):
        raise InputError(f"--usd-per-hour {usd_per_hour}: must be a price >= 0",
                         fix="give the machine's hourly price, e.g. --usd-per-hour 2.5")
    if port is not None and not 1 <= port <= 65535:
        raise InputError(f"--prometheus {port}: not a TCP port (1 to 65535)",
                         fix="choose a free port, e.g. --prometheus 9464")


def _offer_row(offer_id: str) -> dict:  # type: ignore[type-arg]
    from infrafit.catalog import load_catalog
    from infrafit.errors import InputError, suggest

    offers = load_catalog().offers
    match = offers[offers["id"] == offer_id]
    if match.empty:
        raise InputError(f"--offer {offer_id!r}: no such offer{suggest(offer_id, list(offers['id']))}",
                         fix="list offers with `infrafit catalog offers`, or pass --usd-per-hour")
    row = match.iloc[0].to_dict()
    if not row.get("usd_per_hour") == row.get("usd_per_hour") or row.get("usd_per_hour") is None:
        raise InputError(f"--offer {offer_id!r} ({row['mode']}) has no hourly price",
                         fix="pick a cloud offer, or pass --usd-per-hour")
    return row


def _advise(offer: dict | None, cores: int):  # type: ignore[no-untyped-def,type-arg]
    """CPU advice always; GPU advice against the catalog's hourly offers when the machine's offer is known."""
    from infrafit.monitor.rightsize import cpu_advice, gpu_advice

    def advise(summary, _usd_per_hour):  # type: ignore[no-untyped-def]
        advice = cpu_advice(summary, cores)
        if offer is not None and summary.gpu_util_mean is not None:
            from infrafit.catalog import load_catalog

            catalog = load_catalog()
            current = catalog.accelerator(offer["accelerator_id"])
            hourly = catalog.offers[(catalog.offers["mode"] == offer["mode"])
                                    & catalog.offers["usd_per_hour"].notna()]
            per_accel = [(catalog.accelerator(r.accelerator_id), r.usd_per_hour / r.accelerator_count)
                         for r in hourly.itertuples() if r.accelerator_count]
            current_usd = offer["usd_per_hour"] / max(1, offer["accelerator_count"])
            advice += gpu_advice(summary, current, per_accel, current_usd)
        return advice

    return advise


def _print_summary(data, console) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table
    from rich.text import Text

    from infrafit.units import fmt_bytes, fmt_duration, fmt_usd

    console.print(Text.assemble((str(data["target"]), "bold"), f": {fmt_duration(data['duration_s'])}, "
                                f"{data['samples']} samples, bottleneck ", (str(data["bottleneck"]), "bold")),
                  highlight=False)
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
