"""The token layer over the call automaton (`grammar`): which token ids are legal now, the state after each
chosen token, and the tokens forced where the automaton admits only one continuation.

A token is allowed iff the automaton accepts its whole string from the current state. Structural states have a
finite set of next symbols, so the allowed tokens are found by a depth-first walk over the sorted token strings;
free strings, where almost every token is legal, use one precomputed mask. When the automaton admits only one
continuation (`call:` after `<start_function_call>`, the rest of a unique tool name), `forced_tokens()` returns
it tokenized, so the runtime appends it without a model step, except the last token before a choice, which the
model writes itself (token boundaries stay natural). At the very start the model may also write plain text (a
refusal); then only control strings are kept out of it. Around it, a `TurnPolicy` (`decoding.turn`) may settle
the model's choice and pick each call's grammar; the layer itself reads no request.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np

from mobile_actions.decoding.grammar import AfterCall, CallGrammar, Lit, Name, Start, State, Str
from mobile_actions.decoding.tokens import (CTRL_SYM, CTRL_SYMS, FORBIDDEN_IN_STRINGS, S_ESC, S_START, SYM_CTRL,
                                            TokenTable, pick, share_of)


# ============================================================================================ constraint
class _Text:
    """Marker state: the model chose a plain-text reply."""


TEXT = _Text()


class TurnPolicy(Protocol):
    """What decides, around the automaton, how a turn goes (`decoding.turn.Turn`): whether it must start with a
    call or answer in text, the token to take instead of the model's greedy choice, and the grammar of each call
    as it starts. The engine asks; it knows nothing of requests."""
    must_call: bool
    must_answer: bool
    call_share: float | None   # the probability of a call at the turn's first choice, when it was weighed
    def report(self, calls_text: str) -> list: ...   # what the policy changed in this turn, each with a `str`

    def settle(self, con: "Constraint", token_id: int, logits: np.ndarray | None = None,
               ids: np.ndarray | None = None) -> int: ...

    def call_grammar(self, con: "Constraint") -> "CallGrammar": ...


class Constraint:
    """Per request: which token ids are legal now, and the state after each chosen token."""

    def __init__(self, grammar: CallGrammar, table: TokenTable, tokenizer=None, memo: dict | None = None,
                 turn: TurnPolicy | None = None):
        self.g, self.t, self.tokenizer, self.turn = grammar, table, tokenizer, turn
        self.state: Any = grammar.start()
        self.memo = memo if memo is not None else {}
        # A per-request grammar's states belong to one request: memoise them here, not in the shared memo.
        self.states = {} if grammar.per_request else self.memo
        self._ctrl_id = {CTRL_SYM[k]: v for k, v in table.control_ids.items()}
        self.syms: list[str] = []          # this turn's calls so far, in automaton symbols

    @property
    def calls_text(self) -> str:
        """This turn's calls so far, as text (control strings written out)."""
        return "".join(SYM_CTRL.get(c, c) for c in "".join(self.syms))

    @property
    def start_id(self) -> int:
        return self._ctrl_id[S_START]

    @property
    def rules(self) -> list[str]:
        """The rules that changed this turn so far (`TurnPolicy.report`), as lines for a result or a trace."""
        return [str(f) for f in self.turn.report(self.calls_text)] if self.turn is not None else []

    def settle(self, token_id: int, logits: np.ndarray | None = None, ids: np.ndarray | None = None) -> int:
        """The token to take instead of the model's greedy choice `token_id` (`TurnPolicy.settle`). Every
        runtime calls this on its choice, with the step's `logits` (over the vocabulary, or over `ids` when
        only those rows of the head were computed)."""
        return self.turn.settle(self, token_id, logits, ids) if self.turn is not None else token_id

    def share(self, token_id: int, logits: np.ndarray, ids: np.ndarray | None = None) -> tuple[float, int | None]:
        """`token_id`'s probability among the tokens allowed now, and the likeliest other one
        (`tokens.share_of`); `logits` as `settle` gets them."""
        logits = np.asarray(logits, dtype=np.float32).ravel()
        if ids is None:
            return share_of(token_id, logits, self.allowed())
        where = np.flatnonzero(ids == token_id)   # a sparse head computes exactly the allowed rows
        if not len(where):
            return 0.0, None
        share, other = share_of(int(where[0]), logits, np.ones(len(ids), dtype=bool))
        return share, (int(ids[other]) if other is not None else None)

    # ------------------------------------------------------------------ allowed
    def allowed(self) -> np.ndarray:
        """Either an int array of legal ids, or a bool mask over the vocabulary."""
        s = self.state
        must_call, must_answer = (self.turn.must_call, self.turn.must_answer) if self.turn else (False, False)
        if isinstance(s, Start) and not isinstance(s, AfterCall) and must_call:
            return np.array([self._ctrl_id[S_START]], dtype=np.int64)
        if must_answer and (s is TEXT or isinstance(s, Start) and not isinstance(s, AfterCall)):
            if "answer" not in self.memo:
                m = self.t.text_ok.copy()
                m[list(self.t.stop_ids)] = True
                self.memo["answer"] = m
            return self.memo["answer"]
        if s is TEXT or isinstance(s, Start) and not isinstance(s, AfterCall):
            key = "text" if s is TEXT else "start"
            if key not in self.memo:
                m = self.t.text_ok.copy()
                m[list(self.t.stop_ids)] = True
                m[self._ctrl_id[S_START]] = bool(self.g.tools)  # no tools: a call could never be finished
                self.memo[key] = m
            return self.memo[key]
        if isinstance(s, Str) and s.spec.kind == "free":
            return self._free_mask(s)
        hit = self.states.get(s)
        if hit is None:
            hit = self.states[s] = self._walk(s)
        return hit

    def _free_mask(self, s: Str) -> np.ndarray:
        m = self.t.string_ok
        extra_off = []
        for f in FORBIDDEN_IN_STRINGS:
            for k in range(1, len(f)):
                if s.content.endswith(f[:k]):
                    extra_off.append(self.t.ids_starting_with(f[k:]))
        m = m.copy() if extra_off else m.copy()
        for ids in extra_off:
            m[ids] = False
        m[self._ctrl_id[S_ESC]] = True
        return m

    def _walk(self, s: State) -> np.ndarray:
        ids: list[int] = list(self.t.stop_ids) if s.can_stop else []
        keys, key_ids = self.t.keys, self.t.key_ids

        def dfs(prefix: str, state: State) -> None:
            syms = state.next_syms()
            if syms is None:
                raise AssertionError("a free string cannot be entered inside a token")
            for c in syms:
                if c in CTRL_SYMS:
                    if not prefix:
                        ids.append(self._ctrl_id[c])
                    continue
                p = prefix + c
                lo, hi = self.t.prefix_range(p)
                if lo == hi:
                    continue
                ns = state.step(c)
                if ns is None:
                    continue
                j = lo
                while j < hi and keys[j] == p:
                    ids.append(int(key_ids[j]))
                    j += 1
                if j < hi:
                    dfs(p, ns)

        dfs("", s)
        return np.array(sorted(set(ids)), dtype=np.int64)

    # ------------------------------------------------------------------ advance
    def advance(self, token_id: int) -> None:
        s = self.state
        if token_id in self.t.stop_ids:
            self.state = None
            return
        text = self.t.strings[token_id]
        if s is TEXT or isinstance(s, Start):
            if text == S_START:
                grammar = self.turn.call_grammar(self) if self.turn is not None else self.g
                self.state = Lit("call:", Name("", grammar))
                self.syms.append(text)
            elif isinstance(s, AfterCall):
                raise ValueError(f"token {token_id} ({text!r}) is not allowed here")
            else:
                self.state = TEXT
            return
        for sym in text:
            s = s.step(sym)
            if s is None:
                raise ValueError(f"token {token_id} ({text!r}) is not allowed here")
        self.state = s
        self.syms.append(text)

    @property
    def in_call(self) -> bool:
        return self.state is not TEXT and self.state is not None and not isinstance(self.state, Start)

    # ------------------------------------------------------------------ forced
    def take(self, token_id: int) -> list[int] | None:
        """Advance by the chosen token and then by every token the grammar forces after it: those forced
        tokens, which the runtime appends without a model step (None: the turn is over)."""
        self.advance(token_id)
        if self.state is None:
            return None
        forced = self.forced_tokens()
        for f in forced:
            self.advance(f)
        return forced

    def forced_tokens(self) -> list[int]:
        """Tokens for the only legal continuation from here (empty when there is a choice)."""
        s = self.state
        if not self.in_call or self.tokenizer is None:
            return []
        syms = []
        while s is not None and not s.can_stop:
            nxt = s.next_syms()
            if nxt is None or len(nxt) != 1:
                break
            (c,) = nxt
            syms.append(c)
            s = s.step(c)
        if not syms:
            return []
        out: list[int] = []
        run = ""
        for c in syms + [None]:
            if c is None or c in CTRL_SYMS:
                if run:
                    ids = self._encode(run)
                    if ids is None:
                        return out  # cannot tokenize exactly: stop forcing before this run
                    # A run that ends where the model has a choice keeps its last token back: the model
                    # writes it, merged with what follows as in training ("_on" / "_off", not "_o" +
                    # "n"; "{}" not "{" + "}"). Forcing a split the model never saw derails it.
                    out += ids if c is not None else ids[:-1]
                    run = ""
                if c is not None:
                    out.append(self._ctrl_id[c])
            else:
                run += c
        return out

    def _encode(self, text: str) -> list[int] | None:
        key = ("enc", text)
        if key not in self.memo:
            ids = self.tokenizer.encode(text, add_special_tokens=False).ids
            ok = "".join(self.t.strings[i] or "\0" for i in ids) == text
            self.memo[key] = list(ids) if ok else None
        return self.memo[key]


def constrain_sequence(grammar: CallGrammar, table: TokenTable, logits_seq: Sequence[np.ndarray],
                       tokenizer=None, max_tokens: int = 256) -> list[int]:
    """Greedy decoding over given per-step logits (a test/diagnostic helper without a model)."""
    c = Constraint(grammar, table, tokenizer)
    out: list[int] = []
    for step in range(max_tokens):
        logits = logits_seq[step % len(logits_seq)]
        tid = c.settle(pick(logits, c.allowed()), logits)
        out.append(tid)
        forced = c.take(tid)
        if forced is None:
            break
        out += forced
    return out
