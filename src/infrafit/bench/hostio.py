"""Host memory bandwidth (STREAM triad) and storage throughput on a chosen path.

Triad: ``a = b + s * c`` over arrays much larger than the last-level cache; STREAM counts
``3 x 8 bytes`` per element for float64 (two reads, one write; McCalpin, "Memory Bandwidth and
Machine Balance", IEEE TCCA Newsletter 1995). With torch the kernel is one fused, multi-threaded
``torch.add(b, c, alpha=s, out=a)``; numpy's fallback ``multiply(c, s, out=a); a += b`` moves more
(5 x 8 bytes) on one thread. We report the STREAM count (``stream_bytes``) so the figure is
comparable with published STREAM results, and keep the actually-moved bytes in the params.

Storage: sequential write in large blocks then fsync; read back with the page cache bypassed when
possible. Method, in order of preference: ``O_DIRECT`` (the kernel skips the page cache),
else ``posix_fadvise(POSIX_FADV_DONTNEED)`` after fsync (asks the kernel to drop the file's cached
pages), else none (the read may come from RAM; reported as ``cache_bypass = "none"``).
"""

from __future__ import annotations

import mmap
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.bench.stats import Timing, time_repeated
from infrafit.errors import InputError
from infrafit.units import MiB

BLOCK_BYTES = int(8 * MiB)  # 8 MiB sequential blocks (aligned for O_DIRECT)
ALIGN = 4096


def _triad_kernel(n: int) -> tuple[Any, float, str]:
    """The kernel and the bytes it really moves: torch's fused, multi-threaded ``add(b, c, alpha=s)``
    (3 x 8 B per element) when torch is installed, else numpy's single-threaded two-step form."""
    s = 3.0
    try:
        import torch

        ta, tb, tc = torch.zeros(n, dtype=torch.float64), torch.ones(n, dtype=torch.float64), \
            torch.full((n,), 2.0, dtype=torch.float64)
        return (lambda: torch.add(tb, tc, alpha=s, out=ta)), 3.0 * 8 * n, "torch.add(b, c, alpha=s, out=a)"
    except ImportError:
        a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)

        def kernel() -> None:
            np.multiply(c, s, out=a)
            np.add(a, b, out=a)

        return kernel, 5.0 * 8 * n, "numpy multiply+add (single-threaded)"


def triad(array_bytes: float, *, budget_s: float = 3.0, min_reps: int = 5) -> tuple[float, Timing, dict[str, Any]]:
    """Median triad bandwidth (bytes/s, STREAM byte count) over three float64 arrays of ``array_bytes``."""
    n = max(1024, int(array_bytes // 8))
    kernel, moved, implementation = _triad_kernel(n)
    timing = time_repeated(kernel, warmup=2, min_reps=min_reps, budget_s=budget_s, rel_ci=0.02)
    stream_bytes = 3.0 * 8 * n
    params = {"array_bytes": 8.0 * n, "stream_bytes": stream_bytes, "moved_bytes": moved,
              "dtype": "float64", "implementation": implementation}
    return stream_bytes / timing.p50_s, timing, params


def _aligned_buffer(size: int) -> mmap.mmap:
    """Page-aligned memory (mmap is page-aligned), as O_DIRECT requires; filled with random bytes."""
    buf = mmap.mmap(-1, size)
    chunk = min(size, int(MiB))
    buf.write(os.urandom(chunk) * (size // chunk))
    return buf


def _open_write(path: Path, direct: bool) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if direct:
        flags |= getattr(os, "O_DIRECT", 0)
    return os.open(path, flags, 0o600)


def _write_file(path: Path, size_bytes: int, buf: mmap.mmap, direct: bool) -> float:
    """Write ``size_bytes`` sequentially then fsync; returns seconds including the fsync."""
    fd = _open_write(path, direct)
    try:
        t0 = time.perf_counter()
        written = 0
        view = memoryview(buf)
        while written < size_bytes:
            written += os.write(fd, view[: min(len(buf), size_bytes - written)])
        os.fsync(fd)
        return time.perf_counter() - t0
    finally:
        os.close(fd)


def _drop_cache(path: Path) -> bool:
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    finally:
        os.close(fd)


def _read_file(path: Path, buf: mmap.mmap, direct: bool) -> float:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECT", 0) if direct else 0)
    fd = os.open(path, flags)
    try:
        t0 = time.perf_counter()
        view = memoryview(buf)
        while os.readv(fd, [view]) > 0:
            pass
        return time.perf_counter() - t0
    finally:
        os.close(fd)


def direct_io_supported(folder: Path) -> bool:
    """True when ``folder``'s file system accepts O_DIRECT (tmpfs and some overlays do not)."""
    if not hasattr(os, "O_DIRECT"):
        return False
    probe = folder / ".infrafit-odirect-probe"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
        try:
            buf = _aligned_buffer(ALIGN)
            os.write(fd, buf)
        finally:
            os.close(fd)
        return True
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


#: Temp files the storage benchmarks write, with the writer's PID in the name.
TEMP_PATTERNS = (".infrafit-bench-*.dat", ".infrafit-ckpt-*.pt")


def _close(buf: Any) -> None:
    """Close the aligned buffer; an interrupt (Ctrl-C, SIGTERM) in the middle of a write can leave a
    view of it alive for a moment, and then the mapping is freed with the frame instead."""
    try:
        buf.close()
    except BufferError:
        pass


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Remove benchmark temp files in ``folder`` left by runs whose process is gone (killed with
    SIGKILL, or a power cut); a live run's file is kept. Returns what was removed."""
    removed = []
    for pattern in TEMP_PATTERNS:
        for path in Path(folder).glob(pattern):
            pid_text = path.name.split("-")[-1].split(".")[0]
            if pid_text.isdigit() and not _pid_alive(int(pid_text)):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def storage_sequential(folder: Path, size_bytes: float, reps: int = 3) -> dict[str, Any]:
    """Sequential write (with fsync) and read throughput of a ``size_bytes`` file in ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"storage path {folder} is not a directory", fix="pass an existing folder with --path")
    remove_stale_temp_files(folder)
    size = max(ALIGN, int(size_bytes) // ALIGN * ALIGN)
    direct = direct_io_supported(folder)
    buf = _aligned_buffer(min(BLOCK_BYTES, size))
    path = folder / f".infrafit-bench-{os.getpid()}.dat"
    writes, reads, method = [], [], "o_direct" if direct else "none"
    try:
        for _ in range(reps):
            writes.append(_write_file(path, size, buf, direct))
            if not direct and _drop_cache(path):
                method = "fadvise_dontneed"
            reads.append(_read_file(path, buf, direct))
    finally:
        path.unlink(missing_ok=True)
        _close(buf)
    return {"write": Timing(tuple(writes), 0), "read": Timing(tuple(reads), 0), "size_bytes": float(size),
            "cache_bypass": method}


def checkpoint_write(folder: Path, size_bytes: float, reps: int = 3) -> dict[str, Any]:
    """Time to write a ``size_bytes`` checkpoint and fsync it (buffered I/O, as torch.save does)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"storage path {folder} is not a directory", fix="pass an existing folder with --path")
    remove_stale_temp_files(folder)
    size = max(ALIGN, int(size_bytes))
    buf = _aligned_buffer(min(BLOCK_BYTES, max(ALIGN, size // ALIGN * ALIGN)))
    path = folder / f".infrafit-ckpt-{os.getpid()}.pt"
    try:
        times = [_write_file(path, size, buf, direct=False) for _ in range(reps)]
    finally:
        path.unlink(missing_ok=True)
        _close(buf)
    return {"timing": Timing(tuple(times), 0), "size_bytes": float(size)}
