"""Shared output helpers: JSON on stdout, diagnostics on stderr, rich tables on a terminal."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from rich.console import Console

#: Piped output (a file, `less`, CI logs) gets a wide page instead of rich's 80-column default, so
#: tables do not fold every cell; a terminal keeps its own width.
PIPE_WIDTH = 140


class _Console(Console):
    """rich's console, except when the reader of a pipe goes away (``infrafit plan ... | head``): rich then
    points stdout at /dev/null and exits 1, which reads as an internal error; this raises BrokenPipeError,
    which the CLI's shell ends with exit 0 (``cli.main``)."""

    def on_broken_pipe(self) -> None:
        try:
            super().on_broken_pipe()
        except SystemExit:
            raise BrokenPipeError("stdout closed by its reader") from None


#: markup off: what is printed carries names from specs, catalogs, overlays and commands, and rich would read
#: ``[sum(x) for x in y]`` as a style tag (the text vanished) and ``[/bold]`` as a closing one (MarkupError,
#: an internal error); emphasis goes through rich Text (``report.render._bold``)
stdout = _Console(soft_wrap=False, width=None if sys.stdout.isatty() else PIPE_WIDTH, markup=False)
stderr = _Console(stderr=True, markup=False)


def _clean(value: Any) -> Any:
    """Make a value JSON-safe: NaN/inf -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str | bytes):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout."""
    sys.stdout.write(json.dumps(_clean(data), indent=2, sort_keys=False) + "\n")


def note(text: str) -> None:
    """A diagnostic line on stderr."""
    stderr.print(text, highlight=False)
