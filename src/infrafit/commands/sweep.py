"""``infrafit sweep SPEC --grid path=v1,v2 [--grid ...] [--executor local|ray] [--out FILE] [--report FILE.html]``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""

    @app.command("sweep")
    def sweep_command(
        spec: Annotated[Path, typer.Argument(help="The workload spec (YAML).", show_default=False)],
        grid: Annotated[list[str], typer.Option("--grid", help="A field and its values: path=v1,v2,... (repeat "
                                                "for more axes; the points are every combination).")],
        executor: Annotated[str, typer.Option(help="local (a process pool) | ray (tasks on RAY_ADDRESS, or a "
                                                   "local Ray)")] = "local",
        top: Annotated[int, typer.Option(help="Options kept per point.")] = 1,
        objective: Annotated[str, typer.Option(help="cost | latency | time | balanced | carbon")] = "cost",
        workers: Annotated[int | None, typer.Option(help="Processes of the local executor (default: CPUs).")] = None,
        out: Annotated[Path | None, typer.Option("--out", help="Rows to FILE (.csv, .json or .parquet).")] = None,
        report: Annotated[Path | None, typer.Option("--report", help="An HTML page: the top option's TCO and "
                                                                      "hardware against the first axis.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    ) -> None:
        """Plan every point of a grid of spec overrides; one row per point and option rank."""
        from infrafit.commands.output import note, print_json, stdout
        from infrafit.errors import InputError
        from infrafit.search.sweep import check_out, parse_axis, report_html, sweep, write_rows

        if out is not None:
            check_out(out)
        if report is not None and report.suffix.lower() not in (".html", ".htm"):
            raise InputError(f"--report {report}: unknown file type {report.suffix or '(none)'!r}",
                             fix="name it .html")
        axes = [parse_axis(g) for g in grid]
        rows = sweep(spec, axes, top=top, objective=objective, executor=executor, workers=workers,
                     progress=_progress())
        if out is not None:
            write_rows(rows, out)
            note(f"wrote {len(rows)} rows to {out}")
        if report is not None:
            from infrafit import safe_io

            safe_io.atomic_write_text(report, report_html(rows, axes, spec.stem))
            note(f"wrote report {report}")
        if as_json:
            print_json(rows)
            return
        _table(rows, axes, stdout)


def _progress():
    """A progress line on stderr (diagnostics), updated per finished point."""
    from infrafit.commands.output import note

    def tick(done: int, total: int) -> None:
        if done == total or done % max(total // 10, 1) == 0:
            note(f"sweep: {done}/{total} points planned")

    return tick


def _table(rows, axes, console) -> None:
    from rich.table import Table

    from infrafit.units import fmt_usd

    table = Table(title=f"infrafit sweep ({len({r['point'] for r in rows})} points)")
    for col in [a.path for a in axes] + ["#", "top option", "TCO"]:
        table.add_column(col, overflow="fold")
    for r in rows:
        what = r["error"] if r.get("error") else (f"{r['count']}x {r['accelerator']} {r['precision']} · "
                                                  f"{r['deployment']} · {r['provider']} · {r['region']}")
        table.add_row(*[str(r.get(a.path)) for a in axes], str(r.get("rank") or "-"), what,
                      fmt_usd(r["tco_usd"]) if r.get("tco_usd") is not None else "-")
    console.print(table)
