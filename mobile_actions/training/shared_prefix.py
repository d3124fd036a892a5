"""Training on the prompt prefix a step's rows share, run once instead of once per row.

In the cache layout every caller row opens with the same ~500 tokens (instruction + tool declarations) and
differs only in its last ~100 (datetime, request, answer). `shared_prefix_trainer(SFTTrainer)` runs that prefix
once per optimizer step (`StepPrefix`, `step_prefixes`), or once per microbatch where gradients are reduced
across processes (`shared_prefix_inputs`), and each row's suffix after it: the same loss and gradients for a
fraction of the work. With `prompt_gradients` "own" or "none" the prompt runs forward only, in part or whole
(a truncated gradient, for less time per step).
"""
from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from mobile_actions.training.held_attention import past_held

PROMPT_GRADIENTS = ("all", "own", "none")
MIN_SHARED_PREFIX = 32  # tokens; below this a second forward costs more than it saves


def shared_prefix_length(input_ids: Any, attention_mask: Any, labels: Any) -> int:
    """How many leading positions every row of the batch has in common (same ids, no padding, no
    label), kept one short of the first labelled position so that its logit comes from the suffix pass."""
    same = (input_ids == input_ids[:1]).all(0) & attention_mask.bool().all(0) & (labels == -100).all(0)
    n = int(torch.cumprod(same.int(), 0).sum())
    labelled = (labels != -100).any(0).nonzero()
    if len(labelled):
        n = min(n, int(labelled[0]) - 1)
    return max(n, 0)


def step_prefix_length(batches: Sequence[dict]) -> int:
    """The prefix every row of every microbatch of an optimizer step shares (`shared_prefix_length` over
    all of them), or 0 when a microbatch lacks what that needs (no attention mask, packed rows)."""
    if any("attention_mask" not in b or "labels" not in b or "cu_seq_lens_q" in b for b in batches):
        return 0
    first = batches[0]["input_ids"][0]
    n = min(shared_prefix_length(b["input_ids"], b["attention_mask"], b["labels"]) for b in batches)
    for b in batches[1:]:
        n = int(torch.cumprod((b["input_ids"][0, :n] == first[:n]).int(), 0).sum())
    return n


def step_prefixes(batches: Sequence[dict]) -> list[Any]:
    """The prompt prefixes of an optimizer step to run once each: first the one all its rows share
    (`step_prefix_length`), then, past it, the longer one each group of rows shares (at least
    `MIN_SHARED_PREFIX` more positions). Empty when the rows share too little.

    A group is rows that declare the same tools when the step mixes catalogues: with the routing tool
    and without (a caller trained for both), or the catalogues of a user's several apps. Rows part where
    their declarations do (~500 positions in), and without the groups every row of such a step ran the
    rest of its declarations on its own: a third of the positions of such a step in the long run.
    """
    n = step_prefix_length(batches)
    if n < MIN_SHARED_PREFIX:
        return []
    prompts = []
    for b in batches:
        for ids, mask, labels in zip(b["input_ids"].tolist(), b["attention_mask"].tolist(), b["labels"].tolist()):
            # the positions a prefix may cover: one short of the first labelled one (its logit is the suffix's)
            end = next((i - 1 for i, label in enumerate(labels) if label != -100), sum(mask))
            prompts.append(ids[:end])
    prompts.sort()
    out = [batches[0]["input_ids"][0, :n]]
    start = 0
    for i in range(1, len(prompts) + 1):
        common = 0 if i == len(prompts) else _common_length(prompts[i - 1], prompts[i])
        if common >= n + MIN_SHARED_PREFIX:
            continue
        if i - start > 1:   # sorted, so the first and the last of a run share what all of it shares
            out.append(torch.tensor(prompts[start][:_common_length(prompts[start], prompts[i - 1])]))
        start = i
    return out


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def rows_by_prefix(ids: Any, prefixes: Sequence[Any]) -> dict[int, list[int]] | None:
    """{index in `prefixes`: rows of `ids` it is the longest prefix of}, or None when a row does not even
    open with the first (the step's) prefix."""
    out: dict[int, list[int]] = {}
    for row in range(ids.shape[0]):
        fits = [k for k, p in enumerate(prefixes) if len(p) <= ids.shape[1] and bool((ids[row, :len(p)] == p).all())]
        if not fits or fits[0] != 0:
            return None
        out.setdefault(max(fits, key=lambda k: len(prefixes[k])), []).append(row)
    return out


def take_rows(inputs: dict, rows: Sequence[int]) -> dict:
    """The batch's `rows`, cut to the longest of them (rows are padded on the right)."""
    batch, width = inputs["input_ids"].shape
    keep = int(inputs["attention_mask"][rows].sum(1).max())
    out = {}
    for key, value in inputs.items():
        if hasattr(value, "shape") and value.dim() >= 1 and value.shape[0] == batch:
            value = value[list(rows)]
            if value.dim() >= 2 and value.shape[1] == width:
                value = value[:, :keep]
        out[key] = value
    return out


def run_prefix(model: Any, ids: Any, past: Any = None, attention_mask: Any = None) -> Any:
    """The KV cache of the prompt positions `ids` ([rows, n]) after `past` (the cache of the positions before
    them, if any). The head runs on no position (`logits_to_keep` empty): no logit of a prompt position is
    used, and one 262,144-wide row per batch row would cost a read of the whole table. (The model is called
    whole, not its decoder alone, so that the autocast accelerate wraps around its forward applies.)"""
    return model(input_ids=ids, past_key_values=past, attention_mask=attention_mask, use_cache=True,
                 logits_to_keep=torch.zeros(0, dtype=torch.long)).past_key_values


def copy_cache(cache: Any, kv: Any) -> Any:
    """A copy of `cache` whose layers hold `kv(tensor)` of their keys and values. The layers are copied too
    (the suffix pass appends to them); what else they keep (a sliding window's offsets) is shared."""
    out = copy.copy(cache)
    out.layers = [copy.copy(layer) for layer in cache.layers]
    for layer in out.layers:
        layer.keys, layer.values = kv(layer.keys), kv(layer.values)
    return out


def with_prefix(inputs: dict, cache: Any, n: int) -> dict:
    """`inputs` cut to the rows' suffixes after their `n` shared positions, with the prefix's KV `cache`
    (one row) broadcast to the batch as `past_key_values`."""
    ids, labels = inputs["input_ids"], inputs["labels"]
    rows = ids.shape[0]
    out = {**inputs, "input_ids": ids[:, n:], "labels": labels[:, n:],
           "past_key_values": copy_cache(cache, lambda t: t.expand(rows, -1, -1, -1))}
    if "position_ids" in inputs:
        out["position_ids"] = inputs["position_ids"][:, n:]
    return out


MIN_PROMPT_COLUMNS = 8   # fewer prompt columns than this before a batch's first answer: not worth a second pass


def answer_inputs(model: Any, inputs: dict) -> dict:
    """`inputs` with the prompt columns before the batch's first answer already run forward only, into
    `past_key_values`: what is left to run with gradients starts one column before the earliest answer.

    Why: in a caller row the answer is a third of the positions or less, and with a frozen base most of
    a LoRA step's backward is the input gradient of every position, layer by layer. Held fixed, the
    prompt's keys and values still shape the loss exactly (the forward is the same function), but the
    backward runs over the answer's positions only: LoRA learns from how the answer reads the prompt,
    not from how the prompt is written into its keys and values (Transformer-XL's segment memory, or
    truncated back-propagation through time). The rows are padded on the right, so the columns before
    the earliest answer hold real tokens in every row."""
    labels = inputs["labels"]
    labelled = labels != -100
    if not bool(labelled.any(1).all()):
        return inputs
    m = int(labelled.int().argmax(1).min()) - 1   # the column before an answer's first token carries its logit
    if m < MIN_PROMPT_COLUMNS:
        return inputs
    ids, mask, past = inputs["input_ids"], inputs.get("attention_mask"), inputs.get("past_key_values")
    seen = past.get_seq_length() if past is not None else 0
    with torch.no_grad():
        cache = run_prefix(model, ids[:, :m], past, None if mask is None else mask[:, :seen + m])
    out = {**inputs, "input_ids": ids[:, m:], "labels": labels[:, m:], "past_key_values": cache}
    if "position_ids" in inputs:
        out["position_ids"] = inputs["position_ids"][:, m:]
    return out


def shared_prefix_inputs(model: Any, inputs: dict) -> dict | None:
    """The batch's inputs with the prompt prefix every row shares already run, once.

    In the cache layout every caller row opens with the same ~500 tokens (instruction + tool
    declarations) and differs only in its last ~100 (datetime, request, answer). The prefix goes
    through the model once, with gradients; its KV cache is broadcast to the batch and handed in
    as `past_key_values` with only the rows' suffixes as `input_ids` (labels cut alike). Gradients
    flow into the prefix pass through the cache, so loss and gradients equal those of the plain
    forward (a test checks it); the work per batch of 16 shrinks about 4x. Whatever computes the
    loss from these inputs (trl's fused head, the model's own loss) is unchanged.
    Returns None when the batch shares too little (a single row, the official layout, which opens
    with the datetime) or is packed: the plain inputs are used then.
    """
    ids, labels = inputs["input_ids"], inputs["labels"]
    mask = inputs.get("attention_mask")
    if ids.shape[0] < 2 or mask is None or "cu_seq_lens_q" in inputs:
        return None
    n = shared_prefix_length(ids, mask, labels)
    if n < MIN_SHARED_PREFIX:
        return None
    return with_prefix(inputs, run_prefix(model, ids[:1, :n]), n)


@dataclass
class StepPrefix:
    """A prompt prefix run once for all the microbatches of an optimizer step.

    The weights do not change between the microbatches of a step, so their shared prefix has the same
    keys and values in each: it runs once, with gradients (`graph`). Each microbatch's suffix pass reads
    a detached copy (`leaves`), and its backward leaves the prefix's share of the gradient there; after
    the step's last microbatch one backward through the prefix pass takes the summed share. The
    gradients are those of running the prefix in every microbatch (by linearity), for one prefix pass
    per step instead of one per microbatch. A longer prefix that a group of the rows shares runs after
    its `parent` (the step's), from the parent's leaves; its backward, first, leaves its share there.
    """

    ids: Any      # [n]: the whole prefix, from position 0
    graph: Any    # the prefix pass's cache, its tensors in the autograd graph
    leaves: Any   # the same tensors, detached, requiring grad

    @classmethod
    def run(cls, model: Any, ids: Any, parent: "StepPrefix | None" = None) -> "StepPrefix":
        if parent is None:
            graph = run_prefix(model, ids[None])
        else:
            graph = run_prefix(model, ids[None, len(parent.ids):], copy_cache(parent.leaves, lambda t: t))
        # (the keys and values of layers that run without gradients, `train_top_layers`, take none)
        return cls(ids, graph, copy_cache(graph, lambda t: t.detach().requires_grad_(t.requires_grad)))

    def backward(self) -> None:
        """The prefix pass's backward, from what the suffix passes left on the leaves."""
        pairs = [(g, leaf.grad) for gl, ll in zip(self.graph.layers, self.leaves.layers)
                 for g, leaf in ((gl.keys, ll.keys), (gl.values, ll.values)) if leaf.grad is not None]
        if pairs:
            torch.autograd.backward([g for g, _ in pairs], [d for _, d in pairs])


def shared_prefix_trainer(base: type, prompt_gradients: str = "all") -> type:
    """`base` (trl's SFTTrainer) running the prompt prefixes its rows share once: once per optimizer step
    (`StepPrefix`, `step_prefixes`) in one process, once per microbatch (`shared_prefix_inputs`) where
    gradients are reduced across processes as each microbatch's backward runs. `prompt_gradients` (`PROMPT_GRADIENTS`):
    "own" runs the shared prefixes forward only, "none" the rest of each prompt too (`answer_inputs`)."""
    exact = prompt_gradients == "all"

    class SharedPrefixTrainer(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._prefixes: list = []                 # this step's `step_prefixes`
            self._runs: dict[int, StepPrefix] = {}    # the ones run so far, by index (per trainer, not per class)

        def get_batch_samples(self, epoch_iterator, num_batches, device):
            batches, items = super().get_batch_samples(epoch_iterator, num_batches, device)
            alone = self.accelerator.distributed_type.name == "NO" and self.accelerator.num_processes == 1
            self._prefixes = step_prefixes(batches) if alone and batches else []
            return batches, items

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            parts = None if return_outputs else self._suffix_parts(model, inputs)
            if not parts:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            # Each part's loss is its labelled tokens' share of the step's mean: the parts add up to the batch's.
            # Where the prompt is held no part's past takes a gradient: attention may skip computing it.
            with contextlib.nullcontext() if exact else past_held():
                return sum(super(SharedPrefixTrainer, self).compute_loss(model, part, False, num_items_in_batch)
                           for part in parts)

        def _suffix_parts(self, model, inputs: dict) -> list[dict] | None:
            """The microbatch as suffix passes after the step's prefixes: one per prefix its rows take."""
            training = model.training and torch.is_grad_enabled()
            groups = rows_by_prefix(inputs["input_ids"], self._prefixes) if self._prefixes and training else None
            if groups is None:
                with self._prompt_grad():
                    shared = shared_prefix_inputs(model, inputs)
                parts = [shared] if shared else None if exact else [inputs]
            else:
                whole = len(groups) == 1
                parts = [with_prefix(inputs if whole else take_rows(inputs, rows), self._run(model, k).leaves,
                                     len(self._prefixes[k])) for k, rows in groups.items()]
            if prompt_gradients != "none" or not training:
                return parts
            return [answer_inputs(model, part) for part in parts]

        def _prompt_grad(self):
            return contextlib.nullcontext() if exact else torch.no_grad()

        def _run(self, model, k: int) -> StepPrefix:
            if k not in self._runs:
                parent = None if k == 0 else self._run(model, 0)
                with self._prompt_grad():
                    self._runs[k] = StepPrefix.run(model, self._prefixes[k], parent)
            return self._runs[k]

        def _finish_prefix(self) -> None:
            runs, self._runs = self._runs, {}
            for k in sorted(runs, reverse=True):   # the groups' first: they leave their share on the step's
                runs[k].backward()

        def training_step(self, model, inputs, num_items_in_batch=None):
            loss = super().training_step(model, inputs, num_items_in_batch)
            if self.accelerator.sync_gradients:   # the step's last microbatch: before clipping and the update
                self._finish_prefix()
            return loss

    return SharedPrefixTrainer
