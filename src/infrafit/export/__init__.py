"""``plan --export DIR``: what to run for each option of a plan (issue 16 point 1).

Per option, ``DIR/option-N/``: ``serve.sh`` (the stack's launch command with the planned layout and
limits, or ``torchrun`` for training), ``k8s.yaml`` (a Deployment + Service for serving, an indexed
Job for training), ``loadtest.sh`` (guidellm and ``vllm bench serve`` at the planned operating point,
SLOs as goodput limits) and, for cloud options SkyPilot can launch, ``skypilot.yaml``. At the top,
``skypilot.yaml`` orders the launchable options that run option #1's very command (the same
configuration at other clouds and regions), and ``index.json`` lists every file with the numbers it
carries. Rendered with jinja2 templates (``export/templates``); pure except ``write_export``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from infrafit.search.types import Option, Plan

TEMPLATES = Path(__file__).parent / "templates"
#: vLLM / SGLang ``--quantization`` for the planned weight format (others: serve a checkpoint in it).
QUANTIZATION = {"fp8": "fp8"}
LAUNCHABLE = ("cloud_on_demand", "cloud_spot")
#: Stacks that quantize 16-bit weights to a ``QUANTIZATION`` format as they load them (vLLM's and SGLang's
#: ``--quantization fp8``); TensorRT-LLM's ``trtllm-serve`` serves a checkpoint already in the format.
LOAD_TIME_QUANTIZERS = ("vllm", "sglang", "default")
#: What a checkpoint in each format is, and a tool that makes one, for the line that asks for it.
CHECKPOINT_KINDS = {
    "fp8": "an FP8 checkpoint (e.g. made with TensorRT Model Optimizer or llm-compressor)",
    "int8": "an INT8 W8A8 checkpoint (e.g. made with llm-compressor)",
    "fp4": "an NVFP4 checkpoint (e.g. made with TensorRT Model Optimizer)",
    "int4": "an INT4 W4A16 checkpoint (AWQ or GPTQ)",
    "bf16": "a 16-bit (dequantized) checkpoint", "fp16": "a 16-bit (dequantized) checkpoint",
}
SIXTEEN_BIT = ("bf16", "fp16", "fp32")


def served_model_ids(workload: Any, arch: Any) -> tuple[str, str]:
    """(the checkpoint the spec names, the base model's id). A Hugging Face id in the spec is served as written
    (``Qwen/Qwen3-32B-AWQ``, ``meta-llama/Llama-3.1-8B-Instruct``: the library resolves both to the base
    architecture, whose id would serve the 16-bit base weights, not the AWQ or instruct ones); a library id
    serves its own checkpoint (``gpt-oss-120b``: ``openai/gpt-oss-120b``). Another format is made from the
    base (``checkpoint_needed``)."""
    base = str(arch.hf_id or arch.id)
    preset = getattr(getattr(workload, "model", None), "preset", None)
    own = runtime("checkpoint").get(str(preset or "").lower())
    if own:  # a library alias that is its own published checkpoint (llama3.3-70b: not the 3.1 base weights)
        return own, own
    return (str(preset) if preset and "/" in str(preset) else base), base


def checkpoint_needed(precision: str, native: str, stack: str, model: str) -> str | None:
    """What the serving command must be pointed at when the published checkpoint of ``model`` (at ``native``,
    its own quantized format, or 16-bit when empty) is not served at ``precision`` as is: None when it is
    (its own format; a 16-bit checkpoint at 16 bits; fp8 that vLLM or SGLang make from 16-bit weights as they
    load them), else e.g. "an INT8 W8A8 checkpoint (...) of openai/gpt-oss-120b"."""
    if precision == native or (not native and precision in SIXTEEN_BIT):
        return None
    if not native and precision in QUANTIZATION and stack in LOAD_TIME_QUANTIZERS:
        return None
    kind = CHECKPOINT_KINDS.get(precision, f"a {precision} checkpoint")
    if stack == "llama-cpp":  # llama.cpp reads its own GGUF files, quantized with its llama-quantize tool
        kind = f"a GGUF checkpoint quantized to {precision} (llama.cpp's llama-quantize: Q8_0, Q4_K_M, ...)"
    return kind.replace(" checkpoint", f" checkpoint of {model}", 1)


@lru_cache(maxsize=4)
def runtime(kind: str) -> dict[str, str]:
    """``data_runtime.csv`` rows of one kind: ``device_resource`` (accelerator vendor -> its Kubernetes
    device-plugin resource), ``image`` (serving stack -> its public container image) or ``checkpoint`` (a model
    library alias that names its own published checkpoint -> its Hugging Face id)."""
    with (Path(__file__).parent / "data_runtime.csv").open(newline="", encoding="utf-8") as fh:
        return {r["key"]: r["value"] for r in csv.DictReader(fh) if r["kind"] == kind}


@lru_cache(maxsize=1)
def skypilot_names() -> dict[str, str]:
    with (Path(__file__).parent / "data_skypilot.csv").open(newline="", encoding="utf-8") as fh:
        return {r["accelerator_id"]: r["skypilot_name"] for r in csv.DictReader(fh)}


@lru_cache(maxsize=1)
def skypilot_regions() -> dict[tuple[str, str], str]:
    """(provider, region) -> SkyPilot cloud, for the real provider regions of ``cloud_regions.csv`` (a
    catalog pseudo-region such as ``lambda-us`` or ``oci-any-us`` is no region SkyPilot can launch in)."""
    from infrafit.catalog.loader import read_table
    from infrafit.catalog.refresh import REGIONS, REGIONS_PATH

    frame = read_table(REGIONS_PATH, REGIONS)
    return {(p, r): c for p, r, c in zip(frame["provider"], frame["region"], frame["skypilot_cloud"], strict=True)
            if c and "-any" not in r}


def _env():  # noqa: ANN202 - jinja2 Environment
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


#: Per speculative method, vLLM's ``--speculative-config`` method, SGLang's ``--speculative-algorithm`` and
#: TensorRT-LLM's ``speculative_config.decoding_type`` (vLLM docs, features/speculative_decoding: draft_model,
#: eagle, mtp, ngram; SGLang server arguments; TensorRT-LLM speculative-decoding guide: DraftTarget, Eagle, MTP,
#: NGram).
SPECULATION = {"draft_model": ("draft_model", "STANDALONE", "DraftTarget"), "eagle": ("eagle", "EAGLE", "Eagle"),
               "mtp": ("mtp", "EAGLE", "MTP"), "ngram": ("ngram", "NGRAM", "NGram")}


def speculation_context(workload: Any, stack: str) -> dict[str, Any] | None:
    """How the option's command turns on the speculative decoding the plan priced (``inference.speculative``):
    ``lines`` (shell lines before the command: the draft to load, vLLM's config), ``vllm``, ``sglang`` (flags) and
    ``trt`` (``speculative_config`` YAML lines), and ``note``. An EAGLE head is model-specific and not in the
    library, so the script asks for it (``DRAFT_MODEL``). None without speculation."""
    spec = getattr(getattr(workload, "inference", None), "speculative", None)
    if spec is None:
        return None
    from infrafit.workload.models import resolve_model

    k = int(spec.tokens)
    vllm_method, sglang_algo, trt_type = SPECULATION[spec.method]
    draft = None
    lines = []
    if spec.method == "draft_model":
        d = resolve_model(spec.draft_model)
        draft = str(d.hf_id or d.id)
    elif spec.method == "eagle":
        lines.append('DRAFT_MODEL="${DRAFT_MODEL:?set DRAFT_MODEL to an EAGLE head trained for this model}"')
        draft = "${DRAFT_MODEL}"
    config: dict[str, Any] = {"method": vllm_method, "num_speculative_tokens": k}
    if draft:
        config["model"] = draft
    if spec.method == "ngram":
        config["prompt_lookup_max"] = 4

    sglang = f"--speculative-algorithm {sglang_algo}" + (f" --speculative-draft-model-path {draft}" if draft else "")
    sglang += (f" --speculative-num-draft-tokens {k + 1}" if spec.method == "ngram"
               else f" --speculative-num-steps {k} --speculative-eagle-topk 1 --speculative-num-draft-tokens {k + 1}")
    trt = ["speculative_config:", f"  decoding_type: {trt_type}"]
    trt += ([f"  num_nextn_predict_layers: {k}"] if spec.method == "mtp" else [f"  max_draft_len: {k}"])
    trt += [f"  speculative_model_dir: {draft}"] if draft else []
    shown = "the EAGLE head in DRAFT_MODEL" if spec.method == "eagle" else draft
    note = (f"speculative decoding: {spec.method}, {k} drafted tokens a step at an assumed acceptance of "
            f"{spec.acceptance_rate:g}" + (f", draft {shown}" if draft else ""))
    return {"lines": lines, "vllm_config": "SPEC_CONFIG=" + json.dumps(json.dumps(config)),
            "vllm": ' --speculative-config "$SPEC_CONFIG"', "sglang": sglang, "trt": trt,
            "note": note, "stack_supported": stack in ("vllm", "default", "sglang", "tensorrt-llm")}


def option_context(o: Option, workload: Any, catalog: Any) -> dict[str, Any]:
    """The numbers every file of option ``o`` carries (from the plan; nothing re-estimated)."""
    arch = workload.model_arch()
    perf = o.performance
    point = perf.get("operating_point") or {}
    par = {k: int((perf.get("parallelism") or {}).get(k) or 1) for k in ("tp", "pp", "dp", "ep")}
    instances = int(o.server.get("instances_per_replica") or 1)
    replicas = int(max(o.cost.get("replicas") or [1]))
    acc = catalog.accelerator(o.accelerator)
    kind = "train" if workload.is_training else ("llm" if arch.kind == "decoder" else "nonllm")
    tr = workload.inference.traffic if workload.inference is not None else None
    isl = int(tr.input_tokens.mean) if tr is not None and tr.input_tokens else 0
    osl = int(tr.output_tokens.mean) if tr is not None and tr.output_tokens else 0
    max_len = int((tr.input_tokens.p99 if tr is not None and tr.input_tokens else 0)
                  + (tr.output_tokens.p99 if tr is not None and tr.output_tokens else 0)) or 4096
    slo = workload.inference.slo if workload.inference is not None else None
    goodput = " ".join(f"{name}:{value * 1000:.0f}" for name, value in
                       (("ttft", slo.ttft_p99_s if slo else None), ("tpot", slo.tpot_p99_s if slo else None),
                        ("e2el", slo.e2e_p99_s if slo else None)) if value)
    rate = float(point.get("requests_per_s") or 0.0)
    resource = runtime("device_resource").get(acc.vendor) if acc.kind != "cpu" else None
    per_instance = max(o.count // instances, 1)
    cpu = int(o.server.get("cpu_cores") or 4)
    model, base = served_model_ids(workload, arch)
    checkpoint = (checkpoint_needed(o.precision, str(arch.default_precision or ""), o.stack, base)
                  if kind == "llm" else None)
    model = base if checkpoint else model  # a checkpoint made from the base is served under the base's name
    return {
        "o": o, "kind": kind, "model": model, "par": par, "moe": bool(arch.is_moe),
        "concurrency": int(point.get("concurrency") or 1), "batch": int(point.get("batch") or 1),
        "point": point.get("at") or "the planned operating point", "max_len": max_len,
        "quantization": QUANTIZATION.get(o.precision) if kind == "llm" and checkpoint is None else None,
        "checkpoint": checkpoint, "weights": '"$MODEL"' if checkpoint else model,
        "replicas": replicas, "per_instance": per_instance, "nodes": instances,
        "resource": resource, "cpu": cpu,
        "limits": f'{{{resource}: "{per_instance}"}}' if resource else f'{{cpu: "{cpu}"}}',
        "image": runtime("image").get(o.stack, "YOUR_IMAGE"),
        "name": f"{workload.name}-option-{o.rank}".lower().replace("_", "-")[:63].strip("-"),
        "isl": isl, "osl": osl, "rate": round(rate, 3), "goodput": goodput,
        "prompts": max(int(rate * 300), 50),
        "spec": speculation_context(workload, o.stack) if kind == "llm" else None,
    }


@lru_cache(maxsize=1)
def skypilot_tpu_slices() -> dict[str, tuple[str, int]]:
    """TPU accelerator id -> (SkyPilot's slice-type prefix, units a chip counts for in its suffix): ``tpu-v6e-8``
    is 8 chips, ``tpu-v5p-8`` 4 chips (TensorCores)."""
    with (Path(__file__).parent / "data_skypilot_tpu.csv").open(newline="", encoding="utf-8") as fh:
        return {r["accelerator_id"]: (r["skypilot_prefix"], int(r["units_per_chip"])) for r in csv.DictReader(fh)}


def skypilot_accelerators(o: Option) -> str | None:
    """SkyPilot's ``accelerators`` for one node of option ``o``: ``NAME:count`` for a GPU, the slice type and one
    slice for a single-host TPU (``tpu-v6e-1:1``); None where SkyPilot has no name, or for a TPU replica over
    several hosts (a pod slice, which runs on every host of the pod: not written here)."""
    nodes = int(o.server.get("instances_per_replica") or 1)
    per = max(o.count // nodes, 1)
    tpu = skypilot_tpu_slices().get(o.accelerator)
    if tpu is not None:
        return f"{tpu[0]}-{per * tpu[1]}:1" if nodes == 1 else None
    name = skypilot_names().get(o.accelerator)
    return f"{name}:{per}" if name else None


def _skypilot_resource(o: Option, catalog: Any) -> dict[str, Any] | None:
    cloud = skypilot_regions().get((o.provider, o.region))
    accelerators = skypilot_accelerators(o)
    if o.deployment not in LAUNCHABLE or not cloud or not accelerators:
        return None
    return {"cloud": cloud, "region": o.region, "accelerators": accelerators,
            "use_spot": o.deployment == "cloud_spot"}


def render_option(o: Option, workload: Any, catalog: Any) -> dict[str, str]:
    """File name -> text for one option."""
    env, ctx = _env(), option_context(o, workload, catalog)
    files = {name: env.get_template(f"{name}.j2").render(**ctx) for name in ("serve.sh", "k8s.yaml", "loadtest.sh")}
    res = _skypilot_resource(o, catalog)
    if res is not None:
        files["skypilot.yaml"] = env.get_template("skypilot.yaml.j2").render(
            name=ctx["name"], resources=[res], num_nodes=ctx["nodes"], checkpoint=ctx["checkpoint"])
    return files


def render_export(plan: Plan, workload: Any, catalog: Any, top: int) -> dict[str, str]:
    """Relative path -> text for the whole export folder."""
    out: dict[str, str] = {}
    index: dict[str, Any] = {"plan": plan.name, "options": []}
    first_serve = None
    ordered = []
    for o in plan.options[:top]:
        files = render_option(o, workload, catalog)
        folder = f"option-{o.rank}"
        for name, text in files.items():
            out[f"{folder}/{name}"] = text
        ctx = option_context(o, workload, catalog)
        if first_serve is None:
            first_serve = files["serve.sh"].split("\n", 2)[-1]  # the command, past the option's header
        res = _skypilot_resource(o, catalog)
        if res is not None and files["serve.sh"].split("\n", 2)[-1] == first_serve:
            ordered.append(res)
        index["options"].append({
            "rank": o.rank, "offer_id": o.offer_id, "deployment": o.deployment, "folder": folder,
            "files": sorted(files), "accelerator": o.accelerator, "count": o.count,
            "per_instance": ctx["per_instance"], "instances_per_replica": ctx["nodes"],
            "replicas_at_peak": ctx["replicas"], "parallelism": ctx["par"], "concurrency": ctx["concurrency"],
            "requests_per_s_per_replica": ctx["rate"], "skypilot": res is not None,
            "why_not_skypilot": None if res is not None else
            ("not a cloud rental" if o.deployment not in LAUNCHABLE else
             "a TPU slice over several hosts (a pod slice, launched as one pod), which this export does not write"
             if o.accelerator in skypilot_tpu_slices() and ctx["nodes"] > 1 else "its region is not a provider region "
             "SkyPilot launches in (cloud_regions.csv), or the accelerator has no SkyPilot name")})
    if ordered:
        env = _env()
        name = f"{workload.name}".lower().replace("_", "-")[:63]
        first = option_context(plan.options[0], workload, catalog)
        out["skypilot.yaml"] = env.get_template("skypilot.yaml.j2").render(
            name=name, resources=ordered, num_nodes=first["nodes"], checkpoint=first["checkpoint"]
        ).replace("run: bash serve.sh", "workdir: .\nrun: bash option-1/serve.sh")
    out["index.json"] = json.dumps(index, indent=2) + "\n"
    return out


def write_export(plan: Plan, workload: Any, catalog: Any, out_dir: Path, top: int) -> list[Path]:
    """Write the export folder (each file atomically); returns the paths written."""
    return write_export_files(render_export(plan, workload, catalog, top), out_dir)


def render_fleet_export(result: Mapping[str, Any], workloads: Sequence[Any], catalog: Any,
                        top: int) -> dict[str, str]:
    """Relative path -> text for a fleet plan (``search.fleet.plan_fleet``): each workload's own export in a
    folder of its name (its options planned apart, as ``plan --export`` writes them), and an index with the
    combined plan. A pooled fleet's co-located serving (several models on one instance) is not exported: its
    instances run the workloads' own serving commands side by side, which the index says."""
    out: dict[str, str] = {}
    index: dict[str, Any] = {"fleet": result["name"], "combined": None, "workloads": []}
    combined = result.get("combined") or {}
    if combined:
        index["combined"] = {k: combined.get(k) for k in ("kind", "tco_usd", "saving_usd", "offer_id", "deployment",
                                                           "provider", "region", "per_workload")}
        if combined.get("kind") == "shared":
            index["combined"]["note"] = (
                "the pooled fleet shares instances between workloads, and no multi-model serving manifest is written "
                "for it: each workload folder holds that workload's own options planned apart; on the pool's "
                "instances each model runs side by side with the precision and stack in per_workload")
    for w, workload in zip(result["workloads"], workloads, strict=True):
        folder = re.sub(r"[^A-Za-z0-9._-]+", "-", str(w["name"])).strip("-.") or "workload"
        plan = Plan.from_dict(w["plan"])
        files = render_export(plan, workload, catalog, top) if plan.options else {}
        out.update({f"{folder}/{rel}": text for rel, text in files.items()})
        index["workloads"].append({"name": w["name"], "folder": folder if files else None,
                                   "options": len(plan.options[:top])})
    out["index.json"] = json.dumps(index, indent=2) + "\n"
    return out


def write_export_files(files: Mapping[str, str], out_dir: Path) -> list[Path]:
    """Write ``files`` (relative path -> text) under ``out_dir``, each atomically; scripts executable."""
    from infrafit import safe_io

    written = []
    for rel, text in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        safe_io.atomic_write_text(path, text, what="export file", fix="choose a writable folder for --export")
        if path.suffix == ".sh":
            path.chmod(0o755)
        written.append(path)
    return written

