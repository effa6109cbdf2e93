"""The local SQLite results store: bench measurements and monitor samples.

One file, by default in the user's data directory (``$XDG_DATA_HOME/infrafit/results.db``,
overridable with ``INFRAFIT_DB`` or ``--db``). Writes are committed row batch by row batch in WAL
mode, so a crash or Ctrl-C mid-run loses nothing already measured, and a reader never sees a
half-written batch. Each area creates its own tables through :func:`ensure_schema`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from infrafit.errors import InputError


def default_db_path() -> Path:
    """``INFRAFIT_DB``, else ``$XDG_DATA_HOME/infrafit/results.db`` (``~/.local/share`` by default)."""
    env = os.environ.get("INFRAFIT_DB")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "infrafit" / "results.db"


def connect(path: Path | str | None = None) -> sqlite3.Connection:
    """Open (creating if needed) the results database with durable, crash-safe settings."""
    db_path = Path(path) if path is not None else default_db_path()
    if db_path.exists() and db_path.is_dir():
        raise InputError(
            f"results database {db_path} is a directory",
            fix="pass a file path with --db (e.g. --db ./results.db)",
        )
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(db_path, timeout=10.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except (OSError, sqlite3.Error) as exc:
        raise InputError(
            f"cannot open results database {db_path}: {exc}",
            fix="pass a writable file path with --db, or set INFRAFIT_DB",
        ) from None
    conn.row_factory = sqlite3.Row
    return conn


def ensure_schema(conn: sqlite3.Connection, ddl: str) -> None:
    """Create an area's tables (``CREATE TABLE IF NOT EXISTS ...`` statements)."""
    with transaction(conn):
        conn.executescript(ddl)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Commit on success, roll back on error: a batch lands whole or not at all. A database that
    cannot be written (read-only file or folder, full disk, locked past the timeout) is an
    ``InputError`` (exit 2); what was committed before stays."""
    try:
        with conn:
            yield conn
    except sqlite3.OperationalError as exc:
        raise InputError(f"cannot write the results database: {exc}",
                         fix="free disk space, or pass a writable file with --db (or INFRAFIT_DB)") from None
