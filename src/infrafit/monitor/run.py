"""The monitor loop: start or attach to a workload, sample until it ends, then summarise.

Every sample is committed to the results store as it is taken, and the summary is written when
the workload ends, when the duration runs out, or on Ctrl-C, so an interrupted run keeps its data
and still gets its summary.
"""

from __future__ import annotations

import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from infrafit.errors import InputError
from infrafit.monitor import storage
from infrafit.monitor.classify import Summary, classify, summarise
from infrafit.monitor.sampler import Sample, Sampler
from infrafit.signals import Terminated
from infrafit.store import connect
from infrafit.units import BITS_PER_BYTE, MB, SECONDS_PER_HOUR


@dataclass(frozen=True)
class MonitorResult:
    run_id: int
    target: str
    exit_code: int | None
    summary: Summary
    usd_per_hour: float | None
    gpu_note: str | None
    advice: list[str]
    stopped_by: str | None = None  # "SIGTERM" or "Ctrl-C" when the watch was interrupted

    @property
    def cost_usd(self) -> float | None:
        if self.usd_per_hour is None:
            return None
        return self.usd_per_hour * self.summary.duration_s / SECONDS_PER_HOUR

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "target": self.target,
            "exit_code": self.exit_code,
            "stopped_by": self.stopped_by,
            "duration_s": self.summary.duration_s,
            "samples": self.summary.samples,
            "bottleneck": self.summary.dominant,
            "shares": self.summary.shares,
            "evidence": self.summary.evidence,
            "load": {
                "cpu_busy_cores_p95": self.summary.cpu_busy_cores_p95,
                "rss_peak_bytes": self.summary.rss_peak_bytes,
                "gpu_util_mean": self.summary.gpu_util_mean,
                "gpu_mem_peak_bytes": self.summary.gpu_mem_peak_bytes,
            },
            "cost": {
                "usd_per_hour": self.usd_per_hour,
                "run_usd": self.cost_usd,
            },
            "right_sizing": self.advice,
            "notes": [self.gpu_note] if self.gpu_note else [],
        }


def host_info() -> dict[str, Any]:
    vm = psutil.virtual_memory()
    return {"hostname": platform.node(), "cpu_cores": psutil.cpu_count(), "memory_bytes": vm.total,
            "platform": platform.platform()}


def link_bytes_per_s() -> float | None:
    """Fastest non-loopback NIC's speed (psutil reports Mbit/s), or None when unknown."""
    speeds = [s.speed for name, s in psutil.net_if_stats().items() if name != "lo" and s.isup and s.speed > 0]
    return max(speeds) * MB / BITS_PER_BYTE if speeds else None


def _start(command: Sequence[str]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(list(command))
    except (FileNotFoundError, PermissionError) as exc:
        raise InputError(f"cannot run {command[0]!r}: {exc.strerror}",
                         fix="check the command after `--` exists and is executable") from None


def _attach(pid: int) -> None:
    if not psutil.pid_exists(pid):
        raise InputError(f"--pid {pid}: no such process", fix="pass the pid of a running process (see `ps`)")


def monitor(
    *,
    command: Sequence[str] | None = None,
    pid: int | None = None,
    interval_s: float = 1.0,
    duration_s: float | None = None,
    db: Path | None = None,
    usd_per_hour: float | None = None,
    on_sample: Callable[[Sample, str], None] | None = None,
    advise: Callable[[Summary, float | None], list[str]] | None = None,
) -> MonitorResult:
    """Watch ``command`` (started here), ``pid``, or the whole machine; return the summary."""
    if interval_s <= 0:
        raise InputError(f"--interval {interval_s}: must be > 0", fix="use e.g. --interval 1")
    if command and pid is not None:
        raise InputError("both --pid and a command given", fix="watch either a pid or a command after `--`")
    proc = _start(command) if command else None
    if pid is not None:
        _attach(pid)
    target_pid = proc.pid if proc else pid
    target = " ".join(command) if command else (f"pid {pid}" if pid is not None else "machine")
    conn = connect(db)
    run_id = storage.start_run(conn, target, interval_s, host_info(), usd_per_hour)
    sampler = Sampler(target_pid)
    link = link_bytes_per_s()
    samples: list[Sample] = []
    exit_code: int | None = None
    stopped_by: str | None = None
    t_end = time.monotonic() + duration_s if duration_s else None
    try:
        while True:
            time.sleep(interval_s)
            sample = sampler.sample()
            verdict = classify(sample, link)
            samples.append(sample)
            storage.add_sample(conn, run_id, sample, verdict.bottleneck)
            if on_sample:
                on_sample(sample, verdict.bottleneck)
            if proc is not None and proc.poll() is not None:
                exit_code = proc.returncode
                break
            if pid is not None and not sample.proc_alive:
                break
            if t_end is not None and time.monotonic() >= t_end:
                break
    except Terminated:
        stopped_by = "SIGTERM"  # the summary below is still written; the command then exits 143
    except KeyboardInterrupt:
        stopped_by = "Ctrl-C"  # the summary below is still written
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                exit_code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                exit_code = proc.wait()
        summary = summarise(samples, link)
        advice = advise(summary, usd_per_hour) if advise else []
        result = MonitorResult(run_id, target, exit_code, summary, usd_per_hour, sampler.gpu_note, advice,
                               stopped_by)
        storage.finish_run(conn, run_id, result.to_json())
        conn.close()
    return result
