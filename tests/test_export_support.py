"""Shared by the export/runtime tests: the tiny random model and its exports, built once per process.

(No fixtures in conftest.py by design; a process-level cache keeps the default test run fast.)
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_ROOT: Path | None = None
_CACHE: dict[str, Path] = {}


def _root() -> Path:
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="ma-runtime-tests-"))
        atexit.register(shutil.rmtree, _ROOT, True)
    return _ROOT


def tiny_model() -> Path:
    if "model" not in _CACHE:
        from tests.tiny import make_tiny_model

        _CACHE["model"] = make_tiny_model(_root() / "tiny")
    return _CACHE["model"]


def tiny_export(quant: str = "fp32", layout: str = "cache", lean_head: bool = True, split_table: bool = True,
                split_first_rows: int | None = None) -> Path:
    """An exported folder of the tiny model; fp32 runs the export's own PyTorch self-check. `split_first_rows`:
    the first ids that keep 8-bit rows (default: the real model's number, which covers the tiny vocabulary)."""
    from mobile_actions.recipes.export_onnx import SPLIT_FIRST_ROWS

    first = split_first_rows or SPLIT_FIRST_ROWS
    key = (f"{quant}-{layout}" + ("" if lean_head else "-8bit-head") + ("" if split_table else "-whole-table")
           + ("" if first == SPLIT_FIRST_ROWS else f"-first{first}"))
    if key not in _CACHE:
        from mobile_actions.recipes.export_onnx import ExportConfig, run

        out = _root() / key
        res = run(ExportConfig(model=str(tiny_model()), out=str(out), quant=quant, layout=layout,
                               check=(quant == "fp32"), check_tokens=8, check_prompts=2, lean_head=lean_head,
                               split_table=split_table, split_first_rows=first))
        _CACHE[key] = out
        _CACHE[key + ":check"] = res.check  # type: ignore[assignment]
    return _CACHE[key]


def check_of(quant: str = "fp32", layout: str = "cache") -> dict:
    tiny_export(quant, layout)
    return _CACHE[f"{quant}-{layout}:check"]  # type: ignore[return-value]
