"""Settings scoped to one command, importable without the heavy libraries (the CLI's start-up path).

``ACTIVE_OVERLAY`` holds the ``--catalog-dir`` of the command running now: the CLI sets it for one
call and resets it when the command closes, so in-process callers and tests never inherit another
call's overlay. ``overlay_dir()`` is what every overlay reader asks.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path

#: The environment variable a user may set instead of ``--catalog-dir`` (read, never written).
CATALOG_ENV_VAR = "INFRAFIT_CATALOG"
ACTIVE_OVERLAY: ContextVar[str | None] = ContextVar("infrafit_catalog_overlay", default=None)


def overlay_dir(explicit: str | Path | None = None) -> str | None:
    """The overlay folder in force: the argument, else the command's ``--catalog-dir``, else the
    ``INFRAFIT_CATALOG`` environment variable a user set, else none."""
    found = explicit or ACTIVE_OVERLAY.get() or os.environ.get(CATALOG_ENV_VAR)
    return str(found) if found else None
