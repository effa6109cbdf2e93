"""``infrafit plan SPEC``: ranked, explained infrastructure options for a workload (the main job)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from infrafit.commands.options import SetOpt

if TYPE_CHECKING:
    from infrafit.search.types import Plan


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""

    @app.command("plan")
    def plan_command(
        spec: Annotated[Path, typer.Argument(help="Workload spec (YAML).")],
        objective: Annotated[str, typer.Option(help="cost | latency | time | balanced | carbon")] = "cost",
        top: Annotated[int, typer.Option(help="How many options to show.")] = 5,
        json_out: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
        report: Annotated[Path | None, typer.Option(help="Write a report: FILE.html or FILE.md.")] = None,
        show_all: Annotated[bool, typer.Option("--all", help="Rank without the diversity rule: near-copies "
                                                             "(the same chip elsewhere) too.")] = False,
        verified_only: Annotated[bool, typer.Option("--verified-only", help="Drop offers no source confirms "
                                                    "in their region (availability: unverified).")] = False,
        max_price_age_days: Annotated[int | None, typer.Option("--max-price-age-days", help="Drop offers priced "
                                                               "more than N days ago.")] = None,
        sets: SetOpt = None,
        export: Annotated[Path | None, typer.Option("--export", help="Write what to run per option into DIR "
                                                    "(serve.sh, k8s.yaml, loadtest.sh, skypilot.yaml).")] = None,
        explain: Annotated[int | None, typer.Option("--explain", help="Print the full reasoning of option N "
                                                    "(why, risks, cost items, server) instead of the table.")] = None,
        risk: Annotated[str | None, typer.Option("--risk", help="p50 | p90: check the SLOs and the training "
                                                 "deadline at this point of each prediction's uncertainty band "
                                                 "(default: the spec's inference.slo.risk / training.risk, "
                                                 "p90).")] = None,
    ) -> None:
        """Search, rank and explain infrastructure options for SPEC."""
        if explain is not None and explain < 1:  # a rank past --top may exist: "stay as is" ranks after the top N
            from infrafit.errors import InputError

            raise InputError(f"--explain {explain} is not a rank", fix=f"give a rank from 1 to {top} (or raise --top)")
        run_plan(spec, objective=objective, top=top, json_out=json_out, report=report, diverse=not show_all,
                 verified_only=verified_only, max_price_age_days=max_price_age_days, sets=tuple(sets or ()),
                 export=export, explain=explain, risk=risk)


def run_plan(spec: Path, *, objective: str = "cost", top: int = 5, json_out: bool = False,
             report: Path | None = None, diverse: bool = True, verified_only: bool = False,
             max_price_age_days: int | None = None, sets: tuple[str, ...] = (),
             export: Path | None = None, explain: int | None = None, risk: str | None = None) -> Plan:
    """The pure program: load, plan, print, write the report; exit 3 (``NoFeasibleOption``) when empty."""
    from infrafit.catalog import load_catalog
    from infrafit.errors import InputError, NoFeasibleOption
    from infrafit.search.planner import plan
    from infrafit.workload.fleet import Fleet, load_spec_or_fleet

    if report is not None and report.suffix.lower() not in (".html", ".htm", ".md", ".markdown"):
        raise InputError(f"--report {report}: unknown report type {report.suffix or '(none)'!r}",
                         fix="name the file with .html or .md")
    if report is not None:
        _check_writable(report)
    catalog = load_catalog()
    workload = load_spec_or_fleet(spec, catalog, sets)
    if risk is not None:  # the spec field inference.slo.risk or training.risk (every item of a fleet), validated
        # like the YAML
        workload = load_spec_or_fleet(spec, catalog, (*sets, *risk_sets(workload, risk)))
    if isinstance(workload, Fleet):
        return run_fleet(spec, workload, catalog, top=top, json_out=json_out, report=report, export=export, refused={
            "--objective": None if objective == "cost" else objective,
            "--verified-only": verified_only or None, "--max-price-age-days": max_price_age_days})
    result = plan(workload, catalog, objective=objective, top=top, diverse=diverse, verified_only=verified_only,
                  max_price_age_days=max_price_age_days)
    if json_out:
        from infrafit.commands.output import print_json

        print_json(result.to_dict())
    elif explain is not None and result.options:
        from infrafit.commands.output import stdout
        from infrafit.report.render import render_explain

        render_explain(result, explain, stdout)
    else:
        from infrafit.commands.output import stdout
        from infrafit.report.render import render_terminal

        render_terminal(result, stdout)
    if report is not None and result.options:
        from infrafit.commands.output import note as say
        from infrafit.report.render import write_report

        write_report(result, report)
        from infrafit.units import KiB

        say(f"wrote report {report} ({report.stat().st_size / KiB:,.0f} KiB, {len(result.options)} options)")
    if export is not None and result.options:
        from infrafit.commands.output import note
        from infrafit.export import write_export

        written = write_export(result, workload, catalog, export, top)
        note(f"exported {len(written)} files for {min(top, len(result.options))} option(s) to {export} "
             f"(index: {export / 'index.json'})")
    if not result.options:
        reasons = "; ".join(f"{e.what}: {e.reason}" for e in result.excluded[:8])
        raise NoFeasibleOption(f"no option meets the hard constraints of {spec.name} ({reasons})",
                               fix="relax an SLO, the deadline, the budget, placement or allowed deployments")
    return result


def risk_sets(workload, risk: str) -> list[str]:
    """``--set`` items that give ``risk`` to the spec's ``inference.slo.risk`` and ``training.risk``; for a fleet,
    to each item's own (``workloads[i]....``), so an item's own risk does not win over the flag."""
    from infrafit.workload.fleet import Fleet

    def fields(w) -> list[str]:
        return [f for f, section in (("inference.slo.risk", w.inference), ("training.risk", w.training))
                if section is not None]

    if isinstance(workload, Fleet):
        return [f"workloads[{i}].{f}={risk}" for i, w in enumerate(workload.workloads) for f in fields(w)]
    return [f"{f}={risk}" for f in fields(workload)]


def run_fleet(spec: Path, fleet, catalog, *, top: int, json_out: bool, refused: dict, report: Path | None = None,
              export: Path | None = None):
    """A fleet spec (``workloads: [...]``): each workload's plan and the combined fleet (``search.fleet``),
    with ``report`` the fleet report (the summary, then each workload's plan) and with ``export`` each
    workload's export in a folder of its own (``export.render_fleet_export``)."""
    from infrafit.errors import InputError, NoFeasibleOption
    from infrafit.search.fleet import plan_fleet

    given = [k for k, v in refused.items() if v not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to a fleet spec yet",
                         fix="plan one workload of the fleet on its own for those, or drop them")
    result = plan_fleet(fleet, catalog, top=top)
    if json_out:
        from infrafit.commands.output import print_json

        print_json(result)
    else:
        from infrafit.commands.output import stdout
        from infrafit.report.render import render_fleet

        render_fleet(result, stdout)
    if report is not None and result["workloads"]:
        from infrafit.commands.output import note as say
        from infrafit.report.render import write_report
        from infrafit.units import KiB

        write_report(result, report)
        say(f"wrote report {report} ({report.stat().st_size / KiB:,.0f} KiB, {len(result['workloads'])} workloads)")
    if export is not None and result["workloads"]:
        from infrafit.commands.output import note
        from infrafit.export import render_fleet_export, write_export_files

        written = write_export_files(render_fleet_export(result, fleet.workloads, catalog, top), export)
        note(f"exported {len(written)} files for {len(result['workloads'])} workloads to {export} "
             f"(index: {export / 'index.json'})")
    if result["combined"] is None:
        raise NoFeasibleOption(f"no option for {', '.join(e['what'] for e in result['excluded'])} in {spec.name}",
                               fix="plan that workload alone to see why, and relax its constraints")
    return result


def _check_writable(report: Path) -> None:
    """Refuse a report path that cannot be written before any planning output (exit 2)."""
    import os

    from infrafit.errors import InputError

    parent = report.parent if str(report.parent) else Path(".")
    if report.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        why = "is a directory" if report.is_dir() else f"its folder {parent} does not exist or is not writable"
        raise InputError(f"--report {report}: cannot write the report ({why})",
                         fix="give a file path in an existing, writable folder")
