"""Crash safety of the results store: SIGKILL a real `infrafit bench run` mid-sweep, then read and append."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")

from infrafit.bench.results import history  # noqa: E402
from infrafit.cli import main  # noqa: E402
from infrafit.store import connect  # noqa: E402

TINY_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
              "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 512,
              "tie_word_embeddings": False, "torch_dtype": "float32"}


def _count(db) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0) as conn:
            return conn.execute("SELECT COUNT(*) FROM bench_measurements").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_run_keeps_committed_rows_and_a_later_run_appends(tmp_path, capsys):
    model = tmp_path / "tiny.json"
    model.write_text(json.dumps(TINY_LLAMA))
    db = tmp_path / "r.db"
    # a long sweep (many points, 1 s each) so the kill lands mid-run, right after the first model point
    proc = subprocess.Popen([sys.executable, "-m", "infrafit", "bench", "run", str(model), "--quick", "--db", str(db),
                             "--batch-sizes", "1,2,4,8", "--seq-lens", "8,16,32,64,128", "--budget-s", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ,
                                                                                       "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 120
        while _count(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        rc = proc.wait(timeout=30)
    assert rc == -signal.SIGKILL, "the run ended before it could be killed mid-sweep"

    conn = connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    before = history(conn)
    assert len(before) >= 2 and {"memory_triad", "inference_latency"} <= {r["kind"] for r in before}
    assert all(r["value"] > 0 and r["unit"] for r in before)
    assert len(before) < 1 + 2 * 20  # killed before the sweep of 20 inference + 20 training points finished

    assert main(["bench", "memory", "--quick", "--db", str(db), "--json"]) == 0
    capsys.readouterr()
    after = history(connect(db))
    assert len(after) == len(before) + 1
    assert {r["id"]: r for r in after if r["run_id"] == before[0]["run_id"]} == {r["id"]: r for r in before}
