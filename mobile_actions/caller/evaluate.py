"""Evaluate a caller: greedy generation for every row, parse, validate, score with the core scorer.

Generation is batched with left padding (prompts sorted by length so a batch pads little) and uses
the KV cache; it stops on `<end_of_turn>`, `<start_function_response>` or `<eos>`, as FunctionGemma
does. An output that does not parse is an invalid prediction with its raw text kept, never a crash:
the score must count it.

Unconstrained by default: that measures the model, as FunctionGemma's published numbers do. With
`grammar=True` each row decodes under its own catalogue's call grammar (`mobile_actions.decoding.grammar`,
the one the ONNX runtime and the PyTorch caller of `run` use), grounded in the row's conversation
(`mobile_actions.decoding.grounding`) unless `grounding=False`: what `run` delivers (the ONNX runtime
also forces unique continuations without a model step, which can tokenize them differently).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from mobile_actions import wire
from mobile_actions.calls import turn_calls
from mobile_actions.dataset import Row, prompt_completion
from mobile_actions.scoring import Prediction, Report, score

REPORT_NAME, PREDICTIONS_NAME = "report.json", "predictions.jsonl"


@dataclass
class EvalConfig:
    batch_size: int = 8
    max_new_tokens: int = wire.MAX_CALL_TOKENS
    layout: str | None = None     # None: the layout the model was trained with (its marker), else "official"
    threads: int | None = None    # torch intra-op threads; None leaves torch's default
    progress: bool = True
    grammar: bool = False         # decode under each row's call grammar (see the module docstring)
    grounding: bool = True        # with the grammar: values narrowed to the conversation (decoding.grounding)


def model_folder(spec: str | Path) -> Path | None:
    """The folder whose marker and ``grounding.json`` describe a model spec (None for ``base``/hub ids)."""
    from mobile_actions.caller import model as M

    spec = str(spec)
    if spec in M.BUNDLED_CALLERS:
        return M.BUNDLED_CALLERS[spec]
    path = Path(spec).expanduser()
    return path if spec != "base" and path.is_dir() else None


def model_layout(spec: str | Path) -> str:
    """The developer-turn layout a model expects: recorded by our training, `official` otherwise."""
    return model_marker(spec).get("layout", "official")


def model_marker(spec: str | Path) -> dict:
    """What our training recorded about a model (`mobile_actions.json`; empty for other models)."""
    from mobile_actions.caller import model as M

    path = model_folder(spec)
    return M.read_marker(path) if path is not None else {}


def model_policies(spec: str | Path) -> dict[str, str]:
    """The grounding policies learned for a model (its ``grounding.json``; empty: datetimes only)."""
    from mobile_actions.decoding.grounding import read_policies

    return read_policies(model_folder(spec))


def to_prediction(raw: str, tools: Sequence[Any] | None = None) -> Prediction:
    """The model's calls as written, or with the `tools` declared tidied as `run` and `call` return them
    (`calls.turn_calls`)."""
    try:
        parsed = wire.parse(raw)
    except wire.WireParseError as e:
        return Prediction([], "", raw, str(e))
    return Prediction(turn_calls(parsed.calls, tools) if tools is not None else parsed.calls, parsed.text, raw)


class GrammarLogits:
    """A transformers logits processor: row r of the batch may only pick what `constraints[r]` allows.

    transformers calls it once per step with the ids so far; the token chosen at the previous step is
    the last column, so each row's automaton advances by it before the mask is built. Rows that have
    stopped are left alone (generate pads them)."""

    def __init__(self, constraints: Sequence[Any]) -> None:
        self.rows = list(constraints)
        self.width: int | None = None

    def __call__(self, input_ids, scores):
        import numpy as np
        import torch

        from mobile_actions.decoding.tokens import allowed_mask

        if self.width is not None and input_ids.shape[1] > self.width:
            for con, tid in zip(self.rows, input_ids[:, -1].tolist()):
                if con.state is not None:
                    con.advance(tid)
        self.width = input_ids.shape[1]
        mask = np.ones(tuple(scores.shape), dtype=bool)
        for r, con in enumerate(self.rows):
            if con.state is not None:
                mask[r] = allowed_mask(con.allowed(), scores.shape[-1])
                if not mask[r].any():  # greedy would pick id 0 among -inf and fail a step later
                    raise ValueError(f"row {r}: no token is allowed: the grammar reached a dead end")
                # greedy decoding: what the row would pick, and what the grammar takes instead (`settle`)
                best = int(scores[r].float().masked_fill(~torch.from_numpy(mask[r]).to(scores.device),
                                                         float("-inf")).argmax())
                # the step's logits matter only to a call's start (`Turn.settle`): the row is copied only then
                instead = con.settle(best, scores[r].float().cpu().numpy() if best == con.start_id else None)
                if instead != best:
                    mask[r] = False
                    mask[r][instead] = True
        return scores.masked_fill(~torch.from_numpy(mask).to(scores.device), float("-inf"))


def hf_constraints(tokenizer, policies: dict[str, str] | None = None):
    """`turn.Constraints` for a transformers tokenizer (the token table takes ~2 s for Gemma's 262k ids);
    `policies` turns grounding on (see `decoding.grounding`)."""
    from mobile_actions.caller.model import STOP_TOKEN_IDS
    from mobile_actions.decoding.tokens import TokenTable
    from mobile_actions.decoding.turn import Constraints

    return Constraints(TokenTable.from_tokenizer(tokenizer, STOP_TOKEN_IDS), policies=policies)


def generate(model, tokenizer, prompts: Sequence[str], cfg: EvalConfig | None = None,
             catalogues: Sequence[Any] | None = None, conversations: Sequence[Sequence[dict]] | None = None,
             policies: dict[str, str] | None = None) -> list[str]:
    """Greedy completions (text up to, not including, the stop token) for rendered prompts;
    with `cfg.grammar`, prompt i decodes under `catalogues[i]`'s call grammar, grounded in
    `conversations[i]` (its messages) when `cfg.grounding`."""
    import torch
    from tqdm.auto import tqdm

    from mobile_actions.caller.model import STOP_TOKEN_IDS

    cfg = cfg or EvalConfig()
    if cfg.grammar and (catalogues is None or len(catalogues) != len(prompts)):
        raise ValueError("grammar-constrained generation needs one catalogue per prompt")
    grounded = cfg.grammar and cfg.grounding and conversations is not None
    constraints = hf_constraints(tokenizer, (policies or {}) if grounded else None) if cfg.grammar else None
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    encoded = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]  # prompts carry <bos>
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = next(model.parameters()).device
    outputs: list[str] = [""] * len(prompts)
    bar = tqdm(total=len(prompts), desc="eval", unit="row", disable=not cfg.progress)
    for start in range(0, len(order), cfg.batch_size):
        idx = order[start:start + cfg.batch_size]
        width = max(len(encoded[i]) for i in idx)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, i in enumerate(idx):  # left padding: every prompt ends where generation starts
            ids[r, width - len(encoded[i]):] = torch.tensor(encoded[i])
            mask[r, width - len(encoded[i]):] = 1
        extra = {}
        if constraints is not None:
            extra["logits_processor"] = [GrammarLogits([
                constraints.for_tools(catalogues[i], conversations[i] if grounded else None) for i in idx])]
        with torch.inference_mode():
            out = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), do_sample=False,
                                 max_new_tokens=cfg.max_new_tokens, eos_token_id=list(STOP_TOKEN_IDS),
                                 pad_token_id=pad, use_cache=True, **extra)
        for r, i in enumerate(idx):
            new = out[r, width:].tolist()
            cut = next((k for k, t in enumerate(new) if t in STOP_TOKEN_IDS), len(new))
            outputs[i] = tokenizer.decode(new[:cut], skip_special_tokens=False)
        bar.update(len(idx))
    bar.close()
    return outputs


def evaluate(model: Any, rows: Sequence[Row], *, tokenizer: Any = None, limit: int | None = None,
             cfg: EvalConfig | None = None) -> tuple[Report, list[Prediction]]:
    """Score a caller on rows. `model` is a spec (``default``, a directory, a hub id) or a loaded
    model, in which case `tokenizer` is required."""
    cfg = cfg or EvalConfig()
    rows = list(rows)[:limit] if limit is not None else list(rows)
    layout = cfg.layout
    policies = None
    if isinstance(model, (str, Path)):
        from mobile_actions.caller.model import load_caller

        layout = layout or model_layout(model)
        policies = model_policies(model)
        model, tokenizer = load_caller(model)
    elif tokenizer is None:
        raise ValueError("a loaded model needs its tokenizer")
    layout = layout or "official"
    prompts = [prompt_completion(r, layout=layout)[0] for r in rows]
    raws = generate(model, tokenizer, prompts, cfg, [r.tools for r in rows], [r.messages for r in rows], policies)
    preds = [to_prediction(raw, r.tools if cfg.grammar else None) for raw, r in zip(raws, rows)]
    return score(rows, preds), preds


def write_report(out_dir: str | Path, report: Report, preds: Sequence[Prediction], rows: Sequence[Row],
                 meta: dict | None = None) -> Path:
    """`report.json` and, next to it, `predictions.jsonl` (one line per row, in order, with the
    gold row's location, so a wrong line can be found in the data)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = {**(meta or {}), **report.to_json(), "rows": report.row_results}
    (out / REPORT_NAME).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with open(out / PREDICTIONS_NAME, "w", encoding="utf-8") as f:
        for row, p in zip(rows, preds):
            f.write(json.dumps({"where": row.where, **p.to_json(),
                                "gold": [c.to_json() for c in row.calls]}, ensure_ascii=False) + "\n")
    return out / REPORT_NAME


def summary(report: Report) -> str:
    """A few human lines (the CLI prints them; `--json` prints the report instead)."""
    lines = [f"rows            {report.n}",
             f"exact match     {report.exact_match:.2%}   (official metric)",
             f"lenient match   {report.lenient_match:.2%}   (BFCL-style)",
             f"schema valid    {report.schema_valid:.2%}",
             f"invented values {report.invented}   (string values nobody said)"]
    if report.refusal_accuracy is not None:
        lines.append(f"refusals        {report.refusal_accuracy:.2%} of {report.n_refusal_rows}")
    for name, st in sorted(report.per_tool.items()):
        lines.append(f"  {name:<28} P {st.precision:.2f}  R {st.recall:.2f}  (gold {st.gold})")
    if report.errors:
        lines.append("errors (rows)   " + ", ".join(f"{k} {v}" for k, v in report.errors.items()))
        worst = list(report.argument_errors.items())[:5]
        if worst:
            lines.append("  wrong arguments: " + ", ".join(f"{k} {v}" for k, v in worst))
    return "\n".join(lines)
