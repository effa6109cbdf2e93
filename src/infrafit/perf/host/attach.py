"""Attach the whole-server sizing (``perf.server.size_server``) to any estimate.

The estimators predict what the accelerators do; this module turns the workload and that
prediction into the plain ``HostDemand`` the server sizing needs: how many items or requests flow
through the box, what the host does per item (tokenise, decode JPEG or audio, parse rows), how
many bytes come in and go out, the weights it stages, the dataset it reads and the checkpoints it
writes. The verdict names the host resource that binds, when one does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from infrafit.perf.host.server import HostDemand, HostSpec, host_item_rate, load_server_profile, size_server
from infrafit.perf.types import Estimate
from infrafit.units import SECONDS_PER_MINUTE, bytes_per_element

#: Bytes on the wire per text token in a request or a response (UTF-8 text plus JSON framing,
#: about 4 characters per token; OpenAI's tokenizer guide: "1 token ~= 4 chars in English").
BYTES_PER_TOKEN = 4.0
#: Share of the checkpoint interval a synchronous checkpoint may stall training (a 5% budget is the
#: usual target for checkpoint overhead; Mohan et al., CheckFreq, FAST '21).
CHECKPOINT_STALL_SHARE = 0.05
#: Accelerators per node for multi-node gradient traffic (HGX/DGX boxes and most TPU hosts hold 8 or fewer).
ACCELERATORS_PER_NODE = 8

#: Host-side work per item of each model kind, keys of ``server_profiles.csv`` (``perf.host.server``).
_ITEM_KIND = {"cnn": "jpeg_decode_imagenet", "vit": "jpeg_decode_imagenet", "speech": "audio_decode_30s",
              "tabular": "tabular_row_parse", "encoder": "text_tokenize", "diffusion": "text_tokenize"}


def _inference_demand(workload: Any, est: Estimate, arch: Any) -> HostDemand:
    traffic = workload.inference.traffic
    tokens_in = float(traffic.input_tokens.mean) if traffic.input_tokens is not None else 0.0
    tokens_out = float(traffic.output_tokens.mean) if traffic.output_tokens is not None else 0.0
    rate = est.throughput.get("requests_per_s") or est.throughput.get("samples_per_s") or 0.0
    if arch.kind != "decoder":  # images, audio, rows, prompts: the model's own item sizes
        io = float(est.breakdown.get("io_bytes_per_item") or 0.0)
        return HostDemand(task="inference", items_per_s=float(rate), item_kind=_ITEM_KIND.get(arch.kind, "none"),
                          tokens_per_item=float(est.breakdown.get("tokens_per_item") or 0.0),
                          model_weight_bytes=est.memory.weights_bytes, accelerators=est.config.count,
                          input_bytes_per_item=io, output_bytes_per_item=io / 2.0,
                          serving_over_network=workload.inference.mode != "batch")
    return HostDemand(
        task="inference",
        items_per_s=float(rate),
        item_kind=_ITEM_KIND.get(arch.kind, "none"),
        tokens_per_item=tokens_in,
        input_bytes_per_item=tokens_in * BYTES_PER_TOKEN,
        output_bytes_per_item=tokens_out * BYTES_PER_TOKEN,
        model_weight_bytes=arch.weight_bytes(est.config.precision),
        accelerators=est.config.count,
        serving_over_network=workload.inference.mode != "batch",
    )


def _training_demand(workload: Any, est: Estimate, arch: Any) -> HostDemand:
    tr = workload.training
    samples_per_s = float(est.throughput.get("training_samples_per_s") or 0.0)
    dataset = tr.dataset
    dataset_bytes = float(dataset.size_bytes) if dataset is not None and dataset.size_bytes else 0.0
    total = float(tr.total_samples or 0.0)
    per_item = dataset_bytes / total if dataset_bytes and total else 0.0
    location = {"object-storage": "object_storage", "nvme": "local_nvme", "network-fs": "network_fs"}.get(
        dataset.location if dataset is not None else "object-storage", "object_storage")
    trainable = arch.params_total() if tr.method == "full" else 0.0
    # Full training checkpoints weights in bf16 plus fp32 master weights and two Adam moments (16 B/param,
    # ZeRO paper); adapters checkpoint only themselves (counted as negligible here).
    checkpoint_bytes = trainable * (bytes_per_element("bf16") + 3 * bytes_per_element("fp32"))
    grad_bytes = trainable * bytes_per_element("bf16")
    step_s = float(est.breakdown.get("step_time_s") or 0.0)
    nodes = -(-est.config.count // ACCELERATORS_PER_NODE)
    return HostDemand(
        task=workload.task,
        items_per_s=samples_per_s / nodes,
        item_kind=_ITEM_KIND.get(arch.kind, "none"),
        input_bytes_per_item=per_item,
        model_weight_bytes=arch.weight_bytes("bf16") / max(est.config.tp * est.config.pp, 1),
        accelerators=min(est.config.count, ACCELERATORS_PER_NODE),
        dataset_bytes=dataset_bytes,
        dataset_location=location,
        checkpoint_bytes=checkpoint_bytes / nodes,
        checkpoint_window_s=tr.checkpoint_every_minutes * SECONDS_PER_MINUTE * CHECKPOINT_STALL_SHARE,
        gradient_bytes_per_step=grad_bytes / max(est.config.tp * est.config.pp, 1),
        step_time_s=step_s,
        nodes=nodes,
    )


def core_s_per_item(workload: Any, arch: Any, prof: dict[str, float] | None = None) -> float:
    """Host CPU core-seconds one item costs (``server_profiles.csv``): decoding it (a JPEG for CNNs and ViTs, 30 s
    of audio for speech, a row for tabular models) and, when served, tokenising its text (an LLM's prompt, an
    encoder's sequence). Training reads pre-tokenised text, as ``_training_demand`` does."""
    prof = load_server_profile() if prof is None else prof
    kind = str(getattr(arch, "kind", "decoder"))
    per_item = prof.get(f"cpu_core_s_per_item:{_ITEM_KIND.get(kind, 'none')}", 0.0)
    inf = getattr(workload, "inference", None)
    if getattr(workload, "task", "inference") in ("training", "fine-tuning") or inf is None:
        return per_item
    given = inf.traffic.input_tokens
    if kind not in ("decoder", "encoder"):
        tokens = 0.0
    elif given is not None and given.mean:
        tokens = float(given.mean)
    else:  # an encoder's reference sequence when the spec states no length (an LLM spec always does)
        tokens = float(getattr(arch, "reference_seq_len", None) or 0.0) if kind == "encoder" else 0.0
    return per_item + tokens * prof.get("cpu_core_s_per_token:tokenize", 0.0)


def host_fed_factor(workload: Any, arch: Any, rate: Any, cores: Any, accelerators: Any,
                    accelerator_kind: Any = "gpu") -> np.ndarray:
    """How much slower than its accelerators a replica runs because its host's CPU cannot prepare the items
    (``host_item_rate``): ``rate / host rate`` where that exceeds 1, else 1. A ResNet-50 trained on one H100 of a
    16-vCPU p5.4xlarge needs 19 cores at the 11,855 images/s the GPU takes (17 to decode the JPEGs, 2 for the
    runtime): 1.2x slower, where the plan used to price the GPU's rate and only name the host as the bottleneck.
    A CPU "accelerator" is the host itself (its compute model already uses its cores): factor 1."""
    limit = host_item_rate(core_s_per_item(workload, arch), cores, accelerators)
    r = np.asarray(rate, dtype=float)
    with np.errstate(over="ignore", divide="ignore"):  # a host that feeds nothing: an infinite factor
        factor = np.where((limit < r) & (r > 0), r / limit, 1.0)
    return np.where(np.asarray(accelerator_kind, dtype=object) == "cpu", 1.0, factor)


def _rate_text(items_per_s: float) -> str:
    return f"{items_per_s:,.0f}" if items_per_s >= 100 else f"{items_per_s:.3g}"


def _host_fed(workload: Any, est: Estimate, arch: Any, host: HostSpec, acc: Any) -> Estimate:
    """``est`` slowed to what the offer's host CPU feeds (``host_fed_factor``), the figures the planner prices."""
    training = getattr(workload, "task", "inference") in ("training", "fine-tuning")
    rate = float(est.throughput.get("training_samples_per_s" if training else "requests_per_s")
                 or est.throughput.get("samples_per_s") or 0.0)
    factor = float(host_fed_factor(workload, arch, rate, host.cpu_cores if host.cpu_cores is not None else np.nan,
                                   est.config.count, getattr(acc, "kind", "gpu")))
    if factor <= 1.0:
        return est
    # rates, and the accelerators' utilisation with them (they wait for the host a (factor - 1) / factor share)
    slowed = ("mfu_fraction", "model_flops_per_s_per_accelerator", "peak_fraction")
    throughput = {k: (v / factor if isinstance(v, (int, float)) and (k.endswith("_per_s") or k in slowed) else v)
                  for k, v in est.throughput.items()}
    tts = est.time_to_train_s * factor if est.time_to_train_s is not None else None
    note = (f"host CPU: the instance's {host.cpu_cores:,.0f} cores feed {_rate_text(rate / factor)} items/s of the "
            f"{_rate_text(rate)} the accelerators take ({factor:.2f}x slower)")
    return replace(est, throughput=throughput, time_to_train_s=tts, notes=(*est.notes, note),
                   breakdown={**est.breakdown, "host_fed_factor": factor})


def with_server(workload: Any, est: Estimate, arch: Any, catalog: Any, host: HostSpec | None = None) -> Estimate:
    """``est`` with ``server`` filled in, sized on ``host`` (the offer's instances) when given; when a
    host resource binds, it becomes the bottleneck. On a given host whose CPU cannot prepare the items as fast
    as the accelerators take them, the throughput (time to train) is what the host feeds (``host_fed_factor``)."""
    if est.server is not None:
        return est
    if host is not None:
        est = _host_fed(workload, est, arch, host, catalog.accelerator(est.config.accelerator))
    if getattr(workload, "task", "inference") in ("training", "fine-tuning"):
        demand = _training_demand(workload, est, arch)
    elif getattr(workload, "inference", None) is not None:
        demand = _inference_demand(workload, est, arch)
    else:
        return est
    acc = catalog.accelerator(est.config.accelerator)
    server = size_server(demand, est, acc, demand.accelerators, host=host)
    bottleneck = est.bottleneck if server.bottleneck in (None, "accelerator") else str(server.bottleneck)
    if float(est.breakdown.get("host_fed_factor") or 1.0) > 1.0:  # sized at the rate it feeds, where it binds
        bottleneck = "host_cpu"
    breakdown = {**est.breakdown, "server_reasons": list(server.reasons)}
    return replace(est, server=server, bottleneck=bottleneck, breakdown=breakdown)
