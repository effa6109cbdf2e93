"""Read a Hugging Face ``config.json`` (and a ModelOpt ``hf_quant_config.json``) into a ModelArch.

No network: the caller passes a path or an already-parsed dict.  Handles the families in
tests/fixtures/model_configs (llama, mistral, mixtral, qwen2/3, qwen3_moe, qwen3_5_moe, gemma 1/2/3,
gptj, opt, gpt2, bert incl. Google's original BERT format, deepseek_v3/kimi_k2, glm_moe_dsa,
gpt_oss, minimax_m2, whisper) and multimodal wrappers that nest the language model in
``text_config``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from infrafit import safe_io
from infrafit.errors import InputError
from infrafit.workload.arch import ModelArch
from infrafit.workload.quant import scheme_from_config

#: model types whose word embeddings are tied to the LM head unless the config says otherwise
#: (the defaults of the corresponding transformers config classes).
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "bert", "opt", "gpt2", "whisper"}
_PLAIN_MLP = {"gptj", "gpt2", "opt", "bert", "gpt_neox", "whisper", "falcon", "gpt_bigcode", "nemotron_h"}
_LEARNED_POS = {"gpt2", "opt", "bert", "gpt_bigcode", "whisper"}

_QUANT_ALGO = {
    "fp8": "fp8", "nvfp4": "fp4", "mxfp4": "fp4", "fp4": "fp4", "w4a16_awq": "int4", "w4a8_awq": "int4",
    "int4_awq": "int4", "int8": "int8", "w8a8": "int8", "int8_sq": "int8", "awq": "int4", "gptq": "int4",
    "fbgemm_fp8": "fp8",
}


def _read_json(path: Path) -> dict:
    text = safe_io.read_text_capped(path, safe_io.MODEL_CONFIG_MAX_BYTES, "model config")
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError(f"model config {str(path)!r} is nested too deeply to be a config.json",
                         fix="pass a Hugging Face config.json (a flat object of sizes and names)") from None
    except (ValueError, json.JSONDecodeError) as e:
        raise InputError(
            f"model config {str(path)!r} is not readable JSON ({e.__class__.__name__}: {e})",
            fix="pass a Hugging Face config.json file",
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"model config {str(path)!r} is not a JSON object", fix="pass a config.json file")
    return data


def precision_from_quant(cfg: Mapping[str, Any] | None) -> str | None:
    """Weight precision named by a ``quantization_config`` or a ModelOpt ``hf_quant_config``."""
    if not cfg:
        return None
    q = cfg.get("quantization", cfg)  # ModelOpt nests its fields under "quantization"
    algo = str(q.get("quant_algo") or "").lower()
    if algo in _QUANT_ALGO:
        return _QUANT_ALGO[algo]
    method = str(q.get("quant_method") or "").lower()
    if method in ("fp8", "fbgemm_fp8", "mxfp4"):
        return _QUANT_ALGO[method]
    if method == "modelopt":
        return _QUANT_ALGO.get(str(q.get("quant_algo", "")).lower())
    if method == "compressed-tensors":
        for group in (q.get("config_groups") or {}).values():
            w = (group or {}).get("weights") or {}
            bits, typ = w.get("num_bits"), str(w.get("type", "int"))
            if bits == 4:
                return "fp4" if typ == "float" else "int4"
            if bits == 8:
                return "fp8" if typ == "float" else "int8"
    if method in ("awq", "gptq", "bitsandbytes"):
        bits = q.get("bits") or (4 if q.get("load_in_4bit") else 8 if q.get("load_in_8bit") else None)
        return {4: "int4", 8: "int8"}.get(int(bits)) if bits else None
    return None


def _detect_type(cfg: Mapping[str, Any]) -> str:
    mt = str(cfg.get("model_type") or "").lower()
    if mt:
        return mt
    if "type_vocab_size" in cfg and "hidden_size" in cfg:
        return "bert"  # Google's original BERT format (MLPerf bert_config.json) has no model_type
    if "n_embd" in cfg and "rotary_dim" in cfg:
        return "gptj"
    if "n_embd" in cfg:
        return "gpt2"
    return ""


def _count_types(layer_types: Any, names: tuple[str, ...]) -> int:
    return sum(1 for t in layer_types or [] if str(t) in names)


def _vision_params(vc: Mapping[str, Any] | None) -> float:
    """Approximate weights of a ViT vision tower: depth x (4 h^2 + 2 h ffn)."""
    if not vc:
        return 0.0
    h = vc.get("hidden_size") or vc.get("vt_hidden_size") or 0
    ffn = vc.get("intermediate_size") or vc.get("vt_intermediate_size") or 4 * h
    depth = vc.get("depth") or vc.get("num_hidden_layers") or vc.get("vt_num_hidden_layers") or 0
    return float(depth * (4 * h * h + 2 * h * ffn))


def _windows(mt: str, c: Mapping[str, Any], layers: int) -> tuple[int | None, int]:
    """(sliding_window, number of sliding layers) per family."""
    sw = c.get("sliding_window")
    lt = c.get("layer_types")
    if lt:
        n = _count_types(lt, ("sliding_attention",))
        return (sw if n else None), n
    if not sw:
        return None, 0
    if mt == "gemma2":  # HF Gemma2: layer i slides when i is even
        return sw, (layers + 1) // 2
    if mt.startswith("gemma3"):  # every sliding_window_pattern-th layer is global
        pattern = c.get("sliding_window_pattern") or 6
        return sw, layers - layers // pattern
    if mt in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe"):
        if not c.get("use_sliding_window"):
            return None, 0
        return sw, max(layers - int(c.get("max_window_layers") or 0), 0)
    if sw >= int(c.get("max_position_embeddings") or 0) > 0:
        return None, 0  # a window as long as the context is no window
    return sw, layers  # mistral-style: every layer slides


def from_hf_config(
    path_or_dict: str | Path | Mapping[str, Any],
    *,
    model_id: str | None = None,
    quant_config: Mapping[str, Any] | str | Path | None = None,
    source: str | None = None,
) -> ModelArch:
    """A ModelArch from a Hugging Face config.

    ``path_or_dict``: a config.json path or its parsed dict.  A ``<stem>.hf_quant_config.json`` next
    to the file, or ``quant_config``, or the config's ``quantization_config`` sets
    ``default_precision``.  Raises InputError when the config lacks the fields a transformer needs.
    """
    if isinstance(path_or_dict, Mapping):
        cfg, where = dict(path_or_dict), "<dict>"
    else:
        p = Path(path_or_dict)
        cfg, where = _read_json(p), str(p)
        sib = p.with_name(p.name.removesuffix(".json") + ".hf_quant_config.json")
        if quant_config is None and sib.is_file():
            quant_config = sib
        model_id = model_id or p.name.removesuffix(".json").replace("--", "/")
    if isinstance(quant_config, str | Path):
        quant_config = _read_json(Path(quant_config))
    top_type = _detect_type(cfg)
    text_config = cfg.get("text_config")
    c: dict = text_config if isinstance(text_config, dict) else cfg
    mt = _detect_type(c) or top_type
    own = c.get("quantization_config") or cfg.get("quantization_config")
    precision = precision_from_quant(quant_config) or precision_from_quant(own)
    arch = _build(mt, c, cfg, model_id=model_id or where, where=where, precision=precision, source=source)
    scheme = scheme_from_config(quant_config if precision_from_quant(quant_config) else own)
    return arch.model_copy(update=scheme) if scheme and precision else arch


def _g(c: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        v = c.get(k)
        if v is not None:
            return v
    return default


def _build(mt, c, top, *, model_id, where, precision, source) -> ModelArch:
    hidden = _g(c, "hidden_size", "n_embd", "d_model", "dim")
    layers = _g(c, "num_hidden_layers", "n_layer", "decoder_layers", "num_layers", "n_layers")
    heads = _g(c, "num_attention_heads", "n_head", "decoder_attention_heads", "n_heads")
    if not (hidden and layers and heads):
        raise InputError(
            f"{where}: config has no hidden size, layer count or attention heads "
            f"(model_type {mt or 'unknown'!r})",
            fix="pass a transformer config.json with hidden_size, num_hidden_layers and num_attention_heads",
        )
    head_dim = c.get("head_dim") or c.get("attention_head_dim") or hidden // heads
    ffn = _g(c, "intermediate_size", "ffn_dim", "n_inner", "decoder_ffn_dim", default=4 * hidden)
    tie = c.get("tie_word_embeddings", top.get("tie_word_embeddings", mt in _TIED_BY_DEFAULT))
    if mt in _TIED_BY_DEFAULT and "tie_word_embeddings" not in c and "tie_word_embeddings" not in top:
        tie = True
    f: dict[str, Any] = dict(
        id=model_id.lower(), name=model_id, kind="decoder", family=mt or None, hf_id=model_id,
        source=source or f"Hugging Face config.json ({where})", default_precision=precision,
        hidden_size=hidden, num_layers=layers, num_attention_heads=heads,
        num_kv_heads=_g(c, "num_key_value_heads", "num_kv_heads", default=heads), head_dim=head_dim,
        intermediate_size=ffn, vocab_size=_g(c, "vocab_size", "padded_vocab_size"),
        max_position_embeddings=_g(c, "max_position_embeddings", "n_positions", "max_target_positions",
                                   "max_sequence_length", "seq_length"),
        tie_word_embeddings=bool(tie), mlp_gated=mt not in _PLAIN_MLP, learned_positions=mt in _LEARNED_POS,
    )
    if mt == "bert":
        f.update(kind="encoder", type_vocab_size=c.get("type_vocab_size", 2), reference_seq_len=384)
    if mt == "opt":  # OPT's position table has 2 extra rows (padding offset)
        f["max_position_embeddings"] = (f["max_position_embeddings"] or 2048) + 2
    # MoE
    n_exp = _g(c, "num_local_experts", "n_routed_experts", "num_experts")
    if n_exp:
        f.update(
            num_experts=n_exp, experts_per_token=_g(c, "num_experts_per_tok", "experts_per_token", "moe_topk"),
            moe_intermediate_size=c.get("moe_intermediate_size") or ffn,
            first_dense_layers=int(c.get("first_k_dense_replace") or 0),
        )
        shared_size = (c.get("shared_expert_intermediate_size") or c.get("shared_intermediate_size")
                       or c.get("moe_shared_expert_intermediate_size"))
        n_shared = c.get("n_shared_experts") or (1 if shared_size else 0)
        f.update(num_shared_experts=int(n_shared), shared_expert_intermediate_size=shared_size or None)
    # MLA
    if c.get("kv_lora_rank"):
        f.update({k: c.get(k) for k in ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
                                        "qk_nope_head_dim", "v_head_dim")})
        f["head_dim"] = (c.get("qk_nope_head_dim") or 0) + (c.get("qk_rope_head_dim") or 0)
    if c.get("index_topk"):
        f.update(index_topk=c["index_topk"], index_n_heads=c.get("index_n_heads"),
                 index_head_dim=c.get("index_head_dim"))
    # windows and linear attention
    lt = c.get("layer_types")
    n_lin = _count_types(lt, ("linear_attention",))
    if not n_lin and c.get("full_attention_interval") and c.get("linear_num_value_heads"):
        n_lin = layers - layers // int(c["full_attention_interval"])
    if n_lin:
        f.update(linear_attention_layers=n_lin, linear_num_key_heads=c.get("linear_num_key_heads"),
                 linear_key_head_dim=c.get("linear_key_head_dim"),
                 linear_num_value_heads=c.get("linear_num_value_heads"),
                 linear_value_head_dim=c.get("linear_value_head_dim"),
                 linear_conv_kernel_dim=c.get("linear_conv_kernel_dim") or 4)
    if c.get("attn_output_gate") or (mt.startswith("qwen3_next") and c.get("attn_output_gate", True)):
        f["attn_output_gate"] = True
    sw, n_sw = _windows(mt, c, layers)
    f.update(sliding_window=sw, sliding_window_layers=n_sw)
    if mt.startswith("llama4"):
        f.update(_llama4(c, layers, ffn))
    elif mt == "nemotron_h" and c.get("hybrid_override_pattern"):
        f.update(_nemotron_h(c, hidden))
    elif c.get("block_configs"):
        f.update(_nas_blocks(c, hidden, heads))
    elif mt.startswith("gemma4"):
        f.update(_gemma4(c, ffn))
    if mt == "whisper":
        f.update(kind="speech", encoder_layers=c.get("encoder_layers", layers),
                 encoder_seq_len=c.get("max_source_positions", 1500),
                 extra_params=float(3 * hidden * (c.get("num_mel_bins", 80) + hidden)))
    f["extra_params"] = f.get("extra_params", 0.0) + _vision_params(top.get("vision_config"))
    return build_arch(f, str(f.get("id") or "the model"))


def _llama4(c: Mapping[str, Any], layers: int, ffn: int) -> dict[str, Any]:
    """Llama 4: every ``interleave_moe_layer_step``-th layer is MoE (HF ``moe_layers``), the others dense
    at ``intermediate_size_mlp``; each MoE layer has one shared expert as wide as a routed one."""
    step = max(int(c.get("interleave_moe_layer_step") or 1), 1)
    out: dict[str, Any] = {"intermediate_size": int(c.get("intermediate_size_mlp") or ffn),
                           "moe_intermediate_size": ffn, "num_shared_experts": 1,
                           "shared_expert_intermediate_size": ffn, "first_dense_layers": layers - layers // step}
    chunk = c.get("attention_chunk_size")
    if chunk:
        # HF Llama4TextConfig: every no_rope_layer_interval-th layer (4) is a global NoPE layer, the others
        # use RoPE and attend only within their attention_chunk_size chunk. A chunked layer is costed as a
        # window of the chunk: it holds at most a chunk of KV (its exact need at a chunk's end); a query
        # attends min(t, chunk) tokens, up to 2x the t mod chunk it really attends past the first chunk.
        interval = max(int(c.get("no_rope_layer_interval") or 4), 1)
        nope = c.get("no_rope_layers")
        chunked = sum(1 for x in nope if x) if isinstance(nope, list) and nope else layers - layers // interval
        out.update(sliding_window=int(chunk), sliding_window_layers=chunked)
    return out


def _gemma4(c: Mapping[str, Any], ffn: int) -> dict[str, Any]:
    """Gemma 4 (HF ``Gemma4TextConfig``): the full-attention layers have their own head dim
    (``global_head_dim``) and, with ``attention_k_eq_v``, ``num_global_key_value_heads`` KV heads whose K
    projection also gives V; ``top_k_experts`` routed experts per token; with ``enable_moe_block`` every
    layer runs its dense MLP (``intermediate_size``) beside the routed experts, which is a shared expert."""
    out: dict[str, Any] = {}
    if c.get("global_head_dim"):
        k_eq_v = bool(c.get("attention_k_eq_v"))
        global_kv = c.get("num_global_key_value_heads") if k_eq_v else None  # else the sliding layers' count
        out.update(global_head_dim=int(c["global_head_dim"]), global_k_eq_v=k_eq_v,
                   global_kv_heads=int(global_kv) if global_kv else None)
    if c.get("num_experts") and c.get("top_k_experts"):
        out["experts_per_token"] = int(c["top_k_experts"])
        if c.get("enable_moe_block"):
            out.update(num_shared_experts=1, shared_expert_intermediate_size=ffn, first_dense_layers=0)
    return out


def _spread(width: float, blocks: int, layers: int) -> int:
    """The FFN width that puts ``blocks`` FFNs of ``width`` on ``layers`` layers (at least 1)."""
    return max(int(round(width * blocks / layers)), 1) if layers else max(int(width), 1)


def _nemotron_h(c: Mapping[str, Any], hidden: int) -> dict[str, Any]:
    """Nemotron-H / Nemotron 3: ``hybrid_override_pattern`` gives each block one job: ``M`` a Mamba-2
    mixer, ``*`` attention, ``-`` an MLP, ``E`` a MoE. ModelArch layers carry a mixer and an FFN, so the
    model is its mixer blocks (Mamba-2 as a linear-attention layer: same in/out projections, conv and a
    heads x head_dim x state recurrent state), the dense MLP weights spread over the mixer layers that
    are not MoE (``_spread``): weights, FLOPs, KV cache and state as the checkpoint has them, the
    per-layer kernel count approximate. A latent MoE (``moe_latent_size``) runs its routed experts in
    the latent width: each counts as an expert ``latent / hidden`` as wide, and the down/up latent
    projections as shared width."""
    pattern = str(c["hybrid_override_pattern"])
    n_m, n_att, n_mlp, n_moe = (pattern.count(x) for x in ("M", "*", "-", "E"))
    mixers = n_m + n_att
    ffn = int(c.get("intermediate_size") or 4 * hidden)
    out: dict[str, Any] = {
        "num_layers": mixers, "linear_attention_layers": n_m,
        "linear_num_key_heads": c.get("n_groups") or 1, "linear_key_head_dim": c.get("ssm_state_size"),
        "linear_num_value_heads": c.get("mamba_num_heads"), "linear_value_head_dim": c.get("mamba_head_dim"),
        "linear_conv_kernel_dim": c.get("conv_kernel") or 4,
        "intermediate_size": _spread(ffn, n_mlp, mixers - min(n_moe, mixers)),
    }
    if n_moe:
        out["first_dense_layers"] = mixers - min(n_moe, mixers)
        latent = c.get("moe_latent_size")
        if latent:
            width = int(c.get("moe_intermediate_size") or ffn)
            out["moe_intermediate_size"] = _spread(width * latent, 1, hidden)
            shared = int(c.get("moe_shared_expert_intermediate_size") or 0)
            out["shared_expert_intermediate_size"] = shared + int(latent)
            out["num_shared_experts"] = 1
    return out


def _nas_blocks(c: Mapping[str, Any], hidden: int, heads: int) -> dict[str, Any]:
    """A neural-architecture-searched model (DeciLM / Llama-Nemotron ``block_configs``): per block an
    attention with ``n_heads_in_group`` query heads per KV head or none (``no_op``), and an FFN of
    ``ffn_mult`` (width ``2 ffn_mult hidden / 3`` rounded up to 256, DeciLM's rule) or none. The model is
    its attention blocks, the FFN weights spread over them (``_spread``)."""
    blocks = list(c["block_configs"])
    att = [b.get("attention") or {} for b in blocks]
    live = [a for a in att if not a.get("no_op") and not a.get("replace_with_linear")]
    widths = []
    for b in blocks:
        f = b.get("ffn") or {}
        if f.get("no_op") or f.get("replace_with_linear") or not f.get("ffn_mult"):
            continue
        w = int(2 * float(f["ffn_mult"]) * hidden / 3)
        widths.append(w + (-w) % 256)
    groups = sorted({int(a.get("n_heads_in_group") or 1) for a in live}) or [1]
    layers = max(len(live), 1)
    return {"num_layers": layers, "num_kv_heads": max(heads // groups[0], 1),
            "intermediate_size": _spread(sum(widths), 1, layers)}


def build_arch(fields: dict[str, Any], what: str) -> ModelArch:
    """``ModelArch(**fields)``, with a validation failure as an ``InputError`` in plain words (the
    fields at fault, no validator internals)."""
    try:
        return ModelArch(**fields)
    except ValidationError as exc:
        parts = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(x) for x in err.get("loc", ()))
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            parts.append(f"{loc}: {msg}" if loc else msg)
        raise InputError(f"{what}: impossible architecture ({'; '.join(parts)})",
                         fix="correct those fields (sizes are positive whole numbers; see docs/models.md)") from None
