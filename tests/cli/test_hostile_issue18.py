"""Hostile inputs and faults of issue 18, as a table: each case runs the real CLI in-process and
checks the exit code and a part of the message (always with "To fix:"), never a traceback.
Files are made in a temporary folder: devices, FIFOs, binary and deeply nested files, impossible
architectures, bad validation rows, names the catalog does not know."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
import yaml

from infrafit.cli import main

ROOT = Path(__file__).resolve().parents[2]
BASE = yaml.safe_load((ROOT / "examples" / "chatbot-asia.yaml").read_text())
CALIBRATION = (ROOT / "benchmarks" / "data" / "calibration.csv").read_text().splitlines()
LLAMA = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
         "num_key_value_heads": 8, "vocab_size": 32000, "intermediate_size": 11008}


def _spec(tmp: Path, name: str, **changes) -> str:
    data = {**BASE, **changes}
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _config_spec(tmp: Path, name: str, **fields) -> str:
    (tmp / f"{name}.json").write_text(json.dumps({**LLAMA, **fields}))
    return _spec(tmp, name, model=str(tmp / f"{name}.json"))


def _cases(tmp: Path) -> dict[str, tuple[list[str], int, str]]:
    (tmp / "fifo.yaml").exists() or os.mkfifo(tmp / "fifo.yaml")
    (tmp / "zero.yaml").exists() or (tmp / "zero.yaml").symlink_to("/dev/zero")
    (tmp / "deep.json").write_text('{"a":' * 50_000 + "1" + "}" * 50_000)
    (tmp / "binary.csv").write_bytes(b"row_id,x\n" + bytes(range(256)) * 10)
    (tmp / "overlay").mkdir(exist_ok=True)
    (tmp / "overlay" / "offers.csv").write_bytes(b"id,provider\n\x00\x01\x02\n")
    (tmp / "bigfield").mkdir(exist_ok=True)
    (tmp / "bigfield" / "offers.csv").write_text('id,provider\n"' + "x" * 200_000 + '",aws\n')
    dup = [CALIBRATION[0], CALIBRATION[1], CALIBRATION[1]]
    (tmp / "dup.csv").write_text("\n".join(dup) + "\n")
    return {
        "spec is a FIFO": (["check", str(tmp / "fifo.yaml")], 2, "FIFO (named pipe), not a regular file"),
        "spec is /dev/zero": (["check", str(tmp / "zero.yaml")], 2, "character device"),
        "deeply nested config": (["check", _spec(tmp, "deep", model=str(tmp / "deep.json"))], 2, "nested too deeply"),
        "binary CSV": (["validate", str(tmp / "binary.csv")], 2, "NUL byte"),
        "binary overlay": (["--catalog-dir", str(tmp / "overlay"), "catalog", "offers"], 2, "NUL byte"),
        "overlay field over 128 KiB": (["--catalog-dir", str(tmp / "bigfield"), "catalog", "offers"], 2,
                                       "not a readable CSV"),
        "duplicate row_id": (["validate", str(tmp / "dup.csv")], 2, "repeats the row of line"),
        "negative hidden size": (["check", _config_spec(tmp, "neg", hidden_size=-4096)], 2, "hidden_size must be > 0"),
        "kv heads above heads": (["check", _config_spec(tmp, "kv", num_key_value_heads=64)], 2,
                                 "num_kv_heads 64 must divide"),
        "experts per token above experts": (["check", _config_spec(tmp, "moe", num_local_experts=8,
                                                                   num_experts_per_tok=9)], 2, "exceeds num_experts"),
        "fractional layers": (["check", _config_spec(tmp, "frac", num_hidden_layers=32.5)], 2, "fractional part"),
        "absurd size": (["check", _config_spec(tmp, "huge", hidden_size=10**9)], 2, "beyond any real model"),
        "region typo": (["check", _spec(tmp, "tokio", placement={"regions": ["tokyoo"]})], 2, "did you mean 'tokyo'"),
        "unknown place": (["check", _spec(tmp, "atl", placement={"regions": ["tokyo"], "users_in": ["atlantis"]})],
                          2, "not a known place"),
        "region against country": (["check", _spec(tmp, "rc", placement={"regions": ["tokyo"], "countries": ["DE"]})],
                                   2, "is in JP"),
        "provider by near name": (["check", _spec(tmp, "vast", deployment={"allowed": ["cloud"],
                                                                           "exclude_providers": ["vast"]})],
                                  2, "did you mean 'vast.ai'"),
        "growth below -100%": (["check", _spec(tmp, "growth", growth={"traffic_per_month": -2})], 2, ">= -1"),
        "only hybrid for inference": (["plan", _spec(tmp, "hybrid", deployment={"allowed": ["hybrid"]})], 3,
                                      "hybrid only combines"),
        "bind not an address": (["monitor", "--prometheus", "9464", "--bind", "999.1.1.1", "--duration", "1"], 2,
                                "not an IP address"),
    }




@pytest.mark.parametrize("name", [
    "spec is a FIFO", "spec is /dev/zero", "deeply nested config", "binary CSV", "binary overlay",
    "overlay field over 128 KiB", "duplicate row_id", "negative hidden size", "kv heads above heads",
    "experts per token above experts", "fractional layers", "absurd size", "region typo", "unknown place",
    "region against country", "provider by near name", "growth below -100%", "only hybrid for inference",
    "bind not an address",
])
def test_hostile_input(name, tmp_path, capsys):
    args, code, part = _cases(tmp_path)[name]
    got = main(args)
    err = capsys.readouterr().err
    assert got == code, err
    assert part in err and "To fix" in err and "Traceback" not in err, err


def test_thirty_thousand_unknown_keys_show_the_first_fifty(tmp_path, capsys):
    spec = tmp_path / "keys.yaml"
    spec.write_text(yaml.safe_dump({**BASE, **{f"k{i}": 1 for i in range(30_000)}}))
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "30,000 problems" in err.replace("30000", "30,000") or "30000 problems" in err
    assert "and 29,950 more" in err and err.count("\n  - ") <= 50


def test_a_full_disk_leaves_no_half_written_report(tmp_path, monkeypatch):
    from infrafit.report import render
    from infrafit.search.types import Plan

    def no_space(self, target):  # noqa: ANN001, ANN202
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "replace", no_space)
    plan = Plan.from_dict({"workload": {"name": "x"}, "objective": "cost", "catalog_retrieved_on": "",
                           "options": [], "excluded": []})
    with pytest.raises(Exception, match="No space left"):
        render.write_report(plan, tmp_path / "r.md")
    assert not list(tmp_path.iterdir()), "FILE.tmp left behind"


def test_a_database_that_cannot_be_written_is_exit_2_and_keeps_what_was_stored(tmp_path):
    """A read-only or full database (here: SQLite's query_only, the same OperationalError as a
    read-only file or a full disk) is a clear InputError; rows committed before stay."""
    from infrafit.errors import InputError
    from infrafit.monitor import storage
    from infrafit.store import connect

    conn = connect(tmp_path / "r.db")
    run_id = storage.start_run(conn, "machine", 1.0, {"host": "x"}, None)
    conn.execute("PRAGMA query_only = ON")
    with pytest.raises(InputError, match="cannot write the results database") as info:
        storage.finish_run(conn, run_id, {"samples": 0})
    assert "To fix" in str(info.value)
    conn.close()
    again = connect(tmp_path / "r.db")
    assert again.execute("select count(*) from monitor_runs").fetchone()[0] == 1


def test_check_model_refuses_a_model_that_would_not_fit_in_memory(tmp_path, capsys):
    cfg = tmp_path / "absurd.json"
    cfg.write_text(json.dumps({**LLAMA, "intermediate_size": 10_000_000, "num_hidden_layers": 9000}))
    pytest.importorskip("torch")
    assert main(["check-model", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "of fp32 weights; this machine has" in err and "To fix" in err


@pytest.mark.parametrize("text", ["２０", "٢٤", "२०", "1２"])
def test_non_ascii_digits_are_refused_not_read_as_numbers(text, tmp_path, capsys):
    spec = _spec(tmp_path, "digits", horizon_months=text)
    assert main(["check", spec]) == 2
    err = capsys.readouterr().err
    assert "non-ASCII digits" in err and "To fix" in err


def test_no_validator_internals_in_messages(tmp_path, capsys):
    """Wrong types, shapes and values across the spec: no pydantic class names, URLs or reprs."""
    cases = {"horizon_months": [1, 2], "budget": {"monthly_usd": {"a": 1}},
             "model": {"preset": "llama3.1-8b", "config": "x.json"}, "usage": "sometimes",
             "deployment": {"allowed": "cloud"}, "training": {"tokens": "many"}, "placement": {"regions": 7}}
    for i, (key, value) in enumerate(cases.items()):
        assert main(["check", _spec(tmp_path, f"t{i}", **{key: value})]) == 2
        err = capsys.readouterr().err
        for leak in ("errors.pydantic.dev", "ValidationError", "ModelRef", "datetime.date(", "TypeError",
                     "input_value=", "[type="):
            assert leak not in err, (key, err)
        assert "To fix" in err


def test_validate_streams_in_chunks_with_the_same_answer(monkeypatch):
    from infrafit.perf.validate import run

    path = ROOT / "benchmarks" / "data" / "calibration.csv"
    whole = run.validate_csv(path, ROOT / "tests" / "fixtures" / "model_configs")
    monkeypatch.setattr(run, "CHUNK_ROWS", 7)
    seen = []
    rows = run.iter_rows(path)

    def counted():
        for r in rows:
            seen.append(1)
            yield r

    chunked = run.validate_rows(counted(), str(ROOT / "tests" / "fixtures" / "model_configs"))
    assert len(seen) == whole["rows"] > 7 * 10
    assert chunked["mdape"] == whole["mdape"] and chunked["predicted"] == whole["predicted"]
    assert chunked["by"] == whole["by"]
