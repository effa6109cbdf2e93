"""Memory-fit golden tests against published figures (within 5%)."""

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.engine import weight_bytes_per_gpu
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.units import GiB
from infrafit.workload.models import get_model


def test_llama31_70b_fp8_weights_70_6_gb():
    """Llama-3.1-70B has 70.6B parameters (meta-llama/Llama-3.1-70B model card on Hugging Face,
    "Model size 70.6B params"); at fp8 (1 byte each) the weights take ~70.6 GB."""
    acc = load_catalog().accelerator("nvidia_h200_sxm")
    s, _, _ = build_setup([ConfigRow(acc, "fp8", "vllm")])
    w = weight_bytes_per_gpu(shape_from_arch(get_model("llama3.1-70b")), s)[0]
    assert w == pytest.approx(70.6e9, rel=0.05)


@pytest.mark.parametrize(("model", "gib_at_16k"), [("llama3.1-70b", 4.88), ("llama3.1-8b", 1.95)])
def test_llama31_kv_cache_at_16k_tokens_bf16(model, gib_at_16k):
    """Hugging Face blog "Llama 3.1 - 405B, 70B & 8B with multilinguality and long context"
    (2024-07-23), KV-cache table at fp16: 70B 4.88 GB and 8B 1.95 GB for 16k tokens (GiB, 16,000 tokens)."""
    shape = shape_from_arch(get_model(model))
    kv = float(shape.kv_elements(np.array(16000.0))) * 2.0  # bf16: 2 bytes per element
    assert kv / GiB == pytest.approx(gib_at_16k, rel=0.05)
