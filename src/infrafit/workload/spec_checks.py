"""Checks across fields of a workload spec: contradictions, derived defaults, and the model.

Each check returns ``(field_path, what, fix)`` triples; ``spec_problems.located`` adds file:line.
Three kinds, so that as many problems as possible are reported in one run:

* ``structure_problems(raw)`` on the raw mapping (always runs, beside pydantic's field errors):
  which blocks a task needs and allows.
* ``value_problems(workload)`` on valid field values (runs inside ``Workload``'s validator, so every
  ``Workload`` satisfies them): budget vs horizon, LoRA on pre-training, traffic a mode needs, ...
* ``model_problems(workload)`` against the model library (runs last): unknown model names with
  suggestions, config files, SLO kinds and token lengths that do not fit the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from infrafit import units
from infrafit.errors import InfrafitError
from infrafit.workload import spec_types as t

if TYPE_CHECKING:
    from infrafit.workload.spec import Workload
    from infrafit.workload.spec_sections import Usage

Triple = tuple[tuple[str | int, ...], str, str]
_HYBRID_FIX = ("remove the inference block, or add hybrid to deployment.allowed to plan training and "
               "serving as two parts (train in one place, serve in another)")


def structure_problems(raw: dict[str, Any]) -> list[Triple]:
    """Blocks a task needs or may not have, read from the raw mapping."""
    task = raw.get("task")
    out: list[Triple] = []
    has_inf, has_train = raw.get("inference") is not None, raw.get("training") is not None
    if task == "inference":
        if has_train:
            out.append((("training",), "a training block on an inference task",
                        "remove the training block, or set task: training or fine-tuning"))
        if not has_inf:
            out.append((("inference",), "an inference task needs an inference block",
                        "add `inference: {mode: realtime, traffic: {requests_per_s: 10}}`"))
    elif task in ("training", "fine-tuning"):
        if not has_train:
            out.append((("training",), f"a {task} task needs a training block",
                        "add `training: {tokens: 1e9}` (or samples, or epochs with dataset.samples)"))
        if has_inf and not _allows_hybrid(raw):
            out.append((("inference",), f"an inference block on a {task} task", _HYBRID_FIX))
    return out


def _allows_hybrid(raw: dict[str, Any]) -> bool:
    deployment = raw.get("deployment")
    allowed = deployment.get("allowed") if isinstance(deployment, dict) else None
    return isinstance(allowed, list) and "hybrid" in allowed


# --- derived defaults ----------------------------------------------------------------------------
#: Kinds whose training sample is a token sequence through transformer layers (``perf.training``): the
#: sequence length of a sample is at most the model's context, and a ViT's is its image's patches.
_SEQUENCE_KINDS = ("decoder", "encoder", "vit", "speech")


def default_seq_len(w: Workload) -> int | None:
    """``training.seq_len`` when the spec states none: the usual 4,096 tokens, capped at the model's context
    (``max_position_embeddings``): 512 for BERT, a Whisper decoder's 448 tokens per 30 s window, a ViT's 197
    (its image's 196 patches and the class token). Until 2026-12-08 every model trained 4,096-token samples, so
    a ViT-L/16 ImageNet run was 33x and a BERT-large pre-training ~10x the work. None when the model cannot be
    resolved (``model_problems`` reports that) or is not a sequence model."""
    try:
        arch = w.model_arch()
    except Exception:  # noqa: BLE001 - any failure to resolve is reported by model_problems
        return None
    context = getattr(arch, "max_position_embeddings", None)
    if getattr(arch, "kind", None) not in _SEQUENCE_KINDS or not context:
        return None
    return int(min(t.TRAINING_SEQ_LEN_DEFAULT, int(context)))


def default_usage(w: Workload) -> Usage | None:
    """Usage when the spec gives none (or leaves periodic/occasional use without hours or runs).

    Serving -> continuous; a batch job with ``items.window_hours`` -> periodic, that window every
    day; training and fine-tuning -> one occasional run a year.
    """
    from infrafit.workload.spec_sections import Usage

    given = "usage" in w.model_fields_set
    usage = w.usage.model_copy() if given else None
    batch_hours = _batch_hours_per_month(w)
    if usage is None:
        if w.inference is not None and w.inference.mode == "batch" and batch_hours is not None:
            usage = Usage(pattern="periodic")
        elif w.inference is not None:
            return None  # the Usage() default: continuous
        else:
            usage = Usage(pattern="occasional")
    if usage.active_hours_per_month is None and usage.runs_per_year is None:
        if usage.pattern == "periodic" and batch_hours is not None:
            usage._fill("active_hours_per_month", batch_hours)
        elif usage.pattern == "occasional" or (usage.pattern == "periodic" and w.is_training):
            usage._fill("runs_per_year", 1.0)
    return usage


def _batch_hours_per_month(w: Workload) -> float | None:
    items = w.inference.traffic.items if w.inference is not None else None
    if items is None:
        return None
    return items.window_hours * units.DAYS_PER_YEAR / units.MONTHS_PER_YEAR


# --- contradictions between valid values -----------------------------------------------------------
def value_problems(w: Workload) -> list[Triple]:
    out: list[Triple] = []
    out += _budget(w)
    out += _training(w)
    out += _traffic(w)
    out += _usage(w)
    out += _placement(w)
    out += _availability(w)
    out += _network(w)
    out += _llm_features(w)
    return out


def _llm_features(w: Workload) -> list[Triple]:
    """Prefix caching and speculative decoding act on LLM serving; their numbers must make sense."""
    inf = w.inference
    if inf is None or (inf.traffic.prefix is None and inf.speculative is None):
        return []
    out: list[Triple] = []
    try:
        decoder = w.model_arch().kind == "decoder"
    except Exception:  # noqa: BLE001 - an unknown model is reported by its own check
        return []
    for name, given in (("traffic", inf.traffic.prefix), ("speculative", inf.speculative)):
        if given is not None and not decoder:
            where = ("inference", "traffic", "prefix") if name == "traffic" else ("inference", "speculative")
            out.append((where, f"{where[-1]} applies to LLM serving, not to a {w.model_arch().kind} model",
                        f"drop inference.{'.'.join(where[1:])}"))
    prefix, isl = inf.traffic.prefix, inf.traffic.input_tokens
    if prefix is not None and isl is not None and isl.mean and prefix.shared_tokens > isl.mean:
        out.append((("inference", "traffic", "prefix", "shared_tokens"),
                    f"shared_tokens {prefix.shared_tokens:g} is more than the mean prompt ({isl.mean:g} tokens)",
                    "the shared prefix is part of each prompt: give at most input_tokens.mean"))
    spec = inf.speculative
    if spec is not None and spec.draft_model:
        from infrafit.workload import models

        try:
            models.resolve_model(spec.draft_model)
        except Exception as exc:  # noqa: BLE001 - say which name and how to fix it
            what = getattr(exc, "what", str(exc))
            out.append((("inference", "speculative", "draft_model"), f"draft_model {spec.draft_model!r}: {what}",
                        "name a smaller model of the same family from the library (`infrafit catalog models`, "
                        "e.g. gemma3-1b for gemma3-27b)"))
    return out


def _network(w: Workload) -> list[Triple]:
    """``slo.measured_at`` and ``new_connection_per_request`` act on interactive serving with users_in."""
    inf = w.inference
    if inf is None:
        return []
    out: list[Triple] = []
    interactive = inf.mode in ("realtime", "mixed")
    if inf.slo.measured_at == "client" and not w.placement.users_in:
        out.append((("inference", "slo", "measured_at"), "measured_at: client needs to know where the clients are",
                    "add placement.users_in (cities, regions or country codes), or set measured_at: server"))
    if inf.slo.measured_at is not None and not interactive:
        out.append((("inference", "slo", "measured_at"), f"measured_at applies to interactive serving, not to "
                    f"{inf.mode} inference", "drop measured_at (a batch job has no users waiting on a request)"))
    if inf.traffic.new_connection_per_request and not (interactive and w.placement.users_in):
        out.append((("inference", "traffic", "new_connection_per_request"),
                    "new_connection_per_request adds handshakes at the users, but no users are placed",
                    "add placement.users_in for realtime serving, or drop the field"))
    return out


def _availability(w: Workload) -> list[Triple]:
    """``availability`` acts on realtime serving only: refuse it where nothing would use it."""
    given = w.availability.model_fields_set
    realtime = w.inference is not None and w.inference.mode in ("realtime", "mixed", "edge")
    if not given or realtime:
        return []
    what = "training" if w.is_training else f"{w.inference.mode} inference" if w.inference else w.task
    return [(("availability", sorted(given)[0]), f"availability applies to realtime serving, not to {what}",
             "drop the availability section (a batch or training job is restarted, not kept up by replicas)")]


def _budget(w: Workload) -> list[Triple]:
    b = w.budget
    if b.total_usd is not None and b.monthly_usd is not None and w.horizon_months > 1 and b.total_usd < b.monthly_usd:
        return [(("budget", "total_usd"),
                 f"total_usd ({b.total_usd:g}) is below monthly_usd ({b.monthly_usd:g}) over {w.horizon_months} months",
                 "raise total_usd to at least monthly_usd, or lower monthly_usd, or drop one of them")]
    return []


def _training(w: Workload) -> list[Triple]:
    tr = w.training
    if tr is None or w.task != "training" or tr.method == "full":
        return []
    return [(("training", "method"), f"method {tr.method} adapts a pretrained model, but task is training",
             "set task: fine-tuning, or method: full for training from scratch")]


def _traffic(w: Workload) -> list[Triple]:
    inf = w.inference
    if inf is None:
        return []
    tr = inf.traffic
    if inf.mode == "batch":
        if tr.items is None and tr.requests_per_s is None:
            return [(("inference", "traffic", "items"), "a batch job needs its volume",
                     "add `items: {per_day: 1e6, window_hours: 6}` (or requests_per_s)")]
        return []
    if tr.requests_per_s is None:
        return [(("inference", "traffic", "requests_per_s"), f"{inf.mode} inference needs an average request rate",
                 "add `requests_per_s: 10` under inference.traffic")]
    return []


def _usage(w: Workload) -> list[Triple]:
    u = w.usage
    if u.pattern in ("periodic", "occasional") and u.active_hours_per_month is None and u.runs_per_year is None:
        return [(("usage",), f"{u.pattern} usage needs active_hours_per_month or runs_per_year",
                 "add `active_hours_per_month: 120` or `runs_per_year: 12` under usage")]
    return []


def _placement(w: Workload) -> list[Triple]:
    p = w.placement
    out: list[Triple] = []
    if p.training_regions and not w.is_training:
        out.append((("placement", "training_regions"), "training_regions on an inference task",
                    "remove placement.training_regions"))
    outside = [r for r in p.training_regions if p.regions and r not in p.regions]
    if outside:
        out.append((("placement", "training_regions"),
                    f"training_regions {outside} are outside placement.regions {list(p.regions)}",
                    "add them to placement.regions (data residency applies to training too) or drop them"))
    return out


# --- the model --------------------------------------------------------------------------------------
def model_problems(w: Workload) -> list[Triple]:
    """Resolve the model (library, config.json or inline) and check what depends on its kind."""
    ref = w.model
    if ref.config is not None and not Path(ref.config).is_file():
        return [(("model", "config"), f"model config {ref.config!r} is not a file",
                 "give the path of a Hugging Face config.json, relative to the spec file")]
    try:
        arch = w.model_arch()
    except ImportError:
        return []  # the model library is not installed in this build; names cannot be checked
    except InfrafitError as exc:
        return [(_model_path(w), exc.what, exc.fix)]
    except (ValueError, TypeError, KeyError, OSError) as exc:
        return [(_model_path(w), f"cannot read the model: {type(exc).__name__}: {exc}",
                 "give a Hugging Face config.json with its usual fields, or a library id (infrafit catalog models)")]
    return _kind_problems(w, arch)


def _model_path(w: Workload) -> tuple[str, ...]:
    if w.model.config is not None:
        return ("model", "config")
    return ("model", "architecture") if w.model.architecture is not None else ("model",)


def _kind_problems(w: Workload, arch: Any) -> list[Triple]:
    out: list[Triple] = []
    kind = getattr(arch, "kind", None)
    if w.framework in ("sklearn", "xgboost") and kind != "tabular":
        out.append((("framework",), f"framework {w.framework} cannot run a {kind} model ({arch.id})",
                    "use pytorch, jax, tensorflow or onnx, or a tabular model"))
    if kind == "tabular" and w.framework not in ("sklearn", "xgboost", "onnx"):
        out.append((("framework",), f"a tabular model ({arch.id}) runs on sklearn, xgboost or onnx, not {w.framework}",
                    "set framework: xgboost or sklearn"))
    inf = w.inference
    if inf is not None:
        out += _slo_kind(inf, kind)
        out += _llm_tokens(inf, arch) if kind == "decoder" else []
        if kind == "encoder" and inf.traffic.input_tokens is not None:
            out += _context(("inference", "traffic", "input_tokens"), float(inf.traffic.input_tokens.p99 or 0.0), arch,
                            what="input_tokens.p99")
        out += _token_fields_unused(inf, arch)
    if w.training is not None and kind in _SEQUENCE_KINDS:
        out += _training_sequence(w.training.seq_len, arch)
    return out


def _training_sequence(seq_len: int, arch: Any) -> list[Triple]:
    """A stated ``training.seq_len`` must fit the model's context; a ViT's is its image's patches (plus the
    class token) and cannot be set apart from the image size."""
    path = ("training", "seq_len")
    tokens = getattr(arch, "max_position_embeddings", None)
    if getattr(arch, "kind", None) == "vit" and tokens and seq_len != tokens:
        size = getattr(arch, "image_size", None)
        return [(path, f"a ViT's sequence is its image's patches and class token: {tokens} for {arch.id}"
                       + (f" at {size} px" if size else ""),
                 "remove training.seq_len (it is set by the image size), or use a model config with another "
                 "image_size")]
    return _context(path, seq_len, arch)


#: The token fields each non-LLM kind reads (``perf.evaluate_many.nonllm_work_shape``): an encoder's
#: tokens per sequence, the tokens a speech model decodes per 30 s window.
_TOKEN_FIELDS_BY_KIND = {"encoder": ("input_tokens",), "speech": ("output_tokens",)}


def _token_fields_unused(inf: Any, arch: Any) -> list[Triple]:
    """Token counts a non-LLM model does not read are refused rather than ignored."""
    kind = getattr(arch, "kind", None)
    if kind == "decoder":
        return []
    used = _TOKEN_FIELDS_BY_KIND.get(str(kind), ())
    out: list[Triple] = []
    for name in ("input_tokens", "output_tokens"):
        if getattr(inf.traffic, name) is not None and name not in used:
            hint = {"encoder": "an encoder reads input_tokens (tokens per sequence)",
                    "speech": "a speech model reads output_tokens (tokens decoded per 30 s window)"}.get(
                        str(kind), f"a {kind} model's work per request does not depend on tokens")
            out.append((("inference", "traffic", name), f"{name} is not used for a {kind} model ({arch.id})",
                        f"remove it; {hint}"))
    return out


def _slo_kind(inf: Any, kind: str | None) -> list[Triple]:
    slo = inf.slo
    if kind == "decoder" and slo.latency_p99_s is not None:
        return [(("inference", "slo", "latency_p99_s"), "latency_p99_s is for non-LLM models; this is an LLM",
                 "use ttft_p99_s, tpot_p99_s or e2e_p99_s")]
    if kind != "decoder" and (slo.ttft_p99_s is not None or slo.tpot_p99_s is not None):
        return [(("inference", "slo"), f"ttft_p99_s and tpot_p99_s apply to LLMs; this is a {kind} model",
                 "use latency_p99_s (or e2e_p99_s)")]
    return []


def _llm_tokens(inf: Any, arch: Any) -> list[Triple]:
    tr = inf.traffic
    out: list[Triple] = []
    for name in ("input_tokens", "output_tokens"):
        if getattr(tr, name) is None:
            out.append((("inference", "traffic", name), f"an LLM workload needs {name} per request",
                        f"add `{name}: {{mean: {1500 if name == 'input_tokens' else 300}, p99: ...}}`"))
    if not out:
        out += _context(("inference", "traffic", "input_tokens"), tr.input_tokens.p99 + tr.output_tokens.p99, arch,
                        what="input_tokens.p99 + output_tokens.p99")
    return out


def _context(path: tuple[str, ...], tokens: float, arch: Any, what: str = "seq_len") -> list[Triple]:
    limit = getattr(arch, "max_position_embeddings", None)
    if limit and tokens > limit:
        return [(path, f"{what} ({tokens:g}) exceeds {arch.id}'s context length ({limit})",
                 f"keep {what} at or below {limit}, or pick a longer-context model")]
    return []
