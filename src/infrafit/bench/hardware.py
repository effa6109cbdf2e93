"""Detect the machine a benchmark runs on: CPU model, cores, ISA flags, memory, GPUs (NVML).

The local CPU is usually not in the catalog, so :func:`cpu_peak_flops_per_s` derives its peak from
the detection: ``cores x clock x FLOP/cycle/core``, where FLOP/cycle comes from the widest ISA the
CPU reports (``data/isa_flops.csv``, each row with its source). Memory bandwidth is not guessed
from the part number: the bench measures it with a STREAM triad and the prediction uses that.
"""

from __future__ import annotations

import csv
import os
import platform
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from infrafit.units import HZ_PER_MHZ

#: ISA flags from /proc/cpuinfo that matter for ML kernels.
INTERESTING_FLAGS = (
    "sse2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni",
    "amx_bf16", "amx_int8", "amx_tile", "amx_fp16",
)


@dataclass(frozen=True)
class GpuInfo:
    name: str
    memory_bytes: float
    index: int


@dataclass(frozen=True)
class HostInfo:
    cpu_model: str
    cpu_vendor: str
    cpu_family: int
    logical_cores: int
    physical_cores: int
    clock_hz: float
    isa_flags: tuple[str, ...]
    memory_bytes: float
    torch_threads: int | None = None
    torch_version: str | None = None
    gpus: tuple[GpuInfo, ...] = field(default_factory=tuple)
    hostname: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["isa_flags"] = list(self.isa_flags)
        data["gpus"] = [asdict(g) for g in self.gpus]
        return data

    @property
    def accelerator_id(self) -> str:
        """A catalog-style id for this CPU, e.g. ``local-cpu-amd-epyc-2c``."""
        slug = "".join(c if c.isalnum() else "-" for c in self.cpu_model.lower()).strip("-")
        while "--" in slug:
            slug = slug.replace("--", "-")
        return f"local-cpu-{slug}-{self.physical_cores}c"


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """Model name, vendor, family, MHz, core counts and flags from the text of /proc/cpuinfo."""
    info: dict[str, Any] = {"model": "unknown", "vendor": "unknown", "family": 0, "mhz": 0.0,
                            "flags": set(), "processors": 0, "cores": 0, "physical_ids": set()}
    for line in text.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "processor":
            info["processors"] += 1
        elif key == "model name" and info["model"] == "unknown":
            info["model"] = value
        elif key == "vendor_id":
            info["vendor"] = value
        elif key == "cpu family" and value.isdigit():
            info["family"] = int(value)
        elif key == "cpu MHz" and not info["mhz"]:
            info["mhz"] = float(value or 0)
        elif key in ("flags", "Features"):
            info["flags"] |= set(value.split())
        elif key == "cpu cores" and value.isdigit():
            info["cores"] = int(value)
        elif key == "physical id":
            info["physical_ids"].add(value)
    return info


def _gpus() -> tuple[GpuInfo, ...]:
    """GPUs through NVML (nvidia-ml-py); none when the library or driver is absent."""
    try:
        import pynvml  # type: ignore[import-not-found]

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no library, or no GPU: all mean "no GPUs"
        return ()
    try:
        found = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(handle)
            name = name.decode() if isinstance(name, bytes) else str(name)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            found.append(GpuInfo(name=name, memory_bytes=float(mem.total), index=i))
        return tuple(found)
    finally:
        pynvml.nvmlShutdown()


def _memory_bytes() -> float:
    try:
        import psutil

        return float(psutil.virtual_memory().total)
    except ImportError:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _torch_info() -> tuple[int | None, str | None]:
    try:
        import torch
    except ImportError:
        return None, None
    return int(torch.get_num_threads()), str(torch.__version__)


@lru_cache(maxsize=1)
def detect_host(cpuinfo_path: str = "/proc/cpuinfo") -> HostInfo:
    """Describe this machine (cached: detection reads files and NVML once per process)."""
    path = Path(cpuinfo_path)
    info = parse_cpuinfo(path.read_text()) if path.exists() else parse_cpuinfo("")
    logical = os.cpu_count() or max(1, info["processors"])
    sockets = max(1, len(info["physical_ids"]))
    physical = info["cores"] * sockets if info["cores"] else logical
    threads, version = _torch_info()
    return HostInfo(
        cpu_model=info["model"] if info["model"] != "unknown" else platform.processor() or "unknown",
        cpu_vendor=info["vendor"],
        cpu_family=int(info["family"]),
        logical_cores=logical,
        physical_cores=min(physical, logical),
        clock_hz=float(info["mhz"]) * HZ_PER_MHZ,
        isa_flags=tuple(f for f in INTERESTING_FLAGS if f in info["flags"]),
        memory_bytes=_memory_bytes(),
        torch_threads=threads,
        torch_version=version,
        gpus=_gpus(),
        hostname=platform.node(),
    )


@lru_cache(maxsize=1)
def _isa_table() -> tuple[dict[str, str], ...]:
    text = resources.files("infrafit.bench").joinpath("data/isa_flops.csv").read_text()
    return tuple(csv.DictReader(text.splitlines()))


def flops_per_cycle_per_core(host: HostInfo, precision: str) -> tuple[float, str]:
    """The widest FLOP/cycle/core this CPU's ISA offers at ``precision``, and the ISA that gives it.

    bf16 falls back to the fp32 rate (PyTorch upcasts when the CPU lacks native bf16 dot products).
    """
    best, best_isa = 0.0, "none"
    for row in _isa_table():
        vendor_ok = row["vendor"] in ("any", host.cpu_vendor)
        family_ok = host.cpu_family >= int(row["min_cpu_family"]) if row["vendor"] != "any" else True
        if row["isa"] in host.isa_flags and vendor_ok and family_ok and row["precision"] == precision:
            value = float(row["flops_per_cycle_per_core"])
            if value > best:
                best, best_isa = value, row["isa"]
    if best == 0.0 and precision in ("bf16", "fp16"):
        return flops_per_cycle_per_core(host, "fp32")
    if best == 0.0 and precision == "fp32":
        return 8.0, "sse2"
    return best, best_isa


def cpu_peak_flops_per_s(host: HostInfo, precision: str = "fp32", threads: int | None = None) -> float:
    """Peak FLOP/s = cores used x clock x FLOP/cycle/core (the vector-unit ceiling of the ISA)."""
    cores = min(threads or host.torch_threads or host.physical_cores, host.physical_cores)
    per_cycle, _ = flops_per_cycle_per_core(host, precision)
    clock = host.clock_hz if host.clock_hz > 0 else 2.0e9
    return cores * clock * per_cycle
