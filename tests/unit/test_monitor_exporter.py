"""The Prometheus exporter (loopback only in tests): serves /metrics, runs at most MAX_CONNECTIONS
handlers however many idle clients connect, and refuses an address that is not one."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest

from infrafit.errors import InputError
from infrafit.monitor import prometheus
from infrafit.monitor.prometheus import Exporter


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_metrics_are_served_and_idle_connections_are_bounded():
    port = _free_port()
    exp = Exporter(port, "127.0.0.1")
    idle = []
    try:
        before = threading.active_count()
        for _ in range(50):  # idle clients that never send a request
            c = socket.create_connection(("127.0.0.1", port), timeout=2)
            idle.append(c)
        time.sleep(0.5)
        assert threading.active_count() - before <= prometheus.MAX_CONNECTIONS
        for c in idle:
            c.close()
        time.sleep(0.3)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        assert "infrafit_cpu_busy_ratio" in body
    finally:
        for c in idle:
            c.close()
        exp.close()


@pytest.mark.parametrize("addr", ["999.1.1.1", "localhost:80", "example"])
def test_a_bind_that_is_not_an_address_is_refused(addr):
    with pytest.raises(InputError, match="not an IP address"):
        Exporter(_free_port(), addr)
