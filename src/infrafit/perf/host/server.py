"""The whole server: what the host must provide so the accelerators are not starved, and the verdict.

``size_server(demand, estimate_like, accelerator, count, host=None) -> Server``. Inputs are plain
numbers (``HostDemand``): task, items per second through the box, what each item costs the host
(a key of ``catalog/data/server_profiles.csv``), bytes per item in and out, model weight bytes,
dataset size and location, checkpoint size and window, gradient bytes per step and step time.

Rules (per-item costs and typical boxes are data with sources in ``server_profiles.csv``):

* CPU cores = items/s x core-seconds per item (JPEG decode, audio decode, row parsing) + tokens/s
  x core-seconds per token (tokenisation) + runtime cores per accelerator (launch and feeder
  threads).
* Host RAM = OS and runtime base + model weights staged once in page cache while loading
  + pinned transfer buffers (two in flight per accelerator, ``pinned_buffer_bytes`` each)
  + the dataset when it is cached in RAM + prefetch queues.
* Local NVMe = a copy of the weights + the dataset when it lives on local NVMe + two checkpoints.
* Storage read = items/s x input bytes per item (the input pipeline), against the dataset tier.
* Storage write = checkpoint bytes / checkpoint window (the burst) against the checkpoint tier:
  local NVMe (drives x per-drive write), network filesystem or object storage (per node, S3's
  ~87.5 MB/s per connection x connections, capped by the NIC).
* Network = serving: items/s x (request + response bytes); multi-node training: ring all-reduce
  of the gradients, ``2 (n-1)/n x gradient bytes / step time`` per node (Patarasuk & Yuan 2009).

The verdict compares each need with the host (given, or the typical box for that accelerator count)
and names the resource with the highest need/available ratio when it exceeds 1.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.errors import CatalogError, InputError
from infrafit.perf.types import Server
from infrafit.units import GB, fmt_bytes

PROFILE_PATH = Path(__file__).resolve().parents[2] / "catalog" / "data" / "server_profiles.csv"
COLUMNS = ("key", "value", "unit", "source", "retrieved_on")
LOCATIONS = ("memory", "local_nvme", "network_fs", "object_storage")


@dataclass(frozen=True)
class HostDemand:
    """Plain description of what flows through one box (or one node of a multi-node job)."""

    task: str  # inference | training | fine-tuning
    items_per_s: float = 0.0  # samples, images, requests, sequences through the box
    item_kind: str = "none"  # host work per item: a key `cpu_core_s_per_item:<kind>` of server_profiles.csv
    tokens_per_item: float = 0.0  # text tokens to tokenise per item (0 when inputs are pre-tokenised)
    input_bytes_per_item: float = 0.0  # read from storage (batch/training) or received (serving)
    output_bytes_per_item: float = 0.0  # sent back to clients (serving)
    model_weight_bytes: float = 0.0
    accelerators: int = 1
    dataset_bytes: float = 0.0
    dataset_location: str = "object_storage"  # memory | local_nvme | network_fs | object_storage
    checkpoint_bytes: float = 0.0
    checkpoint_window_s: float = 0.0  # time allowed for one checkpoint write burst
    checkpoint_location: str = "local_nvme"
    gradient_bytes_per_step: float = 0.0
    step_time_s: float = 0.0
    nodes: int = 1
    serving_over_network: bool = True


@dataclass(frozen=True)
class HostSpec:
    """What a box offers. ``None`` fields fall back to the typical box in server_profiles.csv."""

    cpu_cores: float | None = None
    ram_bytes: float | None = None
    nvme_read_bytes_per_s: float | None = None
    nvme_write_bytes_per_s: float | None = None
    network_bytes_per_s: float | None = None
    nvme_bytes: float | None = None


@lru_cache(maxsize=4)
def load_server_profile(path: str | None = None) -> dict[str, float]:
    """``{key: value}`` from server_profiles.csv (validated; every row sourced)."""
    file = Path(path) if path else PROFILE_PATH
    out: dict[str, float] = {}
    with open(file, newline="") as fh:
        reader = csv.DictReader(fh)
        if any(c not in (reader.fieldnames or []) for c in COLUMNS):
            raise CatalogError("missing columns", where=f"{file}:1", fix=f"use columns {', '.join(COLUMNS)}")
        for i, row in enumerate(reader, start=2):
            try:
                out[row["key"]] = float(row["value"])
            except ValueError:
                raise CatalogError(f"value {row['value']!r} is not a number", where=f"{file}:{i}",
                                   fix="write SI numbers (bytes, seconds, bytes/s)") from None
            if not row["source"] or not row["retrieved_on"]:
                raise CatalogError("empty source or retrieved_on", where=f"{file}:{i}", fix="cite the source")
    return out


def _p(prof: dict[str, float], key: str, default: float = 0.0) -> float:
    return prof.get(key, default)


def typical_host(count: int, prof: dict[str, float]) -> HostSpec:
    """The usual box for ``count`` accelerators, scaled from the 8-accelerator reference box."""
    share = max(count, 1) / 8.0
    return HostSpec(cpu_cores=_p(prof, "typical_8gpu_box:cpu_cores") * max(share, 0.25),
                    ram_bytes=_p(prof, "typical_8gpu_box:ram_bytes") * max(share, 0.25),
                    nvme_read_bytes_per_s=_p(prof, "typical_8gpu_box:nvme_drives") * max(share, 0.25)
                    * _p(prof, "nvme_drive:read_bytes_per_s"),
                    nvme_write_bytes_per_s=_p(prof, "typical_8gpu_box:nvme_drives") * max(share, 0.25)
                    * _p(prof, "nvme_drive:write_bytes_per_s"),
                    network_bytes_per_s=_p(prof, "typical_8gpu_box:network_bytes_per_s") * max(share, 0.125),
                    nvme_bytes=_p(prof, "typical_8gpu_box:nvme_bytes") * max(share, 0.25))


def _tier_bytes_per_s(location: str, host: HostSpec, prof: dict[str, float], write: bool) -> float:
    if location not in LOCATIONS:
        raise InputError(f"unknown storage location {location!r}", fix=f"use one of {', '.join(LOCATIONS)}")
    if location == "memory":
        return float("inf")
    if location == "local_nvme":
        return float((host.nvme_write_bytes_per_s if write else host.nvme_read_bytes_per_s) or 0.0)
    nic = float(host.network_bytes_per_s or 0.0)
    if location == "network_fs":
        return min(nic, _p(prof, "network_fs:bytes_per_s_per_node", nic))
    per_conn = _p(prof, "object_storage:bytes_per_s_per_connection")
    return min(nic, per_conn * _p(prof, "object_storage:connections"))


def _rate_of(demand: HostDemand, estimate_like: Any) -> float:
    if demand.items_per_s or estimate_like is None:
        return float(demand.items_per_s)
    tp = getattr(estimate_like, "throughput", estimate_like)
    for key in ("samples_per_s", "requests_per_s", "sequences_per_s"):
        if isinstance(tp, dict) and tp.get(key):
            return float(tp[key])
    return 0.0


def host_item_rate(core_s_per_item: float, cores: Any, accelerators: Any,
                   prof: dict[str, float] | None = None) -> np.ndarray:
    """The most items/s a host's ``cores`` feed to ``accelerators`` chips: the cores left after the runtime's
    (``runtime_cores_per_accelerator`` each) over the host work per item (``core_s_per_item``: JPEG or audio
    decode, tokenisation). Infinite where an item costs the host nothing or the core count is unknown (NaN),
    zero where the runtime alone takes every core. Vectorised over ``cores`` and ``accelerators``."""
    prof = load_server_profile() if prof is None else prof
    cores_a = np.asarray(cores, dtype=float)
    free = np.maximum(cores_a - np.asarray(accelerators, dtype=float) * _p(prof, "runtime_cores_per_accelerator"), 0.0)
    if core_s_per_item <= 0.0:
        return np.full(np.broadcast(cores_a, np.asarray(accelerators)).shape, np.inf)
    with np.errstate(over="ignore"):  # a fuzzed core count of 1e300 feeds an infinite rate
        return np.where(np.isfinite(cores_a), free / core_s_per_item, np.inf)


def needs(demand: HostDemand, rate: float, accelerator: Any, count: int, prof: dict[str, float]) -> dict:
    """Each resource the box must provide, with the part that drives it."""
    if demand.item_kind != "none" and f"cpu_core_s_per_item:{demand.item_kind}" not in prof:
        kinds = sorted(k.split(":", 1)[1] for k in prof if k.startswith("cpu_core_s_per_item:"))
        raise InputError(f"unknown host item kind {demand.item_kind!r}", fix=f"use one of none, {', '.join(kinds)}")
    item_cores = rate * _p(prof, f"cpu_core_s_per_item:{demand.item_kind}")
    tok_cores = rate * demand.tokens_per_item * _p(prof, "cpu_core_s_per_token:tokenize")
    run_cores = count * _p(prof, "runtime_cores_per_accelerator")
    pinned = count * 2.0 * _p(prof, "pinned_buffer_bytes")
    cache = demand.dataset_bytes if demand.dataset_location == "memory" else 0.0
    if demand.task == "inference":  # weights stream to the accelerators shard by shard (mmap'ed safetensors)
        staged = min(demand.model_weight_bytes, _p(prof, "weight_shard_bytes", demand.model_weight_bytes))
        ram = _p(prof, "host_base_ram_bytes:inference", _p(prof, "host_base_ram_bytes")) + staged + pinned + cache
    else:
        staged = demand.model_weight_bytes
        ram = _p(prof, "host_base_ram_bytes") + staged + pinned + cache
    nvme = demand.model_weight_bytes + 2.0 * demand.checkpoint_bytes + (
        demand.dataset_bytes if demand.dataset_location == "local_nvme" else 0.0)
    read = rate * demand.input_bytes_per_item if (demand.task != "inference" or not demand.serving_over_network) \
        else 0.0
    write = demand.checkpoint_bytes / demand.checkpoint_window_s if demand.checkpoint_window_s > 0 else 0.0
    serve = rate * (demand.input_bytes_per_item + demand.output_bytes_per_item) \
        if demand.task == "inference" and demand.serving_over_network else 0.0
    n = max(demand.nodes, 1)
    grad = 2.0 * (n - 1) / n * demand.gradient_bytes_per_step / demand.step_time_s \
        if n > 1 and demand.step_time_s > 0 else 0.0
    return {"cpu": (item_cores + tok_cores + run_cores, item_cores, tok_cores, run_cores), "ram": ram, "nvme": nvme,
            "staged": staged, "read": read, "write": write, "network": serve + grad, "serve": serve, "grad": grad}


def size_server(demand: HostDemand, estimate_like: Any = None, accelerator: Any = None, count: int | None = None,
                host: HostSpec | None = None) -> Server:
    """What the box needs for ``demand`` on ``count`` x ``accelerator``, and the binding resource.

    ``estimate_like`` (an ``Estimate`` or a throughput dict) supplies the rate when
    ``demand.items_per_s`` is 0. ``host`` defaults to the typical box for the accelerator count.
    """
    prof = load_server_profile()
    n_acc = int(count or demand.accelerators or 1)
    rate = _rate_of(demand, estimate_like)
    need = needs(demand, rate, accelerator, n_acc, prof)
    typical = typical_host(n_acc, prof)
    box = HostSpec(**{k: (getattr(host, k) if host is not None and getattr(host, k) is not None
                          else getattr(typical, k)) for k in HostSpec.__dataclass_fields__})
    read_bw = _tier_bytes_per_s(demand.dataset_location, box, prof, write=False)
    write_bw = _tier_bytes_per_s(demand.checkpoint_location, box, prof, write=True)
    checks = _checks(need, box, read_bw, write_bw, rate, demand, n_acc, host is None)
    ratio, name, reason = max(checks, key=lambda c: c[0])
    reasons = tuple(c[2] for c in sorted(checks, key=lambda c: -c[0]))
    return Server(cpu_cores=need["cpu"][0], ram_bytes=need["ram"], nvme_bytes=need["nvme"],
                  storage_read_bytes_per_s=need["read"], network_bytes_per_s=need["network"],
                  storage_write_bytes_per_s=need["write"], bottleneck=name if ratio > 1.0 else "accelerator",
                  reasons=reasons if ratio > 1.0 else (f"accelerator: the host keeps up ({reason})",) + reasons[1:])


def _checks(need: dict, box: HostSpec, read_bw: float, write_bw: float, rate: float, demand: HostDemand,
            n_acc: int, typical: bool) -> list[tuple[float, str, str]]:
    """``(need / available, resource, explanation)`` for every resource."""
    what = f"a typical {n_acc}-accelerator box has" if typical else "this host has"
    cores, item_c, tok_c, run_c = need["cpu"]
    drivers = [f"{item_c:.0f} for {demand.item_kind.replace('_', ' ')}", f"{tok_c:.0f} for tokenisation",
               f"{run_c:.0f} runtime"]
    out = [
        (cores / max(box.cpu_cores or 1e-9, 1e-9), "host_cpu",
         f"host CPU: {cores:,.0f} cores needed at {rate:,.0f} items/s ({', '.join(drivers)}); {what} "
         f"{box.cpu_cores:,.0f}"),
        (need["ram"] / max(box.ram_bytes or 1e-9, 1e-9), "host_ram",
         f"host RAM: {fmt_bytes(need['ram'])} needed (weights staged {fmt_bytes(need['staged'])}); "
         f"{what} {fmt_bytes(box.ram_bytes or 0)}"),
        (need["read"] / max(read_bw, 1e-9), "storage_read",
         f"storage read: {need['read'] / GB:,.2f} GB/s for the input pipeline from {demand.dataset_location}; "
         f"it gives {read_bw / GB:,.1f} GB/s"),
        (need["write"] / max(write_bw, 1e-9), "storage_write",
         f"storage write: checkpoint of {fmt_bytes(demand.checkpoint_bytes)} in {demand.checkpoint_window_s:g} s "
         f"needs {need['write'] / GB:,.2f} GB/s to {demand.checkpoint_location}; it takes {write_bw / GB:,.1f} GB/s"),
        (need["network"] / max(box.network_bytes_per_s or 1e-9, 1e-9), "network",
         f"network: {need['network'] / GB:,.2f} GB/s (serving {need['serve'] / GB:,.2f}, gradients "
         f"{need['grad'] / GB:,.2f}); {what} {(box.network_bytes_per_s or 0) / GB:,.1f} GB/s"),
    ]
    return out
