"""Serve the latest sample as Prometheus metrics (prometheus-client), bound to 127.0.0.1 by default."""

from __future__ import annotations

import ipaddress
import threading
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from infrafit.errors import InputError
from infrafit.monitor.sampler import Sample

#: Connections served at once; further ones are closed at once (a scraper needs one).
MAX_CONNECTIONS = 8
#: Seconds an idle connection may hold a worker before it is dropped.
CONNECTION_TIMEOUT_S = 10.0


def _check_address(addr: str) -> None:
    """``--bind`` must be an IP address (``999.1.1.1`` is not one; a port problem is another matter)."""
    try:
        ipaddress.ip_address(addr)
    except ValueError:
        raise InputError(f"--bind {addr!r}: not an IP address",
                         fix="give an address such as 127.0.0.1 (this machine only) or 0.0.0.0 "
                             "(all interfaces)") from None


class _QuietHandler(WSGIRequestHandler):
    timeout = CONNECTION_TIMEOUT_S  # an idle client is dropped instead of holding a worker forever

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass  # scrapes are not diagnostics


class _BoundedServer(ThreadingMixIn, WSGIServer):
    """A threaded WSGI server that runs at most ``MAX_CONNECTIONS`` handlers at once and closes any
    connection beyond that (prometheus_client's own server starts a thread per connection, unbounded)."""

    daemon_threads = True
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def serve_bounded(port: int, addr: str, registry: Any) -> _BoundedServer:
    """Serve ``registry`` at ``http://addr:port/metrics`` from one background thread."""
    from prometheus_client import make_wsgi_app

    server = make_server(addr, port, make_wsgi_app(registry), server_class=_BoundedServer, handler_class=_QuietHandler)
    server.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)  # per server, not shared between exporters
    threading.Thread(target=server.serve_forever, name="infrafit-prometheus", daemon=True).start()
    return server


class Exporter:
    """Gauges on a private registry, updated once per sample."""

    def __init__(self, port: int, addr: str = "127.0.0.1") -> None:
        from prometheus_client import CollectorRegistry, Gauge

        self.registry = CollectorRegistry()
        g = lambda name, doc, labels=(): Gauge(name, doc, labels, registry=self.registry)  # noqa: E731
        self.cpu = g("infrafit_cpu_busy_ratio", "Machine CPU busy fraction")
        self.iowait = g("infrafit_cpu_iowait_ratio", "Share of CPU time in I/O wait")
        self.mem = g("infrafit_memory_used_bytes", "Memory in use")
        self.disk = g("infrafit_disk_bytes_per_second", "Disk throughput", ("direction",))
        self.net = g("infrafit_network_bytes_per_second", "Network throughput", ("direction",))
        self.proc_cpu = g("infrafit_process_cpu_cores", "Cores of CPU used by the watched process tree")
        self.proc_rss = g("infrafit_process_rss_bytes", "Resident memory of the watched process tree")
        self.gpu_util = g("infrafit_gpu_utilization_ratio", "GPU busy fraction", ("gpu",))
        self.gpu_mem = g("infrafit_gpu_memory_used_bytes", "GPU memory in use", ("gpu",))
        self.gpu_power = g("infrafit_gpu_power_watts", "GPU power draw", ("gpu",))
        self.bottleneck = g("infrafit_bottleneck", "1 for the current bottleneck class", ("class",))
        _check_address(addr)
        try:
            self.server: Any = serve_bounded(port, addr, self.registry)
        except OSError as exc:
            raise InputError(f"--prometheus {port}: cannot listen on {addr}:{port} ({exc.strerror})",
                             fix="choose a free port, e.g. --prometheus 9464") from None

    def update(self, s: Sample, bottleneck: str) -> None:
        self.cpu.set(s.cpu_busy_fraction)
        self.iowait.set(s.iowait_fraction)
        self.mem.set(s.mem_used_bytes)
        self.disk.labels("read").set(s.disk_read_bytes_per_s)
        self.disk.labels("write").set(s.disk_write_bytes_per_s)
        self.net.labels("sent").set(s.net_sent_bytes_per_s)
        self.net.labels("received").set(s.net_recv_bytes_per_s)
        if s.proc_cpu_cores is not None:
            self.proc_cpu.set(s.proc_cpu_cores)
            self.proc_rss.set(s.proc_rss_bytes or 0.0)
        for gpu in s.gpus:
            self.gpu_util.labels(str(gpu.index)).set(gpu.util_fraction)
            self.gpu_mem.labels(str(gpu.index)).set(gpu.mem_used_bytes)
            if gpu.power_w is not None:
                self.gpu_power.labels(str(gpu.index)).set(gpu.power_w)
        from infrafit.monitor.classify import BOTTLENECKS

        for name in BOTTLENECKS:
            self.bottleneck.labels(name).set(1.0 if name == bottleneck else 0.0)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
