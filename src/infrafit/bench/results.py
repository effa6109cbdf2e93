"""The bench tables of the results store: one row per measurement, committed as it completes.

Each :func:`record` is its own transaction (WAL mode, see :mod:`infrafit.store`), so a crash or
Ctrl-C in the middle of a sweep keeps every measurement finished before it.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infrafit.store import ensure_schema, transaction

DDL = """
CREATE TABLE IF NOT EXISTS bench_runs (
    run_id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    host_json TEXT NOT NULL,
    command TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_measurements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES bench_runs(run_id),
    measured_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    params_json TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    spread_json TEXT NOT NULL,
    predicted REAL,
    error REAL,
    prediction_json TEXT
);
CREATE INDEX IF NOT EXISTS bench_measurements_run ON bench_measurements(run_id);
"""

COLUMNS = ("id", "run_id", "measured_at", "kind", "params", "value", "unit", "spread", "predicted", "error",
           "prediction", "host")


@dataclass(frozen=True)
class Measurement:
    """One measured number, its spread, and the model's prediction for the same thing.

    ``error`` is the signed relative error ``(predicted - measured) / measured``; its absolute value is
    the APE used by ``validate`` and ``calibrate``.
    """

    kind: str  # e.g. "inference_latency", "training_throughput", "memory_triad", "storage_write"
    params: dict[str, Any]
    value: float
    unit: str  # e.g. "s", "tokens_per_s", "bytes_per_s"
    spread: dict[str, float] = field(default_factory=dict)
    predicted: float | None = None
    prediction: dict[str, Any] = field(default_factory=dict)

    @property
    def error(self) -> float | None:
        if self.predicted is None or not self.value or not math.isfinite(self.predicted):
            return None
        return (self.predicted - self.value) / self.value

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "params": self.params, "value": self.value, "unit": self.unit,
                "spread": self.spread, "predicted": self.predicted, "error": self.error,
                "prediction": self.prediction}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def start_run(conn: sqlite3.Connection, host: dict[str, Any], command: str) -> str:
    """Create the run row and return its id."""
    ensure_schema(conn, DDL)
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    with transaction(conn):
        conn.execute("INSERT INTO bench_runs VALUES (?, ?, ?, ?)", (run_id, _now(), json.dumps(host), command))
    return run_id


def record(conn: sqlite3.Connection, run_id: str, m: Measurement) -> int:
    """Insert and commit one measurement now; returns its row id."""
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO bench_measurements (run_id, measured_at, kind, params_json, value, unit, spread_json,"
            " predicted, error, prediction_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, _now(), m.kind, json.dumps(m.params, sort_keys=True), float(m.value), m.unit,
             json.dumps(m.spread), m.predicted, m.error, json.dumps(m.prediction)),
        )
    return int(cur.lastrowid or 0)


def history(conn: sqlite3.Connection, *, run_id: str | None = None, kind: str | None = None,
            limit: int | None = None) -> list[dict[str, Any]]:
    """Stored measurements, newest first, with parsed JSON fields and the run's host."""
    ensure_schema(conn, DDL)
    sql = ("SELECT m.*, r.host_json FROM bench_measurements m JOIN bench_runs r USING (run_id)"
           " WHERE (? IS NULL OR m.run_id = ?) AND (? IS NULL OR m.kind = ?) ORDER BY m.id DESC")
    args: list[Any] = [run_id, run_id, kind, kind]
    if limit:
        sql += " LIMIT ?"
        args.append(limit)
    rows = []
    for r in conn.execute(sql, args):
        rows.append({"id": r["id"], "run_id": r["run_id"], "measured_at": r["measured_at"], "kind": r["kind"],
                     "params": json.loads(r["params_json"]), "value": r["value"], "unit": r["unit"],
                     "spread": json.loads(r["spread_json"]), "predicted": r["predicted"], "error": r["error"],
                     "prediction": json.loads(r["prediction_json"] or "{}"), "host": json.loads(r["host_json"])})
    return rows


def export_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Write rows as CSV; the nested fields (params, spread, prediction, host) as JSON text."""
    with Path(path).open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v, sort_keys=True) if isinstance(v, dict) else v
                             for k, v in row.items() if k in COLUMNS})
