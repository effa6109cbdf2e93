"""``infrafit diff OLD.json NEW.json [--md] [--json] [--fail-above PCT]``: what changed between two plans."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""

    @app.command("diff")
    def diff_command(
        old: Annotated[Path, typer.Argument(help="The earlier `plan --json` output.")],
        new: Annotated[Path, typer.Argument(help="The later `plan --json` output.")],
        markdown: Annotated[bool, typer.Option("--md", help="Markdown (a pull-request comment).")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
        fail_above: Annotated[float | None, typer.Option("--fail-above", help="Exit 1 when the top option's TCO "
                                                                               "rises more than PCT percent.")] = None,
    ) -> None:
        """Compare two plans: the top option, its cost and performance, each rank, the exclusions."""
        from infrafit.commands.output import print_json, stdout
        from infrafit.errors import InputError
        from infrafit.report.plan_diff import diff_plans, render_diff

        if fail_above is not None and fail_above < 0:
            raise InputError(f"--fail-above {fail_above:g} is negative", fix="give a percentage, e.g. --fail-above 5")
        result = diff_plans(_read_plan(old), _read_plan(new))
        if as_json:
            print_json(result)
        else:
            stdout.print(render_diff(result, markdown=markdown), end="", highlight=False, markup=False)
        change = result["top"]["tco_change_fraction"]
        if fail_above is not None and change is not None and change * 100.0 > fail_above:
            raise typer.Exit(1)


def _read_plan(path: Path) -> dict:
    import json

    from infrafit import safe_io
    from infrafit.errors import InputError

    text = safe_io.read_text_capped(path, safe_io.IMPORT_MAX_BYTES, "plan JSON")
    fix = "pass files written by `infrafit plan SPEC --json`"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{path}: not JSON ({exc})", fix=fix) from None
    if not isinstance(data, dict) or not isinstance(data.get("options"), list):
        raise InputError(f"{path}: not a plan (no options list)", fix=fix)
    return data
