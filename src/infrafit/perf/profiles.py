"""Efficiency profiles: the achieved fraction of datasheet peaks, keyed by physical things only.

``catalog/data/perf_profiles_llm.csv`` holds one value per (generation, stack, precision, phase,
op_class); ``*`` is a wildcard. A lookup takes the most specific row whose non-wildcard keys all
match (more matching keys win; ties go to the earlier row). The values are fitted by
``scripts/fit_profiles_llm.py`` from the calibration sets and carry the fit's source and date.

Op classes and their units:

- ``gemm`` (fraction of peak FLOP/s), per phase ``prefill`` / ``decode``
- ``attention`` (fraction of the 16-bit peak FLOP/s)
- ``memory`` (fraction of HBM bandwidth)
- ``step_overhead`` (seconds per decode step: kernel launches, scheduler, sampling)
- ``layer_overhead`` (seconds per layer per decode step: norms, rotary, kernel tails between GEMMs; with
  phase ``prefill``, per layer of a pass that carries prompt tokens on a stack that runs such passes
  eagerly, stacks.csv ``prefill_pass_graphed``: the host launching each kernel)
- ``sparse_layer_overhead`` (seconds per sparse-attention layer per decode step: the lightning indexer and
  its top-k selection, DeepSeek Sparse Attention)
- ``seq_overhead`` (seconds per running sequence per decode step: scheduling, sampling, detokenisation)
- ``request_overhead`` (seconds per request: tokenisation, scheduling, first-token return)
- ``link_latency`` (seconds per collective hop) with phase ``scaleup`` / ``scaleout``
- ``memory_reserve`` (fraction of device memory kept for activations, graphs and fragmentation)
- ``burst`` (fraction: how bunched closed-loop prefill arrivals stay)
- ``expert_m_half`` (tokens: the rows per expert at which a grouped MoE GEMM reaches half its efficiency)
- ``moe_layer_overhead`` (seconds per MoE layer of one prefill pass: routing, permutation, EP sync; with
  phase ``decode``, per MoE layer of one decode step: router, top-k, permute, un-permute)
- ``moe_token_overhead`` (seconds per routed hidden element, token x k x hidden, per MoE layer of a prefill:
  routing, permute, un-permute)
- ``token_budget`` (tokens one scheduler step may carry: the chunked-prefill budget of a stack)
- ``gemm_m_half`` (tokens: the GEMM rows at which a kernel reaches half its large-M efficiency)

A catalog overlay (``--catalog-dir`` / ``INFRAFIT_CATALOG``) may hold its own ``perf_profiles_llm.csv``
(``infrafit calibrate`` writes one from imported load tests): its rows come before the packaged ones, so
an overlay row wins over a packaged row of the same specificity and a more specific packaged row still
wins over a wildcard overlay row. ``using_profiles`` sets the profiles for one block of code (the
calibration fit evaluates the engine under trial values that way).

The file's ``unit`` column names each row's unit; it is fixed by the op class (``OP_CLASS_UNITS``), and
a row whose unit disagrees is refused. A file without the column (an older overlay) is still read.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from infrafit.errors import CatalogError

PROFILE_COLUMNS = (
    "generation", "stack", "precision", "phase", "op_class", "value", "unit", "rows_fitted", "source",
    "retrieved_on",
)
#: Columns a profiles file must have (``unit`` may be absent: it follows from the op class).
REQUIRED_COLUMNS = tuple(c for c in PROFILE_COLUMNS if c != "unit")
#: The unit of ``value`` for each op class (see the module docstring).
OP_CLASS_UNITS = {
    "gemm": "fraction", "attention": "fraction", "memory": "fraction", "memory_reserve": "fraction",
    "burst": "fraction", "expert_m_half": "tokens", "token_budget": "tokens", "moe_layer_overhead": "s",
    "gemm_m_half": "tokens", "step_overhead": "s", "seq_overhead": "s", "layer_overhead": "s",
    "sparse_layer_overhead": "s", "moe_token_overhead": "s",
    "request_overhead": "s", "link_latency": "s",
}
KEYS = ("generation", "stack", "precision", "phase", "op_class")
#: The overlay file name (in the ``--catalog-dir`` folder) whose rows take precedence.
OVERLAY_FILE = "perf_profiles_llm.csv"


@dataclass(frozen=True)
class ProfileRow:
    generation: str
    stack: str
    precision: str
    phase: str
    op_class: str
    value: float
    rows_fitted: int
    source: str
    retrieved_on: str

    @property
    def unit(self) -> str:
        """The unit of ``value`` (``OP_CLASS_UNITS``; empty for an op class this module does not know)."""
        return OP_CLASS_UNITS.get(self.op_class, "")


def default_profiles_path() -> Path:
    return Path(str(resources.files("infrafit.catalog") / "data" / "perf_profiles_llm.csv"))


def _parse(path: Path) -> tuple[ProfileRow, ...]:
    rows: list[ProfileRow] = []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CatalogError(
                f"{path}: missing columns {', '.join(missing)}",
                fix=f"give the header {','.join(PROFILE_COLUMNS)}",
            )
        for line, rec in enumerate(reader, start=2):
            try:
                value = float(rec["value"])
            except ValueError:
                raise CatalogError(
                    f"{path}:{line} value: not a number ({rec['value']!r})", fix="write a plain number"
                ) from None
            keys = {k: rec[k].strip() or "*" for k in KEYS}
            row = ProfileRow(
                keys["generation"], keys["stack"], keys["precision"], keys["phase"], keys["op_class"], value=value,
                rows_fitted=int(float(rec["rows_fitted"] or 0)), source=rec["source"],
                retrieved_on=rec["retrieved_on"],
            )
            _check_unit(path, line, row, (rec.get("unit") or "").strip())
            _check_retired(path, line, row)
            rows.append(row)
    return tuple(rows)


#: (phase, op class) keys no lookup reads any more, with what replaced them: a row keyed so would be ignored.
RETIRED_KEYS = {
    ("decode", "gemm"): "both phases read the chip's one GEMM efficiency (a decode GEMM is the same kernel at "
                        "M = batch; gemm_m_half prices a small M): key it prefill/gemm",
}


def _check_retired(path: Path, line: int, row: ProfileRow) -> None:
    """A row keyed by a retired (phase, op class) is refused, not silently ignored."""
    why = RETIRED_KEYS.get((row.phase, row.op_class))
    if why is not None:
        raise CatalogError(f"{path}:{line} phase/op_class: {row.phase}/{row.op_class} rows are no longer read",
                           fix=why)


def _check_unit(path: Path, line: int, row: ProfileRow, unit: str) -> None:
    """A row's ``unit`` (when given) must be its op class's unit."""
    if unit and row.unit and unit != row.unit:
        raise CatalogError(f"{path}:{line} unit: {row.op_class} values are in {row.unit}, not {unit!r}",
                           fix=f"write unit {row.unit} (or leave it empty) for op class {row.op_class}")


_OVERRIDE: ContextVar[Profiles | None] = ContextVar("infrafit_llm_profiles", default=None)


def load_profiles(path: str | None = None) -> Profiles:
    """The profiles of ``path``; with none, the ones in force: those of ``using_profiles``, else the
    packaged file under the active catalog overlay's ``perf_profiles_llm.csv`` rows (if any)."""
    if path:
        return _load(path, None, 0)
    override = _OVERRIDE.get()
    if override is not None:
        return override
    from infrafit.settings import overlay_dir

    folder = overlay_dir()
    overlay = Path(folder) / OVERLAY_FILE if folder else None
    if overlay is None or not overlay.is_file():
        return _load(None, None, 0)
    return _load(None, str(overlay), overlay.stat().st_mtime_ns)  # a rewritten overlay is read again


@lru_cache(maxsize=8)
def _load(path: str | None, overlay: str | None, _mtime_ns: int) -> Profiles:
    base = _parse(Path(path) if path else default_profiles_path())
    return Profiles((_parse(Path(overlay)) if overlay else ()) + base)


@contextmanager
def using_profiles(profiles: Profiles) -> Iterator[Profiles]:
    """Evaluate the engine under ``profiles`` inside the block (this context only)."""
    token = _OVERRIDE.set(profiles)
    try:
        yield profiles
    finally:
        _OVERRIDE.reset(token)


class Profiles:
    """Lookups with wildcard fall-back, cached per key."""

    def __init__(self, rows: tuple[ProfileRow, ...]) -> None:
        self.rows = rows
        self._cache: dict[tuple[str, ...], ProfileRow] = {}
        self._index: dict[tuple[str, ...], int] = {}

    def row(self, generation: str, stack: str, precision: str, phase: str, op_class: str) -> ProfileRow:
        key = (generation, stack, precision, phase, op_class)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        best: ProfileRow | None = None
        best_score = -1
        for r in self.rows:
            if r.op_class != op_class:
                continue
            fields = (r.generation, r.stack, r.precision, r.phase)
            if any(f != "*" and f != k for f, k in zip(fields, key[:4], strict=True)):
                continue
            score = sum(f != "*" for f in fields)
            if score > best_score:
                best, best_score = r, score
        if best is None:
            raise CatalogError(
                f"no efficiency profile for op class {op_class!r}",
                fix="add a wildcard row (generation=*, stack=*, ...) for it to perf_profiles_llm.csv",
            )
        self._cache[key] = best
        return best

    def index(self, generation: str, stack: str, precision: str, phase: str, op_class: str) -> int:
        """Position in ``rows`` of the row a lookup picks (the fitting script varies these values)."""
        key = (generation, stack, precision, phase, op_class)
        hit = self._index.get(key)
        if hit is None:  # rows is a tuple fixed at construction, so the position of a key's row never changes
            target = self.row(*key)
            hit = self._index[key] = next(i for i, r in enumerate(self.rows) if r is target)
        return hit

    def value(self, generation: str, stack: str, precision: str, phase: str, op_class: str) -> float:
        return self.row(generation, stack, precision, phase, op_class).value
