"""Server sizing: the host resource that binds, with the numbers behind it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafit.errors import InputError
from infrafit.perf.host.server import HostDemand, HostSpec, load_server_profile, size_server

JPEG = HostDemand(task="inference", items_per_s=9000.0, item_kind="jpeg_decode_imagenet", accelerators=8,
                  model_weight_bytes=25e6, input_bytes_per_item=110e3, output_bytes_per_item=100.0)


def test_jpeg_heavy_vision_is_cpu_bound_on_a_box_with_too_few_cores():
    s = size_server(JPEG, None, None, 8, host=HostSpec(cpu_cores=16))
    per_image = load_server_profile()["cpu_core_s_per_item:jpeg_decode_imagenet"]
    assert s.cpu_cores == pytest.approx(9000 * per_image + 8 * load_server_profile()["runtime_cores_per_accelerator"])
    assert s.bottleneck == "host_cpu"
    assert "cores needed" in s.reasons[0] and "16" in s.reasons[0]


def test_same_workload_on_a_typical_box_is_not_host_bound():
    assert size_server(JPEG, None, None, 8).bottleneck == "accelerator"


def test_checkpoint_burst_to_object_storage_is_storage_bound():
    d = HostDemand(task="training", checkpoint_bytes=1e12, checkpoint_window_s=60.0,
                   checkpoint_location="object_storage", accelerators=8)
    s = size_server(d, None, None, 8)
    assert s.bottleneck == "storage_write"
    assert s.storage_write_bytes_per_s == pytest.approx(1e12 / 60.0)


def test_multinode_gradient_traffic_is_a_ring_allreduce():
    d = HostDemand(task="training", gradient_bytes_per_step=140e9, step_time_s=1.0, nodes=4, accelerators=8)
    assert size_server(d, None, None, 8).network_bytes_per_s == pytest.approx(2 * 3 / 4 * 140e9)


def test_rate_can_come_from_an_estimate_like_throughput_dict():
    d = HostDemand(task="inference", item_kind="jpeg_decode_imagenet", accelerators=1)
    s = size_server(d, {"samples_per_s": 1000.0}, None, 1)
    assert s.cpu_cores > 1000 * load_server_profile()["cpu_core_s_per_item:jpeg_decode_imagenet"]


def test_unknown_item_kind_and_location_raise_with_a_fix():
    with pytest.raises(InputError, match="To fix"):
        size_server(HostDemand(task="inference", items_per_s=1, item_kind="video"), None, None, 1)
    with pytest.raises(InputError, match="To fix"):
        size_server(HostDemand(task="training", dataset_location="tape"), None, None, 1)


@settings(max_examples=40, deadline=None)
@given(st.floats(1, 1e5), st.floats(1, 512), st.floats(1, 512))
def test_more_cores_never_makes_cpu_the_bottleneck_where_it_was_not(rate, cores, extra):
    d = HostDemand(task="inference", items_per_s=rate, item_kind="jpeg_decode_imagenet", accelerators=8)
    before = size_server(d, None, None, 8, host=HostSpec(cpu_cores=cores)).bottleneck
    after = size_server(d, None, None, 8, host=HostSpec(cpu_cores=cores + extra)).bottleneck
    if before != "host_cpu":
        assert after != "host_cpu"


def test_a_bf16_8b_model_serves_from_a_16_gib_box_as_aws_deploys_it():
    """AWS FMBench serves bf16 Llama-3.1-8B-Instruct (16 GB of weights) on one g5.xlarge (16 GiB RAM): a
    serving engine streams the weights shard by shard from memory-mapped files, so the box needs the OS and
    one serving process plus about one 5 GB shard, not a training box's 32 GB base plus every weight.
    Before, every 1-GPU cloud box was labelled host_ram-bound (42 GB 'needed' of 17 GB)."""
    g5_xlarge = HostSpec(cpu_cores=4, ram_bytes=16 * 2**30)
    d = HostDemand(task="inference", items_per_s=2.0, item_kind="text_tokenize", tokens_per_item=1500.0,
                   model_weight_bytes=16.06e9, accelerators=1)
    s = size_server(d, None, None, 1, host=g5_xlarge)
    prof = load_server_profile()
    assert s.ram_bytes == pytest.approx(prof["host_base_ram_bytes:inference"] + prof["weight_shard_bytes"]
                                        + 2 * prof["pinned_buffer_bytes"])
    assert s.ram_bytes < g5_xlarge.ram_bytes and s.bottleneck == "accelerator"
    # a box with less RAM than one serving process and a shard is still RAM-bound, and says so
    tiny = size_server(d, None, None, 1, host=HostSpec(cpu_cores=4, ram_bytes=8e9))
    assert tiny.bottleneck == "host_ram" and "weights staged 5.0 GB" in tiny.reasons[0]
    # training still stages every weight on top of its base (optimizer and checkpoint buffers)
    t = size_server(HostDemand(task="training", model_weight_bytes=16.06e9, accelerators=1), None, None, 1,
                    host=g5_xlarge)
    assert t.ram_bytes == pytest.approx(prof["host_base_ram_bytes"] + 16.06e9 + 2 * prof["pinned_buffer_bytes"])
