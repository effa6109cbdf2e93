"""Samplers: the machine, a process tree, and GPUs through NVML, at a fixed interval.

Each ``Sampler.sample()`` returns one :class:`Sample` of *rates over the last interval* (bytes/s,
busy fractions), computed from psutil's cumulative counters. A sample costs well under a
millisecond of CPU (measured in ``benchmarks/monitor_overhead.py``), so 1 Hz sampling stays far
under 2% of one core.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import psutil

from infrafit.monitor.gpu import GpuSample, GpuSampler
from infrafit.units import MS


@dataclass(frozen=True)
class Sample:
    t_s: float  # seconds since the monitor started
    interval_s: float
    cpu_busy_fraction: float  # whole machine, 0..1 over all cores
    cpu_per_core_busy: tuple[float, ...]
    iowait_fraction: float  # share of CPU time waiting on I/O (Linux)
    cpu_cores: int
    mem_used_bytes: float
    mem_available_bytes: float
    mem_total_bytes: float
    swap_used_bytes: float
    disk_read_bytes_per_s: float
    disk_write_bytes_per_s: float
    disk_busy_fraction: float | None  # share of the interval the busiest disk had I/O in flight
    disk_latency_s: float | None  # mean time per completed I/O on the busiest disk
    net_sent_bytes_per_s: float
    net_recv_bytes_per_s: float
    proc_alive: bool | None = None  # None when watching the whole machine
    proc_cpu_cores: float | None = None  # cores' worth of CPU used by the process tree
    proc_rss_bytes: float | None = None
    proc_threads: int | None = None
    proc_read_bytes_per_s: float | None = None
    proc_write_bytes_per_s: float | None = None
    proc_io_wait_fraction: float | None = None  # share of the tree's processes in D (uninterruptible I/O) state
    proc_running_fraction: float | None = None  # share of the tree's processes running or runnable (R)
    proc_system_fraction: float | None = None  # share of the tree's CPU time spent in the kernel
    gpus: tuple[GpuSample, ...] = field(default_factory=tuple)

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["cpu_per_core_busy"] = list(self.cpu_per_core_busy)
        row["gpus"] = [asdict(g) for g in self.gpus]
        return row


def _busiest_disk(prev: dict[str, Any], cur: dict[str, Any], dt: float) -> tuple[float | None, float | None]:
    """Busy fraction and mean latency per I/O of the busiest physical disk over the interval."""
    best: tuple[float | None, float | None] = (None, None)
    for name, now in cur.items():
        before = prev.get(name)
        if before is None or name.startswith(("loop", "ram", "zram")):
            continue
        busy_ms = getattr(now, "busy_time", 0) - getattr(before, "busy_time", 0)
        ops = (now.read_count - before.read_count) + (now.write_count - before.write_count)
        io_ms = (now.read_time - before.read_time) + (now.write_time - before.write_time)
        busy = min(1.0, max(0.0, busy_ms * MS / dt)) if dt > 0 else 0.0
        latency = (io_ms * MS / ops) if ops > 0 else None
        if best[0] is None or busy > best[0]:
            best = (busy, latency)
    return best


class Sampler:
    """Samples the machine and, when given a pid, that process and its children."""

    def __init__(self, pid: int | None = None, *, gpus: bool = True) -> None:
        self.pid = pid
        self.process = psutil.Process(pid) if pid is not None else None
        self.gpu = GpuSampler() if gpus else None
        self._t0 = time.monotonic()
        self._last_t = self._t0
        self._cpu = psutil.cpu_times()
        self._disk = psutil.disk_io_counters(perdisk=True) or {}
        self._net = psutil.net_io_counters()
        self._proc_cpu: dict[int, float] = {}
        self._proc_sys: dict[int, float] = {}
        self._proc_io = (0.0, 0.0)
        self._last_sys_s = 0.0
        psutil.cpu_percent(percpu=True)  # prime the per-core counters
        if self.process is not None:
            totals = self._proc_totals()
            self._proc_io = (totals[4], totals[5])

    @property
    def gpu_note(self) -> str | None:
        return self.gpu.note if self.gpu else "GPU sampling off"

    def _tree(self) -> list[psutil.Process]:
        assert self.process is not None
        try:
            return [self.process, *self.process.children(recursive=True)]
        except psutil.Error:
            return []

    def _proc_totals(self) -> tuple[float, float, float, int, float, float, bool, int, int]:
        """(cpu s since last call, rss, threads, D-state procs, read B, write B, alive, R-state procs, procs)."""
        cpu_s = rss = sys_s = 0.0
        threads = d_state = running = procs = 0
        read_b = write_b = 0.0
        alive = False
        for proc in self._tree():
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    cpu_now = times.user + times.system
                    # Per-pid deltas: a child that exits between samples must not count negative.
                    cpu_s += max(0.0, cpu_now - self._proc_cpu.get(proc.pid, 0.0))
                    sys_s += max(0.0, times.system - self._proc_sys.get(proc.pid, 0.0))
                    self._proc_cpu[proc.pid] = cpu_now
                    self._proc_sys[proc.pid] = times.system
                    rss += proc.memory_info().rss
                    threads += proc.num_threads()
                    status = proc.status()
                    procs += 1
                    d_state += status == psutil.STATUS_DISK_SLEEP
                    running += status == psutil.STATUS_RUNNING
                    try:
                        io = proc.io_counters()
                        # read_chars/write_chars count page-cache I/O too; *_bytes only what hit the device.
                        read_b += io.read_bytes
                        write_b += io.write_bytes
                    except (psutil.AccessDenied, AttributeError):
                        pass
                    alive = alive or status != psutil.STATUS_ZOMBIE
            except psutil.Error:
                continue
        self._last_sys_s = sys_s
        return cpu_s, rss, float(threads), d_state, read_b, write_b, alive, running, procs

    def sample(self) -> Sample:
        now = time.monotonic()
        dt = max(now - self._last_t, 1e-6)
        cpu = psutil.cpu_times()
        total = sum(cpu) - sum(self._cpu)
        idle = (cpu.idle - self._cpu.idle) + (getattr(cpu, "iowait", 0.0) - getattr(self._cpu, "iowait", 0.0))
        iowait = getattr(cpu, "iowait", 0.0) - getattr(self._cpu, "iowait", 0.0)
        per_core = tuple(p / 100.0 for p in psutil.cpu_percent(percpu=True))
        disk = psutil.disk_io_counters(perdisk=True) or {}
        busy, latency = _busiest_disk(self._disk, disk, dt)
        read_rate = _rate(self._disk, disk, "read_bytes", dt)
        write_rate = _rate(self._disk, disk, "write_bytes", dt)
        net = psutil.net_io_counters()
        vm = psutil.virtual_memory()
        proc_fields: dict[str, Any] = {}
        if self.process is not None:
            prev_io = self._proc_io
            cpu_s, rss, threads, d_state, read_b, write_b, alive, running, procs = self._proc_totals()
            proc_fields = {
                "proc_alive": alive,
                "proc_cpu_cores": cpu_s / dt,
                "proc_rss_bytes": rss,
                "proc_threads": int(threads),
                "proc_read_bytes_per_s": max(0.0, (read_b - prev_io[0]) / dt),
                "proc_write_bytes_per_s": max(0.0, (write_b - prev_io[1]) / dt),
                "proc_io_wait_fraction": (d_state / procs) if procs else 0.0,
                "proc_running_fraction": (running / procs) if procs else 0.0,
                "proc_system_fraction": (self._last_sys_s / cpu_s) if cpu_s > 0 else 0.0,
            }
            self._proc_io = (read_b, write_b)
        sample = Sample(
            t_s=now - self._t0,
            interval_s=dt,
            cpu_busy_fraction=max(0.0, 1.0 - idle / total) if total > 0 else 0.0,
            cpu_per_core_busy=per_core,
            iowait_fraction=max(0.0, iowait / total) if total > 0 else 0.0,
            cpu_cores=psutil.cpu_count() or os.cpu_count() or 1,
            mem_used_bytes=float(vm.total - vm.available),
            mem_available_bytes=float(vm.available),
            mem_total_bytes=float(vm.total),
            swap_used_bytes=float(psutil.swap_memory().used),
            disk_read_bytes_per_s=read_rate,
            disk_write_bytes_per_s=write_rate,
            disk_busy_fraction=busy,
            disk_latency_s=latency,
            net_sent_bytes_per_s=max(0.0, (net.bytes_sent - self._net.bytes_sent) / dt),
            net_recv_bytes_per_s=max(0.0, (net.bytes_recv - self._net.bytes_recv) / dt),
            gpus=tuple(self.gpu.sample(dt)) if self.gpu else (),
            **proc_fields,
        )
        self._last_t, self._cpu, self._disk, self._net = now, cpu, disk, net
        return sample


def _rate(prev: dict[str, Any], cur: dict[str, Any], attr: str, dt: float) -> float:
    """Bytes/s summed over physical disks (loop, ram and zram devices excluded)."""
    total = 0.0
    for name, now in cur.items():
        before = prev.get(name)
        if before is None or name.startswith(("loop", "ram", "zram")):
            continue
        total += max(0.0, getattr(now, attr) - getattr(before, attr))
    return total / dt
