"""The model library: look up architectures by library id, alias or Hugging Face id.

``get_model("nvidia/Llama-3.1-8B-Instruct-FP8")`` -> the ``llama3.1-8b`` architecture with
``default_precision="fp8"``.  Variant suffixes (``-Instruct``, ``-chat-hf``, ``-it``, ``-FP8``,
``-NVFP4``, ...) resolve to the base architecture; a precision suffix sets ``default_precision``.
The library lives in ``data/models.yaml``; nothing here reads tests/ or the network.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from infrafit.errors import InputError, suggest
from infrafit.workload.arch import ModelArch
from infrafit.workload.hf_config import from_hf_config

#: suffixes that name a precision, longest first (matched on the normalised key's end)
_PRECISION_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("nvfp4", "fp4"), ("mxfp4", "fp4"), ("fp4", "fp4"), ("fp8dynamic", "fp8"), ("fp8", "fp8"),
    ("w4a16", "int4"), ("w8a8", "int8"), ("awq", "int4"), ("gptq", "int4"), ("int4", "int4"),
    ("int8", "int8"), ("bf16", "bf16"), ("fp16", "fp16"),
)
#: variant suffixes that keep the architecture (instruction tuning, chat, packaging)
_VARIANT_SUFFIXES: tuple[str, ...] = (
    "instruct", "chat", "hf", "it", "base", "pt", "uncased", "cased", "v0.1", "v0.3", "2507",
    "thinking", "reasoning", "ptq", "quantized", "modelopt", "nvidia",
)


def _key(name: str) -> str:
    """Normalise a name: lower case, without an org prefix, ``meta-`` or separators (dots kept)."""
    n = name.strip().lower().rsplit("/", 1)[-1]
    n = n.removeprefix("meta-")
    return re.sub(r"[^a-z0-9.]", "", n)


def _tokens(name: str) -> list[str]:
    n = name.strip().lower().rsplit("/", 1)[-1].removeprefix("meta-")
    return [t for t in re.split(r"[-_ ]+", n) if t]


def _checkpoint_scheme(config_file: str) -> dict[str, Any]:
    """What the shipped ``config_file``'s ``quantization_config`` says stays 16-bit, and its bits."""
    import json

    from infrafit.workload.quant import scheme_from_config

    path = HF_CONFIG_DIR / config_file
    if not path.is_file():
        return {}
    cfg = json.loads(path.read_text(encoding="utf-8"))
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    return scheme_from_config(text.get("quantization_config") or cfg.get("quantization_config"))


@lru_cache(maxsize=1)
def _library() -> tuple[dict[str, ModelArch], dict[str, str]]:
    """(models by id, index from normalised keys -> id)."""
    text = resources.files("infrafit.workload").joinpath("data/models.yaml").read_text(encoding="utf-8")
    entries = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or []  # libyaml: ~8x faster
    models: dict[str, ModelArch] = {}
    index: dict[str, str] = {}
    for e in entries:
        e = dict(e)
        config_file = e.pop("config_file", None)  # provenance, and the checkpoint's quantization scheme
        if config_file and "quant_kept" not in e:
            e.update(_checkpoint_scheme(str(config_file)))
        m = ModelArch(**e)
        if m.id in models:
            raise ValueError(f"duplicate model id {m.id!r} in models.yaml")
        models[m.id] = m
        for name in (m.id, m.name, m.hf_id, *m.aliases):
            if not name:
                continue
            for k in {name.strip().lower(), _key(name)}:
                if index.get(k, m.id) != m.id:
                    raise ValueError(f"models.yaml: {name!r} names both {index[k]!r} and {m.id!r}")
                index[k] = m.id
    return models, index


def list_models() -> list[ModelArch]:
    """Every architecture in the library, in file order."""
    return list(_library()[0].values())


def _lookup(name: str) -> tuple[str | None, str | None]:
    """(library id, precision from a suffix) or (None, None)."""
    models, index = _library()
    full = name.strip().lower()
    if full in index:
        return index[full], None
    toks = _tokens(name)
    precision: str | None = None
    while toks:
        k = _key("-".join(toks))
        if k in index:
            return index[k], precision
        last = toks[-1]
        hit = next((p for s, p in _PRECISION_SUFFIXES if last == s), None)
        if hit:
            precision = precision or hit
        elif last not in _VARIANT_SUFFIXES:
            return None, None
        toks = toks[:-1]
    return None, None


def _unknown(name: str) -> InputError:
    models, index = _library()
    # normalised keys -> the name to suggest: library ids first, then shipped configs by Hugging Face id
    keys = {_variant_key(h): h for h in packaged_ids()} | {_variant_key(m): m for m in models}
    near = _suggest_as(_variant_key(name), keys) or suggest(_key(name), list(index))
    return InputError(
        f"unknown model {name!r}{near}",
        fix="use a library id (`infrafit catalog models` lists them), a Hugging Face id of a listed "
        "model, or `model: {config: path/to/config.json}`",
    )


def _suggest_as(key: str, names: dict[str, str]) -> str:
    """``suggest`` over normalised keys, quoting the names they stand for."""
    import difflib

    hits = difflib.get_close_matches(key, list(names), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(names[h]) for h in hits)}?)" if hits else ""


def get_model(name: str) -> ModelArch:
    """The library architecture for a library id, alias or Hugging Face id.

    A precision suffix (``-FP8``, ``-NVFP4``, ``-AWQ``...) sets ``default_precision``.  Raises
    InputError with close-match suggestions for unknown names."""
    if not isinstance(name, str) or not name.strip():
        raise InputError("empty model name", fix="name a model, e.g. `llama3.1-70b`")
    mid, precision = _lookup(name)
    if mid is None:
        raise _unknown(name)
    m = _library()[0][mid]
    if not precision or precision == m.default_precision:
        return m
    # a checkpoint quantized to another precision has its own scheme: the shipped ModelOpt config of
    # that name where there is one, else the default (embedding, LM head and router kept)
    return m.model_copy(update={"default_precision": precision, "quant_kept": None, "quant_bits_per_weight": None,
                                **_sibling_scheme(name)})


def _config_candidates(name: str, folder: Path) -> list[Path]:
    stem = name.strip().replace("/", "--")
    return [folder / f"{stem}.json", folder / f"{stem}_config.json", folder / stem / "config.json"]


#: Hugging Face ``config.json`` files shipped with infrafit (sources and licences in its SOURCES.md): a
#: name the curated library lacks resolves to one of them by its Hugging Face id or its bare name.
HF_CONFIG_DIR = Path(__file__).resolve().parent / "data" / "hf_configs"
QUANT_SUFFIX = ".hf_quant_config.json"
#: ModelOpt ``quant_algo`` -> the checkpoint's weight precision.
QUANT_ALGO_PRECISION = {"NVFP4": "fp4", "FP8": "fp8", "W4A16_AWQ": "int4", "W8A8_SQ_PER_CHANNEL": "int8"}


def _variant_key(name: str) -> str:
    """The normalised key of ``name`` without its variant suffixes: ``meta-llama/Llama-3.2-1B-Instruct``
    and ``llama3.2-1b`` are both ``llama3.21b`` (a precision suffix stays: an FP8 checkpoint is its own file)."""
    toks = _tokens(name)
    while len(toks) > 1 and toks[-1] in _VARIANT_SUFFIXES:
        toks = toks[:-1]
    return _key("-".join(toks))


@lru_cache(maxsize=1)
def _packaged() -> dict[str, Path]:
    """Lower-cased ``org/name`` and ``name`` -> the shipped config file (first file wins a bare name), and
    each file's variant key (``_variant_key``) where no other shipped file has the same one."""
    out: dict[str, Path] = {}
    by_key: dict[str, list[Path]] = {}
    for p in sorted(HF_CONFIG_DIR.glob("*.json")):
        if p.name.endswith(QUANT_SUFFIX):
            continue
        hf = p.stem.replace("--", "/", 1)
        out.setdefault(hf.lower(), p)
        out.setdefault(hf.split("/", 1)[-1].lower(), p)
        by_key.setdefault(_variant_key(hf), []).append(p)
    for k, paths in by_key.items():
        if len(paths) == 1:
            out.setdefault(k, paths[0])
    return out


def packaged_ids() -> list[str]:
    """The Hugging Face ids of the shipped ``config.json`` files."""
    return sorted({p.stem.replace("--", "/", 1) for p in _packaged().values()})


def _sibling_scheme(name: str) -> dict[str, Any]:
    """The quantization scheme of the shipped ``<name>.hf_quant_config.json``, {} when none."""
    import json

    from infrafit.workload.quant import scheme_from_config

    path = _packaged().get(str(name).strip().lower())
    quant = path.with_name(path.stem + QUANT_SUFFIX) if path is not None else None
    return scheme_from_config(json.loads(quant.read_text())) if quant is not None and quant.is_file() else {}


def packaged_model(name: str) -> ModelArch | None:
    """The shipped config of ``name`` (Hugging Face id or bare name, any case), None when none; a ModelOpt
    quantisation config next to it (``<file>.hf_quant_config.json``) sets the checkpoint precision."""
    import json

    path = _packaged().get(str(name).strip().lower()) or _packaged().get(_variant_key(str(name)))
    if path is None:
        return None
    arch = from_hf_config(path, model_id=path.stem.replace("--", "/", 1))
    quant = path.with_name(path.stem + QUANT_SUFFIX)
    if quant.is_file():
        algo = (json.loads(quant.read_text()).get("quantization") or {}).get("quant_algo")
        if algo in QUANT_ALGO_PRECISION:
            from infrafit.workload.quant import scheme_from_config

            arch = arch.model_copy(update={"default_precision": QUANT_ALGO_PRECISION[algo],
                                           **scheme_from_config(json.loads(quant.read_text()))})
    return arch


def resolve_model(name: str, model_configs_dir: str | Path | None = None) -> ModelArch:
    """Library first (``get_model``); then the shipped Hugging Face configs (``packaged_model``); then
    ``<org>--<name>.json`` in ``model_configs_dir``; then ``name`` itself as a path to a config.json.
    Raises InputError when nothing matches."""
    try:
        return get_model(name)
    except InputError as err:
        library_error = err
    shipped = packaged_model(name) if isinstance(name, str) and not name.endswith(".json") else None
    if shipped is not None:
        return shipped
    candidates: list[Path] = []
    if model_configs_dir is not None:
        candidates += _config_candidates(name, Path(model_configs_dir))
    if str(name).endswith(".json"):
        candidates.append(Path(name))
    for p in candidates:
        if p.is_file():
            return from_hf_config(p, model_id=name)
    raise library_error


def model_row(m: ModelArch) -> dict[str, Any]:
    """One row of the library table (SI units: counts and bytes)."""
    return {
        "id": m.id, "name": m.name, "kind": m.kind, "params_total": m.params_total(),
        "params_active": m.params_active(), "kv_bytes_per_token_bf16": m.kv_bytes_per_token("bf16"),
        "kv_bytes_per_token_fp8": m.kv_bytes_per_token("fp8"), "default_precision": m.default_precision,
        "hf_id": m.hf_id, "source": m.source,
    }


def model_table() -> list[dict[str, Any]]:
    """The library, then the shipped Hugging Face configs it does not cover (by their Hugging Face id,
    ``source`` naming the file), as rows for ``infrafit catalog models``."""
    rows = [model_row(m) for m in list_models()]
    for hf in packaged_ids():
        if _lookup(hf)[0] is not None:
            continue  # the curated library entry (and its published dimensions) stands for it
        arch = packaged_model(hf)
        if arch is not None:
            rows.append({**model_row(arch), "id": hf, "hf_id": hf,
                         "source": f"shipped config.json: {_packaged()[hf.lower()].name} (workload/data/hf_configs)"})
    return rows
