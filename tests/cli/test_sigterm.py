"""SIGTERM (what ``timeout``, systemd and Kubernetes send) is handled like Ctrl-C: ``monitor`` stores
its summary, stops the command it watches and exits 143; ``bench storage`` removes its temp file and
exits 143; a temp file left by a SIGKILLed run is removed by the next run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _infrafit(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "infrafit", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, **kw)


def _wait_for(check, timeout_s: float = 30.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def test_monitor_stores_its_summary_stops_the_child_and_exits_143(tmp_path):
    db = tmp_path / "m.db"
    proc = _infrafit("monitor", "--db", str(db), "--interval", "0.2", "--json", "--", "sleep", "60")
    me = psutil.Process(proc.pid)
    _wait_for(lambda: any("sleep" in " ".join(c.cmdline()) for c in me.children(recursive=True)))
    child = next(c for c in me.children(recursive=True) if "sleep" in " ".join(c.cmdline()))
    time.sleep(1.0)  # a few samples
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert '"stopped_by": "SIGTERM"' in out
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    with sqlite3.connect(db) as conn:
        summaries = [r[0] for r in conn.execute("select summary_json from monitor_runs")]
    assert summaries and all(s for s in summaries), "the run's summary was not stored"


def test_bench_storage_removes_its_temp_file_on_sigterm(tmp_path):
    proc = _infrafit("bench", "storage", "--path", str(tmp_path), "--size", "2GB", "--db", str(tmp_path / "b.db"))
    _wait_for(lambda: any(tmp_path.glob(".infrafit-*")), timeout_s=60)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert not list(tmp_path.glob(".infrafit-*")), "temp file left behind"


def test_stale_temp_files_of_dead_processes_are_removed(tmp_path):
    from infrafit.bench.hostio import remove_stale_temp_files

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".infrafit-bench-{dead.pid}.dat"
    live = tmp_path / f".infrafit-bench-{os.getpid()}.dat"
    stale.write_bytes(b"x")
    live.write_bytes(b"x")
    assert remove_stale_temp_files(Path(tmp_path)) == [stale]
    assert live.exists() and not stale.exists()
