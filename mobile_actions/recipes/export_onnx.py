"""Export a Gemma 3 caller to an ONNX decoder with an explicit KV cache, quantise it, check it.

Why our own `torch.onnx.export` wrapper and not optimum-onnx: optimum-onnx 0.1.0 (the latest)
requires transformers<4.58, and transformers 4.x tokenizes the GGUF base wrongly, so it cannot live
beside the transformers 5 this project needs (docs/runtime.md). The wrapper below reuses the model's
own modules (projections, norms, MLP, rotary tables) and writes only attention (onnxruntime's fused
GroupQueryAttention) itself, so:
- the I/O names are onnxruntime-genai's: inputs `input_ids`, `attention_mask`, `position_ids`,
  `past_key_values.{i}.key/value` [batch, kv_heads, past, head_dim], outputs `logits` and
  `present.{i}.key/value` (past + new), with dynamic batch/sequence/past axes; `genai_config.json`
  and `tokenizer_config.json` are written beside it, so the folder also runs under onnxruntime-genai;
- attention is one GroupQueryAttention node per layer (rotary, causal mask, the local layers' sliding
  window as `local_window_size`, softmax); all past KV is kept, so prefix reuse is a copy of its first
  positions, and past and present may be one buffer the op writes in place (`runtime.onnx.KVCache`);
- only the last position's logits come out, with a fixed shape [batch, 1, vocab]: a 600-token prefill
  would otherwise write 600 x 262,144 floats (629 MB) and spend most of its time in the output head.
  onnxruntime-genai reads a logits output whose sequence axis is the constant 1 as a "pruned" head
  (`Model::IsPruned`) and then allocates [batch, 1, vocab] for prefill too.

Quantisation uses onnxruntime's tools: int4 = `MatMulNBitsQuantizer` (block-wise symmetric 4-bit
on every MatMul and on the embedding Gather, after constant folding); int8 = `quantize_dynamic`
on the MatMuls + 8-bit block-wise embedding Gather; mixed = int4's 4-bit embedding/head with 8-bit
MatMulNBits blocks in every decoder layer (int4's accuracy loss is in those layers); q8 (the default) = 8-bit
MatMulNBits blocks everywhere, the head's table shared with the embedding (mixed's 4-bit head cost accuracy),
with a 4-bit copy of the head for full-vocabulary steps (`add_lean_full_head`) that also holds the table's
uncommon rows (`split_table`: 8-bit rows only for common pieces).

Run: `mobile-actions export --model default --out OUT` (quant `q8`) or
`python -m mobile_actions.recipes.export_onnx --model DIR --quant fp32 --out OUT`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

# what the runtime reads is what the export writes
from mobile_actions.runtime.onnx import FORMAT_VERSION, GENAI_CONFIG, SPARSE_INPUT, SPARSE_MAX_ROWS, WINDOW_INPUT
from mobile_actions.wire import LAYOUTS, MAX_CALL_TOKENS

MANIFEST = "manifest.json"
ONNX_NAME = "model.onnx"
QUANTS = ("fp32", "int8", "int4", "mixed", "q8")

# int4/int8 block along the input dimension. 16, not 32: on 40 held-out rows the bundled caller's int4
# export scored 40 % exact match at 16 against 30 % at 32 (fp32: 50 %); 242 MB against 209 MB.
BLOCK_SIZE = 16
# `mixed`: 4-bit embedding/head (block 32) + 8-bit decoder projections (block 128). The bundled caller's int4
# loss was all in the 4-bit decoder layers: on 40 held-out rows int4 scored 70.0 % exact, fp32 77.5 %, int4
# with the first / last layer at 8 bits 72.5 / 70.0 %, with every decoder layer at 8 bits 77.5 % at any
# block size (16/128: 270.5 MB, 32/32: 258.9 MB, 32/128: 249.5 MB, this one, under the 250 MB budget).
MIXED_BLOCK_SIZE, MIXED_INT8_BLOCK_SIZE = 32, 128
# `q8` (the default since the sparse head): 8-bit MatMulNBits blocks of 128 everywhere, the output head included,
# and the embedding gathered from the head's 8-bit table (stored once). mixed's 4-bit head cost the bundled caller
# 6 of the hybrid benchmark's 17 tasks (11/42; PyTorch and ONNX fp32: 17/42; mixed with an 8-bit head: 17/42,
# e.g. "Email ana@example.com with the subject Lunch tomorrow" refused at 4 bits). 317.7 MB instead of 249.5.
Q8_BLOCK_SIZE = 128
# The split table: the first SPLIT_FIRST_ROWS ids (and their variants, below) keep 8-bit rows, the rest are read
# from the lean head's 4-bit copy at blocks of SPLIT_COLD_BLOCK. On the 200 held-out rows of the README the
# bundled caller scores the same (94.0 %, 199 of 200 answers identical) at 243.8 MB instead of 385.9; with blocks
# of 128 and 16,384 first rows it lost 2 rows (93.0 %), and 8,192 rows at blocks of 32 cost ~50 MB more memory.
SPLIT_FIRST_ROWS, SPLIT_COLD_BLOCK = 12288, 64


@dataclass
class ExportConfig:
    model: str = "default"            # default | base | DIR (see mobile_actions.caller.model)
    out: str = "out/onnx-q8"
    quant: str = "q8"                 # fp32 | int8 | int4 | mixed (4-bit table/head, 8-bit decoder) | q8 (all 8-bit blocks)
    block_size: int = BLOCK_SIZE      # int4/int8 block along the input dimension (mixed: fixed, see above)
    accuracy_level: int = 4           # MatMulNBits: 4 = int8 activations (fast AVX2 kernels), 0 = fp32
    layout: str | None = None         # prompt layout the model was trained with; None = from its marker
    opset: int = 18
    check: bool = True                # self-check (fp32: greedy tokens == PyTorch; int8/4: accuracy)
    check_tokens: int = 16            # new tokens per self-check prompt
    check_prompts: int = 4            # real-length prompts in the fp32 self-check
    eval_data: str | None = None      # JSONL rows for the accuracy check (default: synthetic held-out rows)
    eval_rows: int = 20
    keep_fp32: bool = False           # keep the intermediate fp32 export next to a quantised one
    lean_head: bool = True            # q8: the full head at 4 bits, its top rows rescored at 8 (add_lean_full_head)
    split_table: bool = True          # q8 with the lean head: 8-bit rows for common pieces only (split_table)
    split_first_rows: int = SPLIT_FIRST_ROWS   # the first ids that keep 8 bits (hot_rows), with their variants


@dataclass
class ExportResult:
    out: Path
    manifest: dict
    check: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------- wrapper
def _gqa_class():
    """`GroupQueryAttention.apply(...)`: onnxruntime's fused attention (com.microsoft) in the exported graph.

    One node per layer does rotary, the causal and sliding-window mask, softmax and the KV write. Why: the
    graph used to concatenate past and new keys into a fresh present every step (36 copies of the whole
    cache, ~3.5 ms of a ~27 ms step at 600 tokens) and ran ~20 nodes of attention per layer. Bound to one
    buffer for past and present (`runtime.onnx.KVCache`), the op writes the new keys in place. Sliding
    layers pass `local_window_size` = the window (keys with query - key < window, as Gemma 3's mask).
    The eager forward is the same maths (what tracing runs; present = past + new)."""
    import torch

    class GroupQueryAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, past_k, past_v, seqlens_k, total, cos, sin, position_ids, n_heads, n_kv,
                    scale, window):
            b, s, _ = q.shape
            d = q.shape[-1] // n_heads

            def rope(x, n):
                x = x.view(b, s, n, d).transpose(1, 2)
                c = torch.cat([cos[position_ids]] * 2, -1)[:, None]
                sn = torch.cat([sin[position_ids]] * 2, -1)[:, None]
                return x * c + torch.cat((-x[..., d // 2:], x[..., : d // 2]), -1) * sn

            q, k = rope(q, n_heads), rope(k, n_kv)
            v = v.view(b, s, n_kv, d).transpose(1, 2)
            k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
            kpos = torch.arange(k.shape[2])
            keep = kpos[None, None, :] <= position_ids[:, :, None]
            if window > 0:
                keep = keep & (position_ids[:, :, None] - kpos[None, None, :] < window)
            g = n_heads // n_kv
            scores = q.reshape(b, n_kv, g, s, d) @ k[:, :, None].transpose(-1, -2) * scale
            scores = scores.masked_fill(~keep[:, None, None], float("-inf"))
            o = torch.softmax(scores, -1) @ v[:, :, None]
            return o.reshape(b, n_heads, s, d).transpose(1, 2).reshape(b, s, -1), k, v

        @staticmethod
        def symbolic(g, q, k, v, past_k, past_v, seqlens_k, total, cos, sin, position_ids, n_heads, n_kv,
                     scale, window):
            outs = g.op("com.microsoft::GroupQueryAttention", q, k, v, past_k, past_v, seqlens_k, total, cos,
                        sin, position_ids, num_heads_i=n_heads, kv_num_heads_i=n_kv, scale_f=scale,
                        local_window_size_i=window, do_rotary_i=1, rotary_interleaved_i=0, outputs=3)
            for out, like in zip(outs, (q, past_k, past_v)):   # the exporter has no shape inference for it
                out.setType(like.type())
            return outs

    return GroupQueryAttention


def _fast_gelu_class():
    """`FastGelu.apply(x)`: GELU's tanh approximation (Gemma's `gelu_pytorch_tanh`) as onnxruntime's one-node
    com.microsoft FastGelu, where the exporter writes ~8 elementwise nodes per layer."""
    import torch

    class FastGelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.nn.functional.gelu(x, approximate="tanh")

        @staticmethod
        def symbolic(g, x):
            y = g.op("com.microsoft::FastGelu", x)
            y.setType(x.type())
            return y

    return FastGelu


def build_wrapper(model):
    """nn.Module: (input_ids, attention_mask, position_ids, *past) -> (last logits, *present); its `states`
    gives every position's final state instead (what a classifier on the decoder reads, `export_asks`)."""
    import torch
    from torch import nn

    GroupQueryAttention = _gqa_class()
    FastGelu = _fast_gelu_class()

    class DecoderWithCache(nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm
            cfg = lm.config
            self.cfg = cfg
            self.n_layers = cfg.num_hidden_layers
            self.n_heads = cfg.num_attention_heads
            self.n_kv = cfg.num_key_value_heads
            self.head_dim = cfg.head_dim
            self.window = cfg.sliding_window
            self.layer_types = list(cfg.layer_types)
            self.scaling = cfg.query_pre_attn_scalar ** -0.5
            self.softcap = getattr(cfg, "final_logit_softcapping", None)

        def mlp(self, mlp, x):
            if self.cfg.hidden_activation != "gelu_pytorch_tanh":
                return mlp(x)
            return mlp.down_proj(FastGelu.apply(mlp.gate_proj(x)) * mlp.up_proj(x))

        def forward(self, input_ids, attention_mask, position_ids, *past):
            h, presents = self.states(input_ids, attention_mask, position_ids, *past)
            h = self.lm.model.norm(h[:, -1:, :])
            logits = self.lm.lm_head(h)
            if self.softcap:
                logits = torch.tanh(logits / self.softcap) * self.softcap
            return (logits, *presents)

        def states(self, input_ids, attention_mask, position_ids, *past):
            """Every position's state after the last layer (before the final norm), and the layers' presents."""
            m = self.lm.model
            h = m.embed_tokens(input_ids)
            b, s = input_ids.shape
            # GroupQueryAttention's lengths: keys before this chunk + its own, per batch row and in all
            seqlens_k = (attention_mask.sum(-1) - 1).to(torch.int32)
            total = torch._shape_as_tensor(attention_mask)[1].to(torch.int32)
            rope = {t: _rotary_rows(m.rotary_emb, h, position_ids, t, attention_mask) for t in set(self.layer_types)}
            presents = []
            for i, layer in enumerate(m.layers[: self.n_layers]):
                kind = self.layer_types[i]
                res = h
                x = layer.input_layernorm(h)
                att = layer.self_attn
                q = att.q_norm(att.q_proj(x).view(b, s, self.n_heads, self.head_dim)).reshape(b, s, -1)
                k = att.k_norm(att.k_proj(x).view(b, s, self.n_kv, self.head_dim)).reshape(b, s, -1)
                v = att.v_proj(x)
                window = self.window if kind == "sliding_attention" else -1
                o, pk, pv = GroupQueryAttention.apply(q, k, v, past[2 * i], past[2 * i + 1], seqlens_k, total,
                                                      *rope[kind], position_ids, self.n_heads, self.n_kv,
                                                      self.scaling, window)
                presents += [pk, pv]
                x = layer.post_attention_layernorm(att.o_proj(o))
                h = res + x
                res = h
                x = layer.post_feedforward_layernorm(self.mlp(layer.mlp, layer.pre_feedforward_layernorm(h)))
                h = res + x
            return h, presents

    def _rotary_rows(rotary_emb, h, position_ids, kind, attention_mask):
        """GroupQueryAttention's rotary tables ([total, head_dim / 2], indexed by position id) with only the
        rows of this chunk's positions filled: the model's own cos/sin for them, zeros elsewhere. A full
        table would be stored in the file (8 MB for 4,096 positions, and a length limit) or recomputed every
        step for every position; these rows are the only ones the op reads."""
        cos, sin = rotary_emb(h, position_ids, kind)                         # [B, S, D] (halves repeated)
        half = cos.shape[-1] // 2
        idx = position_ids.reshape(-1, 1).expand(-1, half)
        table = torch.zeros_like(attention_mask[0], dtype=cos.dtype)[:, None].expand(-1, half)   # [total, half]
        return (table.scatter(0, idx, cos[..., :half].reshape(-1, half)),
                table.scatter(0, idx, sin[..., :half].reshape(-1, half)))

    return DecoderWithCache(model).eval()


PAST_NAME, PRESENT_NAME = "past_key_values.{i}.{kv}", "present.{i}.{kv}"   # onnxruntime-genai's defaults


def io_names(n_layers: int) -> tuple[list[str], list[str]]:
    """Graph input and output names, in order (the KV pairs as k0, v0, k1, v1, ...)."""
    past = [PAST_NAME.format(i=i, kv=kv) for i in range(n_layers) for kv in ("key", "value")]
    present = [PRESENT_NAME.format(i=i, kv=kv) for i in range(n_layers) for kv in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids", *past], ["logits", *present]


def export_fp32(model, path: Path, opset: int = 18) -> Path:
    """Legacy (TorchScript) exporter: ~0.4 s for the tiny model, seconds for 270M; dynamo is slower."""
    import torch

    wrapper = build_wrapper(model)
    cfg = model.config
    n = cfg.num_hidden_layers
    b, s, p = 1, 3, 2
    ids = torch.randint(0, cfg.vocab_size, (b, s))
    mask = torch.ones(b, p + s, dtype=torch.long)
    pos = torch.arange(p, p + s)[None]
    past = [torch.zeros(b, cfg.num_key_value_heads, p, cfg.head_dim) for _ in range(2 * n)]
    inputs, outputs = io_names(n)
    axes: dict[str, dict[int, str]] = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                                       "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch"}}
    for name in inputs[3:]:
        axes[name] = {0: "batch", 2: "past"}
    for name in outputs[1:]:
        axes[name] = {0: "batch", 2: "total"}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".raw.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, (ids, mask, pos, *past), str(tmp), dynamo=False, opset_version=opset,
                          input_names=inputs, output_names=outputs, dynamic_axes=axes, do_constant_folding=True,
                          custom_opsets={"com.microsoft": 1})
    model = _load(tmp)
    fix_logits_shape(model, cfg.vocab_size)
    _save(model, path)
    for f in tmp.parent.glob(tmp.name + "*"):
        f.unlink()
    return path


def fix_logits_shape(model, vocab: int) -> None:
    """Declare `logits` as [batch, 1, vocab]: the constant 1 is what tells onnxruntime-genai that only the
    last position comes out (it then allocates [batch, 1, vocab] for a prefill of S tokens too)."""
    out = next(o for o in model.graph.output if o.name == "logits")
    dims = out.type.tensor_type.shape.dim
    del dims[:]
    for d in ("batch", 1, vocab):
        dim = dims.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = d


def _load(path: Path, external_data: bool = True):
    import onnx

    return onnx.load(str(path), load_external_data=external_data)


def _save(model, path: Path) -> None:
    """Always external data: models over 2 GB cannot be one protobuf, and one shape is simpler."""
    import onnx

    data = path.name + ".data"
    for f in (path, path.parent / data):
        if f.exists():
            f.unlink()
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)


# ---------------------------------------------------------------------------------------------- quantise
_PROJECTION = re.compile(r"^/(?:mlp/)?(?:q|k|v|o|gate|up|down)_proj(?:_(\d+))?/MatMul$")


def layer_projections(model, layers: Sequence[int] | None = None) -> list[str]:
    """Names of the 7 weight MatMuls (q, k, v, o, gate, up, down) of each given decoder layer (None: all).

    torch.onnx names a module's nodes `/q_proj/MatMul` for its first instance and `/q_proj_N/MatMul`
    for the (N+1)-th, so the suffix is the layer index in our wrapper's graph."""
    found: dict[int, list[str]] = {}
    for node in model.graph.node:
        m = _PROJECTION.match(node.name) if node.op_type == "MatMul" else None
        if m:
            found.setdefault(int(m.group(1) or 0), []).append(node.name)
    n = max(found, default=-1) + 1
    if layers is None and not n:
        raise ValueError("no decoder layer projections found (node names like /q_proj_N/MatMul): "
                         "the exporter's naming changed?")
    layers = range(n) if layers is None else [k + n if k < 0 else k for k in layers]
    bad = [k for k in layers if len(found.get(k, [])) != 7]
    if bad:
        raise ValueError(f"decoder layer(s) {bad} not found (the graph has layers 0-{n - 1})")
    return [name for k in layers for name in found[k]]


def quantize(fp32: Path, out: Path, quant: str, *, block_size: int = BLOCK_SIZE, accuracy_level: int = 4,
             tied: bool = False, int8_layers: Sequence[int] | None = (), int8_block_size: int | None = None) -> Path:
    """fp32 ONNX -> int8/int4/mixed/q8 ONNX with onnxruntime's quantisation tools.

    `tied`: the model ties its embedding and output head; int4 then stores the 4-bit table once.
    `int8_layers` (int4): these decoder layers' projections (None: all) get 8-bit MatMulNBits blocks of
    `int8_block_size`, in a second quantiser pass over the MatMuls the first one left out. `mixed` is
    int4 with every layer so, at MIXED_BLOCK_SIZE / MIXED_INT8_BLOCK_SIZE.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import (DefaultWeightOnlyQuantConfig,
                                                                 MatMulNBitsQuantizer)
    from onnxruntime.quantization.quant_utils import QuantFormat

    import logging

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    if quant == "mixed":
        quant, int8_layers, block_size, int8_block_size = "int4", None, MIXED_BLOCK_SIZE, MIXED_INT8_BLOCK_SIZE
    if quant == "q8":
        model = _load(fp32)
        strip_sparse_head(model)
        n_proj = len(layer_projections(model, None))
        cfg8 = DefaultWeightOnlyQuantConfig(block_size=q8_block_size(model), is_symmetric=True, accuracy_level=accuracy_level,
                                            quant_format=QuantFormat.QOperator, op_types_to_quantize=("MatMul",),
                                            quant_axes=(("MatMul", 0),), bits=8)
        q = MatMulNBitsQuantizer(model, algo_config=cfg8)   # MatMuls with a constant weight: projections + head
        q.process()
        model = q.model.model
        eight = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
        if len(eight) != n_proj + 1 or sum("lm_head" in n.name for n in eight) != 1:
            raise RuntimeError(f"q8: expected {n_proj} projections + the head as 8-bit blocks, got {len(eight)}")
        if tied and not share_tied_embedding(model):
            raise RuntimeError("q8: could not point the embedding at the head's 8-bit table")
        _save(model, out)
        return out
    if quant == "int4":
        cfg = DefaultWeightOnlyQuantConfig(block_size=block_size, is_symmetric=True, accuracy_level=accuracy_level,
                                           quant_format=QuantFormat.QOperator, op_types_to_quantize=("MatMul", "Gather"),
                                           quant_axes=(("MatMul", 0), ("Gather", 1)), bits=4)
        model = _load(fp32)
        strip_sparse_head(model)
        keep = layer_projections(model, int8_layers)
        q = MatMulNBitsQuantizer(model, algo_config=cfg, nodes_to_exclude=keep)
        q.process()
        model = q.model.model
        if keep:
            # The quantiser ORs `nodes_to_include` with the op types, so the other MatMuls left (attention's
            # activation products: no constant weight) are excluded by name, and the result is checked.
            others = [n.name for n in model.graph.node if n.op_type == "MatMul" and n.name not in keep]
            cfg8 = DefaultWeightOnlyQuantConfig(block_size=int8_block_size or block_size, is_symmetric=True,
                                                accuracy_level=accuracy_level, quant_format=QuantFormat.QOperator,
                                                op_types_to_quantize=("MatMul",), quant_axes=(("MatMul", 0),), bits=8)
            q = MatMulNBitsQuantizer(model, algo_config=cfg8, nodes_to_exclude=others)
            q.process()
            model = q.model.model
            eight = sum(1 for n in model.graph.node if n.op_type == "MatMulNBits"
                        and any(a.name == "bits" and a.i == 8 for a in n.attribute))
            if eight != len(keep):
                raise RuntimeError(f"expected {len(keep)} 8-bit projections, the quantiser wrote {eight}")
        if tied:
            share_tied_embedding(model)
        _save(model, out)
        return out
    if quant == "int8":
        # Step 1: int8 weights + dynamically quantised activations for every MatMul (incl. the head).
        mid = out.with_name("int8-mid.onnx")
        plain = _load(fp32)
        if strip_sparse_head(plain):
            fp32 = out.with_name("int8-plain.onnx")
            _save(plain, fp32)
        del plain
        quantize_dynamic(str(fp32), str(mid), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"], use_external_data_format=True,
                         extra_options={"MatMulConstBOnly": True})
        # Step 2: the embedding table (the largest tensor) as 8-bit blocks; quantize_dynamic leaves it fp32
        # and MatMulNBitsQuantizer only writes 4-bit GatherBlockQuantized.
        model = _load(mid)
        quantize_embedding_int8(model, block_size)
        _save(model, out)
        for f in [*mid.parent.glob(mid.name + "*"), *mid.parent.glob("int8-plain.onnx*")]:
            f.unlink()
        return out
    raise ValueError(f"quant must be one of {QUANTS}, got {quant!r}")


def q8_block_size(model) -> int:
    """Q8_BLOCK_SIZE, or the largest power of two below it that divides the hidden size (the tiny test model's
    64): the shared table and the sparse head gather whole blocks of one row (640 = 5 x 128 for Gemma 3 270M)."""
    hidden = next(t.dims[1] for t in model.graph.initializer for n in model.graph.node
                  if n.op_type == "Gather" and "input_ids" in n.input and n.input[0] == t.name)
    bs = Q8_BLOCK_SIZE
    while hidden % bs and bs > 16:
        bs //= 2
    return bs


def share_tied_embedding(model) -> bool:
    """Let the embedding read the output head's MatMulNBits weights (tied embeddings): one table.

    The quantiser writes the 262,144 x 640 table twice (GatherBlockQuantized for the embedding,
    MatMulNBits for the head: ~105 MB each at 4 bits / block 32), or leaves the embedding's Gather fp32
    (671 MB) when it is not asked to quantise Gathers. The head's symmetric blocks ([N, K/bs, bs*bits/8]
    uint8; zero point 8 at 4 bits, 128 at 8 bits, the defaults of both ops) can be gathered as they are,
    with the head's scales viewed as [N, K/bs, 1], so the embedding's Gather (fp32 or 4-bit) becomes a
    `GatherBlockQuantized` over the head's weights at the head's bits and block size (the test checks the
    logits). The file and the session keep one copy of the table.
    """
    import numpy as np
    from onnx import helper, numpy_helper

    g = model.graph
    inits = {t.name: t for t in g.initializer}
    gathers = [n for n in g.node if n.op_type in ("Gather", "GatherBlockQuantized") and n.input[0] in inits
               and "input_ids" in n.input]
    if len(gathers) != 1:
        return False
    gbq = gathers[0]
    vocab = inits[gbq.input[0]].dims[0]
    for mm in g.node:
        if mm.op_type != "MatMulNBits" or len(mm.input) != 3:
            continue
        at = {a.name: helper.get_attribute_value(a) for a in mm.attribute}
        bits, bs, hidden = at.get("bits", 4), at.get("block_size"), at.get("K")
        if at.get("N") != vocab or bits not in (4, 8) or not bs or hidden % bs:
            continue
        # Gather straight from the packed [N, K/bs, bs*bits/8] weights (one block per row of the last axis),
        # so no reshaped copy of the table is ever made; only the scales get a [N, K/bs, 1] view.
        g.initializer.extend([
            numpy_helper.from_array(np.array([vocab, hidden // bs, 1], dtype=np.int64), "shared_embedding_scale_shape"),
            numpy_helper.from_array(np.array([0, 0, hidden], dtype=np.int64), "shared_embedding_out_shape")])
        g.node.insert(0, helper.make_node("Reshape", [mm.input[2], "shared_embedding_scale_shape"],
                                          ["shared_embedding_scales"], name="shared_embedding_scales_reshape"))
        new = helper.make_node("GatherBlockQuantized", [mm.input[1], gbq.input[1], "shared_embedding_scales"],
                               ["shared_embedding_blocks"], name=(gbq.name or "embed") + "_shared",
                               domain="com.microsoft", gather_axis=0, quantize_axis=2, block_size=bs, bits=bits)
        flat = helper.make_node("Reshape", ["shared_embedding_blocks", "shared_embedding_out_shape"], list(gbq.output),
                                name="shared_embedding_flatten")
        idx = list(g.node).index(gbq)
        g.node.remove(gbq)
        g.node.insert(idx, new)
        g.node.insert(idx + 1, flat)
        used = {i for n in g.node for i in n.input}
        for name in gbq.input[0], *(gbq.input[2:]):
            if name in inits and name not in used:
                g.initializer.remove(inits[name])
        if not any(o.domain == "com.microsoft" for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        return True
    return False


# ---------------------------------------------------------------------------------------------- sparse head


def add_sparse_head(model) -> dict | None:
    """Let the graph compute logits for a few vocabulary rows instead of all 262,144.

    Why an input and an `If`, not an extra `hidden` output: onnxruntime runs every node of a graph
    whatever outputs are fetched (measured: the full head costs the same with only another output fetched),
    and a second graph for the head would store the tied table twice (+84 MB at 4 bits). Here the head
    becomes `If(Size(head_ids) > 0)`: the else branch is the original head (what no rows select, and what
    onnxruntime-genai, which never feeds `head_ids`, always runs: `write_genai_graph`); the then branch gathers the head's own weight rows for `head_ids`
    (the 4-bit blocks dequantised by `GatherBlockQuantized`, or fp32 columns) and multiplies the hidden state
    by them: `logits` [batch, 1, len(head_ids)], in `head_ids` order (4- or 8-bit heads; the zero points are
    the ops' common defaults, 8 and 128). For a head with int8 activations
    (MatMulNBits accuracy_level 4) the hidden state is quantised in the same blocks first (scale = amax/127,
    round half to even, as MLAS does), so the sparse logits equal the full head's rows up to float rounding
    and the greedy choice among them is the same (tests/test_runtime_sparse.py).
    Returns what the manifest records, or None when the head is of a kind this does not handle (int8's
    `MatMulInteger`, asymmetric or fp16-activation heads); the runtime then always uses the full head.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    strip_sparse_head(model)  # idempotent: a graph that has one gets a fresh one
    g = model.graph
    prod = {o: n for n in g.node for o in n.output}
    inits = {t.name: t for t in g.initializer}
    chain, node = [], prod.get("logits")
    while node is not None and node.op_type not in ("MatMul", "MatMulNBits"):
        chain.append(node)                                   # e.g. a logit soft-cap (Div, Tanh, Mul)
        node = prod.get(node.input[0])
    head = node
    if head is None:
        return None
    chain = [head] + chain[::-1]
    hidden = head.input[0]

    def const(name: str, arr) -> str:
        g.initializer.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    then: list = []
    info: dict = {"input": SPARSE_INPUT, "max_rows": SPARSE_MAX_ROWS}
    if head.op_type == "MatMul" and head.input[1] in inits and len(inits[head.input[1]].dims) == 2:
        then += [helper.make_node("Gather", [head.input[1], SPARSE_INPUT], ["sparse_head_w"], axis=1),
                 helper.make_node("MatMul", [hidden, "sparse_head_w"], ["sparse_head_out"])]
        info.update(weights="fp32 columns of the head", activations="fp32")
    elif head.op_type == "MatMulNBits":
        at = {a.name: helper.get_attribute_value(a) for a in head.attribute}
        bits, bs, k, n, acc = at.get("bits", 4), at["block_size"], at["K"], at["N"], at.get("accuracy_level", 0)
        if bits not in (4, 8) or len([i for i in head.input if i]) != 3 or acc not in (0, 1, 4) or k % bs:
            return None
        scales = head.input[2]
        shared = next((x for x in g.node if x.op_type == "Reshape" and x.input[0] == scales
                       and x.output[0] == "shared_embedding_scales"), None)
        if shared is None:  # the tied table's [N, K/bs, 1] view of the scales (share_tied_embedding makes one)
            g.node.insert(0, helper.make_node("Reshape", [scales, const("sparse_head_scale_shape", np.array(
                [n, k // bs, 1], np.int64))], ["sparse_head_scales"], name="sparse_head_scales_reshape"))
        scales3 = shared.output[0] if shared is not None else "sparse_head_scales"
        x = hidden
        if acc == 4:  # int8 activations in blocks of `bs` along K, as MatMulNBits computes them
            then += [
                helper.make_node("Reshape", [hidden, const("sparse_head_xblocks", np.array([0, 0, k // bs, bs], np.int64))],
                                 ["sparse_head_xb"]),
                helper.make_node("Abs", ["sparse_head_xb"], ["sparse_head_xabs"]),
                helper.make_node("ReduceMax", ["sparse_head_xabs", const("sparse_head_last_axis", np.array([-1], np.int64))],
                                 ["sparse_head_amax"], keepdims=1),
                helper.make_node("Div", ["sparse_head_amax", const("sparse_head_127", np.array(127.0, np.float32))],
                                 ["sparse_head_xscale"]),
                helper.make_node("Div", ["sparse_head_127", "sparse_head_amax"], ["sparse_head_xinv_raw"]),
                helper.make_node("Equal", ["sparse_head_amax", const("sparse_head_zero", np.array(0.0, np.float32))],
                                 ["sparse_head_xzero"]),
                helper.make_node("Where", ["sparse_head_xzero", "sparse_head_zero", "sparse_head_xinv_raw"],
                                 ["sparse_head_xinv"]),
                helper.make_node("Mul", ["sparse_head_xb", "sparse_head_xinv"], ["sparse_head_xs"]),
                helper.make_node("Round", ["sparse_head_xs"], ["sparse_head_xq"]),
                helper.make_node("Mul", ["sparse_head_xq", "sparse_head_xscale"], ["sparse_head_xdq"]),
                helper.make_node("Reshape", ["sparse_head_xdq", const("sparse_head_xflat", np.array([0, 0, k], np.int64))],
                                 ["sparse_head_x"])]
            x = "sparse_head_x"
        then += [
            helper.make_node("GatherBlockQuantized", [head.input[1], SPARSE_INPUT, scales3], ["sparse_head_blocks"],
                             domain="com.microsoft", gather_axis=0, quantize_axis=2, block_size=bs, bits=bits),
            helper.make_node("Reshape", ["sparse_head_blocks", const("sparse_head_rows_shape", np.array([-1, k], np.int64))],
                             ["sparse_head_rows"]),
            helper.make_node("Transpose", ["sparse_head_rows"], ["sparse_head_w"], perm=[1, 0]),
            helper.make_node("MatMul", [x, "sparse_head_w"], ["sparse_head_out"])]
        info.update(weights=f"the head's {bits}-bit rows (GatherBlockQuantized, block {bs})",
                    activations=f"int8 blocks of {bs} (as MatMulNBits accuracy_level 4)" if acc == 4 else "fp32")
    else:
        return None
    # The post-head chain (if any) runs in both branches on that branch's logits.
    def branch(nodes: list, first_in: str, tag: str) -> tuple[list, str]:
        out, cur = [], first_in
        for i, node in enumerate(chain[1:]):
            new = helper.make_node(node.op_type, [cur if j == 0 else v for j, v in enumerate(node.input)],
                                   [f"{tag}_logits_{i}"], name=f"{tag}_{node.name}", domain=node.domain)
            new.attribute.extend(node.attribute)
            out.append(new)
            cur = new.output[0]
        return nodes + out, cur

    full_head = helper.make_node(head.op_type, list(head.input), ["full_head_out"], name=head.name, domain=head.domain)
    full_head.attribute.extend(head.attribute)
    else_nodes, else_out = branch([full_head], "full_head_out", "full")
    then_nodes, then_out = branch(then, "sparse_head_out", "sparse")
    for node in chain:
        g.node.remove(node)
    out_info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, None)  # noqa: E731
    g.node.extend([
        helper.make_node("Size", [SPARSE_INPUT], ["sparse_head_count"]),
        helper.make_node("Greater", ["sparse_head_count", const("sparse_head_zero_i", np.array(0, np.int64))],
                         ["sparse_head_on"]),
        helper.make_node("If", ["sparse_head_on"], ["logits"], name="sparse_head_if",
                         then_branch=helper.make_graph(then_nodes, "sparse_head", [], [out_info(then_out)]),
                         else_branch=helper.make_graph(else_nodes, "full_head", [], [out_info(else_out)]))])
    # A required input (no rows: the full head); the graph for onnxruntime-genai gives it that default
    # (`write_genai_graph`).
    g.input.append(helper.make_tensor_value_info(SPARSE_INPUT, TensorProto.INT64, ["head_rows"]))
    out = next(o for o in g.output if o.name == "logits")
    dim = out.type.tensor_type.shape.dim[2]
    dim.Clear()
    dim.dim_param = "vocab_or_head_rows"
    if not any(o.domain == "com.microsoft" for o in model.opset_import) and head.op_type == "MatMulNBits":
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return info


def strip_sparse_head(model) -> bool:
    """Undo `add_sparse_head` (the full head back in the main graph), e.g. before quantising an fp32 export:
    the quantisers would otherwise quantise the branches' copies. True if there was one."""
    from onnx import helper

    g = model.graph
    node = next((n for n in g.node if n.op_type == "If" and n.name == "sparse_head_if"), None)
    if node is None:
        return False
    els = next(a.g for a in node.attribute if a.name == "else_branch")
    if any(n.name == "lean_head" for n in els.node):
        raise ValueError("this graph's full head is the lean 4-bit copy (add_lean_full_head); re-export from fp32")
    out = els.output[0].name
    idx = list(g.node).index(node)
    g.node.remove(node)
    for i, sub in enumerate(els.node):
        new = helper.make_node(sub.op_type, list(sub.input), ["logits" if o == out else o for o in sub.output],
                               name=sub.name, domain=sub.domain)
        new.attribute.extend(sub.attribute)
        g.node.insert(idx + i, new)
    for n in [n for n in g.node if any(o.startswith("sparse_head_") for o in n.output)]:
        g.node.remove(n)
    for t in [t for t in g.initializer if t.name.startswith("sparse_head_") or t.name == SPARSE_INPUT]:
        g.initializer.remove(t)
    for i in [i for i in g.input if i.name == SPARSE_INPUT]:
        g.input.remove(i)
    return True


LEAN_HEAD_BITS, LEAN_HEAD_BLOCK, LEAN_HEAD_TOP = 4, 128, 64


def add_lean_full_head(model, bits: int = LEAN_HEAD_BITS, block_size: int = LEAN_HEAD_BLOCK,
                       top: int = LEAN_HEAD_TOP) -> dict | None:
    """Run the full head (the sparse head's else branch) at 4 bits and rescore its `top` rows at 8 bits.

    Why: onnxruntime prepacks every MatMulNBits weight into a copy of its own, so an 8-bit head costs a
    ~173 MB copy resident for the whole process (and as much again read while prepacking), while the
    8-bit table itself is only gathered from (the embedding, the sparse head). A 4-bit copy of the head
    for the full-vocabulary steps halves that; its precision loss (mixed's 4-bit head cost accuracy) is
    taken back by recomputing the `top` highest 4-bit logits from the 8-bit rows (`GatherBlockQuantized`,
    as the sparse head does) and putting them in place (`ScatterElements`). The greedy choice is then the
    8-bit head's unless the 8-bit argmax is outside the 4-bit top rows (the test checks a real prompt).
    The file grows by the 4-bit table (~89 MB at block 128). Needs the sparse head over an 8-bit
    MatMulNBits head (the `q8` export). Batch 1 (the runtime's and onnxruntime-genai's). Returns what the
    manifest records, or None when the graph is not such a head."""
    import numpy as np
    from onnx import helper, numpy_helper
    from onnxruntime.quantization.matmul_nbits_quantizer import (DefaultWeightOnlyQuantConfig,
                                                                 DefaultWeightOnlyQuantizer)
    from onnxruntime.quantization.quant_utils import QuantFormat

    g = model.graph
    node = next((n for n in g.node if n.op_type == "If" and n.name == "sparse_head_if"), None)
    if node is None:
        return None
    then = next(a.g for a in node.attribute if a.name == "then_branch")
    els = next(a.g for a in node.attribute if a.name == "else_branch")
    head = els.node[0]
    at = {a.name: helper.get_attribute_value(a) for a in head.attribute}
    if head.op_type != "MatMulNBits" or at.get("bits") != 8 or len([i for i in head.input if i]) != 3:
        return None
    n, k, bs8 = at["N"], at["K"], at["block_size"]
    while k % block_size and block_size > 16:   # whole blocks per row (the tiny test model's hidden size is 64)
        block_size //= 2
    inits = {t.name: t for t in g.initializer}
    table = numpy_helper.to_array(inits[head.input[1]]).reshape(n, k // bs8, bs8)
    scales = numpy_helper.to_array(inits[head.input[2]]).reshape(n, k // bs8, 1)
    weight = np.ascontiguousarray(((table.astype(np.float32) - 128.0) * scales).reshape(n, k).T)   # [K, N]
    del table
    cfg = DefaultWeightOnlyQuantConfig(block_size=block_size, is_symmetric=True, bits=bits,
                                       quant_format=QuantFormat.QOperator)
    packed, scales4, _ = DefaultWeightOnlyQuantizer(cfg).qbits_block_quant(weight)
    del weight
    g.initializer.extend([numpy_helper.from_array(packed, "lean_head_weight"),
                          numpy_helper.from_array(scales4.reshape(-1).astype(np.float32), "lean_head_scales"),
                          numpy_helper.from_array(np.array([top], np.int64), "lean_head_top"),
                          numpy_helper.from_array(np.array([-1], np.int64), "lean_head_flat")])
    lean = helper.make_node("MatMulNBits", [head.input[0], "lean_head_weight", "lean_head_scales"], ["lean_head_out4"],
                            name="lean_head", domain="com.microsoft", K=k, N=n, bits=bits, block_size=block_size,
                            accuracy_level=at.get("accuracy_level", 0))
    # the sparse branch's nodes up to its MatMul (not the post-head chain, which the else branch has after
    # this), again on the 4-bit head's top rows: outputs renamed, constants shared
    upto = next((i for i, x in enumerate(then.node) if "sparse_head_out" in x.output), None)
    if upto is None:
        return None
    rename = {o: o.replace("sparse_head_", "lean_head_rows_") for x in then.node[:upto + 1] for o in x.output}
    rename[SPARSE_INPUT] = "lean_head_ids"
    rows = []
    for j, x in enumerate(then.node[:upto + 1]):
        new = helper.make_node(x.op_type, [rename.get(i, i) for i in x.input], [rename[o] for o in x.output],
                               name=f"lean_head_rows_{j}", domain=x.domain)
        new.attribute.extend(x.attribute)
        rows.append(new)
    nodes = [lean,
             helper.make_node("TopK", ["lean_head_out4", "lean_head_top"], ["lean_head_topv", "lean_head_topi"], axis=-1),
             helper.make_node("Reshape", ["lean_head_topi", "lean_head_flat"], ["lean_head_ids"]),
             *rows,
             helper.make_node("ScatterElements", ["lean_head_out4", "lean_head_topi", rename["sparse_head_out"]],
                              [head.output[0]], axis=-1)]
    del els.node[0]
    for i, x in enumerate(nodes):
        els.node.insert(i, x)
    return {"bits": bits, "block_size": block_size, "rescored_rows": top,
            "why": "a 4-bit copy of the head for full-vocabulary steps; its top rows recomputed from the 8-bit table"}


def hot_rows(pieces: Sequence[str], encode: Callable[[str], list[int]], texts: Sequence[str] = (),
             first: int = SPLIT_FIRST_ROWS) -> "np.ndarray":
    """Which vocabulary rows keep 8 bits in the split table (a boolean mask over `pieces`, id -> piece).

    Why these: SentencePiece numbers its merged pieces by how common they were in training, so the first ids
    are the common words; the same word after a quote or at a value's start is another piece ("Dinner" beside
    "▁dinner"), so the case and space variants of those words come too; then every single character and
    punctuation piece of Latin-script text (digits, '@', '.', accents) and every piece of `texts` (the chat
    template, the catalogues: the prompt the model reads on every request). Names and rare words are cold:
    4-bit rows cost them a little precision, not their spelling (spans are copied under the grammar)."""
    import unicodedata

    import numpy as np

    def latin(s: str) -> bool:
        return all(c == "\u2581" or (ord(c) < 0x2100 and unicodedata.category(c)[0] in "LNPSZ") for c in s)

    hot = np.zeros(len(pieces), bool)
    hot[:first] = True
    index = {p: i for i, p in enumerate(pieces) if p}
    for i, piece in enumerate(pieces):
        word = piece.replace("\u2581", "")
        if not piece or not latin(piece):
            continue
        if len(word) <= 1 or all(unicodedata.category(c)[0] in "PSZ" for c in word):
            hot[i] = True
        elif i < first:
            for v in (word, word.capitalize(), word.lower(), word.upper(), "\u2581" + word.capitalize(),
                      "\u2581" + word.lower()):
                j = index.get(v)
                if j is not None:
                    hot[j] = True
    for text in texts:
        hot[[i for i in encode(text) if i < len(hot)]] = True
    return hot


def split_table(model, hot: "np.ndarray") -> dict | None:
    """Store the tied table's `hot` rows at 8 bits and read the others from the lean head's 4-bit copy.

    The q8 file holds the 262,144 x 640 table twice: at 8 bits (173 MB, gathered by the embedding and the
    sparse head) and at 4 bits (the lean full head). Here the 8-bit copy keeps only the hot rows; every
    `GatherBlockQuantized` over it becomes a gather from both copies and a `Where` on the row's
    hot index, with the same output, so nothing downstream changes. Needs `add_lean_full_head` first.
    Returns what the manifest records, or None when the graph has no lean head over an 8-bit table."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    g = model.graph

    def nodes(graph):
        for n in graph.node:
            yield graph, n
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from nodes(a.g)

    lean = next((n for _, n in nodes(g) if n.name == "lean_head"), None)
    if lean is None:
        return None
    inits = {t.name: t for t in g.initializer}
    prod = {o: n for _, n in nodes(g) for o in n.output}
    gathers = [(gr, n) for gr, n in nodes(g) if n.op_type == "GatherBlockQuantized" and n.input[0] in inits
               and helper.get_attribute_value(next(a for a in n.attribute if a.name == "bits")) == 8]
    if not gathers or len({n.input[0] for _, n in gathers}) != 1:
        return None
    table_name, scales_view = gathers[0][1].input[0], gathers[0][1].input[2]
    at = {a.name: helper.get_attribute_value(a) for a in lean.attribute}
    k, n_rows, bs4 = at["K"], at["N"], at["block_size"]
    table = numpy_helper.to_array(inits[table_name])                       # [N, K/bs8, bs8]
    bs8 = table.shape[2]
    scales = numpy_helper.to_array(inits[prod[scales_view].input[0]]).reshape(n_rows, k // bs8, 1)
    if len(hot) != n_rows:
        raise ValueError(f"split_table: {len(hot)} hot-row flags for a table of {n_rows} rows")
    ids = np.nonzero(hot)[0]
    where = np.full(n_rows, -1, np.int64)
    where[ids] = np.arange(len(ids))
    g.initializer.extend([
        numpy_helper.from_array(np.ascontiguousarray(table[ids]), "split_hot_table"),
        numpy_helper.from_array(np.ascontiguousarray(scales[ids]).astype(np.float32), "split_hot_scales"),
        numpy_helper.from_array(where, "split_hot_index"),
        numpy_helper.from_array(np.array(0, np.int64), "split_zero"),
        numpy_helper.from_array(np.array([-1], np.int64), "split_last_axis"),
        numpy_helper.from_array(np.array([n_rows, k // bs4, 1], np.int64), "split_cold_scale_shape")])
    del table, scales
    g.node.insert(0, helper.make_node("Reshape", [lean.input[2], "split_cold_scale_shape"], ["split_cold_scales"],
                                      name="split_cold_scales_reshape"))
    for j, (graph, node) in enumerate(gathers):
        t, rows, y = f"split{j}_", node.input[1], node.output[0]
        new = [helper.make_node("Gather", ["split_hot_index", rows], [t + "at"], axis=0),
               helper.make_node("Max", [t + "at", "split_zero"], [t + "at0"]),
               helper.make_node("GatherBlockQuantized", ["split_hot_table", t + "at0", "split_hot_scales"], [t + "hot"],
                                domain="com.microsoft", gather_axis=0, quantize_axis=2, block_size=bs8, bits=8),
               helper.make_node("GatherBlockQuantized", [lean.input[1], rows, "split_cold_scales"], [t + "cold"],
                                domain="com.microsoft", gather_axis=0, quantize_axis=2, block_size=bs4, bits=4),
               helper.make_node("Shape", [t + "hot"], [t + "shape"]),
               helper.make_node("Reshape", [t + "cold", t + "shape"], [t + "cold8"]),   # [.., K/bs4, bs4] -> bs8 blocks
               helper.make_node("GreaterOrEqual", [t + "at", "split_zero"], [t + "is"]),
               helper.make_node("Unsqueeze", [t + "is", "split_last_axis"], [t + "is1"]),
               helper.make_node("Unsqueeze", [t + "is1", "split_last_axis"], [t + "is2"]),
               helper.make_node("Where", [t + "is2", t + "hot", t + "cold8"], [y])]
        at_index = list(graph.node).index(node)
        graph.node.remove(node)
        for i, x in enumerate(new):
            graph.node.insert(at_index + i, x)
    used = {i for _, x in nodes(g) for i in x.input}
    for x in [x for x in g.node if x.op_type == "Reshape" and x.output[0] not in used]:
        g.node.remove(x)                                  # the 8-bit table's scale view
    used = {i for _, x in nodes(g) for i in x.input}
    for t in [t for t in g.initializer if t.name not in used]:
        g.initializer.remove(t)
    return {"hot_rows": int(len(ids)), "hot_bits": 8, "hot_block_size": int(bs8), "cold_bits": 4,
            "cold_block_size": int(bs4), "why": "8-bit rows for common pieces only; the rest from the lean head's 4-bit copy"}


def add_window_start(model) -> dict | None:
    """Let the sliding-window layers attend over their window of the past, not all of it.

    onnxruntime's CPU GroupQueryAttention masks the keys a window or more behind the query (`local_window_size`)
    but still computes them, so after a 12,000-position prefix every local layer did the work of a global one
    (a 63-token request 0.43 s, a step 47 ms, here). The keys' positions come from `position_ids` (rotary in the
    op), so the op only needs the buffer and how much of it is filled: a new input `window_start` (int32) is
    subtracted from the filled length (`seqlens_k`) and the total the local layers' ops get, and the runtime
    binds those layers' buffers from that position on (`Decoder.window_start`). The outputs are the same bit
    for bit (tests/test_runtime_window.py); the global layers are untouched. Returns what the manifest records,
    or None when the graph has no local layers (or already has the input)."""
    from onnx import TensorProto, helper

    g = model.graph
    if any(i.name == WINDOW_INPUT for i in g.input):
        return None
    local = [n for n in g.node if n.op_type == "GroupQueryAttention"
             and any(a.name == "local_window_size" and a.i > 0 for a in n.attribute)]
    if not local:
        return None
    seqlens, total = local[0].input[5], local[0].input[6]
    g.input.append(helper.make_tensor_value_info(WINDOW_INPUT, TensorProto.INT32, []))
    at = list(g.node).index(local[0])      # before the first op that reads them: the graph stays in order
    for node in reversed([helper.make_node("Sub", [seqlens, WINDOW_INPUT], ["window_seqlens_k"], name="window_seqlens_k"),
                          helper.make_node("Sub", [total, WINDOW_INPUT], ["window_total"], name="window_total")]):
        g.node.insert(at, node)
    for node in local:
        node.input[5], node.input[6] = "window_seqlens_k", "window_total"
    return {"input": WINDOW_INPUT, "layers": len(local),
            "why": "local layers' buffers bound from the window's start: they no longer compute masked keys"}


def finish_graph(path: Path, lean: bool = False, hot: "np.ndarray | None" = None) -> dict:
    """The runtime's own inputs on an exported file: `add_sparse_head`, then with `lean` `add_lean_full_head`,
    then with `hot` rows `split_table`, and `add_window_start`; what the manifest records of each (None: not
    added)."""
    model = _load(path)
    sparse = add_sparse_head(model)
    lean_info = split = None
    if sparse is not None and lean:
        lean_info = add_lean_full_head(model, block_size=SPLIT_COLD_BLOCK if hot is not None else LEAN_HEAD_BLOCK)
        split = split_table(model, hot) if lean_info is not None and hot is not None else None
    window = add_window_start(model)
    if sparse is not None or window is not None:
        _save(model, path)
    return {"sparse_head": sparse, "lean_full_head": lean_info, "split_table": split, "window_start": window}


GENAI_ONNX = "model.genai.onnx"


def write_genai_graph(path: Path) -> str | None:
    """With the runtime's own inputs (`head_ids`, `window_start`): a second graph file for onnxruntime-genai
    in which they have defaults (no rows: the full head; the window from position 0), since genai never feeds
    them; returns its name (None: `path` serves both).

    Why two graphs: the runtime hands the KV buffers to the graph through onnxruntime's IOBinding (written
    in place), and IOBinding cannot bind an input that has a default (an overridable initializer), so ours
    are required inputs. The two protobufs (~0.5 MB each) read the same weights file."""
    import onnx
    from onnx import numpy_helper

    import numpy as np

    model = _load(path, external_data=False)   # the weights stay where they are: both point at model.onnx.data
    defaults = {SPARSE_INPUT: np.zeros(0, np.int64), WINDOW_INPUT: np.array(0, np.int32)}
    present = [name for name in defaults if name in [i.name for i in model.graph.input]]
    if not present:
        return None
    model.graph.initializer.extend(numpy_helper.from_array(defaults[name], name) for name in present)
    onnx.save_model(model, str(path.with_name(GENAI_ONNX)))
    return GENAI_ONNX


def quantize_embedding_int8(model, block_size: int = 32) -> int:
    """Replace each Gather on a 2-D float initializer (the embedding table) by an 8-bit
    `GatherBlockQuantized` (symmetric blocks along the hidden axis, zero point 128). Returns how many."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    done = 0
    for idx, node in enumerate(list(model.graph.node)):
        if node.op_type != "Gather" or node.input[0] not in inits:
            continue
        w = numpy_helper.to_array(inits[node.input[0]])
        if w.ndim != 2 or w.dtype != np.float32 or w.shape[1] % block_size:
            continue
        blocks = w.reshape(w.shape[0], -1, block_size)
        scale = np.abs(blocks).max(-1) / 127.0
        scale[scale == 0] = 1.0
        q = (np.clip(np.rint(blocks / scale[..., None]), -127, 127) + 128).astype(np.uint8).reshape(w.shape)
        name = node.input[0]
        model.graph.initializer.extend([
            numpy_helper.from_array(q, name + "_Q8"),
            numpy_helper.from_array(scale.astype(np.float32), name + "_scales8"),
            numpy_helper.from_array(np.full(scale.shape, 128, dtype=np.uint8), name + "_zp8")])
        new = helper.make_node("GatherBlockQuantized", [name + "_Q8", node.input[1], name + "_scales8", name + "_zp8"],
                               [node.output[0]], name=(node.name or "embed") + "_Q8", domain="com.microsoft",
                               gather_axis=0, quantize_axis=1, block_size=block_size, bits=8)
        model.graph.node.remove(node)
        model.graph.node.insert(idx, new)
        done += 1
    used = {i for n in model.graph.node for i in n.input}
    for t in [t for t in model.graph.initializer if t.name not in used]:
        model.graph.initializer.remove(t)
    if done and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return done


# ---------------------------------------------------------------------------------------------- folder
def _sha256_files(files: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.name.encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def source_files(spec: str) -> tuple[list[Path], str | None]:
    """Weight files that define the exported model (base + adapter for `default`), and the layout its
    marker records (None when it says nothing)."""
    from mobile_actions.caller import model as mm

    resolved = Path(mm.resolve_model(spec))
    dirs = [resolved]
    if mm.is_adapter(resolved):
        dirs = [Path(mm.resolve_model(mm.adapter_base(resolved))), resolved]
    elif spec == "default" and (mm.BUNDLED_ADAPTER / "adapter_config.json").is_file():
        dirs.append(mm.BUNDLED_ADAPTER)
    files = [f for d in dirs for f in d.glob("*.safetensors")] + [f for d in dirs for f in d.glob("*.bin")]
    layout = None
    for d in reversed(dirs):
        marker = mm.read_marker(d)
        if marker.get("layout"):
            layout = marker["layout"]
            break
    return files, layout


def adapter_dir(spec: str) -> Path | None:
    """The LoRA adapter folder a spec includes (`default`: the bundled one), else None."""
    from mobile_actions.caller import model as mm

    if spec == "default":
        return mm.BUNDLED_ADAPTER if (mm.BUNDLED_ADAPTER / "adapter_config.json").is_file() else None
    resolved = Path(mm.resolve_model(spec))
    return resolved if mm.is_adapter(resolved) else None


def compact_tokenizer_file(path: Path) -> None:
    """Rewrite a tokenizer.json in its compact equivalent: BPE merges as "a b" strings (when no piece holds
    a space) and no indentation. Gemma's goes from 33 to 12 MB, and parsing it at load peaks at ~180 MB
    instead of ~370 MB (the pair lists cost the JSON parser most); the tokens it gives are the same."""
    data = json.loads(path.read_text(encoding="utf-8"))
    merges = (data.get("model") or {}).get("merges")
    if isinstance(merges, list) and merges and all(isinstance(m, list) and len(m) == 2 and " " not in m[0] + m[1]
                                                   for m in merges):
        data["model"]["merges"] = [f"{a} {b}" for a, b in merges]
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def write_runtime_files(out: Path, tokenizer, model_cfg, *, manifest: dict) -> dict:
    """tokenizer.json (+ tokenizer_config.json), chat template, token strings, genai_config.json and
    manifest.json next to model.onnx."""
    from mobile_actions import wire

    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    compact_tokenizer_file(out / "tokenizer.json")
    with tempfile.TemporaryDirectory() as tmp:  # tokenizer_config.json as transformers writes it (genai reads it)
        tokenizer.save_pretrained(tmp)
        for name in ("tokenizer_config.json", "special_tokens_map.json"):
            if (Path(tmp) / name).is_file():
                shutil.copy(Path(tmp) / name, out / name)
    template = getattr(tokenizer, "chat_template", None) or wire.CHAT_TEMPLATE
    (out / "chat_template.jinja").write_text(template, encoding="utf-8")
    eos = model_cfg.eos_token_id
    eos = list(eos) if isinstance(eos, (list, tuple)) else [eos]
    stop = sorted({*[e for e in eos if e is not None], tokenizer.convert_tokens_to_ids("<end_of_turn>"),
                   wire.CONTROL_TOKEN_IDS[wire.START_RESP]})
    manifest.update({
        "format_version": FORMAT_VERSION,
        "onnx": ONNX_NAME,
        "tokenizer": "tokenizer.json",
        "chat_template": "chat_template.jinja",
        "control_token_ids": wire.CONTROL_TOKEN_IDS,
        "stop_token_ids": stop,
        "bos_token_id": tokenizer.convert_tokens_to_ids("<bos>"),
        "eos_token_id": eos[0],
        "num_layers": model_cfg.num_hidden_layers,
        "num_kv_heads": model_cfg.num_key_value_heads,
        "head_dim": model_cfg.head_dim,
        "vocab_size": model_cfg.vocab_size,
        "sliding_window": model_cfg.sliding_window,
        "layer_types": list(model_cfg.layer_types),
    })
    (out / GENAI_CONFIG).write_text(json.dumps(genai_config(model_cfg, manifest), indent=2) + "\n", encoding="utf-8")
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    from mobile_actions.decoding.tokens import TokenTable
    from mobile_actions.runtime.pieces import build_piece_model

    TokenTable.from_folder(out)  # precompute the grammar's token strings once, cached in the folder
    build_piece_model(out / "tokenizer.json")   # the runtime's fast-loading copy of the tokenizer, checked
    return manifest


def copy_grounding(spec: str, out: Path) -> None:
    """The model's learned grounding policies travel with its export (the runtime reads them there)."""
    from mobile_actions.caller.evaluate import model_folder
    from mobile_actions.decoding.grounding import POLICY_FILE

    folder = model_folder(spec)
    if folder is not None and (folder / POLICY_FILE).is_file():
        shutil.copyfile(folder / POLICY_FILE, out / POLICY_FILE)


def genai_config(model_cfg, manifest: dict, max_length: int | None = None) -> dict:
    """onnxruntime-genai's `genai_config.json` for this folder: a plain decoder-only model (`gemma3_text`)
    with its standard I/O names, greedy search, every stop id as an end of sequence.

    The graph's GroupQueryAttention writes new keys into the past buffer when past and present are one
    buffer, so `past_present_share_buffer` is on (genai then allocates [batch, kv_heads, max_length,
    head_dim] once); the sliding window is the op's `local_window_size`, over all past KV, so genai keeps all
    of it (no `sliding_window`)."""
    ctx = int(getattr(model_cfg, "max_position_embeddings", 0) or 32768)
    return {
        "model": {
            "bos_token_id": manifest["bos_token_id"],
            "context_length": ctx,
            "decoder": {
                "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "filename": manifest.get("genai_onnx") or manifest.get("onnx", ONNX_NAME),
                "head_size": model_cfg.head_dim,
                "hidden_size": model_cfg.hidden_size,
                "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                           "position_ids": "position_ids",
                           "past_key_names": PAST_NAME.format(i="%d", kv="key"),
                           "past_value_names": PAST_NAME.format(i="%d", kv="value")},
                "outputs": {"logits": "logits",
                            "present_key_names": PRESENT_NAME.format(i="%d", kv="key"),
                            "present_value_names": PRESENT_NAME.format(i="%d", kv="value")},
                "num_attention_heads": model_cfg.num_attention_heads,
                "num_hidden_layers": model_cfg.num_hidden_layers,
                "num_key_value_heads": model_cfg.num_key_value_heads,
            },
            "eos_token_id": list(manifest["stop_token_ids"]),
            "pad_token_id": model_cfg.pad_token_id if model_cfg.pad_token_id is not None else manifest["eos_token_id"],
            "type": "gemma3_text",
            "vocab_size": model_cfg.vocab_size,
        },
        "search": {
            "diversity_penalty": 0.0, "do_sample": False, "early_stopping": True, "length_penalty": 1.0,
            "max_length": min(ctx, max_length or 4096), "min_length": 0, "no_repeat_ngram_size": 0, "num_beams": 1,
            "num_return_sequences": 1, "past_present_share_buffer": True, "repetition_penalty": 1.0,
            "temperature": 1.0, "top_k": 1, "top_p": 1.0,
        },
    }


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).iterdir() if f.is_file())


# ---------------------------------------------------------------------------------------------- checks
def check_prompts(tokenizer, layout: str, n: int = 4) -> list[list[int]]:
    """Real-length Mobile Actions prompts (7 tools, ~500-700 tokens on Gemma's tokenizer)."""
    from datetime import datetime

    from mobile_actions import wire
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.dataset import developer_message

    cat = load_catalogue("mobile_actions")
    requests = ["Turn on the flashlight please", "Email bob@example.com that I will be late for dinner",
                "Add Maria Lopez to my contacts, her number is 555 0199", "Show me the nearest pharmacy on the map",
                "Schedule dentist appointment tomorrow at 3pm", "Open the wifi settings"][:n]
    now = datetime(2025, 3, 14, 9, 26, 53)
    return [tokenizer.encode(wire.render([developer_message(now), {"role": "user", "content": r}], cat,
                                         add_generation_prompt=True, layout=layout), add_special_tokens=False)
            for r in requests]


def self_check_fp32(model, folder: Path, prompts: list[list[int]], n: int) -> dict:
    from mobile_actions.caller.greedy import greedy
    from mobile_actions.runtime import Decoder

    dec = Decoder.from_folder(folder)
    stop = dec.manifest["stop_token_ids"]
    rows = []
    for ids in prompts:
        d = greedy(model, ids, max_new_tokens=n, stop=stop)
        ref = d.tokens + ([d.stop] if d.stop is not None else [])
        got = dec.greedy(ids, n, stop)
        rows.append({"prompt_tokens": len(ids), "torch": ref, "onnx": got, "equal": ref == got})
    return {"kind": "greedy tokens vs PyTorch", "equal": all(r["equal"] for r in rows), "prompts": rows}


def accuracy_check(folders: dict[str, Path], data: str | None, rows: int,
                   max_new_tokens: int = MAX_CALL_TOKENS) -> dict:
    """Task accuracy (official exact match) of each exported folder on the same rows."""
    from mobile_actions.dataset import read_rows
    from mobile_actions.runtime import Caller
    from mobile_actions.scoring import exact_match

    if data:
        eval_rows = list(read_rows(Path(data)))[:rows]
        source = str(data)
    else:  # synthetic rows in held-out phrasing families (mobile_actions.datagen.generate), fixed seed
        from mobile_actions.catalog import load_catalogue
        from mobile_actions.dataset import parse_row
        from mobile_actions.datagen.generate import generate_rows

        eval_rows = [parse_row(r) for r in generate_rows(load_catalogue("mobile_actions"), rows, 1234,
                                                         families="heldout")]
        source = "mobile_actions.datagen.generate(heldout, seed 1234)"
    out: dict[str, Any] = {"data": source, "rows": len(eval_rows), "metric": "exact match %"}
    answers: dict[str, list] = {}      # per folder, its CallResult for each row
    for name, folder in folders.items():
        caller = Caller.from_pretrained(folder, max_new_tokens=max_new_tokens)
        answers[name] = [caller.call_messages(row.messages[:-1] if row.messages[-1].get("role") == "assistant"
                                              else row.messages, tools=row.tools) for row in eval_rows]
        out[name] = round(100 * sum(exact_match(r.calls, a.calls) for r, a in zip(eval_rows, answers[name]))
                          / max(1, len(eval_rows)), 2)
    if len(answers) == 2:   # the first folder is the reference (fp32), the second the quantised export
        ref, got = answers.values()
        out["agreement"] = round(100 * sum(x.calls == y.calls for x, y in zip(ref, got)) / max(1, len(ref)), 2)
        # Calls are forced by the grammar; free text is not, so a quantised model that tips over shows there first.
        out["garbled_texts"] = sum(garbled(y.text, x.text + " ".join(str(m.get("content") or "") for m in r.messages))
                                   for r, x, y in zip(eval_rows, ref, got))
    return out


TYPOGRAPHY = set("\u2018\u2019\u201c\u201d\u2026\u2013\u2014")


def garbled(text: str, source: str) -> bool:
    """Whether `text` holds a character that is not ASCII, not typographic punctuation and not in `source`
    (the reference export's answer and the conversation). Why: a quantised export whose model is in a thin-margin
    state wrote "Sorry, I can'" and then rare-script pieces, while every call stayed exact."""
    seen = set(source)
    return any(not ch.isascii() and ch not in TYPOGRAPHY and ch not in seen for ch in text)


# ---------------------------------------------------------------------------------------------- main
def run(cfg: ExportConfig, progress: Callable[[str], None] | None = None) -> ExportResult:
    """Export, quantise, write the folder, self-check; `progress` gets one line per stage."""
    import torch

    if cfg.quant not in QUANTS:
        raise ValueError(f"quant must be one of {QUANTS}, got {cfg.quant!r}")
    with torch.no_grad():  # scoped: a library must not switch off its caller's autograd
        return _run(cfg, progress or (lambda _m: None))


def _run(cfg: ExportConfig, say: Callable[[str], None]) -> ExportResult:
    import torch

    from mobile_actions.caller import model as mm

    t0 = time.time()
    from mobile_actions.caller.evaluate import model_marker

    step = lambda msg: say(f"[{time.time() - t0:5.0f} s] {msg}")  # noqa: E731
    step(f"loading {cfg.model} (PyTorch, fp32)")
    model, tokenizer = mm.load_model(cfg.model, dtype=torch.float32)
    model.eval()
    files, marker_layout = source_files(cfg.model)
    adapter = adapter_dir(cfg.model)
    layout = cfg.layout or marker_layout or "official"
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    try:
        fp32_dir = out if cfg.quant == "fp32" else work / "fp32"
        fp32_dir.mkdir(parents=True, exist_ok=True)
        step(f"exporting the fp32 graph (torch.onnx, opset {cfg.opset})")
        export_fp32(model, fp32_dir / ONNX_NAME, cfg.opset)
        base_manifest = {"source_model": cfg.model, "source_sha256": _sha256_files(files),
                         "source_files": [str(f) for f in files], "layout": layout,
                         "routes": bool(model_marker(cfg.model).get("routes")),
                         "exporter": f"torch.onnx.export (legacy) torch {torch.__version__}", "opset": cfg.opset}
        if adapter is not None:
            from mobile_actions.runtime.prepared import bundled_adapter_sha256

            base_manifest["adapter_sha256"] = bundled_adapter_sha256(adapter)
        if cfg.quant != "fp32":
            write_runtime_files(fp32_dir, tokenizer, model.config, manifest={**base_manifest, "quant": "fp32"})
            step(f"quantising ({cfg.quant}" + {"mixed": ": 4-bit embedding/head, 8-bit decoder layers",
                                               "q8": ": 8-bit blocks of 128, the head's table shared with the embedding"
                                               }.get(cfg.quant, "") + ")")
            quantize(fp32_dir / ONNX_NAME, out / ONNX_NAME, cfg.quant, block_size=cfg.block_size,
                     accuracy_level=cfg.accuracy_level, tied=bool(getattr(model.config, "tie_word_embeddings", False)))
        lean = cfg.quant == "q8" and cfg.lean_head
        hot = None
        if lean and cfg.split_table:
            from mobile_actions.catalog import CATALOGS_DIR

            from mobile_actions.wire import CHAT_TEMPLATE

            texts = [getattr(tokenizer, "chat_template", None) or CHAT_TEMPLATE,
                     *(p.read_text(encoding="utf-8") for p in sorted(CATALOGS_DIR.glob("*.json")))]
            vocab = int(model.config.vocab_size)
            pieces = [p or "" for p in tokenizer.convert_ids_to_tokens(list(range(min(vocab, len(tokenizer)))))]
            hot = hot_rows(pieces + [""] * (vocab - len(pieces)),
                           lambda text: tokenizer.encode(text, add_special_tokens=False), texts,
                           first=cfg.split_first_rows)
        step("adding the sparse head (logits for the grammar's few allowed rows)"
             + (" and the lean full head (4 bits, top rows rescored at 8)" if lean else "")
             + (f", keeping 8-bit rows for {int(hot.sum()):,} common pieces only" if hot is not None else "")
             + "; the local layers' window start")
        manifest = {**base_manifest, "quant": cfg.quant, **finish_graph(out / ONNX_NAME, lean, hot),
                    "genai_onnx": write_genai_graph(out / ONNX_NAME) or ONNX_NAME,
                    "quant_params": {} if cfg.quant == "fp32" else
                    {"block_size": {"mixed": MIXED_BLOCK_SIZE, "q8": q8_block_size(_load(fp32_dir / ONNX_NAME, False))
                                    if cfg.quant == "q8" else None}.get(cfg.quant, cfg.block_size),
                     "bits": 8 if cfg.quant in ("q8", "int8") else 4, "symmetric": True,
                     "accuracy_level": cfg.accuracy_level if cfg.quant in ("int4", "mixed", "q8") else None,
                     **({"int8_block_size": MIXED_INT8_BLOCK_SIZE, "int8": "decoder layer projections"}
                        if cfg.quant == "mixed" else {}),
                     "tool": "onnxruntime MatMulNBitsQuantizer" + (" + quantize_dynamic" if cfg.quant == "int8" else "")}}
        step("writing the tokenizer, token table, genai_config.json and manifest")
        write_runtime_files(out, tokenizer, model.config, manifest=manifest)
        if cfg.quant == "q8":
            from mobile_actions.recipes.export_prefill import add_prefill_graph

            step("adding the prefill graph (integer GEMM for long prompt prefixes)")
            manifest["prefill_graph"] = add_prefill_graph(out)
        copy_grounding(cfg.model, out)
        check: dict = {}
        if cfg.check:
            prompts = check_prompts(tokenizer, layout, cfg.check_prompts)
            if cfg.quant == "fp32":
                step(f"self-check: greedy tokens of ONNX vs PyTorch on {len(prompts)} prompts")
                check = self_check_fp32(model, out, prompts, cfg.check_tokens)
            else:
                step("self-check: fp32 greedy tokens of ONNX vs PyTorch on 2 prompts")
                check = {"fp32": self_check_fp32(model, fp32_dir, prompts[:2], cfg.check_tokens)}
                if cfg.eval_rows:   # a navigator's export has no Mobile Actions rows to be checked on
                    step(f"self-check: exact match of fp32 and {cfg.quant} on {cfg.eval_rows} held-out rows")
                    check["accuracy"] = accuracy_check({"fp32": fp32_dir, cfg.quant: out}, cfg.eval_data,
                                                       cfg.eval_rows)
        manifest["self_check"] = check
        manifest["export_seconds"] = round(time.time() - t0, 1)
        manifest["size_bytes"] = folder_size(out)
        (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if cfg.keep_fp32 and cfg.quant != "fp32":
            shutil.move(str(fp32_dir), str(out.parent / (out.name + "-fp32")))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    step(f"done: {out} ({manifest['size_bytes'] / 1e6:.1f} MB)")
    return ExportResult(out, manifest, check)


def check_problem(check: dict) -> str | None:
    """What a failed self-check found, in words (None: passed). It fails when the fp32 export's greedy tokens
    differ from PyTorch's, or when a quantised export garbles free text; the quantised export's accuracy is
    reported, not judged (the rows are few)."""
    if not (check.get("equal", True) and check.get("fp32", {}).get("equal", True)):
        return "ONNX fp32 greedy tokens != PyTorch"
    if check.get("accuracy", {}).get("garbled_texts"):
        return f"the quantised export garbled {check['accuracy']['garbled_texts']} free-text answer(s) the fp32 one wrote"
    return None


def check_ok(check: dict) -> bool:
    return check_problem(check) is None


def prepare_default(out: str | Path, *, force: bool = False, check: bool = True,
                    progress: Callable[[str], None] | None = None, adapter: Path | None = None,
                    integer_decode: bool = True) -> tuple[Path, bool]:
    """The bundled caller's default (`DEFAULT_QUANT`, q8) export at `out`, built once: (folder, built now?);
    with `adapter` (the bundled text navigator), that adapter's export. `integer_decode`: with the integer
    decode graph (recipes/export_prefill.py; measured on the callers' benchmarks, not the navigator's).

    Skipped when `out` already holds a current one (`runtime.prepared.stale_reason`: this export format,
    the default quant, the bundled adapter's sha256); `force` rebuilds. Built beside `out` and swapped in at the end,
    so an interrupted build never leaves a folder that looks prepared."""
    from mobile_actions.runtime.prepared import DEFAULT_QUANT, grounding_outdated, stale_reason

    say = progress or (lambda _m: None)
    out = Path(out)
    why = stale_reason(out, adapter=adapter)
    model = "default" if adapter is None else str(adapter)
    if why is None and not force:
        if not json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("prefill_graph"):
            from mobile_actions.recipes.export_prefill import add_prefill_graph

            add_prefill_graph(out)
            say(f"ONNX export: added the prefill graph to {out} (integer GEMM for long prompt prefixes)")
        _add_integer_decode(out, integer_decode, say)
        if grounding_outdated(out, adapter):
            copy_grounding(model, out)
            say(f"ONNX export: {out} is current; its grounding policies were refreshed from the bundled adapter")
        else:
            say(f"ONNX export: {out} is current (bundled adapter unchanged)")
        return out, False
    say(f"ONNX export: building {out} ({'--force' if why is None else why})")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    res = run(ExportConfig(model=model, out=str(tmp), quant=DEFAULT_QUANT, check=check,
                           eval_rows=0 if adapter is not None else ExportConfig.eval_rows), progress=say)
    if not check_ok(res.check):
        raise RuntimeError(f"the export's self-check failed ({check_problem(res.check)}); kept in {tmp}")
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    _add_integer_decode(out, integer_decode, say)
    return out, True


def _add_integer_decode(out: Path, wanted: bool, say: Callable[[str], None]) -> None:
    """The integer decode graph, once, for an export that should have it and has not, where the runtime will
    run it (`runtime.onnx.use_integer_decode`): elsewhere its ~2 min of calibration and 100 MB would buy nothing."""
    from mobile_actions.runtime.onnx import use_integer_decode

    if not wanted or not use_integer_decode() or \
            json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("integer_decode_graph"):
        return
    from mobile_actions.recipes.export_prefill import CALIBRATION_ROWS, add_integer_decode_graph

    say(f"ONNX export: calibrating {out} on {CALIBRATION_ROWS} requests for the integer decode graph (~2 min)")
    add_integer_decode_graph(out)
    say(f"ONNX export: added the integer decode graph to {out} (a request's tokens ~2x faster without VNNI)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = ExportConfig()
    p.add_argument("--model", default=d.model, help="default | base | checkpoint/adapter DIR")
    p.add_argument("--out", default=None, help="output folder (created; `mobile-actions export` defaults to "
                                                "<cache>/onnx-QUANT, which `mobile-actions call` uses by default)")
    p.add_argument("--quant", choices=QUANTS, default=d.quant)
    p.add_argument("--block-size", type=int, default=d.block_size, help="int4/int8 (mixed and q8 are fixed: 32 + 128, 128)")
    p.add_argument("--accuracy-level", type=int, default=d.accuracy_level, choices=(0, 1, 2, 3, 4))
    p.add_argument("--layout", choices=LAYOUTS, default=None,
                   help="prompt layout the model was trained with (default: from its mobile_actions.json, else official)")
    p.add_argument("--no-check", dest="check", action="store_false")
    p.add_argument("--check-tokens", type=int, default=d.check_tokens)
    p.add_argument("--eval-data", default=None, help="JSONL rows for the quantised export's accuracy check")
    p.add_argument("--eval-rows", type=int, default=d.eval_rows)
    p.add_argument("--keep-fp32", action="store_true", help="keep the intermediate fp32 export as OUT-fp32")
    p.add_argument("--no-lean-head", dest="lean_head", action="store_false",
                   help="q8: keep the full head at 8 bits (+~110 MB resident, ~89 MB smaller file; same choices)")
    p.add_argument("--no-split-table", dest="split_table", action="store_false",
                   help="q8: keep every row of the table at 8 bits (386 MB instead of 244; see split_table)")


def config_from_args(a: argparse.Namespace) -> ExportConfig:
    return ExportConfig(model=a.model, out=a.out, quant=a.quant, block_size=a.block_size,
                        accuracy_level=a.accuracy_level, layout=a.layout, check=a.check, check_tokens=a.check_tokens,
                        eval_data=a.eval_data, eval_rows=a.eval_rows, keep_fp32=a.keep_fp32,
                        lean_head=a.lean_head, split_table=a.split_table)


def summary(res: ExportResult) -> str:
    m = res.manifest
    lines = [f"exported {m['source_model']} -> {res.out} ({m['quant']}, {m['size_bytes'] / 1e6:.1f} MB, "
             f"layout {m['layout']}, {m['export_seconds']} s; sparse head: "
             f"{'yes' if m.get('sparse_head') else 'no'}; lean full head: {'yes' if m.get('lean_full_head') else 'no'}; "
             f"runs under onnxruntime-genai too)"]
    c = res.check
    if "equal" in c:
        lines.append(f"self-check: fp32 greedy tokens == PyTorch on {len(c['prompts'])} prompts: {c['equal']}")
    if "fp32" in c:
        lines.append(f"self-check: fp32 greedy tokens == PyTorch: {c['fp32']['equal']}")
    if "accuracy" in c:
        lines.append(f"accuracy vs fp32: {json.dumps(c['accuracy'])}")
    if not check_ok(c):
        lines.append(f"self-check failed: {check_problem(c)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mobile_actions.recipes.export_onnx", description=__doc__.split("\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    if not args.out:
        p.error("--out is required")
    res = run(config_from_args(args), progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(summary(res))
    return 0 if check_ok(res.check) else 1


if __name__ == "__main__":
    sys.exit(main())
