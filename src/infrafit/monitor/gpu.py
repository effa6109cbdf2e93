"""GPU sampling through NVML (nvidia-ml-py). Absent NVML or GPUs, sampling is off with a note."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infrafit.units import KB, W_PER_MILLIWATT, KiB

#: NVML's scope id meaning "all NVLink links of the device".
ALL_LINKS = 0xFFFFFFFF


@dataclass(frozen=True)
class GpuSample:
    index: int
    name: str
    util_fraction: float  # share of the interval a kernel was running (NVML utilization.gpu)
    mem_util_fraction: float  # share of the interval device memory was read or written
    mem_used_bytes: float
    mem_total_bytes: float
    power_w: float | None
    pcie_tx_bytes_per_s: float | None
    pcie_rx_bytes_per_s: float | None
    nvlink_bytes_per_s: float | None


class GpuSampler:
    """Samples every visible NVIDIA GPU; ``available`` is False (with ``note``) when it cannot."""

    def __init__(self) -> None:
        self.handles: list[Any] = []
        self.note: str | None = None
        self._nvml: Any = None
        self._nvlink_prev: dict[int, float] = {}
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            if not self.handles:
                self.note = "NVML found no GPU: CPU-only monitoring"
        except Exception as exc:  # noqa: BLE001 - any NVML failure means "no GPU sampling"
            self.note = f"no NVML ({type(exc).__name__}): CPU-only monitoring"

    @property
    def available(self) -> bool:
        return bool(self.handles)

    def _safe(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - a counter the GPU or driver does not expose
            return None

    def _nvlink_bytes_per_s(self, i: int, handle: Any, interval_s: float) -> float | None:
        """TX+RX NVLink data over the interval from NVML's cumulative KiB counters (None: no NVLink)."""
        nv = self._nvml
        fields = self._safe(nv.nvmlDeviceGetFieldValues, handle, [
            (nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ALL_LINKS),
            (nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ALL_LINKS),
        ])
        if not fields or any(getattr(f, "nvmlReturn", 1) != 0 for f in fields):
            return None
        total_kib = float(sum(f.value.ullVal for f in fields))
        previous = self._nvlink_prev.get(i)
        self._nvlink_prev[i] = total_kib
        if previous is None or interval_s <= 0:
            return 0.0
        return max(0.0, total_kib - previous) * KiB / interval_s

    def sample(self, interval_s: float) -> list[GpuSample]:
        nv = self._nvml
        out = []
        for i, h in enumerate(self.handles):
            util = self._safe(nv.nvmlDeviceGetUtilizationRates, h)
            mem = self._safe(nv.nvmlDeviceGetMemoryInfo, h)
            power_mw = self._safe(nv.nvmlDeviceGetPowerUsage, h)
            # PCIe throughput counters are KB/s averaged over ~20 ms windows.
            tx = self._safe(nv.nvmlDeviceGetPcieThroughput, h, nv.NVML_PCIE_UTIL_TX_BYTES)
            rx = self._safe(nv.nvmlDeviceGetPcieThroughput, h, nv.NVML_PCIE_UTIL_RX_BYTES)
            name = self._safe(nv.nvmlDeviceGetName, h)
            out.append(GpuSample(
                index=i,
                name=name.decode() if isinstance(name, bytes) else str(name),
                util_fraction=(util.gpu / 100.0) if util else 0.0,
                mem_util_fraction=(util.memory / 100.0) if util else 0.0,
                mem_used_bytes=float(mem.used) if mem else 0.0,
                mem_total_bytes=float(mem.total) if mem else 0.0,
                power_w=(power_mw * W_PER_MILLIWATT) if power_mw is not None else None,
                pcie_tx_bytes_per_s=(tx * KB) if tx is not None else None,
                pcie_rx_bytes_per_s=(rx * KB) if rx is not None else None,
                nvlink_bytes_per_s=self._nvlink_bytes_per_s(i, h, interval_s),
            ))
        return out
