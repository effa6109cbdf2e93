"""Classify each sample's bottleneck, and summarise a run into time shares with evidence.

The rules read like an engineer's checklist, in order of precedence: is memory under pressure
(the OS is about to swap or kill), is an accelerator saturated, is the process waiting on storage,
is the network link near its speed, is a CPU core saturated (and, with an idle GPU, is that the
input pipeline), is nothing happening? The thresholds are utilisation levels, documented in
``docs/monitor.md``: they are about the hardware, not about any workload.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infrafit.monitor.sampler import Sample
from infrafit.units import KB, MB

BOTTLENECKS = (
    "accelerator", "input_pipeline", "cpu", "storage", "network", "memory_pressure", "under_used", "idle",
)

#: A resource counts as saturated above this busy fraction (85%: queueing delay grows sharply past it).
SATURATED = 0.85
#: Share of the watched threads in uninterruptible I/O sleep, or of machine CPU time in iowait,
#: above which the work is waiting on storage.
IO_WAIT = 0.25
#: Available memory below this share of the total means the page cache is gone and reclaim/swap begins.
LOW_MEMORY = 0.05
#: Device I/O above this rate while the process uses under half a core means it is waiting on storage.
STORAGE_BYTES_PER_S = 10 * MB
#: A process that is runnable nearly always but gets less than a core is contending for CPU.
RUNNABLE = 0.8
#: Below these, the workload does essentially nothing during the sample.
IDLE_CORES = 0.05
IDLE_BYTES_PER_S = 100 * KB


@dataclass(frozen=True)
class Verdict:
    bottleneck: str
    evidence: str


def _busy_cores(s: Sample) -> float:
    if s.proc_cpu_cores is not None:
        return s.proc_cpu_cores
    return s.cpu_busy_fraction * s.cpu_cores


def _io_bytes(s: Sample) -> float:
    if s.proc_cpu_cores is not None:
        return (s.proc_read_bytes_per_s or 0.0) + (s.proc_write_bytes_per_s or 0.0)
    return s.disk_read_bytes_per_s + s.disk_write_bytes_per_s


def classify(s: Sample, link_bytes_per_s: float | None = None) -> Verdict:
    """The bottleneck of one sample with the numbers that decided it."""
    if s.mem_total_bytes and s.mem_available_bytes / s.mem_total_bytes < LOW_MEMORY:
        return Verdict("memory_pressure", f"{s.mem_available_bytes / s.mem_total_bytes:.1%} memory available")
    gpu_util = max((g.util_fraction for g in s.gpus), default=None)
    if gpu_util is not None and gpu_util >= SATURATED:
        return Verdict("accelerator", f"GPU busy {gpu_util:.0%}")
    # Watching a process, only its own I/O wait counts; the machine's iowait may be someone else's.
    io_wait = (s.proc_io_wait_fraction or 0.0) if s.proc_cpu_cores is not None else s.iowait_fraction
    busy = _busy_cores(s)
    if s.proc_cpu_cores is not None:
        # Watching a process: only its own CPU use counts, not what the rest of the machine does.
        all_threads_busy = busy >= SATURATED and (s.proc_threads or 1) <= round(busy + 0.5)
        contending = (s.proc_running_fraction or 0.0) >= RUNNABLE and busy >= IDLE_CORES
        cpu_bound = all_threads_busy or busy >= SATURATED * s.cpu_cores or contending
    else:
        cpu_bound = s.cpu_busy_fraction >= SATURATED
    # Heavy device I/O while the CPU it uses is mostly the kernel's I/O path (or little CPU at all).
    kernel_io = (s.proc_system_fraction or 0.0) >= 0.5 or busy < 0.5
    io_heavy = _io_bytes(s) >= STORAGE_BYTES_PER_S and kernel_io
    waiting = io_wait >= IO_WAIT or (s.disk_busy_fraction or 0.0) >= SATURATED
    if io_heavy or (waiting and not cpu_bound):
        return Verdict("storage", f"{_io_bytes(s) / MB:.0f} MB/s device I/O, {io_wait:.0%} in I/O wait, "
                                  f"{(s.proc_system_fraction or 0.0):.0%} of CPU in the kernel, "
                                  f"disk busy {(s.disk_busy_fraction or 0.0):.0%}")
    net = s.net_sent_bytes_per_s + s.net_recv_bytes_per_s
    if link_bytes_per_s and net >= SATURATED * link_bytes_per_s:
        return Verdict("network", f"{net / MB:.0f} MB/s of a {link_bytes_per_s / MB:.0f} MB/s link")
    if cpu_bound:
        if gpu_util is not None:
            return Verdict("input_pipeline", f"CPU {busy:.1f} cores busy while the GPU is busy {gpu_util:.0%}")
        return Verdict("cpu", f"{busy:.2f} cores busy of {s.cpu_cores} {'core' if s.cpu_cores == 1 else 'cores'}")
    if busy < IDLE_CORES and _io_bytes(s) < IDLE_BYTES_PER_S and (gpu_util or 0.0) < 0.05:
        return Verdict("idle", f"{busy:.2f} cores busy, {_io_bytes(s) / KB:.0f} kB/s I/O")
    return Verdict("under_used", f"{busy:.2f} cores busy of {s.cpu_cores} {'core' if s.cpu_cores == 1 else 'cores'}"
                   + (f", GPU busy {gpu_util:.0%}" if gpu_util is not None else ""))


@dataclass(frozen=True)
class Summary:
    duration_s: float
    samples: int
    shares: dict[str, float]  # bottleneck -> share of samples
    dominant: str
    evidence: dict[str, str]  # bottleneck -> representative evidence
    cpu_busy_cores_p95: float
    rss_peak_bytes: float | None
    gpu_util_mean: float | None
    gpu_mem_peak_bytes: float | None


def summarise(samples: Sequence[Sample], link_bytes_per_s: float | None = None) -> Summary:
    """Time shares by bottleneck over a run, with evidence and the load figures right-sizing needs."""
    if not samples:
        return Summary(0.0, 0, {}, "idle", {}, 0.0, None, None, None)
    verdicts = [classify(s, link_bytes_per_s) for s in samples]
    counts = Counter(v.bottleneck for v in verdicts)
    shares = {b: counts[b] / len(verdicts) for b in BOTTLENECKS if counts[b]}
    evidence: dict[str, str] = {}
    for v in verdicts:
        evidence.setdefault(v.bottleneck, v.evidence)
    dominant = max(shares, key=shares.__getitem__)
    busy = np.array([_busy_cores(s) for s in samples])
    rss = [s.proc_rss_bytes for s in samples if s.proc_rss_bytes is not None]
    gpu_util = [np.mean([g.util_fraction for g in s.gpus]) for s in samples if s.gpus]
    gpu_mem = [max(g.mem_used_bytes for g in s.gpus) for s in samples if s.gpus]
    return Summary(
        duration_s=float(samples[-1].t_s),
        samples=len(samples),
        shares=shares,
        dominant=dominant,
        evidence=evidence,
        cpu_busy_cores_p95=float(np.percentile(busy, 95)),
        rss_peak_bytes=max(rss) if rss else None,
        gpu_util_mean=float(np.mean(gpu_util)) if gpu_util else None,
        gpu_mem_peak_bytes=max(gpu_mem) if gpu_mem else None,
    )
