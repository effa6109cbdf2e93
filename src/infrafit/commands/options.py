"""Options shared by several commands."""

from __future__ import annotations

from typing import Annotated

import typer

#: ``--set path=value`` (repeatable) on check, plan and estimate: a spec field overridden before validation.
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="Override a spec field before validation: path=value, repeatable "
                  "(e.g. --set inference.traffic.requests_per_s=40 --set placement.users_in=[tokyo]).")]
