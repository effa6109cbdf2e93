"""Monitor runs and samples in the SQLite results store (one commit per sample: nothing is lost)."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from infrafit.monitor.sampler import Sample
from infrafit.store import ensure_schema, transaction

DDL = """
CREATE TABLE IF NOT EXISTS monitor_runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at_unix_s REAL NOT NULL,
    target TEXT NOT NULL,
    interval_s REAL NOT NULL,
    host_json TEXT NOT NULL,
    usd_per_hour REAL,
    summary_json TEXT
);
CREATE TABLE IF NOT EXISTS monitor_samples (
    run_id INTEGER NOT NULL REFERENCES monitor_runs(run_id),
    t_s REAL NOT NULL,
    bottleneck TEXT NOT NULL,
    sample_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS monitor_samples_run ON monitor_samples(run_id, t_s);
"""


def start_run(conn: sqlite3.Connection, target: str, interval_s: float, host: dict[str, Any],
              usd_per_hour: float | None) -> int:
    ensure_schema(conn, DDL)
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO monitor_runs (started_at_unix_s, target, interval_s, host_json, usd_per_hour)"
            " VALUES (?, ?, ?, ?, ?)",
            (time.time(), target, interval_s, json.dumps(host), usd_per_hour),
        )
    return int(cur.lastrowid or 0)


def add_sample(conn: sqlite3.Connection, run_id: int, sample: Sample, bottleneck: str) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO monitor_samples (run_id, t_s, bottleneck, sample_json) VALUES (?, ?, ?, ?)",
            (run_id, sample.t_s, bottleneck, json.dumps(sample.to_row())),
        )


def finish_run(conn: sqlite3.Connection, run_id: int, summary: dict[str, Any]) -> None:
    with transaction(conn):
        conn.execute("UPDATE monitor_runs SET summary_json = ? WHERE run_id = ?", (json.dumps(summary), run_id))
