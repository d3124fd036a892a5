"""The prefill graph: a second ONNX graph of an export that only fills the KV cache, on int8 GEMM kernels.

Why a second graph: the decode graph's 8-bit `MatMulNBits` is the fastest kernel onnxruntime has for one
token (GEMV), but for a run of many tokens (a catalogue's declarations, hundreds to thousands of tokens)
onnxruntime's integer GEMM (`MatMulInteger`: activations quantised per row to uint8, weights int8 per output
column, MLAS's packed int8 kernels with VNNI/AMX where the CPU has them) is faster per token: 2-3x with AVX-512,
2.2x on an AVX2-only CPU, whose 8-bit `MatMulNBits` kernel reaches 16 GMAC/s against the integer GEMM's 37
(`mobile-actions bench caller`'s prefill section measures both, and the floor, on the machine it runs on).

The graph is derived from the decode graph (`model.onnx`), not from PyTorch, so an existing export gains one
without a re-export:
- outputs: the `present.*` KV only; the head (logits) and everything only it needs are pruned, since a
  prefill run's logits are never read (the runtime runs the prompt's last token on the decode graph);
- each 8-bit `MatMulNBits` (weights `[N, K/block, block]` uint8, zero point 128, one scale per block) becomes a
  `MatMulInteger` between elementwise ops (`row_quantized_matmul`) over the same weights requantised per output
  column (`WEIGHT_BITS`);
- every other initializer (the embedding's tables, norms) is the decode graph's own bytes in `model.onnx.data`,
  referenced, not copied: the folder grows by the int8 weights only (~100 MB for the 270M caller).

`WEIGHT_BITS` is 7: x86 CPUs without VNNI multiply uint8 by int8 in 16-bit pairs that saturate at full 8-bit
range (onnxruntime's `reduce_range`); 7-bit weights cannot, on any CPU, so one folder gives one answer everywhere.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import numpy as np

PREFILL_ONNX = "prefill.onnx"
WEIGHT_BITS = 7
FORMAT = 1


def _read_external(tensor, folder: Path) -> np.ndarray:
    """An initializer's array, its bytes read from the external data file it points at (a copy of the tensor is
    filled, so the graph's own keeps pointing at the file)."""
    from onnx import TensorProto, numpy_helper
    from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

    if not uses_external_data(tensor):
        return numpy_helper.to_array(tensor)
    loaded = TensorProto()
    loaded.CopyFrom(tensor)
    load_external_data_for_tensor(loaded, str(folder))
    return numpy_helper.to_array(loaded)


def needed_nodes(nodes: list, outputs: Iterable[str]) -> list:
    """The nodes the given outputs depend on, in graph order (If/Loop subgraphs' outer inputs counted)."""
    want = set(outputs)
    keep = []
    for node in reversed(nodes):
        if any(o in want for o in node.output):
            keep.append(node)
            want.update(i for i in node.input if i)
            for attr in node.attribute:   # names a subgraph reads from the outer scope
                for g in ([attr.g] if attr.g.node else []) + list(attr.graphs):
                    for sub in g.node:
                        want.update(i for i in sub.input if i)
    return list(reversed(keep))


def requantize_columns(q: np.ndarray, scales: np.ndarray, bits: int = WEIGHT_BITS) -> tuple[np.ndarray, np.ndarray]:
    """8-bit `MatMulNBits` weights ([N, K/block, block] uint8, zero point 128; scales [N * K/block]) as
    int8 [K, N] with one symmetric scale per output column, at `bits` bits."""
    n, blocks, block = q.shape
    w = (q.astype(np.float32) - 128.0) * scales.reshape(n, blocks, 1).astype(np.float32)
    w = w.reshape(n, blocks * block)                                   # [N, K]
    top = (1 << (bits - 1)) - 1
    col = np.abs(w).max(axis=1) / top
    col = np.where(col > 0, col, 1.0).astype(np.float32)
    qi = np.clip(np.rint(w / col[:, None]), -top, top).astype(np.int8)
    return np.ascontiguousarray(qi.T), col


def row_quantized_matmul(x: str, w: str, col_scale: str, y: str, tag: str) -> list:
    """`y = x @ w` with `x` quantised per row (symmetric, uint8 around 128) and `w` int8 per column: one integer
    GEMM (`MatMulInteger`) between elementwise ops. Per row, not per run: the first position's activations
    (the attention sink) are ~100x larger than the rest, and one scale for the whole run lost the others."""
    from onnx import helper

    n = lambda name: f"{tag}_pf_{name}"  # noqa: E731
    return [
        helper.make_node("Abs", [x], [n("abs")]),
        helper.make_node("ReduceMax", [n("abs"), "prefill_last_axis"], [n("amax")], keepdims=1),
        helper.make_node("Mul", [n("amax"), "prefill_inv127"], [n("s0")]),
        helper.make_node("Max", [n("s0"), "prefill_tiny"], [n("s")]),
        helper.make_node("Div", [x, n("s")], [n("xs")]),
        helper.make_node("Round", [n("xs")], [n("xr")]),
        helper.make_node("Add", [n("xr"), "prefill_128f"], [n("xo")]),
        helper.make_node("Cast", [n("xo")], [n("xq")], to=2),   # uint8
        helper.make_node("MatMulInteger", [n("xq"), w, "prefill_zp128"], [n("acc")]),
        helper.make_node("Cast", [n("acc")], [n("accf")], to=1),
        helper.make_node("Mul", [n("accf"), n("s")], [n("rows")]),
        helper.make_node("Mul", [n("rows"), col_scale], [y]),
    ]


def _shared_constants() -> list:
    from onnx import numpy_helper

    return [numpy_helper.from_array(np.array([-1], np.int64), "prefill_last_axis"),
            numpy_helper.from_array(np.array(1 / 127, np.float32), "prefill_inv127"),
            numpy_helper.from_array(np.array(1e-12, np.float32), "prefill_tiny"),
            numpy_helper.from_array(np.array(128, np.float32), "prefill_128f"),
            numpy_helper.from_array(np.array(128, np.uint8), "prefill_zp128")]


def build_prefill_graph(folder: str | Path, bits: int = WEIGHT_BITS) -> dict:
    """Write `prefill.onnx` (+ `prefill.onnx.data`) beside an export's decode graph; returns the manifest entry."""
    import onnx
    from onnx import helper, numpy_helper

    folder = Path(folder)
    model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    g = model.graph
    presents = [o for o in g.output if o.name.startswith("present.")]
    if not presents:
        raise ValueError(f"{folder}/model.onnx: no present.* outputs (not a KV-cache decoder export)")
    nodes = needed_nodes(list(g.node), [o.name for o in presents])
    inits = {t.name: t for t in g.initializer}
    new_nodes, new_inits, replaced = [], [], 0
    for node in nodes:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type != "MatMulNBits" or attrs.get("bits") != 8 or len(node.input) > 3 and any(node.input[3:]):
            new_nodes.append(node)
            continue
        b, s = _read_external(inits[node.input[1]], folder), _read_external(inits[node.input[2]], folder)
        qi, col = requantize_columns(b, s, bits)
        base = node.name.replace("/", "_").strip("_") or f"mm{replaced}"
        names = (f"{base}_prefill_w", f"{base}_prefill_scale")
        new_inits += [numpy_helper.from_array(qi, names[0]), numpy_helper.from_array(col, names[1])]
        new_nodes += row_quantized_matmul(node.input[0], names[0], names[1], node.output[0], base)
        replaced += 1
    used = {i for n in new_nodes for i in n.input} | {i for n in new_nodes for a in n.attribute
                                                       for sg in ([a.g] if a.g.node else []) + list(a.graphs)
                                                       for sn in sg.node for i in sn.input}
    kept_inits = [t for t in g.initializer if t.name in used]
    new_inits += _shared_constants()
    graph = helper.make_graph(new_nodes, "prefill", [i for i in g.input if i.name in used], presents,
                              kept_inits + new_inits)
    out = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version,
                            producer_name="mobile-actions prefill graph")
    data = PREFILL_ONNX + ".data"
    for f in (folder / PREFILL_ONNX, folder / data):
        f.unlink(missing_ok=True)
    # tensors with raw data (the new int8 weights) go to prefill.onnx.data; the referenced ones keep their location
    onnx.save_model(out, str(folder / PREFILL_ONNX), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)
    return {"onnx": PREFILL_ONNX, "format": FORMAT, "replaced_matmuls": replaced, "weight_bits": bits,
            "kernel": "MatMulInteger (uint8 activations per row, int8 weights per output column)",
            "bytes": sum(f.stat().st_size for f in (folder / PREFILL_ONNX, folder / data) if f.is_file())}


def add_prefill_graph(folder: str | Path) -> dict:
    """`build_prefill_graph` and its entry in the folder's manifest (`prefill_graph`)."""
    folder = Path(folder)
    info = build_prefill_graph(folder)
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["prefill_graph"] = info
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return info
