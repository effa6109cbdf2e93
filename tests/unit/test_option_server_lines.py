"""What an option says about its server and replicas: a host whose listing states no cores or RAM says so
(not "0 cores, 0 B RAM"), and an elastic option's replica line says it scales with the traffic while a
fixed one holds the peak."""

from __future__ import annotations

import json
from pathlib import Path

from infrafit.cli import main
from infrafit.search.option import _replicas_line

SPEC = """name: sdxl
task: inference
model: sdxl
inference:
  mode: realtime
  traffic: {requests_per_s: 0.5, peak_requests_per_s: 2}
  slo: {latency_p99_s: 15}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
hardware: {accelerators: [nvidia_rtx_4090]}
horizon_months: 12
"""


def test_a_host_without_stated_cores_or_ram_says_so(tmp_path: Path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    assert main(["plan", str(spec), "--json", "--top", "1"]) == 0
    top = json.loads(capsys.readouterr().out)["options"][0]["server"]
    assert not top.get("cpu_cores")  # RunPod's community 4090 listing states neither (SkyPilot catalog)
    assert main(["plan", str(spec), "--explain", "1", "--top", "1"]) == 0
    out = capsys.readouterr().out
    server = next(line for line in out.splitlines() if line.strip().startswith("server:"))
    assert "0 cores" not in server and "cores and RAM not stated" in server


def test_elastic_and_fixed_replica_lines_say_how_they_are_paid():
    elastic = _replicas_line(4, 0.73, "cloud_on_demand")
    fixed = _replicas_line(4, 0.73, "cloud_reserved_1y")
    assert elastic.startswith("up to 4 replica(s)") and "per replica-hour" in elastic and "fixed" not in elastic
    assert "held at the peak month (fixed modes)" in fixed
