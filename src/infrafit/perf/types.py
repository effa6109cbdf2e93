"""Values passed between the performance models and the rest of infrafit.

``Config`` names one configuration to estimate; ``Estimate`` is its full breakdown, whose
``to_json()`` has the ``estimate --json`` shape of DESIGN.md section 4. Fields that do not apply are
``None`` (``null`` in JSON). Every number is SI, every name carries its unit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


class SkipRow(Exception):  # noqa: N818 - a signal, not an error
    """A validation row the models cannot predict honestly; carries the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Config:
    """One configuration: accelerator x count x precision x stack x parallel layout."""

    accelerator: str
    count: int
    precision: str = "bf16"
    stack: str | None = None  # None: the family's default stack
    tp: int = 1
    pp: int = 1
    dp: int | None = None  # None: count // (tp * pp * cp)
    ep: int = 1
    cp: int = 1

    @property
    def data_parallel(self) -> int:
        return self.dp if self.dp is not None else max(1, self.count // (self.tp * self.pp * self.cp))


@dataclass(frozen=True)
class OperatingPoint:
    """Where on its load curve a configuration runs: requests in flight (continuous batching, LLM
    serving) or batch size (other models), and the request rate one replica serves there. Any field
    may be None: ``estimate`` then takes the SLO-limited point (the largest load within the SLOs), or,
    given only ``requests_per_s``, the lightest grid point that serves that rate within the SLOs."""

    concurrency: float | None = None
    batch: float | None = None
    requests_per_s: float | None = None


@dataclass(frozen=True)
class Memory:
    per_accelerator_bytes: float
    capacity_bytes: float
    weights_bytes: float
    kv_cache_bytes: float | None = None
    activations_bytes: float | None = None
    optimizer_bytes: float | None = None
    gradients_bytes: float | None = None

    @property
    def fits(self) -> bool:
        return self.per_accelerator_bytes <= self.capacity_bytes


@dataclass(frozen=True)
class Percentiles:
    p50: float
    p99: float


@dataclass(frozen=True)
class Latency:
    ttft_s: Percentiles | None = None
    tpot_s: Percentiles | None = None
    e2e_s: Percentiles | None = None  # whole request (LLM) or one item/batch (non-LLM)


@dataclass(frozen=True)
class Server:
    """What the rest of the box must provide so the accelerators are not starved."""

    cpu_cores: float
    ram_bytes: float
    nvme_bytes: float
    storage_read_bytes_per_s: float
    network_bytes_per_s: float
    storage_write_bytes_per_s: float | None = None
    bottleneck: str | None = None  # "host_cpu", "host_ram", "storage_read", "storage_write", "network", "accelerator"
    reasons: tuple[str, ...] = ()  # the numbers behind the verdict, binding resource first


@dataclass(frozen=True)
class Estimate:
    config: Config
    stack: str
    fits: bool
    memory: Memory
    throughput: dict[str, float]  # keys carry units: output_tokens_per_s, requests_per_s, samples_per_s ...
    latency: Latency
    server: Server | None
    bottleneck: str  # e.g. "hbm_bandwidth", "compute", "scaleup_link", "kv_capacity", "host_cpu", "storage"
    breakdown: dict[str, Any] = field(default_factory=dict)  # roofline terms, time shares, the "why"
    time_to_train_s: float | None = None
    notes: tuple[str, ...] = ()  # e.g. "fp4 not native on H100: fell back to fp8"
    operating_point: dict[str, Any] | None = None  # perf.operating.describe(): where the figures hold
    uncertainty: dict[str, Any] | None = None  # perf.bands.uncertainty(): p10/p50/p90 of each figure

    def to_json(self) -> dict[str, Any]:
        """The ``estimate --json`` shape of DESIGN.md section 4."""
        c = self.config
        return {
            "accelerator": c.accelerator,
            "count": c.count,
            "precision": c.precision,
            "stack": self.stack,
            "parallelism": {"tp": c.tp, "pp": c.pp, "dp": c.data_parallel, "ep": c.ep, "cp": c.cp},
            "fits": self.fits,
            "memory": asdict(self.memory),
            "throughput": dict(self.throughput),
            "latency": {
                "ttft_s": asdict(self.latency.ttft_s) if self.latency.ttft_s else None,
                "tpot_s": asdict(self.latency.tpot_s) if self.latency.tpot_s else None,
                "e2e_s": asdict(self.latency.e2e_s) if self.latency.e2e_s else None,
            },
            "time_to_train_s": self.time_to_train_s,
            "server": asdict(self.server) if self.server else None,
            "bottleneck": self.bottleneck,
            "breakdown": self.breakdown,
            "notes": list(self.notes),
            "operating_point": self.operating_point,
            "uncertainty": self.uncertainty,
        }


@dataclass
class ValidateContext:
    """What row predictors share during one ``validate`` run: the catalog, where model configs
    live, and caches (resolved models, prepared shapes) keyed as each predictor likes."""

    catalog: Any
    model_configs_dir: str | None = None
    cache: dict[str, Any] = field(default_factory=dict)

    def resolve_model(self, name: str) -> Any:
        """``infrafit.workload.models.resolve_model`` with this run's ``--model-configs``, cached."""
        key = f"model:{name}"
        if key not in self.cache:
            from infrafit.workload.models import resolve_model

            self.cache[key] = resolve_model(name, self.model_configs_dir)
        return self.cache[key]


@dataclass
class Evaluated:
    """Many configurations and their numbers, as arrays aligned with ``rows``: what ``perf.evaluate``
    returns and what ``search`` ranks. ``rows`` hold the configuration (accelerator id, count,
    precision, stack, layout) and its ``operating_point`` (``perf.operating.describe``)."""

    rows: list[dict[str, Any]]
    fits: np.ndarray
    capacity: np.ndarray  # inference: requests (items)/s one replica sustains at its operating point; training: NaN
    time_to_train_s: np.ndarray  # training: one run; inference: NaN
    metric: np.ndarray  # the front's second axis: p99 latency (s) or time to train (s)
    memory_bytes: np.ndarray  # per accelerator
    memory_capacity_bytes: np.ndarray
    slo: dict[str, tuple[np.ndarray, float]] = field(default_factory=dict)  # name -> (value per row, limit)
    terms: list[dict[str, float]] = field(default_factory=list)  # roofline terms of each row
    p50: dict[str, np.ndarray] = field(default_factory=dict)  # latency key (ttft_s, tpot_s, e2e_s) -> p50 (s)

    def take(self, idx: np.ndarray) -> Evaluated:
        idx = np.asarray(idx, dtype=int)
        return Evaluated([self.rows[i] for i in idx], self.fits[idx], self.capacity[idx], self.time_to_train_s[idx],
                         self.metric[idx], self.memory_bytes[idx], self.memory_capacity_bytes[idx],
                         {k: (v[idx], lim) for k, (v, lim) in self.slo.items()}, [self.terms[i] for i in idx],
                         {k: v[idx] for k, v in self.p50.items()})

    def __len__(self) -> int:
        return len(self.rows)

    @staticmethod
    def concat(parts: list[Evaluated]) -> Evaluated:
        """Rows of several evaluations one after another (their SLO limits must agree)."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return Evaluated.empty()
        if len(parts) == 1:
            return parts[0]
        keys = set(parts[0].slo)
        slo = {k: (np.concatenate([p.slo[k][0] for p in parts]), parts[0].slo[k][1]) for k in keys}
        def cat(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts])

        return Evaluated([r for p in parts for r in p.rows], cat("fits"), cat("capacity"), cat("time_to_train_s"),
                         cat("metric"), cat("memory_bytes"), cat("memory_capacity_bytes"), slo,
                         [t for p in parts for t in p.terms],
                         {k: np.concatenate([p.p50[k] for p in parts]) for k in parts[0].p50})

    @staticmethod
    def empty() -> Evaluated:
        z = np.zeros(0)
        return Evaluated([], z.astype(bool), z, z, z, z, z, {}, [])
