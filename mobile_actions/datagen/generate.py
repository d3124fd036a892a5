"""Synthetic training data in the exact Mobile Actions row format, for any tool catalogue.

A row is `{"metadata", "tools", "messages", "meta"}`:

- `tools`: the whole catalogue in Mobile Actions shape (Gemini upper-case types), tool order and
  property order shuffled per row, as in the real data; or (`tool_order="catalogue"`) always in
  catalogue order, as the runtime renders it: then every row's prompt opens with the same stable
  prefix, which the runtime caches and the trainer runs once per batch (`--shared-prefix`).
- `messages`: developer (a random datetime 2024-2026 and its weekday), user (the request),
  assistant (`tool_calls` with 1-3 calls in the order they are asked for, or, for a request no
  tool can serve, `content` = a short refusal and no `tool_calls`).
- *Chains* (`chain_rate`, catalogues with Mobile Actions' `show_map` and `send_email`): "email the
  address of the Louvre to ana@example.com" needs the map's answer before the email can be
  written. Half of these rows are the first turn (gold: any other asked-for calls and
  `show_map(query)`); the other half are the follow-up the hybrid runner makes: the messages go on
  with that assistant turn and a `tool` message holding each call's result (for `show_map`, what the
  virtual phone's Maps card shows: `place`, `address`, `details`), and the gold is
  `send_email(to, subject="Address of <place as said>", body="<place>, <address>")`. Likewise a
  share (`FOLLOWUP_TEXT_SHARE`) of ordinary rows with a `show_map` call become a follow-up whose gold
  is a short text reply: nothing is left to call, and the caller must not invent an email.
- `meta` (an extra key; Mobile Actions readers ignore unknown keys):
  `{"families": [...], "split": "train"|"heldout", "refusal": bool, "style": {...}, "seed": S, "index": i}`.

**Phrasing families and the held-out split.** Every clause of a request comes from one phrasing
*family* (a sentence structure, e.g. `send_email/subject_first`, `generic/terse_kv`,
`refusal/weather`). Per group (one tool's families, the generic families, the refusal topics) a
fixed share (`HELDOUT_SHARE`, ~20 %, at least one when the group has two or more) is *held out*:
chosen by a hash of the family id, so it does not depend on the seed or on n. Train a caller on
`generate_rows(..., families="train")` and evaluate it on `generate_rows(..., families="heldout",
seed=<another>)` to measure generalisation to unseen phrasings. `metadata` is "eval" for rows
that use a held-out family, "train" otherwise. Surface noise (openers, closers, typos, casing) is
shared by both splits; only sentence structures are held out.

Deterministic: row i of seed S depends only on (S, i), through its own `random.Random`, so a
smaller n gives a prefix of a larger one and no global random state is touched.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from random import Random
from typing import Iterator, Mapping, Sequence

from mobile_actions.catalog import Catalogue, Tool
from mobile_actions.dataset import developer_message
from mobile_actions.datagen import declined, generic, mobile, refusals
from mobile_actions.datagen.dates import random_now
from mobile_actions.datagen.templates import Segment, Template
from mobile_actions.datagen.style import Style, compose, sample_style

TOOL_ORDERS = ("shuffled", "catalogue")  # per-row shuffle (as in the real data) | the catalogue's order
DEFAULT_START = datetime(2024, 1, 1)
DEFAULT_END = datetime(2027, 1, 1)
HELDOUT_SHARE = 0.2
OPTIONAL_RATE = 0.5
CALL_COUNT_WEIGHTS = (0.70, 0.22, 0.08)   # 1, 2, 3 calls
CHAIN_RATE = 0.1                          # share of rows that are address chains (first turn or follow-up)
FOLLOWUP_TEXT_SHARE = 0.3                 # share of plain rows with show_map that become a text follow-up
CHAIN_TOOLS = ("show_map", "send_email")
SHARED_RATE = 0.06                        # share of routing rows whose tool call and GUI goal share one verb
_DONE_REPLIES = ("Done.", "All done.", "Done. {place} is at {address}.", "Here it is: {place}, {address}.",
                 "I've shown {place} on the map.", "Done: {place}, {address}.")
SPLITS = ("train", "heldout", "all")
# Relative frequency of the Mobile Actions tools: tools with arguments need more examples to learn.
_TOOL_WEIGHTS = {"send_email": 1.4, "create_contact": 1.3, "create_calendar_event": 1.4, "show_map": 1.3,
                 "open_wifi_settings": 0.8, "turn_on_flashlight": 0.9, "turn_off_flashlight": 0.8}

# ---------------------------------------------------------------------------------------------- families
@dataclass(frozen=True)
class Family:
    """One phrasing structure: a template (Mobile Actions tools, refusals) or a schema-driven builder (generic)."""
    id: str                    # "send_email/subject_first", "generic/with_args", "refusal/weather"
    group: str                 # the partition group: a tool name, "generic", "refusal", "chain" or "shared"
    mode: str                  # "imp" (takes "can you ..." openers) or "free" (a whole utterance)
    template: Template | None = None
    builder: generic.Builder | None = None
    split: str = "train"       # "train" | "heldout"


def heldout_ids(ids: Sequence[str], share: float = HELDOUT_SHARE) -> set[str]:
    """The held-out members of one group: the lowest `share` by hash of id (at least one of two or more)."""
    if len(ids) < 2:
        return set()
    k = max(1, round(share * len(ids)))
    ranked = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    return set(ranked[:k])


def _with_splits(families: list[Family]) -> list[Family]:
    out = []
    for group in dict.fromkeys(f.group for f in families):
        members = [f for f in families if f.group == group]
        held = heldout_ids([f.id for f in members])
        out += [Family(f.id, f.group, f.mode, f.template, f.builder, "heldout" if f.id in held else "train") for f in members]
    return out


def _mobile_families(tool: Tool) -> list[Family] | None:
    """The rich grammar for a Mobile Actions tool, or None if this tool only shares the name."""
    specs = mobile.FAMILIES.get(tool.name)
    if specs is None or set(tool.properties) != mobile.ARGUMENTS[tool.name]:
        return None
    out = []
    for name, mode, source in specs:
        t = Template.compile(source)
        # A family that cannot show every required argument is not usable for this schema.
        if set(tool.required) <= t.always:
            out.append(Family(f"{tool.name}/{name}", tool.name, mode, template=t))
    return out or None


def _generic_families() -> list[Family]:
    return [Family(f"generic/{name}", "generic", mode, builder=b) for name, mode, b in generic.FAMILIES]


def _chain_families(catalogue: Catalogue) -> list[Family]:
    if not all(name in catalogue.names and _mobile_families(catalogue[name]) for name in CHAIN_TOOLS):
        return []
    return [Family(f"chain/{name}", "chain", mode, template=Template.compile(source))
            for name, mode, source in mobile.CHAIN_EMAIL_ADDRESS]


def _shared_families(catalogue: Catalogue) -> list[Family]:
    if not all(name in catalogue.names and _mobile_families(catalogue[name]) for name in mobile.SHARED_SWITCH_TOOLS):
        return []
    return [Family(f"shared/{name}", "shared", mode, template=Template.compile(source))
            for name, mode, source in mobile.SHARED_SWITCH]


def _refusal_families(catalogue: Catalogue) -> list[Family]:
    texts = [f"{t.name} {t.description}" for t in catalogue]
    return [Family(f"refusal/{t.name}", "refusal", "free", template=Template.compile(t.template))
            for t in refusals.usable_topics(texts)]


def _declined_families() -> list[Family]:
    return [Family(i, "declined", "free") for i in declined.frame_ids()]


def catalogue_families(catalogue: Catalogue) -> list[Family]:
    """Every phrasing family this catalogue's rows can use, each labelled train or heldout."""
    fams: list[Family] = []
    needs_generic = False
    for tool in catalogue:
        own = _mobile_families(tool)
        if own:
            fams += own
        else:
            needs_generic = True
    if needs_generic:
        fams += _generic_families()
    fams += _chain_families(catalogue) + _shared_families(catalogue) + _refusal_families(catalogue)
    return _with_splits(fams + _declined_families())


# ---------------------------------------------------------------------------------------------- plan
@dataclass
class _ToolPlan:
    tool: Tool
    families: list[Family]
    generic: bool
    verbs: list[str] = field(default_factory=list)
    weight: float = 1.0


@dataclass
class _Plan:
    """Everything that is the same for every row of one catalogue and split (computed once)."""
    catalogue: Catalogue
    tools: list[_ToolPlan]
    refusal_families: list[Family]
    chain_families: list[Family]
    shared_families: list[Family]
    tool_json: dict[str, dict]
    conflicts: frozenset[tuple[str, str]] = frozenset()
    refusal_weights: list[float] | None = None   # per refusal family; None = uniform (the rows of old seeds)
    declined_families: list[Family] = field(default_factory=list)


def _plan(catalogue: Catalogue, families: str, tool_weights: Mapping[str, float] | None = None) -> _Plan:
    if families not in SPLITS:
        raise ValueError(f"families must be one of {SPLITS}, got {families!r}")
    if not len(catalogue):
        raise ValueError("the catalogue has no tools")
    tool_weights = dict(tool_weights or {})
    bad = {k: w for k, w in tool_weights.items() if not w >= 0}
    if bad:
        raise ValueError(f"tool weights must be >= 0, got {bad}")
    fams = catalogue_families(catalogue)
    keep = [f for f in fams if families == "all" or f.split == families]
    # "refusal/<topic>" weights a refusal topic (e.g. refusal/sms=3 drills "text Ana ..." as no tool's job).
    topic_weights = {k: tool_weights.pop(k) for k in list(tool_weights) if k.startswith("refusal/")}
    unknown = sorted(set(tool_weights) - set(catalogue.names))
    topics = [f.id for f in fams if f.group == "refusal"]
    unknown += sorted(set(topic_weights) - set(topics))
    if unknown:
        raise ValueError(f"tool_weights names tools not in the catalogue or unknown refusal topics: "
                         f"{', '.join(unknown)} (the catalogue has {', '.join(catalogue.names)}; "
                         f"refusal topics: {', '.join(topics)})")
    tools = []
    for tool in catalogue:
        own = [f for f in keep if f.group == tool.name]
        if own:
            plan = _ToolPlan(tool, own, False, weight=_TOOL_WEIGHTS.get(tool.name, 1.0))
        else:
            plan = _ToolPlan(tool, [f for f in keep if f.group == "generic"], True, verbs=generic.verb_phrases(tool))
        plan.weight = tool_weights.get(tool.name, plan.weight)
        tools.append(plan)
    if not any(t.weight > 0 and t.families for t in tools):
        raise ValueError("tool_weights leave no tool to call (every tool with phrasings has weight 0)")
    # A chain calls both of its tools, so a weight of 0 on either ("never") rules chains out too.
    weight = {t.tool.name: t.weight for t in tools}
    chains = [f for f in keep if f.group == "chain"] if all(weight.get(t, 0) > 0 for t in CHAIN_TOOLS) else []
    conflicts = frozenset((a, b) for a in catalogue.names for b in catalogue.names if _conflicts(a, b))
    refusal_fams = [f for f in keep if f.group == "refusal"]
    refusal_weights = [topic_weights.get(f.id, 1.0) for f in refusal_fams] if topic_weights else None
    if refusal_weights is not None and refusal_fams and not sum(refusal_weights) > 0:
        raise ValueError("tool_weights give every refusal topic weight 0 (use refusal_rate=0 for no refusals)")
    return _Plan(catalogue, tools, refusal_fams, chains,
                 [f for f in keep if f.group == "shared"], {t.name: t.to_mobile_actions() for t in catalogue}, conflicts,
                 refusal_weights, [f for f in keep if f.group == "declined"])


# ---------------------------------------------------------------------------------------------- rows
def generate_rows(catalogue: Catalogue, n: int, seed: int = 0, *, families: str = "all", refusal_rate: float = 0.1,
                  start: datetime = DEFAULT_START, end: datetime = DEFAULT_END,
                  call_count_weights: Sequence[float] = CALL_COUNT_WEIGHTS, tool_order: str = "shuffled",
                  chain_rate: float = CHAIN_RATE, tool_weights: Mapping[str, float] | None = None,
                  declined_rate: float = 0.0) -> list[dict]:
    """`n` rows in Mobile Actions format for `catalogue`; see the module docstring for the row shape.

    families: "train" or "heldout" restricts every clause to that side of the phrasing partition; "all" uses both.
    refusal_rate: share of rows whose request no tool can serve (gold: a short text reply, no calls).
    start, end: the range of the developer message's "current" datetime.
    call_count_weights: relative weights of 1, 2, 3 calls per row.
    tool_order: "shuffled" (tools and their properties per row) or "catalogue".
    chain_rate: share of rows that are address chains (first turns and follow-ups; needs show_map + send_email).
    tool_weights: per-tool sampling weights by name (others keep their defaults), to drill the tools a model
      gets wrong without changing the phrasing families or the held-out split; `refusal/<topic>` keys weight
      the refusal topics the same way (e.g. `refusal/sms`).
    declined_rate: share of rows where one or more clauses name an action without asking for it (`declined`:
      negated, asked about, supposed, reported, told as done, taken back); their calls are left out of the gold.
      0 (the default) draws nothing, so the rows of earlier seeds stay as they were.
    """
    return list(iter_rows(catalogue, n, seed, families=families, refusal_rate=refusal_rate, start=start, end=end,
                          call_count_weights=call_count_weights, tool_order=tool_order, chain_rate=chain_rate,
                          tool_weights=tool_weights, declined_rate=declined_rate))


def iter_rows(catalogue: Catalogue, n: int, seed: int = 0, *, families: str = "all", refusal_rate: float = 0.1,
              start: datetime = DEFAULT_START, end: datetime = DEFAULT_END,
              call_count_weights: Sequence[float] = CALL_COUNT_WEIGHTS, tool_order: str = "shuffled",
              chain_rate: float = CHAIN_RATE, tool_weights: Mapping[str, float] | None = None,
              declined_rate: float = 0.0) -> Iterator[dict]:
    """`generate_rows` as a stream (same rows, same order)."""
    if tool_order not in TOOL_ORDERS:
        raise ValueError(f"tool_order must be one of {', '.join(TOOL_ORDERS)}, got {tool_order!r}")
    for name, rate in (("refusal_rate", refusal_rate), ("chain_rate", chain_rate), ("declined_rate", declined_rate)):
        if not 0 <= rate <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {rate}")
    if len(call_count_weights) < 1 or min(call_count_weights) < 0 or not sum(call_count_weights) > 0:
        raise ValueError(f"call_count_weights must be non-negative with a positive sum, got {list(call_count_weights)}")
    if end <= start:
        raise ValueError("end must be after start")
    plan = _plan(catalogue, families, tool_weights)
    for i in range(n):
        yield _row(plan, Random(f"mobile-actions/{seed}/{i}"), seed, i, families, refusal_rate, start, end,
                   call_count_weights, tool_order, chain_rate, declined_rate)


def _row(plan: _Plan, rng: Random, seed: int, index: int, families: str, refusal_rate: float,
         start: datetime, end: datetime, weights: Sequence[float], tool_order: str, chain_rate: float,
         declined_rate: float = 0.0) -> dict:
    now = random_now(rng, start, end).replace(microsecond=0)
    style = sample_style(rng)
    refusal = bool(plan.refusal_families) and rng.random() < refusal_rate
    # Drawn only when chains can happen, so chain_rate=0 (or a catalogue without them) keeps the old rows.
    chain = not refusal and chain_rate > 0 and bool(plan.chain_families) and rng.random() < chain_rate
    # Drawn only for routing catalogues, so the rows of any other catalogue stay as they were.
    shared = not refusal and not chain and bool(plan.shared_families) and rng.random() < SHARED_RATE
    # Drawn only when asked for, so declined_rate=0 keeps the rows of earlier seeds.
    decline = (not refusal and not chain and not shared and declined_rate > 0 and bool(plan.declined_families)
               and rng.random() < declined_rate)
    followup: dict | None = None
    kinds: list[str] = []
    if decline:
        clauses, used, calls, kinds = _declined(rng, plan, now, style, weights)
        assistant = ({"role": "assistant", "tool_calls": calls} if calls
                     else {"role": "assistant", "content": rng.choice(declined.REPLIES)})
    elif chain:
        clauses, used, calls, followup = _chain(rng, plan, now, style, weights)
        assistant = {"role": "assistant", "tool_calls": calls}
    elif shared:
        fam = rng.choice(plan.shared_families)
        slots, calls = mobile.shared_switch(rng, thing_first=fam.id.startswith("shared/thing"))
        clauses, used = [(fam.template.expand(rng, slots, style.quote), fam.mode)], [fam]
        assistant = {"role": "assistant", "tool_calls": calls}
    elif refusal:
        fam = (rng.choice(plan.refusal_families) if plan.refusal_weights is None
               else rng.choices(plan.refusal_families, plan.refusal_weights)[0])
        segs = fam.template.expand(rng, refusals.refusal_slots(rng, fam.template.mentioned), style.quote)
        clauses, used, calls = [(segs, fam.mode)], [fam], []
        assistant = {"role": "assistant", "content": rng.choice(refusals.REFUSALS)}
    else:
        clauses, used, calls = _clauses(rng, _pick_tools(rng, plan, weights), now, style)
        assistant = {"role": "assistant", "tool_calls": calls}
        if chain_rate > 0 and any(c["function"]["name"] == "show_map" for c in calls) \
                and rng.random() < FOLLOWUP_TEXT_SHARE:
            followup = {"kind": "text", "reply": rng.choice(_DONE_REPLIES)}
    text = compose(rng, style, clauses)
    split = "heldout" if any(f.split == "heldout" for f in used) else "train"
    messages = [developer_message(now), {"role": "user", "content": text}, assistant]
    turn = "first"
    if followup is not None and (followup["kind"] == "text" or rng.random() < 0.5):
        messages, turn = _follow_up(messages, followup), "followup"
    meta = {"families": [f.id for f in used], "split": split, "refusal": refusal, "style": style.tags(),
            "seed": seed, "index": index}
    if kinds:
        meta["declined"] = kinds
    if followup is not None:
        meta["turn"] = turn
    return {
        "metadata": "eval" if split == "heldout" else "train",
        "tools": _shuffled_tools(rng, plan) if tool_order == "shuffled" else list(plan.tool_json.values()),
        "messages": messages,
        "meta": meta,
    }


def _chain(rng: Random, plan: _Plan, now: datetime, style: Style,
           weights: Sequence[float]) -> tuple[list, list[Family], list[dict], dict]:
    """An address chain, maybe beside other calls: (clauses, families, first-turn calls, the follow-up)."""
    fam = rng.choice(plan.chain_families)
    query, to, slots = mobile.sample_chain_slots(rng)
    said = slots["place"].surface
    others = [tp for tp in _pick_tools(rng, plan, weights)[:2] if tp.tool.name not in CHAIN_TOOLS]
    clauses, used, calls = _clauses(rng, others, now, style)
    at = rng.randint(0, len(calls))
    clauses.insert(at, (fam.template.expand(rng, slots, style.quote), fam.mode))
    used.insert(at, fam)
    calls.insert(at, {"function": {"name": "show_map", "arguments": {"query": query}}})
    return clauses, used, calls, {"kind": "email", "to": to, "said": said}


def _declined(rng: Random, plan: _Plan, now: datetime, style: Style,
              weights: Sequence[float]) -> tuple[list, list[Family], list[dict], list[str]]:
    """Ordinary clauses, at least one of them framed so that it asks for nothing (`declined`); the calls are
    those of the others: (clauses, families, calls, the frame kinds used)."""
    clauses, used, calls = _clauses(rng, _pick_tools(rng, plan, weights), now, style)
    framable = [i for i, (_, mode) in enumerate(clauses) if mode == "imp"]
    if not framable:
        return clauses, used, calls, []
    chosen = {rng.choice(framable)} | {i for i in framable if rng.random() < 0.25}
    kinds, keep = [], []
    for i, (segs, mode) in enumerate(clauses):
        if i not in chosen:
            keep.append(calls[i])
            continue
        fam = rng.choice(plan.declined_families)
        clauses[i] = (declined.declined(rng, declined.frame(fam.id), segs), "free")
        used.append(fam)
        kinds.append(fam.id.split("/")[1])
    return clauses, used, keep, kinds


def _clauses(rng: Random, tools: Sequence[_ToolPlan], now: datetime,
             style: Style) -> tuple[list, list[Family], list[dict]]:
    """One clause and one call per tool, in order: (clauses, families, calls)."""
    clauses, used, calls = [], [], []
    for tp in tools:
        fam, segs, args = _clause(rng, tp, now, style)
        clauses.append((segs, fam.mode))
        used.append(fam)
        calls.append({"function": {"name": tp.tool.name, "arguments": args}})
    return clauses, used, calls


def map_result(query: str) -> dict:
    """What the hybrid runner reads off the virtual phone's Maps card after show_map(query)."""
    from mobile_actions.android.phone.places import lookup

    place = lookup(query)
    return {"status": "done", "place": place.name, "address": place.address, "details": place.summary}


def _follow_up(messages: list[dict], followup: dict) -> list[dict]:
    """The first turn's calls and their results, then the follow-up gold (an email, or a short reply)."""
    first = messages[-1]
    responses = []
    for c in first["tool_calls"]:
        fn = c["function"]
        result = map_result(fn["arguments"]["query"]) if fn["name"] == "show_map" else {"status": "done"}
        responses.append({"name": fn["name"], "response": result})
    found = next(r["response"] for r in responses if r["name"] == "show_map")
    if followup["kind"] == "email":
        args = {"to": followup["to"], "subject": f"Address of {followup['said']}",
                "body": f"{found['place']}, {found['address']}"}
        gold = {"role": "assistant", "tool_calls": [{"function": {"name": "send_email", "arguments": args}}]}
    else:
        gold = {"role": "assistant", "content": followup["reply"].format(**found)}
    return messages + [{"role": "tool", "content": responses}, gold]


def _pick_tools(rng: Random, plan: _Plan, weights: Sequence[float]) -> list[_ToolPlan]:
    usable = [t for t in plan.tools if t.families and t.weight > 0]
    k = min(rng.choices(range(1, len(weights) + 1), weights)[0], len(usable))
    chosen: list[_ToolPlan] = []
    pool = list(usable)
    while len(chosen) < k and pool:
        tp = rng.choices(pool, [t.weight for t in pool])[0]
        pool = [t for t in pool if t is not tp and (t.tool.name, tp.tool.name) not in plan.conflicts]
        chosen.append(tp)
    return chosen


def _conflicts(a: str, b: str) -> bool:
    """turn_on_x and turn_off_x (or enable/disable) in one request would be nonsense."""
    pairs = (("_on_", "_off_"), ("_on", "_off"), ("enable", "disable"), ("open", "close"), ("start", "stop"))
    return any(a.replace(x, y) == b or b.replace(x, y) == a for x, y in pairs)


def _clause(rng: Random, tp: _ToolPlan, now: datetime, style: Style) -> tuple[Family, list[Segment], dict]:
    fam = rng.choice(tp.families)
    if tp.generic:
        return fam, *_generic_clause(rng, tp, fam, now, style)
    values, slots = mobile.sample_slots(tp.tool.name, rng, now, fam.id.partition("/")[2])
    t = fam.template
    present = set(tp.tool.required) | (t.always & set(values))
    # A fixed order, not the set's (which follows PYTHONHASHSEED): reverse-sorted is the order most recorded
    # data files (model card; all but stage 5's) happened to be drawn in, so their commands make them again.
    present |= {a for a in sorted(t.conditional, reverse=True) if a in values and rng.random() < OPTIONAL_RATE}
    fill = {k: v for k, v in slots.items() if k.startswith("_") or k in present}
    segs = t.expand(rng, fill, style.quote)
    args = {k: values[k] for k in tp.tool.properties if k in present}
    return fam, segs, args


def _generic_clause(rng: Random, tp: _ToolPlan, fam: Family, now: datetime, style: Style) -> tuple[list[Segment], dict]:
    props = tp.tool.properties
    required = set(tp.tool.required)
    names = [k for k in props if k in required or rng.random() < OPTIONAL_RATE]
    filled = {k: generic.sample_value(rng, k, props[k], now) for k in names}
    said = list(names)
    rng.shuffle(said)
    args_said = [(generic.prop_phrase(k, props[k]), filled[k].surface) for k in said]
    segs = fam.builder(rng, rng.choice(tp.verbs), args_said, style.quote)
    return segs, {k: filled[k].value for k in names}


def _shuffled_tools(rng: Random, plan: _Plan) -> list[dict]:
    out = []
    for tool in plan.catalogue:
        fn = plan.tool_json[tool.name]["function"]
        params = dict(fn["parameters"])
        props = list(params.get("properties", {}).items())
        rng.shuffle(props)
        params["properties"] = dict(props)
        out.append({"function": {**fn, "parameters": params}})
    rng.shuffle(out)
    return out


# ---------------------------------------------------------------------------------------------- diversity
_WORD = re.compile(r"\w+(?:'\w+)?")


@dataclass(frozen=True)
class Diversity:
    """How varied the requests are: a handful of templates shows up as low distinct-text and 3-gram ratios."""
    rows: int
    distinct_texts: int
    distinct_text_ratio: float          # distinct user texts / rows
    trigrams: int                       # word 3-grams in all user texts
    distinct_trigrams: int
    distinct_trigram_ratio: float       # distinct / total 3-grams
    families: int                       # distinct phrasing families used
    refusals: int
    calls_per_row: dict[int, int]
    per_tool: dict[str, int]            # calls per tool

    def summary(self) -> str:
        """Human-readable lines for a CLI to print."""
        tools = ", ".join(f"{k} {v}" for k, v in sorted(self.per_tool.items(), key=lambda kv: -kv[1]))
        calls = ", ".join(f"{k}: {v}" for k, v in sorted(self.calls_per_row.items()))
        return (f"rows {self.rows}: distinct user texts {self.distinct_texts} ({self.distinct_text_ratio:.3f} of rows)\n"
                f"word 3-grams: {self.distinct_trigrams} distinct of {self.trigrams} ({self.distinct_trigram_ratio:.3f})\n"
                f"phrasing families used: {self.families}; refusals: {self.refusals} ({self.refusals / max(self.rows, 1):.1%})\n"
                f"calls per row: {calls}\n"
                f"calls per tool: {tools}")


def user_text(row: dict) -> str:
    return next((m.get("content") or "" for m in row["messages"] if m.get("role") == "user"), "")


def diversity(rows: Sequence[dict]) -> Diversity:
    """Diversity figures of generated (or any Mobile Actions) rows."""
    texts = [user_text(r) for r in rows]
    grams: Counter = Counter()
    for t in texts:
        words = _WORD.findall(t.lower())
        grams.update(zip(words, words[1:], words[2:]))
    per_tool: Counter = Counter()
    calls_per_row: Counter = Counter()
    refusals_n = 0
    fams: set[str] = set()
    for r in rows:
        calls = r["messages"][-1].get("tool_calls") or []     # the gold turn (a follow-up has one before it)
        calls_per_row[len(calls)] += 1
        refusals_n += r.get("meta", {}).get("refusal", not calls)   # a follow-up's text reply is no refusal
        per_tool.update(c["function"]["name"] for c in calls)
        fams.update(r.get("meta", {}).get("families", []))
    total = sum(grams.values())
    n = len(rows)
    return Diversity(n, len(set(texts)), len(set(texts)) / n if n else 0.0, total, len(grams),
                     len(grams) / total if total else 0.0, len(fams), refusals_n, dict(calls_per_row), dict(per_tool))
