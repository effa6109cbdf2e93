"""PyTorch modules with the per-layer shapes of a library model and random weights.

Decoder: Llama-style pre-norm blocks (RMSNorm, grouped-query attention through
``torch.nn.functional.scaled_dot_product_attention``, SwiGLU MLP; Touvron et al. 2023, "LLaMA",
section 2.2). Encoder: BERT-style post-norm blocks (LayerNorm, bidirectional attention, GELU MLP;
Devlin et al. 2019). CNN: ResNet-50 bottleneck blocks (He et al. 2016, Table 1), written with
``torch.nn`` (no torchvision). The graphs match :mod:`infrafit.bench.shapes`' FLOP counts.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 - the conventional name
from torch import nn

from infrafit.bench.shapes import RESNET50_STAGES, RESNET_EXPANSION, BenchShape
from infrafit.errors import InputError

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class RMSNorm(nn.Module):
    """Root-mean-square norm (Zhang and Sennrich 2019), as in Llama."""

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, s: BenchShape, causal: bool) -> None:
        super().__init__()
        self.s, self.causal = s, causal
        self.q_proj = nn.Linear(s.hidden_size, s.num_attention_heads * s.head_dim, bias=False)
        self.k_proj = nn.Linear(s.hidden_size, s.num_kv_heads * s.head_dim, bias=False)
        self.v_proj = nn.Linear(s.hidden_size, s.num_kv_heads * s.head_dim, bias=False)
        self.o_proj = nn.Linear(s.num_attention_heads * s.head_dim, s.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        s = self.s
        q = self.q_proj(x).view(b, t, s.num_attention_heads, s.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, s.num_kv_heads, s.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, s.num_kv_heads, s.head_dim).transpose(1, 2)
        if s.num_kv_heads != s.num_attention_heads:  # GQA: share each KV head across a query group
            rep = s.num_attention_heads // s.num_kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class DecoderLayer(nn.Module):
    def __init__(self, s: BenchShape) -> None:
        super().__init__()
        self.input_norm = RMSNorm(s.hidden_size)
        self.attn = Attention(s, causal=True)
        self.post_norm = RMSNorm(s.hidden_size)
        self.gate_proj = nn.Linear(s.hidden_size, s.intermediate_size, bias=False)
        self.up_proj = nn.Linear(s.hidden_size, s.intermediate_size, bias=False)
        self.down_proj = nn.Linear(s.intermediate_size, s.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.input_norm(x))
        h = self.post_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class EncoderLayer(nn.Module):
    def __init__(self, s: BenchShape) -> None:
        super().__init__()
        self.attn = Attention(s, causal=False)
        self.norm1 = nn.LayerNorm(s.hidden_size)
        self.up_proj = nn.Linear(s.hidden_size, s.intermediate_size)
        self.down_proj = nn.Linear(s.intermediate_size, s.hidden_size)
        self.norm2 = nn.LayerNorm(s.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.down_proj(F.gelu(self.up_proj(x))))


class Transformer(nn.Module):
    """Embedding, ``num_layers`` blocks, final norm; decoders add an LM head.

    ``forward(ids)`` returns the last position's logits (decoder) or the pooled first token (encoder);
    ``forward(ids, all_positions=True)`` returns every position (used for training).
    """

    def __init__(self, s: BenchShape) -> None:
        super().__init__()
        self.kind = s.kind
        self.embed = nn.Embedding(s.vocab_size, s.hidden_size)
        layer = DecoderLayer if s.kind == "decoder" else EncoderLayer
        self.layers = nn.ModuleList(layer(s) for _ in range(s.num_layers))
        self.norm = RMSNorm(s.hidden_size) if s.kind == "decoder" else nn.Identity()
        self.lm_head = nn.Linear(s.hidden_size, s.vocab_size, bias=False) if s.kind == "decoder" else None

    def forward(self, ids: torch.Tensor, all_positions: bool = False) -> torch.Tensor:
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        if not all_positions:
            x = x[:, -1, :] if self.kind == "decoder" else x[:, 0, :]
        return self.lm_head(x) if self.lm_head is not None else x


class Bottleneck(nn.Module):
    def __init__(self, in_ch: int, width: int, stride: int) -> None:
        super().__init__()
        out = width * RESNET_EXPANSION
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.down = None
        if stride != 1 or in_ch != out:
            self.down = nn.Sequential(nn.Conv2d(in_ch, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    """ResNet-50 stem and the first ``num_layers`` bottleneck blocks, global pool, no classifier."""

    def __init__(self, s: BenchShape) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1))
        blocks, in_ch = [], 64
        for count, width, stride in RESNET50_STAGES:
            for i in range(count):
                blocks.append(Bottleneck(in_ch, width, stride if i == 0 else 1))
                in_ch = width * RESNET_EXPANSION
        self.blocks = nn.Sequential(*blocks[: s.num_layers])

    def forward(self, x: torch.Tensor, all_positions: bool = False) -> torch.Tensor:
        return self.blocks(self.stem(x)).mean(dim=(2, 3))


#: Share of the available memory one model's fp32 weights may take (the precision checks copy it).
MAX_MEMORY_SHARE = 0.4


def check_fits_in_memory(shape: BenchShape) -> None:
    """Refuse a shape whose fp32 weights would not fit in this machine's available memory, before any
    allocation (a config with absurd but valid sizes would otherwise ask the allocator for terabytes)."""
    import psutil

    from infrafit.bench.shapes import params
    from infrafit.units import fmt_bytes

    need = params(shape) * 4.0
    available = float(psutil.virtual_memory().available)
    if need > MAX_MEMORY_SHARE * available:
        raise InputError(f"{shape.model_id}: {shape.num_layers} layer(s) at this width need {fmt_bytes(need)} of "
                         f"fp32 weights; this machine has {fmt_bytes(available)} available",
                         fix="use --quick (narrower layers), fewer layers, or a machine with more memory")


def build_model(shape: BenchShape, seed: int = 0) -> nn.Module:
    """A model of ``shape`` with random weights (seeded; no checkpoint is ever loaded); refused first
    when its weights would not fit in memory."""
    check_fits_in_memory(shape)
    torch.manual_seed(seed)
    model = ResNet(shape) if shape.kind == "cnn" else Transformer(shape)
    return model.eval()


def make_inputs(shape: BenchShape, batch: int, seq_len: int, device: str = "cpu", seed: int = 1) -> torch.Tensor:
    """Random token ids ``[batch, seq_len]`` or images ``[batch, 3, size, size]``."""
    gen = torch.Generator().manual_seed(seed)
    if shape.kind == "cnn":
        return torch.randn(batch, 3, shape.image_size, shape.image_size, generator=gen).to(device)
    return torch.randint(0, shape.vocab_size, (batch, seq_len), generator=gen).to(device)
