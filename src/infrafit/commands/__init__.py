"""Each area's commands. A module here owns one area and exposes ``register(app)``.

Keep imports of numpy, pandas, plotly, torch and psutil inside the command functions so that
``infrafit --help`` and start-up stay fast.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from infrafit.commands import bench, catalog, check, diff, estimate, monitor, plan, sweep

ALL_AREAS: list[Callable[[typer.Typer], None]] = [
    check.register,
    catalog.register,
    estimate.register,
    plan.register,
    diff.register,
    bench.register,
    monitor.register,
    sweep.register,
]
