"""Greedy decoding on PyTorch: the one KV-cached loop every PyTorch caller uses (the `run` caller, the
export's reference check, the caller benchmark), and `TorchCaller`, the caller a hybrid run talks to.

Why one loop: the export is checked token for token against this loop and the benchmark times it, so
all of them must stop, constrain and count in exactly the same way.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from mobile_actions import wire
from mobile_actions.caller.model import STOP_TOKEN_IDS


@dataclass
class Decoded:
    tokens: list[int]            # the new tokens, without the stop token
    stop: int | None             # the stop token that ended decoding, if one did
    ttft_ms: float               # prefill + first choice
    total_ms: float
    model_steps: int             # forward passes, prefill included


def greedy(model: Any, ids: Sequence[int], *, max_new_tokens: int, stop: Sequence[int] = STOP_TOKEN_IDS,
           constraint: Any = None, give_up: Callable[[list[int]], bool] | None = None) -> Decoded:
    """Greedy tokens after ``ids``. ``constraint`` (a `decoding.constraint.Constraint`) restricts every choice;
    ``give_up(tokens)`` ends decoding early (the `run` caller stops an answer that is not a call)."""
    import torch

    from mobile_actions.decoding.tokens import pick
    from mobile_actions.errors import GrammarDeadEnd

    t0 = time.perf_counter()
    out: list[int] = []
    ttft = None
    steps, ended = 1, None
    with torch.inference_mode():
        res = model(input_ids=torch.tensor([list(ids)]), use_cache=True)
        while len(out) < max_new_tokens:
            logits = res.logits[0, -1].float().numpy()
            try:
                nxt = constraint.settle(pick(logits, constraint.allowed()), logits) if constraint is not None else int(logits.argmax())
            except GrammarDeadEnd:
                break
            if ttft is None:
                ttft = (time.perf_counter() - t0) * 1e3
            if nxt in stop:
                ended = nxt
                break
            out.append(nxt)
            if constraint is not None:
                constraint.advance(nxt)
            if give_up is not None and give_up(out):
                break
            res = model(input_ids=torch.tensor([[nxt]]), past_key_values=res.past_key_values, use_cache=True)
            steps += 1
    total = (time.perf_counter() - t0) * 1e3
    return Decoded(out, ended, ttft if ttft is not None else total, total, steps)


class TorchCaller:
    """The caller on PyTorch: greedy, KV-cached, stops on the turn's end, and (like the ONNX runtime)
    decodes under the catalogue's call grammar, grounded in the conversation, so every call it writes
    parses and validates and copies what it should; `grounded=False` keeps the grammar only,
    `constrained=False` gives the bare model.

    Why a text cut-off: the runner needs calls; an answer that does not start with a call is a refusal
    whose words matter little, and an untrained model would otherwise ramble to ``max_new_tokens``.
    """

    def __init__(self, spec: str = "default", *, max_new_tokens: int = wire.MAX_CALL_TOKENS, text_tokens: int = 12,
                 constrained: bool = True, grounded: bool = True) -> None:
        from mobile_actions.caller.evaluate import model_layout, model_marker, model_policies
        from mobile_actions.caller.model import load_caller

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.model, self.tokenizer = load_caller(spec)
        self.warnings = [str(w.message) for w in caught if "adapter" in str(w.message)]
        self.layout = model_layout(spec)
        self.routes = bool(model_marker(spec).get("routes"))   # trained to route GUI steps (operate_screen)
        self.spec = spec
        self.max_new_tokens, self.text_tokens = max_new_tokens, text_tokens
        self.constrained = constrained
        self.policies = model_policies(spec) if grounded else None
        self._constraints = None  # decoding.turn.Constraints, built on the first call

    def call_messages(self, messages: list[dict], tools: Any):
        """As the ONNX runtime's: grounded, a left-out clause is asked about on its own (`with_left_out`)."""
        from mobile_actions.runtime import with_left_out

        res = self._turn(messages, tools)
        if self.constrained and self.policies is not None:
            res = with_left_out(res, messages, tools, lambda m: self._turn(m, tools))
        return res

    def _turn(self, messages: list[dict], tools: Any):
        from mobile_actions import wire
        from mobile_actions.caller.evaluate import hf_constraints
        from mobile_actions.runtime import result_from_raw

        if self.constrained and self._constraints is None:
            self._constraints = hf_constraints(self.tokenizer, self.policies)
        con = self._constraints.for_tools(tools, messages) if self.constrained else None
        prompt = wire.render(messages, tools, add_generation_prompt=True, layout=self.layout)
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        start_call = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
        d = greedy(self.model, ids, max_new_tokens=self.max_new_tokens, constraint=con,
                   give_up=lambda out: len(out) >= self.text_tokens and out[0] != start_call)
        raw = self.tokenizer.decode(d.tokens, skip_special_tokens=False)
        timings = {"prompt_tokens": len(ids), "new_tokens": len(d.tokens), "ttft_ms": round(d.ttft_ms, 1),
                   "total_ms": round(d.total_ms, 1)}
        return result_from_raw(raw, tools, timings, con.rules if con is not None else ())
