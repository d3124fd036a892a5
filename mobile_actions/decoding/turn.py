"""How a turn goes around the call automaton: reading the conversation into a typed plan, and the decisions
the engine asks for while decoding (a call owed, the grammar of each call).

Why apart from `grammar`: the automaton only answers "which tokens keep this a valid call"; everything that
depends on what the person wrote — which clauses ask for what (`coverage`), which are not asked for at all
(`acting`), which values a request offers (`grounding`) — is read here, once per request, into a `TurnPlan`,
and a `Turn` applies it. The three decode loops (ONNX runtime, PyTorch greedy, `eval --grammar`) all get their
`Constraint` from `Constraints.for_tools`, so they decode a request the same way.

What a turn may be made to do is deliberately little: keep going with a call only for a tool that changes
nothing (`Tool.effect` ``none``), restrict a call the model starts to the clause it answers, and end in text
when tool results have answered the request. A call that changes or sends something is always the model's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from mobile_actions import acting
from mobile_actions.calls import argument_schema
from mobile_actions.catalog import Catalogue
from mobile_actions.decoding import coverage
from mobile_actions.decoding.datetimes import resolve
from mobile_actions.decoding.constraint import Constraint
from mobile_actions.decoding.grammar import AfterCall, CallGrammar, Start
from mobile_actions.decoding.grounding import Grounding, unnamed_choices, words_said
from mobile_actions.decoding.spans import READING
from mobile_actions.decoding.tokens import FORBIDDEN_IN_STRINGS, TokenTable
from mobile_actions.wire import called_names, parse

Values = dict[str, dict[str, "list[str] | dict"]]   # per tool and argument: the values left, or a narrowed schema


@dataclass(frozen=True)
class Rule:
    """One decision the toolkit makes around the model, by name: each shows in a result's `rules` when it fires,
    can be switched off (`Constraints(off=...)`), and is measured by `mobile-actions rules --data`."""
    name: str
    says: str


OWED_CALL = Rule("owed-call", "a turn that would end while a clause is still owed goes on with a call, when a tool "
                              "that changes nothing answers that clause")
CLAUSE_VALUES = Rule("clause-values", "a call made for a clause takes that clause's date-time, address, number and, "
                                      "in a list, its copied words")
FIRST_ITEM = Rule("first-item", "the first call of a request that lists items takes the first item's date-time, "
                                "address and number, and none a later item writes")
OWED_ADDRESS = Rule("owed-address", "a follow-up that still owes an address the person wrote, to a tool that "
                                    "changes nothing and takes it, starts with a call")
ANSWERED = Rule("answered", "a follow-up whose request the earlier calls have covered is answered in text")
UNNAMED_CHOICE = Rule("unnamed-choice", "an optional enum or yes/no argument the request names nothing of (no word "
                                        "of its name or values) is left out; of an enum, only the values it names "
                                        "are kept (`grounding.unnamed_choices`)")
CALL_BY_MASS = Rule("call-by-mass", "the turn's first choice, a call or a reply in words, goes to the one the model "
                                    "gives more probability in all: a call's start against every word it could "
                                    "begin a reply with, not against the likeliest one alone")
TURN_RULES = (CALL_BY_MASS, OWED_CALL, CLAUSE_VALUES, FIRST_ITEM, OWED_ADDRESS, ANSWERED, UNNAMED_CHOICE)
# Around the decoded turn (the runtimes apply them, not the `Turn`):
LEFT_OUT = Rule("left-out", "a clause the turn left out that only a call that changes something answers is asked "
                            "about on its own, and only that clause's tools are kept (`runtime.with_left_out`)")
GATE = Rule("gate", "a call the request does not ask for (negated, a question, hypothetical, reported, past, "
                    "taken back) is refused before dispatch (`acting.gate`)")
RULES = (*TURN_RULES, LEFT_OUT, GATE)


@dataclass(frozen=True)
class Fired:
    """A rule that changed this turn, and how ("owed-call: clause 2 'show me the map' → show_map")."""
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


@dataclass
class TurnPlan:
    """What reading one request decided before decoding: its clauses (`coverage.Clause`), the ones it does not
    ask for (`acting.unasked`: negated, questions, hypothetical, reported, past, taken back), the GUI-step tool
    if offered, the grammar of the tools narrowed to the request's values, and whether the turn must start
    with a call (an address still owed to a tool that changes nothing) or answer in text (tool results have
    covered the request)."""
    catalogue: Catalogue
    grounding: Grounding
    grammar: CallGrammar
    clauses: list[coverage.Clause]
    unasked: frozenset[int]
    fallback: str | None
    must_call: bool
    must_answer: bool
    off: frozenset[str] = frozenset()   # names of rules switched off
    choices_left_out: dict[str, list[str]] = field(default_factory=dict)   # per tool (`UNNAMED_CHOICE`)


def plan_turn(catalogue: Catalogue, grounding: Grounding, off: frozenset[str] = frozenset()) -> TurnPlan:
    """Read `grounding`'s request against `catalogue` into a `TurnPlan`; the rules named in `off` are not
    applied."""
    clauses = coverage.clauses(grounding.request, catalogue)
    # Clauses the person does not ask for ("send no email to ...", "should I save ...?") are never owed.
    unasked = acting.unasked(grounding.request, [c.text for c in clauses])
    fallback = coverage.fallback_tool(catalogue)
    schemas = {t.name: grounding.tool_schema(t, clauses) for t in catalogue}
    said = words_said(grounding.user_text)
    left_out = {} if UNNAMED_CHOICE.name in off else {
        name: changed for name, schema in schemas.items()
        if (changed := unnamed_choices(schema, said, argument_schema(catalogue[name])))}
    grammar = CallGrammar(schemas, READING, per_request=True)
    # A follow-up that still owes an address the user wrote, to a tool that takes it and changes nothing: a
    # call, not text. A call that changes or sends something is never forced: the model makes it or not.
    owed = set(grounding.owed_emails)
    must_call = OWED_ADDRESS.name not in off and bool(owed) and any(owed & set(p.get("enum") or ()) for name, s in schemas.items()
                                   if name in grammar.tools and catalogue[name].effect == "none"
                                   for p in (s.get("properties") or {}).values() if isinstance(p, dict))
    # A follow-up whose request the earlier calls have covered, owing no address: a text reply. A 270M model
    # otherwise answers "All done" results with one more call, e.g. the map's answer mailed to an address the
    # request gave a contact.
    must_answer = (ANSWERED.name not in off and grounding.after_results and not owed and bool(clauses)
                   and coverage.owed(clauses, grounding.calls, grammar.tools, fallback, True, unasked) is None)
    return TurnPlan(catalogue, grounding, grammar, clauses, unasked, fallback, must_call, must_answer, off, left_out)


@dataclass
class Turn:
    """A `TurnPlan` applied while one request decodes (`grammar.TurnPolicy`)."""
    plan: TurnPlan
    forced: set[int] = field(default_factory=set)              # the clauses that have forced a call
    owed: tuple[int, tuple[str, ...]] | None = None            # (clause, tools) the next call is for
    fired: list[Fired] = field(default_factory=list)
    # the probability of a call at the turn's first choice, when the model chose one (`CALL_BY_MASS` weighs it)
    call_share: float | None = None

    def __post_init__(self) -> None:
        owed = ", ".join(self.plan.grounding.owed_emails)
        if self.plan.must_call:
            self.fired.append(Fired(OWED_ADDRESS.name, f"a call first ({owed} owed)"))
        if self.plan.must_answer:
            self.fired.append(Fired(ANSWERED.name, "a text reply: the tool results cover the request"))

    def _on(self, rule: Rule) -> bool:
        return rule.name not in self.plan.off

    def report(self, calls_text: str) -> list[Fired]:
        """The rules that changed this turn, given the calls it has written so far: the options a called tool
        could not be given (`UNNAMED_CHOICE`) count for the tools called."""
        called = dict.fromkeys(called_names(calls_text))   # a call cut off at the token limit counts too
        return self.fired + [Fired(UNNAMED_CHOICE.name, f"{name}: {', '.join(self.plan.choices_left_out[name])} "
                                                        "left out or narrowed to what the request names")
                             for name in called if name in self.plan.choices_left_out]

    @property
    def must_call(self) -> bool:
        return self.plan.must_call

    @property
    def must_answer(self) -> bool:
        return self.plan.must_answer

    def _owed_call(self, con: Constraint, in_order: bool = False) -> tuple[int, tuple[str, ...]] | None:
        """A clause of the request no call answers yet, and the tools that may answer it (`coverage`). Only
        once the turn has made a call or answers tool results: the model itself decides whether the request is
        one for the tools at all."""
        p, gr = self.plan, self.plan.grounding
        if not (con.syms or gr.after_results) or not p.clauses:
            return None
        calls = [*gr.calls, *parse(con.calls_text).calls]
        return coverage.owed(p.clauses, calls, p.grammar.tools, p.fallback, gr.after_results,
                             self.forced | p.unasked, gr.request if in_order else None)

    def settle(self, con: Constraint, token_id: int, logits: np.ndarray | None = None,
               ids: np.ndarray | None = None) -> int:
        """The turn's first choice by mass (`CALL_BY_MASS`, when the step's `logits` are given); later, a call's
        start instead of the model's greedy choice when the model would end the turn (or answer tool results
        in text) while a clause of the request is owed (`coverage`) and a tool that changes nothing can answer
        it; that call is then restricted to those tools. A call that changes or sends something is never
        forced; one the model starts by itself is restricted to the owed clause's tools (`call_grammar`). The
        model keeps the turn whenever it continues by itself."""
        s, start = con.state, con.start_id
        first = isinstance(s, Start) and not isinstance(s, AfterCall) and not self.plan.grounding.after_results
        if first and token_id == start and logits is not None and self._on(CALL_BY_MASS) and not self.must_call:
            return self._first_by_mass(con, logits, ids)
        if token_id == start or not isinstance(s, Start):
            return token_id
        if first:
            return token_id   # the turn's first choice: the model decides whether this is a request for tools
        owed = self._owed_call(con) if self._on(OWED_CALL) else None
        if owed is not None:   # only a call that changes nothing is forced (`Tool.effect`); others are the model's
            i, tools = owed
            tools = tuple(t for t in tools if self.plan.catalogue[t].effect == "none")
            owed = (i, tools) if tools else None
        self.owed = owed
        if owed is None:
            return token_id
        self.fired.append(Fired(OWED_CALL.name, f"clause {owed[0]} {self.plan.clauses[owed[0]].text!r} owed: "
                                                f"a call to {' or '.join(owed[1])}"))
        return start

    def _first_by_mass(self, con: Constraint, logits: np.ndarray, ids: np.ndarray | None) -> int:
        """A call's start, or the likeliest word of a reply when the reply's words have more of the model's
        probability in all. Why: greedy compares the call's start with the single likeliest word, so a model
        unsure how to answer in words (its mass spread over many openings) calls a tool on a request that asks
        for nothing; the choice the turn makes is between two kinds of continuation, not two tokens."""
        start = con.start_id
        share, other = con.share(start, logits, ids)
        self.call_share = share
        if share >= 0.5 or other is None:
            return start
        self.fired.append(Fired(CALL_BY_MASS.name, f"a reply in words: a call had {share:.0%} of the probability"))
        return other

    def call_grammar(self, con: Constraint) -> CallGrammar:
        """The grammar of the call `con` is starting: the owed clause's tools and values, or the first call's."""
        s, grammar = con.state, self.plan.grammar
        if isinstance(s, AfterCall) and self.owed is None:   # a call the model goes on to by itself is
            self.owed = self._owed_call(con, in_order=True)   # for the next clause, in the user's order
        if isinstance(s, Start) and self.owed is not None:   # the call a clause is owed (`settle`)
            i, tools = self.owed
            self.forced.add(i)
            self.owed = None
            values = self._clause_values(i, tools) if self._on(CLAUSE_VALUES) else {}
            if values:
                self.fired.append(Fired(CLAUSE_VALUES.name, f"clause {i} {self.plan.clauses[i].text!r}: "
                                                            + _describe(values)))
            return grammar.only(tools, values)
        if not con.syms and self._on(FIRST_ITEM):
            return self._first_call()
        return grammar

    def _clause_values(self, i: int, tools: tuple[str, ...]) -> Values:
        """What a call made for clause `i` takes from that clause. A GUI step says the clause: its goal
        arguments (policy ``words``) are the clause's text, not words a model picks from the request ("write a
        note saying call Omar", not "call Omar"). A date-time, an address, a number or a copied text is one
        the clause says, when it says one: in "put standup mon 9am and retro fri 4pm on my calendar", retro's
        date-time is Friday's; in "Email sales@x.com, hello@y.com and info@z.com", the mail owed for the second
        item goes to hello@y.com; in "Put School photos on Wednesday, Parents' evening at Oakwood on Thursday at
        5:45pm and ...", the event owed for the list's second item is titled from that item."""
        p = self.plan
        gr, fallback, text = p.grounding, p.fallback, p.clauses[i].text
        if tools == (fallback,):
            if any(f in text for f in FORBIDDEN_IN_STRINGS):
                return {}
            props = argument_schema(p.catalogue[fallback]).get("properties") or {}
            return {fallback: {arg: [text] for arg, sub in props.items()
                               if isinstance(sub, dict) and gr.policy(fallback, arg, sub) == "words"}}
        said = resolve(text, gr.now) if gr.now is not None else []
        out: Values = {}
        for name in tools:
            for arg, sub in p.grammar.tools[name].props.items():
                if not isinstance(sub, dict):
                    continue
                policy = gr.policy(name, arg, sub)
                if policy in ("datetime", "email", "phone"):
                    keep = [v for v in sub.get("enum") or () if (v in said if policy == "datetime" else v in text)]
                else:   # a list item writes its own values; a clause may name them ("show me that on the map")
                    keep = spans_within(sub, gr.request, text) if policy == "span" and p.clauses[i].listed else None
                if keep:
                    out.setdefault(name, {})[arg] = keep
        return out

    def _first_call(self) -> CallGrammar:
        """The grammar of the turn's first call, which the model starts by itself: a tool that a list of the
        request names takes the first item's date-time, address and number, as the calls owed for the later
        items take theirs (in "add Dentist Monday 9am, Haircut Wed 4pm", the first event is Monday's), and never
        an address or number a later item writes ("save Ingrid ingrid@nrk.no and Ole Hansen +47 912 34 567":
        Ingrid has no number). The first item is the clause before the list's first `listed` one; its copied
        texts stay free, since a list read where there is none ("called 'X' and the text 'Y'") would cut them."""
        p = self.plan
        clauses, gr, grammar, values = p.clauses, p.grounding, p.grammar, {}
        for name in grammar.tools.keys() - {p.fallback}:
            first = next((i for i, c in enumerate(clauses) if c.listed and name in c.tools), None)
            if first is None:
                continue
            head = next((i for i in range(first - 1, -1, -1) if not clauses[i].listed), None)
            if head is None:
                continue
            mine = self._clause_values(head, (name,)).get(name, {})
            items = [c.text for c in clauses[first:] if c.listed and name in c.tools]
            for arg, sub in grammar.tools[name].props.items():
                if arg not in mine and isinstance(sub, dict) and gr.policy(name, arg, sub) in ("email", "phone"):
                    enum = sub.get("enum") or []
                    rest = [v for v in enum if not any(v in item for item in items)]
                    if len(rest) < len(enum) and (rest or arg not in grammar.tools[name].required):
                        mine[arg] = rest
            if mine:
                values[name] = mine
        if not values:
            return grammar
        self.fired.append(Fired(FIRST_ITEM.name, _describe(values)))
        return grammar.only(grammar.tools, values)


def _describe(values: Values) -> str:
    """"create_calendar_event.datetime ∈ 2 values; send_email.subject from 'retro fri 4pm'"."""
    parts = []
    for tool, args in values.items():
        for arg, v in args.items():
            what = (f"from {', '.join(map(repr, v.get('x-span') or v.get('x-span-whole') or ()))}" if isinstance(v, dict)
                    else f"one of {len(v)}" if v else "left out")
            parts.append(f"{tool}.{arg} {what}")
    return "; ".join(parts)


_CLAUSE_END = frozenset(".!?…)]\"'”’")


def spans_within(schema: dict, request: str, clause: str) -> dict | None:
    """A span argument's schema (`grounding`'s ``x-span`` pieces, ``x-span-whole`` values) narrowed to what lies
    in `clause`, a part of `request`; None when nothing of it does (the value is said elsewhere: "email him.
    The subject is ...")."""
    lo = request.find(clause)
    if lo < 0:
        return None
    hi = lo + len(clause)
    while hi < len(request) and request[hi] in _CLAUSE_END:   # a clause leaves out the "?" its question ends on
        hi += 1
    pieces = []
    for piece in schema.get("x-span") or ():
        i = request.find(piece)
        while i >= 0:
            a, b = max(i, lo), min(i + len(piece), hi)
            if a < b and request[a:b].strip():
                pieces.append(request[a:b])
            i = request.find(piece, i + 1)
    wholes = [w for w in schema.get("x-span-whole") or () if w in clause]
    if not pieces and not wholes:
        return None
    out = {k: v for k, v in schema.items() if k not in ("x-span", "x-span-whole")}
    return {**out, **({"x-span": list(dict.fromkeys(pieces))} if pieces else {}),
            **({"x-span-whole": wholes} if wholes else {})}


class Constraints:
    """One token table, a grammar per catalogue: a fresh `Constraint` for each request.

    Why shared: building the allowed-token sets of structural states is the slow part of constrained
    decoding, and they depend only on (table, catalogue); keyed by the catalogue's content, equal
    catalogues share one grammar and its memo. The ONNX runtime, `eval --grammar` and the PyTorch
    caller all decode through this."""

    def __init__(self, table: TokenTable, tokenizer=None, keep: int = 8, policies: dict | None = None,
                 off: frozenset[str] = frozenset()):
        """`policies` (``tool.argument -> policy``, `grounding.read_policies`) turns grounding on: every
        request's values are then narrowed to what its messages offer; None decodes under the grammar only.
        `off`: names of `TURN_RULES` not to apply (to measure what each does)."""
        self.table, self.tokenizer, self.keep = table, tokenizer, keep
        self.policies, self.off = policies, frozenset(off)
        self._grammars: dict[str, tuple[CallGrammar, dict]] = {}

    def for_tools(self, tools: Catalogue, messages: Sequence[dict] | None = None) -> Constraint:
        """`tokenizer` (a `tokenizers.Tokenizer`) enables `forced_tokens()`; without it nothing is forced.
        With grounding on, `messages` (the conversation so far) is what values may be taken from."""
        key = json.dumps([t.to_openai() for t in tools], sort_keys=True)
        if key not in self._grammars:
            if len(self._grammars) >= self.keep:
                self._grammars.pop(next(iter(self._grammars)))
            self._grammars[key] = (CallGrammar(tools, READING), {})
        grammar, memo = self._grammars[key]
        if self.policies is not None and messages is not None:
            plan = plan_turn(tools, Grounding.from_messages(messages, self.policies), self.off)
            return Constraint(plan.grammar, self.table, self.tokenizer, memo, Turn(plan))
        return Constraint(grammar, self.table, self.tokenizer, memo)
