"""Averaging LoRA adapters of the caller, written as one exact LoRA.

Why: two fine-tunes from the same base often fail on *different* requests (stage 7 carries out
requests that stage 9 refuses; stage 9 gets chains right that stage 7 breaks). The weighted average
of their weights tends to keep what each learnt, and costs no training.

It needs no base model and no approximation. A LoRA adds ``s·B·A`` to a weight (``s`` = alpha/r, or
alpha/sqrt(r) with rsLoRA), so

    Σᵢ wᵢ·sᵢ·Bᵢ·Aᵢ  =  [w₁s₁B₁ | w₂s₂B₂ | …] · [A₁; A₂; …]

is itself a LoRA of rank Σ rᵢ with scaling 1. With weights that sum to 1, base + that delta is
exactly the weighted average of the merged models. peft's trainable-token rows (our seven control
tokens) store the rows' new *values*, not differences, so their weighted average is exact too.
"""
from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from mobile_actions.caller import model as M
from mobile_actions.decoding.grounding import POLICY_FILE
from mobile_actions.errors import AdapterError

WEIGHTS_FILE = "adapter_model.safetensors"
CONFIG_FILE = "adapter_config.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
# Config fields whose non-default values change what the stored tensors mean; we refuse them rather
# than merge something we would get wrong.
UNSUPPORTED = {"use_dora": False, "rank_pattern": {}, "alpha_pattern": {}, "lora_bias": False, "bias": "none",
               "modules_to_save": None}


@dataclass
class Adapter:
    spec: str  # what the user passed ("default", "general" or a directory)
    path: Path
    config: dict
    marker: dict
    tensors: dict

    @property
    def scaling(self) -> float:
        r, alpha = self.config["r"], self.config["lora_alpha"]
        return alpha / math.sqrt(r) if self.config.get("use_rslora") else alpha / r


def adapter_dir(spec: str) -> Path:
    """``default`` and ``general`` are the bundled callers' adapters; anything else is a directory holding a PEFT LoRA."""
    path = M.BUNDLED_CALLERS.get(spec) or Path(spec).expanduser()
    if not (path / CONFIG_FILE).is_file() or not (path / WEIGHTS_FILE).is_file():
        raise AdapterError(f"{spec}: not a PEFT adapter directory (needs {CONFIG_FILE} and {WEIGHTS_FILE})")
    return path


def load_adapter(spec: str) -> Adapter:
    from safetensors.torch import load_file

    path = adapter_dir(spec)
    config = json.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))
    if config.get("peft_type") != "LORA":
        raise AdapterError(f"{spec}: peft_type is {config.get('peft_type')!r}; only LoRA adapters can be merged")
    for field, default in UNSUPPORTED.items():
        value = config.get(field)
        if value not in (None, default, []):
            raise AdapterError(f"{spec}: {field}={value!r} is not supported by the merge")
    return Adapter(spec, path, config, M.read_marker(path), load_file(str(path / WEIGHTS_FILE)))


def _check_compatible(adapters: list[Adapter]) -> None:
    first = adapters[0]
    for a in adapters[1:]:
        for what, get in (("tensor names", lambda x: sorted(x.tensors)),
                          ("base", lambda x: M.adapter_base(x.path)),
                          ("prompt layout", lambda x: x.marker.get("layout")),
                          ("trainable_token_indices", lambda x: x.config.get("trainable_token_indices"))):
            if get(a) != get(first):
                raise AdapterError(f"{a.spec} and {first.spec} differ in {what}: they were not trained alike")
        for name, t in a.tensors.items():
            if "lora_" not in name and t.shape != first.tensors[name].shape:
                raise AdapterError(f"{a.spec}: {name} has shape {tuple(t.shape)}, {first.spec} has "
                                   f"{tuple(first.tensors[name].shape)}")
    for name in TOKENIZER_FILES:  # adapters that carry a tokenizer must carry the same one
        if len({_tokenizer_identity(p) for a in adapters if (p := a.path / name).is_file()}) > 1:
            raise AdapterError(f"{name} differs between the adapters: they do not share a tokenizer")


def _tokenizer_identity(path: Path) -> bytes | str:
    """What must match for two adapters to share a tokenizer: for `tokenizer.json` the id of every piece
    and added token (versions of `tokenizers` write the same merges as "a b" strings or as pairs, so the
    bytes differ); for the other files, their bytes."""
    if path.name != "tokenizer.json":
        return path.read_bytes()
    data = json.loads(path.read_text(encoding="utf-8"))
    added = sorted((t.get("id"), t.get("content")) for t in data.get("added_tokens") or [])
    return json.dumps([(data.get("model") or {}).get("vocab"), added], sort_keys=True)


def _normalised(weights: list[float] | None, n: int) -> list[float]:
    weights = [1.0] * n if weights is None else list(weights)
    if len(weights) != n:
        raise AdapterError(f"{len(weights)} weights for {n} adapters")
    if any(w <= 0 or not math.isfinite(w) for w in weights):
        raise AdapterError(f"weights must be positive numbers, got {weights}")
    total = sum(weights)
    return [w / total for w in weights]


def merge_tensors(adapters: list[Adapter], weights: list[float]) -> dict:
    """The merged state dict: stacked A's, weighted and scaled B's, averaged token rows."""
    import torch

    out = {}
    for name in adapters[0].tensors:
        if ".lora_A." in name:
            out[name] = torch.cat([a.tensors[name] for a in adapters], dim=0).contiguous()
        elif ".lora_B." in name:
            out[name] = torch.cat([a.tensors[name] * (w * a.scaling) for a, w in zip(adapters, weights)],
                                  dim=1).contiguous()
        elif name.endswith("trainable_tokens_delta"):
            out[name] = sum(a.tensors[name] * w for a, w in zip(adapters, weights))
        else:
            raise AdapterError(f"{adapters[0].spec}: tensor {name} is neither LoRA A/B nor trainable-token rows")
    return out


def truncate_rank(tensors: dict, rank: int) -> float:
    """Replace each scale-1 LoRA pair (B, A) in `tensors` by the best rank-`rank` approximation of B·A
    (truncated SVD, computed on the factors: QR of B and Aᵀ, then the SVD of a small R x R matrix), so an
    average of several adapters can be stored at the size of one. Returns the smallest share of a weight
    update's energy (squared singular values) that was kept."""
    import torch

    kept = 1.0
    for a_name in [n for n in tensors if ".lora_A." in n]:
        b_name = a_name.replace(".lora_A.", ".lora_B.")
        A, B = tensors[a_name].double(), tensors[b_name].double()     # R x in, out x R
        if A.shape[0] <= rank:
            continue
        qb, rb = torch.linalg.qr(B)
        qa, ra = torch.linalg.qr(A.T)
        u, sv, vh = torch.linalg.svd(rb @ ra.T)
        root = sv[:rank].sqrt()
        tensors[b_name] = (qb @ u[:, :rank] * root).to(tensors[b_name].dtype).contiguous()
        tensors[a_name] = (root[:, None] * vh[:rank] @ qa.T).to(tensors[a_name].dtype).contiguous()
        total = float((sv ** 2).sum())
        kept = min(kept, float((sv[:rank] ** 2).sum()) / total if total else 1.0)
    return kept


def merge_adapters(specs: list[str], out: str | Path, weights: list[float] | None = None,
                   rank: int | None = None) -> Path:
    """Write the weighted average of LoRA adapters ``specs`` to ``out`` (weights normalised to sum 1):
    exact, at the sum of their ranks, or its best approximation at `rank` (`truncate_rank`)."""
    from safetensors.torch import save_file

    if len(specs) < 2:
        raise AdapterError("merging needs at least two adapters")
    adapters = [load_adapter(s) for s in specs]
    weights = _normalised(weights, len(adapters))
    _check_compatible(adapters)
    out = Path(out)
    if out.resolve() in {a.path.resolve() for a in adapters}:
        raise AdapterError(f"{out}: the output directory must not be one of the inputs")
    full_rank = sum(a.config["r"] for a in adapters)
    if rank is not None and rank < 1:
        raise AdapterError(f"--rank must be a positive number, got {rank}")
    rank = min(rank or full_rank, full_rank)
    out.mkdir(parents=True, exist_ok=True)

    tensors = merge_tensors(adapters, weights)
    kept = truncate_rank(tensors, rank) if rank < full_rank else 1.0
    config = {**adapters[0].config, "r": rank, "lora_alpha": rank, "use_rslora": False,
              "target_modules": sorted({m for a in adapters for m in (a.config.get("target_modules") or [])})}
    save_file(tensors, str(out / WEIGHTS_FILE), metadata={"format": "pt"})
    (out / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    M.write_portable_base(out, M.adapter_base(adapters[0].path))
    # Tokenizer files are checked equal above; the grounding policies are the first adapter's that has any
    # (learned from its training rows; an average has no rows of its own).
    for name in (*TOKENIZER_FILES, POLICY_FILE):
        source = next((p for a in adapters if (p := a.path / name).is_file()), None)
        if source is not None:
            shutil.copyfile(source, out / name)
    keep = ("kind", "format", "base", "layout", "method", "control_tokens")
    marker = {k: adapters[0].marker[k] for k in keep if k in adapters[0].marker}
    # An average with a router routes: the hybrid runner offers it the GUI-step tool.
    marker.update(kind="adapter", method="lora", rank=rank, routes=any(a.marker.get("routes") for a in adapters),
                  **({"truncated_from_rank": full_rank, "energy_kept_min": round(kept, 6)} if rank < full_rank else {}),
                  merged_from=[
        {"spec": a.spec, "weight": round(w, 6), "r": a.config["r"], "lora_alpha": a.config["lora_alpha"],
         "sha256": M.sha256_file(a.path / WEIGHTS_FILE), "steps": a.marker.get("steps"),
         "data": (a.marker.get("config") or {}).get("data")} for a, w in zip(adapters, weights)])
    M.write_marker(out, marker)
    return out
