"""Export the asks-now classifier (`training.asks_reader`) to an 8-bit ONNX folder the torch-free gate reads.

    python -m mobile_actions.recipes.export_asks --adapter mobile_actions/assets/asks-now-lm --out DIR \
        [--max-asks-refused 0.01]

`model prepare` runs this on the bundled adapter (into `~/.cache/mobile-actions/asks-now-lm`, ~40 s). It holds:
- `model.onnx`: input_ids [1, S] (rows of the kept vocabulary, `rows.npy` maps token ids to them) -> the
  probability that the message asks for nothing now. The decoder layers are the caller export's own wrapper
  (`export_onnx.build_wrapper`: fused GroupQueryAttention, the local layers' window) with no past; the pooling
  and the head are the training module's (`asks_reader.pool`), so export and training compute the same thing.
- The embedding keeps the rows of common pieces only (`export_onnx.hot_rows`: ~35k of 262k; every other token
  reads `<unk>`'s row), 8-bit blocks; the projections are 8-bit `MatMulNBits`: ~45 MB in all, not 700.
- `tokenizer.json` and its SentencePiece copy, `reader.json` (layers, tokens read, threshold).

`calibrate` sets the threshold on the exported model's scores (the probabilities the gate will see).
"""
from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from mobile_actions.asks import LM_ADAPTER
from mobile_actions.training.asks_reader import HEAD_FILE, READER_FILE, load_trained, pool, read_reader, write_reader

ROWS_FILE = "rows.npy"
BLOCK = 128
FORMAT = 2   # what this module writes; an export of another format is built again


def export(adapter: Path, out: Path, base: str | Path | None = None) -> Path:
    """Build the ONNX folder of the classifier in `adapter` (its LoRA and head over the prepared base)."""
    import torch
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
    from onnxruntime.quantization.quant_utils import QuantFormat
    from transformers import AutoTokenizer

    from mobile_actions.caller.model import prepare_base
    from mobile_actions.recipes.export_onnx import (_load, _save, build_wrapper, compact_tokenizer_file, hot_rows,
                                                    quantize_embedding_int8)
    from mobile_actions.runtime.pieces import build_piece_model

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    base = base or read_reader(adapter).get("base")
    base = Path(base) if base else prepare_base()
    model = load_trained(adapter, base)
    body = model.body
    tok = AutoTokenizer.from_pretrained(str(base))
    vocab = int(body.config.vocab_size)
    pieces = [p or "" for p in tok.convert_ids_to_tokens(list(range(min(vocab, len(tok)))))]
    keep = hot_rows(pieces + [""] * (vocab - len(pieces)), lambda s: tok.encode(s, add_special_tokens=False))
    unk = int(tok.unk_token_id)
    keep[unk] = True
    kept = np.flatnonzero(keep)
    rows = np.full(vocab, int(np.searchsorted(kept, unk)), dtype=np.int32)
    rows[kept] = np.arange(len(kept), dtype=np.int32)
    table = body.embed_tokens
    with torch.no_grad():
        table.weight = torch.nn.Parameter(table.weight[torch.from_numpy(kept)].clone(), requires_grad=False)
    table.num_embeddings = len(kept)

    class _LM(torch.nn.Module):   # the wrapper reads `.model` and `.config`, as on a causal LM
        def __init__(self) -> None:
            super().__init__()
            self.model, self.config = body, body.config

    decoder = build_wrapper(_LM())
    n_kv, head_dim, n_layers = body.config.num_key_value_heads, body.config.head_dim, body.config.num_hidden_layers

    class Reader(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.decoder, self.head = decoder, model.head

        def forward(self, input_ids):
            mask = torch.ones_like(input_ids)
            positions = torch.cumsum(mask, 1) - 1
            past = [torch.zeros(1, n_kv, 0, head_dim) for _ in range(2 * n_layers)]
            h, _ = self.decoder.states(input_ids, mask, positions, *past)
            return torch.sigmoid(self.head(pool(body.norm(h), mask)))

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        raw = Path(tmp) / "raw.onnx"
        with torch.no_grad():
            torch.onnx.export(Reader().eval(), (torch.tensor([[2, 5, 6, 7]]),), str(raw), dynamo=False,
                              opset_version=18, input_names=["input_ids"], output_names=["p_not_asking"],
                              dynamic_axes={"input_ids": {1: "seq"}}, do_constant_folding=True,
                              custom_opsets={"com.microsoft": 1})
        graph = _load(raw)
        cfg = DefaultWeightOnlyQuantConfig(block_size=BLOCK, is_symmetric=True, accuracy_level=4,
                                           quant_format=QuantFormat.QOperator, op_types_to_quantize=("MatMul",),
                                           quant_axes=(("MatMul", 0),), bits=8)
        q = MatMulNBitsQuantizer(graph, algo_config=cfg)
        q.process()
        graph = q.model.model
        quantize_embedding_int8(graph)
        _save(graph, out / "model.onnx")
    np.save(out / ROWS_FILE, rows)
    shutil.copy(base / "tokenizer.json", out / "tokenizer.json")
    compact_tokenizer_file(out / "tokenizer.json")
    build_piece_model(out / "tokenizer.json")
    write_reader(out, {**read_reader(adapter), "bos_id": int(tok.bos_token_id), "format": FORMAT,
                      "adapter_sha256": adapter_digest(adapter)})
    return out


def adapter_digest(adapter: Path) -> str:
    """What an export was built from: the adapter's weights, head and reader config (a retrained or recalibrated
    adapter is exported again)."""
    import hashlib

    h = hashlib.sha256()
    for name in ("adapter_model.safetensors", HEAD_FILE, READER_FILE):
        h.update((adapter / name).read_bytes())
    return h.hexdigest()


def prepare(out: Path, adapter: Path = LM_ADAPTER, force: bool = False) -> tuple[Path, bool]:
    """`model prepare`'s step: export the bundled adapter unless `out` already holds its export. Returns
    (folder, whether it was built)."""
    built = read_reader(out) if (out / "model.onnx").is_file() and (out / READER_FILE).is_file() else {}
    if not force and built.get("adapter_sha256") == adapter_digest(adapter) and built.get("format") == FORMAT:
        return out, False
    partial = out.with_name(out.name + ".partial")     # a killed export never leaves a folder the gate reads
    shutil.rmtree(partial, ignore_errors=True)
    export(adapter, partial)
    if out.exists():
        shutil.rmtree(out)
    partial.replace(out)
    return out, True


def calibrate(adapter: Path, folder: Path, texts: Sequence[str], not_asking: Sequence[bool],
              max_asks_refused: float) -> str:
    """Set the threshold (in `adapter` and `folder`) to the lowest at which at most `max_asks_refused` of the
    asks in `texts` are refused by the exported model; returns a report."""
    from mobile_actions.asks import AsksNowLM, threshold_for

    reader = AsksNowLM.load(folder, threshold=1.0)
    p = np.array([reader.p_not_asking(t) for t in texts])
    y = np.asarray(not_asking, dtype=bool)
    threshold = threshold_for(p[~y], max_asks_refused)
    for where in (adapter, folder):
        write_reader(where, {**read_reader(where), "threshold": threshold})
    return (f"threshold {threshold:.4f} on {len(y)} held-out messages: non-requests caught "
            f"{(p[y] >= threshold).mean():.1%}, asks refused {(p[~y] >= threshold).mean():.2%}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adapter", required=True, help=f"a folder with the LoRA, head.safetensors and {READER_FILE}")
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", default=None, help="the base checkpoint (default: the prepared one)")
    ap.add_argument("--max-asks-refused", type=float, default=None,
                    help="set the threshold again (in the adapter and the export): the lowest at which at most this "
                         "share of the held-out asks (`train_asks.heldout()`) is refused")
    args = ap.parse_args(argv)
    out = export(Path(args.adapter), Path(args.out), args.base)
    print(out)
    if args.max_asks_refused is not None:
        from mobile_actions.recipes.train_asks import heldout
        texts, labels = heldout()
        print(calibrate(Path(args.adapter), out, texts, labels, args.max_asks_refused))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
