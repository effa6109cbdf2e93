"""In-process CLI tests of bench, calibrate and check-model on a tiny model config."""

from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("torch")

from infrafit.cli import main  # noqa: E402

TINY_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
              "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 256,
              "tie_word_embeddings": False, "torch_dtype": "float32"}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny-llama.json"
    path.write_text(json.dumps(TINY_LLAMA))
    return str(path)


def test_bench_run_stores_rows_with_prediction_then_history_and_calibrate(tiny, tmp_path, capsys):
    db = str(tmp_path / "r.db")
    assert main(["bench", "run", tiny, "--quick", "--db", db, "--json", "--batch-sizes", "1,2",
                 "--seq-lens", "8,16"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "--quick is a smoke test" in captured.err and "not an accuracy measurement" in captured.err
    kinds = [m["kind"] for m in out["measurements"]]
    assert kinds.count("inference_latency") == 4 and kinds.count("training_throughput") == 4
    assert "memory_triad" in kinds
    lat = [m for m in out["measurements"] if m["kind"] == "inference_latency"]
    assert all(m["predicted"] > 0 and m["error"] is not None and m["spread"]["p99_s"] >= m["value"] for m in lat)

    assert main(["bench", "history", "--db", db, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == len(out["measurements"])
    assert main(["bench", "history", "--db", db, "--csv", str(tmp_path / "h.csv")]) == 0
    with open(tmp_path / "h.csv") as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)

    overlay = tmp_path / "overlay"
    assert main(["calibrate", "--db", db, "--out", str(overlay), "--json"]) == 0
    cal = json.loads(capsys.readouterr().out)
    (fit,) = cal["fits"]
    assert fit["mdape_after"] <= fit["mdape_before"]
    assert (overlay / "perf_profiles_bench.csv").exists()


def test_bench_memory_and_storage(tmp_path, capsys):
    db = str(tmp_path / "r.db")
    assert main(["bench", "memory", "--quick", "--db", db, "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["measurements"]
    assert m["kind"] == "memory_triad" and m["value"] > 0
    assert main(["bench", "storage", "--quick", "--path", str(tmp_path), "--db", db, "--json"]) == 0
    ms = {m["kind"]: m for m in json.loads(capsys.readouterr().out)["measurements"]}
    assert set(ms) == {"storage_write", "storage_read", "checkpoint_write"}
    assert ms["checkpoint_write"]["predicted"] > 0


def test_check_model_json(tiny, capsys):
    assert main(["check-model", tiny, "--quick", "--precisions", "fp32,bf16,int8",
                 "--targets", "onnxruntime-cpu,neuron", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["precision"]["bf16"]["cosine_similarity"] > 0.99
    assert "aten.linear" in {op for ops in out["ops_by_layer"].values() for op in ops}
    neuron = out["coverage"]["neuron"]
    assert neuron["supported"] > 0 and neuron["unknown"] > 0
    assert neuron["supported"] + neuron["unknown"] == neuron["ops"]


@pytest.mark.parametrize("argv", [
    ["bench", "run", "no-such-model-xyz", "--quick"],
    ["bench", "run", "llama3.1-8b", "--quick", "--batch-sizes", "0"],
    ["check-model", "llama3.1-8b", "--targets", "onnxruntime-cpux"],
    ["bench", "storage", "--path", "/no/such/dir", "--quick"],
    ["calibrate"],
])
def test_bad_input_exits_2_without_traceback(argv, capsys, tmp_path):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "To fix" in err


@pytest.mark.gpu
def test_bench_run_on_cuda(tiny, tmp_path, capsys):
    assert main(["bench", "run", tiny, "--quick", "--device", "cuda", "--db", str(tmp_path / "g.db"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    mem = [m for m in out["measurements"] if m["kind"] == "training_peak_memory"]
    assert mem and all(m["params"]["memory_method"] == "torch.cuda.max_memory_allocated" for m in mem)
