"""A live terminal view (rich) of the latest sample, on stderr, only when it is a TTY."""

from __future__ import annotations

from rich.console import Console
from rich.live import Live
from rich.table import Table

from infrafit.monitor.sampler import Sample
from infrafit.units import fmt_bytes


class LiveView:
    def __init__(self) -> None:
        self.live = Live(Table(), console=Console(stderr=True), refresh_per_second=4, transient=True)
        self.live.start()

    def update(self, s: Sample, bottleneck: str) -> None:
        table = Table("metric", "value", title=f"t = {s.t_s:.0f} s · bottleneck: {bottleneck}")
        cores = "core" if s.cpu_cores == 1 else "cores"
        table.add_row("CPU busy",
                      f"{s.cpu_busy_fraction:.0%} of {s.cpu_cores} {cores} (iowait {s.iowait_fraction:.0%})")
        if s.proc_cpu_cores is not None:
            table.add_row("process", f"{s.proc_cpu_cores:.2f} cores, RSS {fmt_bytes(s.proc_rss_bytes or 0)}, "
                                     f"{s.proc_threads} threads")
        table.add_row("memory", f"{fmt_bytes(s.mem_used_bytes)} used, {fmt_bytes(s.mem_available_bytes)} free")
        table.add_row("disk",
                      f"read {fmt_bytes(s.disk_read_bytes_per_s)}/s, write {fmt_bytes(s.disk_write_bytes_per_s)}/s")
        table.add_row("network", f"out {fmt_bytes(s.net_sent_bytes_per_s)}/s, in {fmt_bytes(s.net_recv_bytes_per_s)}/s")
        for g in s.gpus:
            table.add_row(f"GPU {g.index}", f"{g.util_fraction:.0%} busy, {fmt_bytes(g.mem_used_bytes)}")
        self.live.update(table)

    def stop(self) -> None:
        self.live.stop()
