"""``plan --export DIR`` (issue 16 point 1): the files parse, validate against the Kubernetes models,
and carry the plan's numbers (counts, parallel sizes, concurrency, replicas, SLOs)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from infrafit.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _export(tmp_path: Path, spec: str, *extra: str) -> tuple[Path, dict]:
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["plan", str(EXAMPLES / spec), "--json", "--top", "3", "--export", str(out),
                                      *extra])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


def _k8s(doc: dict, kind: str):  # noqa: ANN202 - a kubernetes model
    client = pytest.importorskip("kubernetes.client")
    return client.ApiClient()._ApiClient__deserialize(doc, kind)  # the client's own model validation


def test_serving_export_carries_the_plan(tmp_path):
    out, plan = _export(tmp_path, "chatbot-asia.yaml")
    index = json.loads((out / "index.json").read_text())
    assert [o["rank"] for o in index["options"]] == [1, 2, 3]
    for entry, option in zip(index["options"], plan["options"], strict=True):
        folder = out / entry["folder"]
        perf = option["performance"]
        serve = (folder / "serve.sh").read_text()
        concurrency = int(perf["operating_point"]["concurrency"])
        assert str(concurrency) in serve and f"{perf['parallelism']['tp']}" in serve
        assert subprocess.run(["bash", "-n", str(folder / "serve.sh")]).returncode == 0
        assert subprocess.run(["bash", "-n", str(folder / "loadtest.sh")]).returncode == 0
        docs = [d for d in yaml.safe_load_all((folder / "k8s.yaml").read_text()) if d]
        deployment = _k8s(docs[0], "V1Deployment")
        _k8s(docs[1], "V1Service")
        assert deployment.spec.replicas == int(max(option["cost"]["replicas"]))
        limits = deployment.spec.template.spec.containers[0].resources.limits
        per_instance = option["count"] // option["server"]["instances_per_replica"]
        assert list(limits.values()) == [str(per_instance)]  # a Kubernetes quantity is a string
        load = (folder / "loadtest.sh").read_text()
        assert "--goodput ttft:1000 tpot:50" in load  # the spec's SLOs in ms
        rate = round(perf["operating_point"]["requests_per_s"], 3)
        assert f"--rate {rate} " in load and f"--request-rate {rate} " in load  # the planned rate, both tools
        assert f"--max-concurrency {concurrency} " in load


def test_skypilot_orders_the_launchable_options_that_run_the_same_command(tmp_path):
    out, plan = _export(tmp_path, "jax-pretraining.yaml")
    index = json.loads((out / "index.json").read_text())
    launchable = [o for o in index["options"] if o["skypilot"]]
    for o in index["options"]:
        if o["skypilot"]:
            task = yaml.safe_load((out / o["folder"] / "skypilot.yaml").read_text())
            (res,) = task["resources"]["ordered"]
            assert res["accelerators"].endswith(f":{o['per_instance']}") and task["num_nodes"] == \
                o["instances_per_replica"]
        else:
            assert o["why_not_skypilot"]
    if launchable:
        top = yaml.safe_load((out / "skypilot.yaml").read_text())
        assert top["run"] == "bash option-1/serve.sh" and top["resources"]["ordered"]


def test_training_export_is_an_indexed_job_with_the_layout(tmp_path):
    out, plan = _export(tmp_path, "lora-finetune-70b.yaml")
    option = plan["options"][0]
    folder = out / "option-1"
    job = _k8s(next(d for d in yaml.safe_load_all((folder / "k8s.yaml").read_text()) if d), "V1Job")
    assert job.spec.completions == option["server"]["instances_per_replica"]
    serve = (folder / "serve.sh").read_text()
    par = option["performance"]["parallelism"]
    assert f"--tensor-parallel {par['tp']}" in serve and f"--data-parallel {par['dp']}" in serve
    assert "torchrun" in serve


@pytest.mark.parametrize("spec", ["jax-pretraining.yaml", "chatbot-asia.yaml", "lora-finetune-70b.yaml"])
def test_every_skypilot_file_validates_against_skypilots_task_schema(tmp_path, spec):
    """The vendored copy of SkyPilot's task schema (tests/fixtures/skypilot_task_schema.json, source inside)."""
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "skypilot_task_schema.json").read_text())
    out, _ = _export(tmp_path, spec)
    files = sorted(out.rglob("skypilot.yaml"))
    for path in files:
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    index = json.loads((out / "index.json").read_text())
    # one per launchable option, plus the top-level file when a launchable option runs option #1's command
    assert len([p for p in files if p.parent != out]) == sum(1 for o in index["options"] if o["skypilot"])
    if (out / "skypilot.yaml").exists():
        assert "run: bash option-1/serve.sh" in (out / "skypilot.yaml").read_text()
    bad = yaml.safe_load(files[0].read_text()) | {"resources": {"accelerator": "H100:8"}} if files else None
    if bad is not None:  # the schema is strict: a misspelt key fails
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


PIPELINE_SPEC = ROOT / "tests" / "fixtures" / "specs" / "llama405-bf16-h100.yaml"


def _stub_bin(tmp_path: Path) -> Path:
    """``ray``, ``vllm`` and ``python`` stand-ins that log their arguments (``python`` reports 2 live nodes)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in (("ray", 'echo "ray $*" >> "$LOG"'), ("vllm", 'echo "vllm $*" >> "$LOG"'),
                       ("python", "echo 2")):
        path = bin_dir / tool
        path.write_text(f"#!/usr/bin/env bash\n{body}\n")
        path.chmod(0o755)
    return bin_dir


def test_a_replica_over_two_instances_exports_a_multi_node_launch(tmp_path):
    """Llama-3.1-405B bf16 on H100s: two p5.48xlarge per replica (TP8 x PP2). serve.sh joins the second
    instance to the head's Ray cluster and starts vLLM on the head with the Ray executor; k8s.yaml is a
    LeaderWorkerSet of 2 pods a replica; SkyPilot asks for 2 nodes."""
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["plan", str(PIPELINE_SPEC), "--json", "--top", "1", "--export", str(out)])
    assert result.exit_code == 0, result.output
    option = json.loads(result.stdout)["options"][0]
    nodes = option["server"]["instances_per_replica"]
    assert nodes == 2 and option["performance"]["parallelism"]["pp"] == 2
    folder = out / "option-1"
    serve = folder / "serve.sh"
    assert "--pipeline-parallel-size 2 --distributed-executor-backend ray" in serve.read_text()
    bin_dir = _stub_bin(tmp_path)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SKYPILOT_NODE_IPS": "10.0.0.1\n10.0.0.2"}
    for rank, expected in (("1", ["ray start --address 10.0.0.1:6379 --block"]),
                           ("0", ["ray start --head --port 6379", "vllm serve"])):
        log = tmp_path / f"rank{rank}.log"
        run = subprocess.run(["bash", str(serve)], env={**env, "SKYPILOT_NODE_RANK": rank, "LOG": str(log)},
                             capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stderr
        lines = log.read_text().splitlines()
        assert [line[:len(e)] for line, e in zip(lines, expected, strict=True)] == expected
    docs = [d for d in yaml.safe_load_all((folder / "k8s.yaml").read_text()) if d]
    lws, service = docs
    assert lws["kind"] == "LeaderWorkerSet" and lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == nodes
    assert lws["spec"]["replicas"] == int(max(option["cost"]["replicas"]))
    for part in ("leaderTemplate", "workerTemplate"):
        pod = _k8s(lws["spec"]["leaderWorkerTemplate"][part]["spec"], "V1PodSpec")
        assert list(pod.containers[0].resources.limits.values()) == [str(option["count"] // nodes)]
    assert service["spec"]["selector"]["role"] == "leader"
    sky = yaml.safe_load((folder / "skypilot.yaml").read_text())
    assert sky["num_nodes"] == nodes


DEEPSEEK_SPEC = ROOT / "tests" / "fixtures" / "specs" / "deepseek-v3-chat.yaml"


def _serve_as(tmp_path: Path, spec: Path, stack: str, tp: int, dp: int, concurrency: int | None = None) -> str:
    """serve.sh of the spec's first option moved to ``stack`` with the layout tp x dp on one instance; it
    must parse as bash."""
    from dataclasses import replace

    from infrafit.catalog import load_catalog
    from infrafit.export import render_option
    from infrafit.search.types import Option
    from infrafit.workload.spec import load_spec

    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    option = Option.from_dict(json.loads(result.stdout)["options"][0])
    perf = {**option.performance, "parallelism": {"tp": tp, "pp": 1, "dp": dp, "ep": 1, "cp": 1}}
    if concurrency is not None:
        perf["operating_point"] = {**perf["operating_point"], "concurrency": concurrency}
    moved = replace(option, stack=stack, count=tp * dp, performance=perf,
                    server={**option.server, "instances_per_replica": 1})
    text = render_option(moved, load_spec(spec), load_catalog())["serve.sh"]
    path = tmp_path / "serve.sh"
    path.write_text(text)
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    return text


def test_tensorrt_llm_wide_expert_parallel_runs_attention_data_parallel_on_every_rank(tmp_path):
    """A MoE option laid out as attention data parallel over 8 chips is TensorRT-LLM's wide-EP layout:
    tp_size 8 (the ranks), ep_size 8 and enable_attention_dp, max_batch_size one rank's share; not a
    1-rank server (tp_size 1) that could not hold the model."""
    text = _serve_as(tmp_path, DEEPSEEK_SPEC, "tensorrt-llm", 1, 8, 256)
    assert "--tp_size 8 --pp_size 1 --ep_size 8" in text and "--max_batch_size 32 " in text
    assert "enable_attention_dp: true" in text and "--extra_llm_api_options extra-llm-api-options.yaml" in text


def test_tensorrt_llm_dense_data_parallel_starts_one_server_per_group(tmp_path):
    """TensorRT-LLM has no data parallelism inside one server: a dense TP4 x DP2 option starts two
    servers, on GPUs 0-3 and 4-7, ports 8000 and 8001, each with half the requests in flight."""
    text = _serve_as(tmp_path, EXAMPLES / "chatbot-asia.yaml", "tensorrt-llm", 4, 2, 128)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "trtllm-serve"
    stub.write_text('#!/usr/bin/env bash\necho "$CUDA_VISIBLE_DEVICES $*" >> "$LOG"\n')
    stub.chmod(0o755)
    log = tmp_path / "trt.log"
    # the option is fp8 of a 16-bit checkpoint, which trtllm-serve does not make as it loads: MODEL names one
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log), "MODEL": "/ckpt/llama-70b-fp8"}
    run = subprocess.run(["bash", str(tmp_path / "serve.sh")], env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    lines = sorted(log.read_text().splitlines())
    assert len(lines) == 2 and "enable_attention_dp" not in text
    assert all(" /ckpt/llama-70b-fp8 " in line for line in lines)
    for line, (gpus, port) in zip(lines, (("0,1,2,3", 8000), ("4,5,6,7", 8001)), strict=True):
        assert line.startswith(gpus + " ") and "--tp_size 4 --pp_size 1" in line
        assert "--max_batch_size 64 " in line and line.endswith(f"--port {port}")


def test_sglang_attention_data_parallel_counts_every_rank_in_tp(tmp_path):
    """SGLang's --dp alone starts independent replicas of --tp GPUs each (DeepSeek-V3 on 1 GPU would not
    fit); the wide-EP layout is --tp 8 --dp 8 --enable-dp-attention with the experts over the 8 ranks.
    A dense model's --dp stays plain data parallel."""
    moe = _serve_as(tmp_path, DEEPSEEK_SPEC, "sglang", 1, 8)
    assert "--tp 8 --dp 8 --enable-dp-attention --ep 8" in moe
    dense = _serve_as(tmp_path, EXAMPLES / "chatbot-asia.yaml", "sglang", 4, 2)
    assert "--tp 4 --dp 2 \\" in dense and "enable-dp-attention" not in dense and "--ep" not in dense


def test_moe_experts_are_tensor_sharded_in_the_export_when_the_estimate_shards_them(tmp_path):
    """A MoE on TP8 with no attention data parallel and ep 1 is estimated with the experts sharded over the
    TP group (all-reduces, no all-to-all); its commands run that layout, not expert parallelism."""
    texts = {stack: _serve_as(tmp_path, DEEPSEEK_SPEC, stack, 8, 1) for stack in ("vllm", "sglang", "tensorrt-llm")}
    assert "--tensor-parallel-size 8" in texts["vllm"] and "--enable-expert-parallel" not in texts["vllm"]
    assert "--tp 8" in texts["sglang"] and "--ep" not in texts["sglang"]
    assert "--tp_size 8" in texts["tensorrt-llm"] and "--ep_size" not in texts["tensorrt-llm"]
    wide = _serve_as(tmp_path, DEEPSEEK_SPEC, "vllm", 1, 8)
    assert "--data-parallel-size 8 --enable-expert-parallel" in wide


def test_each_data_parallel_engine_caps_its_own_share_of_the_requests_in_flight(tmp_path):
    """vLLM runs each --data-parallel-size rank as its own engine core whose --max-num-seqs is that engine's cap:
    a replica planned at 256 in flight over 8 DP ranks caps each at 32 (it gave each the whole 256). SGLang divides
    --max-running-requests over the ranks itself under --enable-dp-attention (the total is passed), while plain
    --dp workers each take the cap (a share is passed)."""
    vllm = _serve_as(tmp_path, DEEPSEEK_SPEC, "vllm", 1, 8, 256)
    assert "--data-parallel-size 8" in vllm and "--max-num-seqs 32 " in vllm
    one = _serve_as(tmp_path, EXAMPLES / "chatbot-asia.yaml", "vllm", 8, 1, 100)
    assert "--max-num-seqs 100 " in one
    assert "--max-running-requests 256 " in _serve_as(tmp_path, DEEPSEEK_SPEC, "sglang", 1, 8, 256)
    assert "--max-running-requests 50 " in _serve_as(tmp_path, EXAMPLES / "chatbot-asia.yaml", "sglang", 4, 2, 100)


@pytest.mark.parametrize(("precision", "native", "stack", "needed"), [
    ("fp4", "fp4", "vllm", None),  # gpt-oss-120b as published
    ("int8", "fp4", "vllm", "INT8 W8A8"),  # re-quantized: no flag makes it
    ("fp8", "", "vllm", None),  # vLLM quantizes 16-bit weights to fp8 as it loads them (--quantization fp8)
    ("fp8", "", "tensorrt-llm", "FP8"),  # trtllm-serve serves a checkpoint already in the format
    ("bf16", "", "sglang", None),
    ("bf16", "fp8", "vllm", "16-bit (dequantized)"),  # DeepSeek-V3 at 16 bits
    ("int4", "", "vllm", "INT4 W4A16"),
    ("int4", "", "llama-cpp", "GGUF"),
])
def test_a_format_the_published_checkpoint_is_not_in_is_asked_for(precision, native, stack, needed):
    from infrafit.export import checkpoint_needed

    got = checkpoint_needed(precision, native, stack, "org/model")
    assert (got is None) if needed is None else (got is not None and needed in got and "of org/model" in got)


def test_serve_sh_refuses_to_serve_the_published_weights_at_another_format(tmp_path):
    """An int8 option of an MXFP4 checkpoint ran `vllm serve openai/gpt-oss-120b`: the published fp4 weights,
    not the int8 ones the plan priced. The script now needs MODEL (failing with what to set, not silently) and
    serves it under the published name, which the load test asks for; a native fp4 option serves the id."""
    spec = tmp_path / "oss.yaml"
    spec.write_text((EXAMPLES / "chatbot-asia.yaml").read_text().replace("model: llama3.1-70b", "model: gpt-oss-120b"))
    from dataclasses import replace

    from infrafit.catalog import load_catalog
    from infrafit.export import render_option
    from infrafit.search.types import Option
    from infrafit.workload.spec import load_spec

    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "1"])
    option = Option.from_dict(json.loads(result.stdout)["options"][0])
    texts = {p: render_option(replace(option, precision=p, stack="vllm"), load_spec(spec), load_catalog())["serve.sh"]
             for p in ("int8", "fp4")}
    assert 'MODEL="${MODEL:?set MODEL to an INT8 W8A8 checkpoint of openai/gpt-oss-120b' in texts["int8"]
    files = render_option(replace(option, precision="int8", stack="vllm", provider="Hyperbolic", region="default",
                                  deployment="cloud_on_demand", accelerator="nvidia_h100_sxm", count=2,
                                  server={**option.server, "instances_per_replica": 1}),
                          load_spec(spec), load_catalog())
    k8s = files["k8s.yaml"]
    assert "serve.sh needs MODEL" in k8s and [d for d in yaml.safe_load_all(k8s) if d]  # a comment: still valid YAML
    # SkyPilot refuses to launch without it: an env set to null is required (`sky launch --env MODEL=...`)
    import jsonschema

    sky = yaml.safe_load(files["skypilot.yaml"])
    assert sky["envs"] == {"MODEL": None}
    jsonschema.validate(sky, json.loads((ROOT / "tests" / "fixtures" / "skypilot_task_schema.json").read_text()))
    assert 'vllm serve "$MODEL" --served-model-name openai/gpt-oss-120b' in texts["int8"]
    assert "MODEL" not in texts["fp4"] and "vllm serve openai/gpt-oss-120b" in texts["fp4"]
    env = {"PATH": "/usr/bin:/bin"}
    run = subprocess.run(["bash", "-c", texts["int8"]], capture_output=True, text=True, env=env)
    assert run.returncode != 0 and "set MODEL to an INT8 W8A8 checkpoint" in run.stderr


@pytest.mark.parametrize(("model", "precision", "served", "needs"), [
    ("Qwen/Qwen3-32B-AWQ", "int4", "vllm serve Qwen/Qwen3-32B-AWQ ", None),  # the AWQ checkpoint, as named
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", "vllm serve meta-llama/Llama-3.1-8B-Instruct ", None),
    ("meta-llama/Llama-3.1-8B-Instruct-FP8", "fp8", "vllm serve meta-llama/Llama-3.1-8B-Instruct-FP8 ", None),
    ("Qwen/Qwen3-32B-AWQ", "fp8", 'vllm serve "$MODEL" --served-model-name Qwen/Qwen3-32B ', "of Qwen/Qwen3-32B "),
])
def test_serve_sh_serves_the_checkpoint_the_spec_names(tmp_path, model, precision, served, needs):
    """The library resolves `Qwen/Qwen3-32B-AWQ` and `...-Instruct` to the base architecture; serve.sh ran the
    base id (`vllm serve Qwen/Qwen3-32B`: 16-bit base weights, not the AWQ or instruct model priced). It now
    serves the id as written; another format asks for a checkpoint made from the base."""
    from dataclasses import replace

    from infrafit.catalog import load_catalog
    from infrafit.export import render_option
    from infrafit.search.types import Option
    from infrafit.workload.spec import load_spec

    spec = tmp_path / "m.yaml"
    spec.write_text((EXAMPLES / "chatbot-asia.yaml").read_text().replace("model: llama3.1-70b", f"model: {model}")
                    .replace("precision: [bf16, fp8]", "precision: auto"))
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    option = replace(Option.from_dict(json.loads(result.stdout)["options"][0]), precision=precision, stack="vllm")
    text = render_option(option, load_spec(spec), load_catalog())["serve.sh"]
    assert served in text.replace("\\\n", "")
    assert (needs is None and "MODEL" not in text) or (needs is not None and needs in text)


SPECULATIVE_70B = {"name": "spec-70b", "task": "inference", "model": "llama3.3-70b",
                   "inference": {"mode": "realtime", "traffic": {"requests_per_s": 2, "input_tokens": 1000,
                                                                  "output_tokens": 500},
                                 "slo": {"ttft_p99_s": 1.5, "tpot_p99_s": 0.02},
                                 "speculative": {"method": "draft_model", "draft_model": "llama3.2-1b",
                                                 "tokens": 4, "acceptance_rate": 0.7}},
                   "hardware": {"accelerators": ["h100"]}, "horizon_months": 12}


def _spec_scripts(tmp_path, method: str) -> dict[str, str]:
    """serve.sh of the speculative 70B spec's #1 under each stack, with ``method``; each parses as bash."""
    from dataclasses import replace

    from infrafit.catalog import load_catalog
    from infrafit.export import render_option
    from infrafit.search.planner import plan
    from infrafit.workload.spec import workload_from_data

    cat = load_catalog()
    data = json.loads(json.dumps(SPECULATIVE_70B))
    data["inference"]["speculative"]["method"] = method
    if method != "draft_model":
        del data["inference"]["speculative"]["draft_model"]
    w = workload_from_data(data, catalog=cat)
    option = plan(w, cat, top=1).options[0]
    out = {}
    for stack in ("vllm", "sglang", "tensorrt-llm"):
        text = render_option(replace(option, stack=stack), w, cat)["serve.sh"]
        path = tmp_path / f"{method}-{stack}.sh"
        path.write_text(text)
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
        out[stack] = text
    return out


def _run_stub(tmp_path, script: str, binary: str, env: dict[str, str]) -> list[str]:
    """Run ``script`` with ``binary`` a stub that prints each argument on its own line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / binary
    stub.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    stub.chmod(0o755)
    path = tmp_path / "run.sh"
    path.write_text(script)
    run = subprocess.run(["bash", str(path)], env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env}, cwd=tmp_path,
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_the_planned_speculative_decoding_is_turned_on_in_every_stacks_command(tmp_path):
    """The plan priced a 1B draft for a 70B at TPOT 20 ms; serve.sh served the 70B without it, so a load test
    measured another system. vLLM gets --speculative-config, SGLang its --speculative-* flags, TensorRT-LLM a
    speculative_config in its extra options file."""
    texts = _spec_scripts(tmp_path, "draft_model")
    args = _run_stub(tmp_path, texts["vllm"], "vllm", {"MODEL": "/ckpt"})
    config = json.loads(args[args.index("--speculative-config") + 1])
    assert config == {"method": "draft_model", "num_speculative_tokens": 4,
                      "model": "meta-llama/Llama-3.2-1B-Instruct"}
    assert ("--speculative-algorithm STANDALONE --speculative-draft-model-path meta-llama/Llama-3.2-1B-Instruct "
            "--speculative-num-steps 4 --speculative-eagle-topk 1 --speculative-num-draft-tokens 5") in texts["sglang"]
    _run_stub(tmp_path, texts["tensorrt-llm"], "trtllm-serve", {"MODEL": "/ckpt"})
    options = yaml.safe_load((tmp_path / "extra-llm-api-options.yaml").read_text())
    assert options == {"speculative_config": {"decoding_type": "DraftTarget", "max_draft_len": 4,
                                              "speculative_model_dir": "meta-llama/Llama-3.2-1B-Instruct"}}
    assert "--extra_llm_api_options extra-llm-api-options.yaml" in texts["tensorrt-llm"]


def test_an_eagle_head_is_asked_for_and_mtp_and_ngram_need_no_draft(tmp_path):
    eagle = _spec_scripts(tmp_path, "eagle")
    run = subprocess.run(["bash", "-c", eagle["vllm"]], env={"PATH": "/usr/bin:/bin", "MODEL": "/ckpt"},
                         capture_output=True, text=True, timeout=30)
    assert run.returncode != 0 and "set DRAFT_MODEL to an EAGLE head" in run.stderr
    args = _run_stub(tmp_path, eagle["vllm"], "vllm", {"MODEL": "/ckpt", "DRAFT_MODEL": "org/eagle3-head"})
    assert json.loads(args[args.index("--speculative-config") + 1])["model"] == "org/eagle3-head"
    mtp = _spec_scripts(tmp_path, "mtp")
    args = _run_stub(tmp_path, mtp["vllm"], "vllm", {"MODEL": "/ckpt"})
    assert json.loads(args[args.index("--speculative-config") + 1]) == {"method": "mtp", "num_speculative_tokens": 4}
    assert "num_nextn_predict_layers: 4" in mtp["tensorrt-llm"]
    ngram = _spec_scripts(tmp_path, "ngram")
    assert "--speculative-algorithm NGRAM --speculative-num-draft-tokens 5" in ngram["sglang"]


def test_a_library_alias_that_is_its_own_checkpoint_is_served_as_that_checkpoint():
    """llama3.3-70b resolves to the Llama 3.1 70B architecture; it was served (and its FP8 checkpoint asked for)
    as meta-llama/Llama-3.1-70B, the 3.1 base weights."""
    from infrafit.export import served_model_ids
    from infrafit.workload.spec import workload_from_data

    w = workload_from_data(SPECULATIVE_70B)
    assert served_model_ids(w, w.model_arch()) == ("meta-llama/Llama-3.3-70B-Instruct",) * 2
    w8 = workload_from_data({**SPECULATIVE_70B, "model": "llama3.1-70b"})
    assert served_model_ids(w8, w8.model_arch()) == ("meta-llama/Llama-3.1-70B",) * 2


def test_a_tpu_option_is_launched_by_its_slice_type(tmp_path):
    """SkyPilot asks for a TPU by its slice type, one slice (`tpu-v6e-1:1`); TPU options had no SkyPilot name and
    were left out of the launch file."""
    import jsonschema

    from infrafit.catalog import load_catalog
    from infrafit.export import render_option, skypilot_tpu_slices
    from infrafit.search.planner import plan
    from infrafit.workload.spec import workload_from_data

    cat = load_catalog()
    tpus = {a.id for a in cat.accelerators.values() if a.kind == "tpu" and (cat.offers["accelerator_id"] == a.id).any()}
    assert tpus <= set(skypilot_tpu_slices())  # every TPU the catalog sells has its slice name
    w = workload_from_data({"name": "gemma-tpu", "task": "inference", "model": "google/gemma-2-9b-it",
                            "framework": "jax", "hardware": {"vendors": ["Google"]}, "inference": {
                                "traffic": {"requests_per_s": 15, "input_tokens": 800, "output_tokens": 250},
                                "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}}}, catalog=cat)
    option = plan(w, cat, top=1).options[0]
    task = yaml.safe_load(render_option(option, w, cat)["skypilot.yaml"])
    resource = task["resources"]["ordered"][0]
    assert option.accelerator == "google_tpu_v6e" and option.count == 1
    assert resource["accelerators"] == "tpu-v6e-1:1" and resource["cloud"] == "gcp" and task["num_nodes"] == 1
    schema = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "skypilot_task_schema.json").read_text())
    jsonschema.validate(task, schema)


def test_a_tpu_slice_over_several_hosts_is_not_written_and_says_why(tmp_path):
    """jax-pretraining's TPU option is a 256-chip v5p slice over 64 hosts: a pod, which SkyPilot launches as one
    slice type running on every host; the export does not write it and says so."""
    from infrafit.export import skypilot_accelerators
    from infrafit.search.types import Option

    out, _ = _export(tmp_path, "jax-pretraining.yaml")
    index = json.loads((out / "index.json").read_text())
    tpu = [o for o in index["options"] if o["accelerator"].startswith("google_tpu")]
    assert tpu and all(not o["skypilot"] and "a TPU slice over several hosts" in o["why_not_skypilot"] for o in tpu)
    one = Option(1, "google_tpu_v5p", 4, "bf16", "vllm", "cloud_on_demand", "GCP", "us-central1",
                 server={"instances_per_replica": 1})
    assert skypilot_accelerators(one) == "tpu-v5p-8:1"  # 4 chips are 8 TensorCores in v5p's name
