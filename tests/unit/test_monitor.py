"""The monitor on real workloads: a busy loop, an fsync'ing writer and a sleeper."""

import sqlite3
import sys
from pathlib import Path

import pytest

from infrafit.monitor.classify import classify, summarise
from infrafit.monitor.gpu import GpuSample
from infrafit.monitor.run import monitor
from infrafit.monitor.sampler import Sample

WORKLOADS = Path(__file__).parent.parent / "fixtures" / "workloads"


def _run(cmd, tmp_path, seconds=3.0):
    return monitor(command=cmd, interval_s=0.25, db=tmp_path / "m.db", usd_per_hour=2.0)


def test_busy_loop_is_cpu_bound(tmp_path):
    result = _run([sys.executable, str(WORKLOADS / "busy.py"), "3"], tmp_path)
    assert result.exit_code == 0
    assert result.summary.dominant == "cpu", result.summary
    assert result.summary.shares["cpu"] >= 0.6


def test_fsync_writer_is_storage_bound(tmp_path):
    result = _run([sys.executable, str(WORKLOADS / "fsync_writer.py"), str(tmp_path / "big.bin"), "3"], tmp_path)
    assert result.summary.dominant == "storage", result.summary


def test_sleeper_is_idle(tmp_path):
    result = _run([sys.executable, "-c", "import time; time.sleep(2.5)"], tmp_path)
    assert result.summary.dominant == "idle", result.summary


def test_samples_and_summary_are_stored(tmp_path):
    result = _run([sys.executable, "-c", "import time; time.sleep(1.2)"], tmp_path)
    conn = sqlite3.connect(tmp_path / "m.db")
    n = conn.execute("SELECT COUNT(*) FROM monitor_samples WHERE run_id=?", (result.run_id,)).fetchone()[0]
    summary = conn.execute("SELECT summary_json FROM monitor_runs WHERE run_id=?", (result.run_id,)).fetchone()[0]
    assert n == result.summary.samples >= 3
    assert '"bottleneck": "idle"' in summary
    assert result.cost_usd == pytest.approx(2.0 * result.summary.duration_s / 3600)


def test_dead_process_still_summarised(tmp_path):
    result = _run([sys.executable, "-c", "import os; os._exit(3)"], tmp_path)
    assert result.exit_code == 3
    assert result.summary.samples >= 1


def _sample(**kw):
    base = dict(t_s=1.0, interval_s=1.0, cpu_busy_fraction=0.1, cpu_per_core_busy=(0.1,), iowait_fraction=0.0,
                cpu_cores=8, mem_used_bytes=4e9, mem_available_bytes=12e9, mem_total_bytes=16e9,
                swap_used_bytes=0.0, disk_read_bytes_per_s=0.0, disk_write_bytes_per_s=0.0,
                disk_busy_fraction=0.0, disk_latency_s=None, net_sent_bytes_per_s=0.0,
                net_recv_bytes_per_s=0.0)
    base.update(kw)
    return Sample(**base)


def _gpu(util):
    return GpuSample(0, "H100", util, 0.5, 40e9, 80e9, 500.0, None, None, None)


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"mem_available_bytes": 0.3e9}, "memory_pressure"),
        ({"gpus": (_gpu(0.97),)}, "accelerator"),
        ({"proc_cpu_cores": 1.0, "proc_threads": 1, "gpus": (_gpu(0.3),)}, "input_pipeline"),
        ({"proc_cpu_cores": 0.1, "proc_threads": 1, "proc_write_bytes_per_s": 200e6}, "storage"),
        ({"proc_cpu_cores": 0.9, "proc_threads": 1, "proc_write_bytes_per_s": 300e6, "proc_system_fraction": 0.8},
         "storage"),
        ({"proc_cpu_cores": 0.9, "proc_threads": 1, "proc_write_bytes_per_s": 300e6, "proc_system_fraction": 0.1},
         "cpu"),
        ({"net_sent_bytes_per_s": 1.2e9}, "network"),
        ({"proc_cpu_cores": 0.0, "proc_threads": 1, "proc_read_bytes_per_s": 0.0, "proc_write_bytes_per_s": 0.0},
         "idle"),
        ({"proc_cpu_cores": 0.4, "proc_threads": 4, "proc_running_fraction": 0.0}, "under_used"),
    ],
)
def test_classify_rules(kw, expected):
    assert classify(_sample(**kw), link_bytes_per_s=1.25e9).bottleneck == expected


def test_summary_shares_sum_to_one():
    samples = [_sample(gpus=(_gpu(0.95),)), _sample(gpus=(_gpu(0.2),)), _sample(mem_available_bytes=0.1e9)]
    summary = summarise(samples)
    assert sum(summary.shares.values()) == pytest.approx(1.0)
    assert summary.gpu_util_mean == pytest.approx((0.95 + 0.2) / 2)


def test_gpu_right_sizing_names_a_cheaper_accelerator():
    from infrafit.catalog import load_catalog
    from infrafit.monitor.rightsize import gpu_advice

    catalog = load_catalog()
    h100 = catalog.accelerator("h100")
    summary = summarise([_sample(gpus=(GpuSample(0, "H100", 0.18, 0.1, 10e9, 80e9, 200.0, None, None, None),))])
    cheaper = [(catalog.accelerator("l4"), 0.8), (catalog.accelerator("l40s"), 1.9), (h100, 6.9)]
    advice = gpu_advice(summary, h100, cheaper, current_usd=6.9)
    # 18% of 989 TFLOP/s x 1.3 headroom = 231 TFLOP/s: an L4 (121) is too small, an L40S (362) carries it.
    assert len(advice) == 1 and "L40S" in advice[0] and "28% of the cost" in advice[0]


def test_cpu_right_sizing_counts_cores_with_headroom():
    from infrafit.monitor.rightsize import cpu_advice

    samples = [_sample(proc_cpu_cores=2.0, proc_threads=8) for _ in range(10)]
    advice = cpu_advice(summarise(samples), cores=16)
    assert "3 cores" in advice[0]  # ceil(2.0 x 1.3)


def test_gpu_sampler_with_a_fake_nvml():
    """The NVML path (no GPU here): utilisation, memory, power in W, PCIe KB/s and NVLink KiB counters."""
    from types import SimpleNamespace

    from infrafit.monitor.gpu import GpuSampler

    counters = {"tx": 1000.0, "rx": 500.0}

    def fields(_h, ids):
        return [SimpleNamespace(nvmlReturn=0, value=SimpleNamespace(ullVal=counters["tx" if i[0] == 138 else "rx"]))
                for i in ids]

    fake = SimpleNamespace(
        NVML_PCIE_UTIL_TX_BYTES=0, NVML_PCIE_UTIL_RX_BYTES=1,
        NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX=138, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX=139,
        nvmlDeviceGetUtilizationRates=lambda h: SimpleNamespace(gpu=42, memory=17),
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(used=10e9, total=80e9),
        nvmlDeviceGetPowerUsage=lambda h: 350_000,
        nvmlDeviceGetPcieThroughput=lambda h, which: 2000,
        nvmlDeviceGetName=lambda h: b"NVIDIA H100 80GB HBM3",
        nvmlDeviceGetFieldValues=fields,
    )
    sampler = GpuSampler.__new__(GpuSampler)
    sampler.handles, sampler.note, sampler._nvml, sampler._nvlink_prev = ["h0"], None, fake, {}
    first = sampler.sample(1.0)[0]
    counters["tx"] += 2048.0
    second = sampler.sample(2.0)[0]
    assert first.util_fraction == 0.42 and first.mem_util_fraction == 0.17
    assert first.power_w == 350.0 and first.pcie_tx_bytes_per_s == 2e6
    assert first.name == "NVIDIA H100 80GB HBM3"
    assert second.nvlink_bytes_per_s == 2048.0 * 1024 / 2.0
