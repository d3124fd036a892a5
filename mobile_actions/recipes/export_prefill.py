"""The prefill graph (a second ONNX graph of an export that only fills the KV cache, on int8 GEMM kernels) and the
integer decode graph (the decode graph with its projections on the same kernels, for CPUs without VNNI; below).

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
from typing import Iterable, Iterator

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
        if not _is_8bit_matmul(node):
            new_nodes.append(node)
            continue
        b, s = _read_external(inits[node.input[1]], folder), _read_external(inits[node.input[2]], folder)
        qi, col = requantize_columns(b, s, bits)
        base = node.name.replace("/", "_").strip("_") or f"mm{replaced}"
        names = (f"{base}_prefill_w", f"{base}_prefill_scale")
        new_inits += [numpy_helper.from_array(qi, names[0]), numpy_helper.from_array(col, names[1])]
        new_nodes += row_quantized_matmul(node.input[0], names[0], names[1], node.output[0], base)
        replaced += 1
    used = set(_inputs(new_nodes))
    # tensors with raw data (the new int8 weights) go to prefill.onnx.data; the referenced ones keep their location
    size = _write_graph(folder, PREFILL_ONNX, model, helper.make_graph(
        new_nodes, "prefill", [i for i in g.input if i.name in used], presents,
        [t for t in g.initializer if t.name in used] + new_inits + _shared_constants()), "mobile-actions prefill graph")
    return {"onnx": PREFILL_ONNX, "format": FORMAT, "replaced_matmuls": replaced, "weight_bits": bits,
            "kernel": "MatMulInteger (uint8 activations per row, int8 weights per output column)", "bytes": size}


def add_prefill_graph(folder: str | Path) -> dict:
    """`build_prefill_graph` and its entry in the folder's manifest (`prefill_graph`)."""
    folder = Path(folder)
    info = build_prefill_graph(folder)
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["prefill_graph"] = info
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return info


# ============================================================================== the integer decode graph
# On a CPU without VNNI onnxruntime's 8-bit `MatMulNBits` runs a request's tokens at ~16 GMAC/s, its integer GEMM
# at ~37 (the table in docs/runtime.md). The integer decode graph is the decode graph with every layer projection
# on the integer GEMM, its head and everything else unchanged. One 8-bit scale per row crushes the activations'
# outlier channels (a channel's maximum 15-43x the median channel's), so each projection's input channel j is
# divided by s_j = amax_j^0.5 / wmax_j^0.5 (`SMOOTHING`, as SmoothQuant does) and its weight row multiplied by s_j;
# the weights are 8-bit per column, unsigned around 128 (both operands unsigned: no 16-bit saturation without
# VNNI). 2x faster for runs of tokens; on the acting benchmark's newest pairs 30 of 480 requests decode differently
# (1 point less exact in all), so the runtime runs it only when asked (`runtime.onnx.use_integer_decode`).
INT_DECODE_ONNX = "decode-int.onnx"
INT_DECODE_FORMAT = 1
CALIBRATION_ROWS = 24
SMOOTHING = 0.5


def _is_8bit_matmul(node) -> bool:
    """An 8-bit `MatMulNBits` without zero points: what the integer graphs run on the integer GEMM instead."""
    from onnx import helper

    return node.op_type == "MatMulNBits" and not any(node.input[3:]) and \
        any(a.name == "bits" and helper.get_attribute_value(a) == 8 for a in node.attribute)


def _projections(graph, vocab_size: int) -> list:
    """The layer projections the integer decode graph moves: the 8-bit matmuls but the head."""
    return [node for node in graph.node if _is_8bit_matmul(node)
            and next((a.i for a in node.attribute if a.name == "N"), 0) < vocab_size]


def calibrate(folder: str | Path, rows: int = CALIBRATION_ROWS) -> dict[str, np.ndarray]:
    """Each projection's input channels' largest magnitude (by node name) over `rows` synthetic requests of the
    training phrasings with their answers, rendered as the runtime renders them; the first position (the
    attention sink, ~100x the rest) left out. Computed by onnxruntime on a copy of the decode graph that also
    outputs them, so any export can be calibrated without PyTorch."""
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    from mobile_actions import wire
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.datagen.generate import generate_rows
    from mobile_actions.dataset import parse_row
    from mobile_actions.runtime.onnx import Decoder
    from mobile_actions.runtime.pieces import load_tokenizer

    folder = Path(folder)
    decoder = Decoder(folder, session_dir=None, prefill_graph=False)
    model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    g = model.graph
    sizes = {}
    for node in _projections(g, decoder.vocab_size):
        k = next(a.i for a in node.attribute if a.name == "K")
        t = f"calibration/{node.name}"
        g.node.extend([helper.make_node("Slice", [node.input[0], "calibration_one", "calibration_end", "calibration_one"],
                                        [t + "/rows"]),
                       helper.make_node("Abs", [t + "/rows"], [t + "/abs"]),
                       helper.make_node("ReduceMax", [t + "/abs", "calibration_axes"], [t], keepdims=0)])
        g.output.append(helper.make_tensor_value_info(t, onnx.TensorProto.FLOAT, [k]))
        sizes[node.name] = k
    g.initializer.extend([numpy_helper.from_array(np.array([1], np.int64), "calibration_one"),
                          numpy_helper.from_array(np.array([1 << 40], np.int64), "calibration_end"),
                          numpy_helper.from_array(np.array([0, 1], np.int64), "calibration_axes")])
    path = folder / ".calibration.onnx"     # beside model.onnx.data, which its initializers point at
    onnx.save_model(model, str(path))
    try:
        session = ort.InferenceSession(str(path), decoder._options(True), providers=["CPUExecutionProvider"])
    finally:
        path.unlink(missing_ok=True)
    tokenizer = load_tokenizer(folder / "tokenizer.json")
    amax = {name: np.zeros(k, np.float32) for name, k in sizes.items()}
    outs = {name: np.zeros(k, np.float32) for name, k in sizes.items()}
    for data in generate_rows(load_catalogue("mobile_actions"), rows, 7, families="train"):
        row = parse_row(data)
        ids = tokenizer.encode(wire.render(row.messages, row.tools, layout="cache")).ids
        cache = decoder.new_cache(len(ids))
        io = cache.bind(session, decoder.past_names, decoder.present_names, decoder.local_buffers, 0)
        for name, k in sizes.items():
            io.bind_output(f"calibration/{name}", "cpu", 0, np.float32, [k], outs[name].ctypes.data)
        head = {"head_ids": np.zeros(1, np.int64)} if decoder.sparse_head else {}
        logits = np.empty((1, 1, 1 if decoder.sparse_head else decoder.vocab_size), np.float32)
        decoder._run(session, ids, cache, head, logits)
        for name in amax:
            np.maximum(amax[name], outs[name], out=amax[name])
    return amax


def build_integer_decode_graph(folder: str | Path, amax: dict[str, np.ndarray], alpha: float = SMOOTHING) -> dict:
    """Write `decode-int.onnx` (+ `.data`) beside an export's decode graph from its projections' calibration
    maxima (`calibrate`); returns the manifest entry."""
    import onnx
    from onnx import helper, numpy_helper

    folder = Path(folder)
    model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    vocab = int(json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["vocab_size"])
    moved = {node.name for node in _projections(g, vocab)}
    new_nodes, new_inits = [], []
    for node in g.node:
        if node.name not in moved or node.name not in amax:
            new_nodes.append(node)
            continue
        q, scales = _read_external(inits[node.input[1]], folder), _read_external(inits[node.input[2]], folder)
        n, blocks, block = q.shape
        w = ((q.astype(np.float32) - 128.0) * scales.reshape(n, blocks, 1).astype(np.float32)).reshape(n, -1).T
        a = np.maximum(amax[node.name].astype(np.float32), 1e-5)
        s = np.clip(a ** alpha / np.maximum(np.abs(w).max(axis=1), 1e-8) ** (1 - alpha), 1e-4, 1e4).astype(np.float32)
        w = w * s[:, None]                                                   # [K, N]
        col = np.abs(w).max(axis=0) / 127.0
        col = np.where(col > 0, col, 1.0).astype(np.float32)
        qu = (np.clip(np.rint(w / col[None, :]), -127, 127) + 128).astype(np.uint8)
        base = node.name.replace("/", "_").strip("_")
        names = (f"{base}_int_w", f"{base}_int_scale", f"{base}_int_smooth")
        new_inits += [numpy_helper.from_array(np.ascontiguousarray(qu), names[0]), numpy_helper.from_array(col, names[1]),
                      numpy_helper.from_array((1.0 / s).astype(np.float32), names[2])]
        new_nodes.append(helper.make_node("Mul", [node.input[0], names[2]], [f"{base}_smoothed"]))
        matmul = row_quantized_matmul(f"{base}_smoothed", names[0], names[1], node.output[0], base)
        for m in matmul:
            if m.op_type == "MatMulInteger":
                m.input.append("prefill_zp128")                                # the weights' zero point
        new_nodes += matmul
    used = set(_inputs(new_nodes))
    size = _write_graph(folder, INT_DECODE_ONNX, model, helper.make_graph(
        new_nodes, "integer decode", list(g.input), list(g.output),
        [t for t in g.initializer if t.name in used] + new_inits + _shared_constants()),
        "mobile-actions integer decode graph")
    return {"onnx": INT_DECODE_ONNX, "format": INT_DECODE_FORMAT, "replaced_matmuls": len(moved & set(amax)),
            "smoothing": alpha,
            "kernel": "MatMulInteger (uint8 activations per row after smoothing, uint8 weights per output column)",
            "bytes": size}


def _write_graph(folder: Path, name: str, source, graph, producer: str) -> int:
    """`graph` as `folder/name`, its new tensors in `name.data` (the ones it shares with the decode graph keep
    pointing at `model.onnx.data`), with `source`'s opsets; returns the two files' bytes."""
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=list(source.opset_import), ir_version=source.ir_version,
                              producer_name=producer)
    files = (folder / name, folder / (name + ".data"))
    for f in files:
        f.unlink(missing_ok=True)
    onnx.save_model(model, str(files[0]), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=files[1].name, size_threshold=1024)
    return sum(f.stat().st_size for f in files if f.is_file())


def _inputs(nodes) -> Iterator[str]:
    """Every tensor the nodes read, their subgraphs' reads from the outer scope included."""
    for node in nodes:
        yield from node.input
        for attr in node.attribute:
            yield from _inputs(n for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs) for n in g.node)


def add_integer_decode_graph(folder: str | Path, rows: int = CALIBRATION_ROWS) -> dict:
    """`calibrate`, `build_integer_decode_graph` and its entry in the folder's manifest (`integer_decode_graph`)."""
    folder = Path(folder)
    info = build_integer_decode_graph(folder, calibrate(folder, rows))
    info["calibration_rows"] = rows
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["integer_decode_graph"] = info
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return info
