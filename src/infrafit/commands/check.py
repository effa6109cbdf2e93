"""``infrafit check SPEC [--explain] [--json]``: validate a workload spec, listing every problem.

Exit 0 with a short summary on stdout when the spec is valid (``--explain`` prints the resolved
spec with each default marked, ``--json`` prints it as JSON); exit 2 with every problem on stderr
(file:line, field path, what, suggestions, ``To fix:``) when it is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from infrafit.commands.options import SetOpt


def _summary(w) -> str:  # noqa: ANN001 - Workload, imported lazily
    ref = w.model
    model = ref.preset or (Path(ref.config).name if ref.config else "inline architecture")
    parts = [w.task, f"model {model}", w.framework]
    if w.inference is not None:
        tr = w.inference.traffic
        rate = f"{tr.requests_per_s:g} req/s" if tr.requests_per_s else f"{tr.items.per_day:g} items/day"
        parts.append(f"{w.inference.mode} {rate}")
    if w.training is not None:
        tr = w.training
        amount = f"{tr.tokens:.3g} tokens" if tr.tokens else f"{tr.total_samples:.3g} samples"
        deadline = f" in {tr.deadline_days:g} days" if tr.deadline_days else ""
        parts.append(f"{tr.method} training on {amount}{deadline}")
    parts.append(f"usage {w.usage.pattern}")
    parts.append(f"horizon {w.horizon_months} months")
    return f"OK {w.name}: " + ", ".join(parts)


def check(
    spec: Annotated[Path, typer.Argument(help="The workload spec (YAML).", show_default=False)],
    explain: Annotated[bool, typer.Option("--explain", help="Print the resolved spec, defaults marked.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the resolved spec as JSON.")] = False,
    sets: SetOpt = None,
) -> None:
    """Validate a workload spec; list every problem with file:line and how to fix it."""
    from infrafit.catalog import load_catalog
    from infrafit.commands.output import print_json
    from infrafit.workload.fleet import Fleet, load_spec_or_fleet
    from infrafit.workload.spec_explain import render_yaml

    workload = load_spec_or_fleet(spec, load_catalog(), sets or ())  # names checked against the catalog
    if isinstance(workload, Fleet):  # a fleet: every workload, resolved
        if as_json:
            print_json({"name": workload.name, "workloads": [w.resolved() for w in workload.workloads]})
            return
        typer.echo(f"OK fleet {workload.name}: {len(workload.workloads)} workloads")
        for w in workload.workloads:
            typer.echo("  " + _summary(w))
            if explain:
                typer.echo("\n".join(render_yaml(w.explain())))
        return
    if as_json:
        print_json(workload.resolved())
        return
    typer.echo(_summary(workload))
    if explain:
        typer.echo("\n".join(render_yaml(workload.explain())))


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""
    app.command("check")(check)
