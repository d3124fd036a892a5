"""The prepared exports: where `mobile-actions model prepare` puts the bundled models' ONNX exports, whether
what is there is current, and which bundled caller a catalogue gets. Torch-free (hashlib + json), so `call`
and `run` can check cheaply.

The default path is the on-device path: `run`, `call` and `bench hybrid` use these folders on the ONNX
runtime (PyTorch only with `--torch`). A folder is current when it is an export of the bundled adapter whose
files hash to what its manifest records (`adapter_sha256`), in this runtime's export format and the default
quantisation.

Two callers are bundled: `default`, trained on the seven Mobile Actions tools (and `operate_screen`), and
`general`, trained from it on many catalogues, for tools it never saw. `auto` picks by the catalogue: on the
tools the default caller knows it is the stronger one; on any other catalogue the general one is.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Iterable, Sequence

from mobile_actions.errors import NotPreparedError

DEFAULT_QUANT = "q8"      # recipes/export_onnx.Q8_BLOCK_SIZE says why (the 4-bit head of `mixed` cost accuracy),
                          # with the lean full head (recipes/export_onnx.add_lean_full_head)
ADAPTER_FILES = ("adapter_model.safetensors", "adapter_config.json")
CALLER_SPECS = ("auto", "default", "general")   # what `--model` names besides an export folder
PREPARE_HINT = "run `mobile-actions model prepare` (once: it builds the ONNX export, ~5 min on 2 cores)"


def default_onnx_dir(quant: str | None = None, cache: str | Path | None = None) -> Path:
    """`$MOBILE_ACTIONS_ONNX` (not with an explicit `cache`), else `<cache>/onnx-<quant>` (default quant: DEFAULT_QUANT)."""
    from mobile_actions.caller.model import cache_dir  # torch-free

    if cache is None and os.environ.get("MOBILE_ACTIONS_ONNX"):
        return Path(os.environ["MOBILE_ACTIONS_ONNX"]).expanduser()
    return cache_dir(cache) / f"onnx-{quant or DEFAULT_QUANT}"


def general_onnx_dir(cache: str | Path | None = None) -> Path:
    """`<cache>/onnx-general-<quant>`: where `model prepare` puts the bundled general caller's export."""
    from mobile_actions.caller.model import cache_dir  # torch-free

    return cache_dir(cache) / f"onnx-general-{DEFAULT_QUANT}"


@functools.cache
def default_caller_tools() -> frozenset[str]:
    """The tools the default caller was trained on: the bundled Mobile Actions catalogue and `operate_screen`
    (read once: `auto_caller` runs for every request of a benchmark)."""
    from mobile_actions.catalog import load_catalogue

    return frozenset(load_catalogue("mobile_actions+operate_screen").names)


def auto_caller(tool_names: Iterable[str]) -> str:
    """`default` for a catalogue of tools the default caller was trained on (none given: the Mobile Actions
    catalogue), `general` for any other. By name: a user's own `send_email` with other arguments is rare,
    and the default caller still fills only what the schema admits."""
    names = set(tool_names)
    return "default" if names <= default_caller_tools() else "general"


def sha256_files(files: Sequence[Path]) -> str:
    """One digest over files (sorted by name; each name, then its bytes)."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: Path(p).name):
        h.update(Path(f).name.encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def bundled_adapter_sha256(adapter: str | Path | None = None) -> str:
    """The digest of the bundled adapter's weights and config (what `adapter_sha256` in a manifest records)."""
    from mobile_actions.caller.model import BUNDLED_ADAPTER

    folder = Path(adapter) if adapter is not None else BUNDLED_ADAPTER
    return sha256_files([folder / f for f in ADAPTER_FILES if (folder / f).is_file()])


def grounding_outdated(folder: str | Path, adapter: str | Path | None = None) -> bool:
    """Whether the export at `folder` carries other grounding policies than the bundled adapter's
    ``grounding.json``. Policies are relearned without retraining, so they change without the weights:
    `model prepare` then copies the file instead of rebuilding the export."""
    from mobile_actions.caller.model import BUNDLED_ADAPTER
    from mobile_actions.decoding.grounding import POLICY_FILE

    src = (Path(adapter) if adapter is not None else BUNDLED_ADAPTER) / POLICY_FILE
    dst = Path(folder) / POLICY_FILE
    return src.is_file() and (not dst.is_file() or dst.read_bytes() != src.read_bytes())


def navigator_onnx_dir(cache: str | Path | None = None) -> Path:
    """`<cache>/onnx-navigator-<quant>`: where `model prepare` puts the bundled text navigator's export."""
    from mobile_actions.caller.model import cache_dir  # torch-free

    return cache_dir(cache) / f"onnx-navigator-{DEFAULT_QUANT}"


def stale_reason(folder: str | Path, adapter_sha256: str | None = None, adapter: Path | None = None) -> str | None:
    """Why `folder` is not a current export of the bundled caller, or of the bundled `adapter` when one is
    given (the text navigator: judged by its weights' digest, wherever the package is installed) (None: it is)."""
    from mobile_actions.runtime.onnx import FORMAT_VERSION

    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.is_file():
        return f"no export at {folder}"
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return f"{path}: unreadable ({e})"
    if int(m.get("format_version", 1)) < FORMAT_VERSION:
        return f"{folder} is an older export format ({m.get('format_version', 1)} < {FORMAT_VERSION})"
    if adapter is None and m.get("source_model") != "default":
        return f"{folder} is an export of {m.get('source_model')!r}, not of the bundled caller"
    if m.get("quant") != DEFAULT_QUANT:
        return f"{folder} is quantised {m.get('quant')!r}, not {DEFAULT_QUANT!r}"
    if not m.get("lean_full_head"):
        return f"{folder} has the 8-bit full head, not the lean one (4 bits, top rows rescored: ~110 MB less memory)"
    if not m.get("split_table"):
        return f"{folder} keeps every table row at 8 bits, not the split table (8-bit common rows: 386 -> 244 MB)"
    if not m.get("window_start"):
        return (f"{folder}'s sliding-window layers compute every key of the past, not only their window's "
                "(a request after a 100-tool catalogue: ~3x slower)")
    want = adapter_sha256 or bundled_adapter_sha256(adapter)
    if m.get("adapter_sha256") != want:
        return f"{folder} was exported from another version of the bundled adapter"
    return None


def prepared_export(folder: str | Path | None = None) -> Path:
    """The folder `--model default` runs on the ONNX runtime, or `NotPreparedError` saying what to run.

    A folder named by `$MOBILE_ACTIONS_ONNX` is taken as it is when it holds an export of something else
    (the user chose it); the bundled caller's own export must be current."""
    explicit = folder is None and bool(os.environ.get("MOBILE_ACTIONS_ONNX"))
    folder = Path(folder) if folder is not None else default_onnx_dir()
    if not (folder / "manifest.json").is_file():
        raise NotPreparedError(f"the default caller runs on its ONNX export, and there is none at {folder}: "
                               f"{PREPARE_HINT}; or use --torch for PyTorch")
    m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if explicit and m.get("source_model") != "default":
        return folder
    why = stale_reason(folder)
    if why:
        raise NotPreparedError(f"{why}: run `mobile-actions model prepare` (it rebuilds the export, ~5 min on "
                               f"2 cores); or use --torch for PyTorch")
    if grounding_outdated(folder):
        raise NotPreparedError(f"{folder} has older grounding policies than the bundled caller: run `mobile-actions "
                               f"model prepare` (it copies them, a second)")
    return folder


def prepared_general(folder: str | Path | None = None) -> Path:
    """The bundled general caller's current ONNX export, or `NotPreparedError` saying what to run."""
    from mobile_actions.caller.model import GENERAL_ADAPTER

    folder = Path(folder) if folder is not None else general_onnx_dir()
    why = stale_reason(folder, adapter=GENERAL_ADAPTER)
    if why:
        raise NotPreparedError(f"{why}: run `mobile-actions model prepare` (it builds the general caller's export "
                               f"too); or use --torch for PyTorch")
    if grounding_outdated(folder, GENERAL_ADAPTER):
        raise NotPreparedError(f"{folder} has older grounding policies than the general caller: run `mobile-actions "
                               f"model prepare` (it copies them, a second)")
    return folder


def prepared_caller(spec: str = "auto", tool_names: Iterable[str] = ()) -> Path:
    """The export a caller spec runs on: `default`, `general`, or `auto` (chosen by `auto_caller` for the
    catalogue's tool names)."""
    if spec not in CALLER_SPECS:
        raise ValueError(f"caller {spec!r}: expected one of {', '.join(CALLER_SPECS)}")
    name = auto_caller(tool_names) if spec == "auto" else spec
    return prepared_export() if name == "default" else prepared_general()


def prepared_navigator(folder: str | Path | None = None) -> Path:
    """The bundled text navigator's current ONNX export, or `NotPreparedError` saying what to run."""
    from mobile_actions.navigator import TEXT_NAVIGATOR_DIR

    folder = Path(folder) if folder is not None else navigator_onnx_dir()
    why = stale_reason(folder, adapter=TEXT_NAVIGATOR_DIR)
    if why:
        raise NotPreparedError(f"{why}: run `mobile-actions model prepare` (it builds the navigator's export too)")
    return folder
