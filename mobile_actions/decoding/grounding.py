"""Grounded decoding: argument values a small model would invent or miscount are taken from what it was given.

A 270M caller gets the structure right under the call grammar but still writes values nobody said (an
email made up from a name, a subject re-capitalised) and datetimes off by a day. Grounding narrows each
string argument, per request, before decoding starts:

- ``span``: a verbatim substring of the user's words or of a tool result in the conversation; what the user
  put in quotes is taken whole or not at all (``x-span-whole``);
- ``words``: the words of the conversation in any order (a goal said in the user's words: "turn on the
  flashlight and Bluetooth" offers "turn on Bluetooth");
- ``email`` / ``phone``: one of the whole email addresses / phone numbers written there;
- ``datetime``: one of the candidates the date resolver reads from the user's words (`datetimes.resolve`);
- ``free``: any string (the call grammar alone).

An integer or number argument takes only a number the conversation says (`numbers`: as written, a time's hours
and minutes, a quantity in the argument's unit, a number of an earlier call); ``"x-grounding": "free"`` on it
lifts that.

A span argument whose gold values never hold a date or time (an event's title: learned as ``undated``) is
not taken from the request's date/time expressions: "a job interview on December 3rd at 11" cannot be titled
"December 3rd".

Which arguments are copied is learned from data (`learn_policies`: the share of gold values that are
verbatim spans, per ``tool.argument``; ``mobile-actions spans FILE`` writes it as ``grounding.json`` next
to a model) and can be set in a catalogue with ``"x-grounding": "span" | "email" | "phone" | "datetime" |
"free"`` on the argument. An optional argument with nothing to ground it is removed for that request, so
it cannot be invented. A tool whose *required* email or phone number appears nowhere in the conversation is
not callable in that request (``"x-callable": false``): a 270M model otherwise mails a follow-up's answer to
an address made from a name. Span arguments always have the user's words to copy from.

Grounding works by rewriting each tool's argument schema for the request (enums of the allowed values, an
``x-span`` list of sources); the grammar automaton then needs no knowledge of where values come from.
"""
from __future__ import annotations

import copy
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from mobile_actions import jsontext, lexicon
from mobile_actions.calls import argument_schema, value_kind
from mobile_actions.decoding.coverage import (EMAIL_RE, PHONE_RE, QUOTED_RE, VERBS, claimed_elsewhere, outside_others,
                                              switched)
from mobile_actions.decoding import days, numbers
from mobile_actions.decoding.datetimes import expression_spans, resolve, resolve_clocks
from mobile_actions.decoding.spans import ALWAYS_ENDS, END_CLASSES, GOES_ON_RE, end_class, inside_addresses

POLICIES = ("span", "words", "email", "phone", "datetime", "date", "time", "free")
RESOLVED = ("datetime", "date", "time")   # policies whose values the date resolver reads from the request
# A goal's words keep the dots, @ and slashes inside them ("example.com", "ana@x.com"): split, a goal says
# "example com" and the navigator types that.
GOAL_WORD_RE = re.compile(r"[^\W_]+(?:[.@/:][^\W_]+)*")
POLICY_FILE = "grounding.json"
SPAN_THRESHOLD = 0.95     # the share of verbatim gold values above which an argument is treated as copied
MIN_EXAMPLES = 5          # fewer gold values than this say nothing
CUES = "cues"             # in the policies mapping: {tool.argument: [cue, ...]} beside the policies
AFTER_RESULTS = "after_results"   # in the policies mapping: {tool.argument: policy} for turns after tool results
UNDATED = "undated"       # in the policies mapping: the span arguments whose values never hold a date or time
UNDATED_MAX = 0.01        # the share of gold values holding a date/time expression up to which an argument is undated
UNBROKEN = "unbroken"     # in the policies mapping: the span arguments whose values never end where a phrase goes on
ENDS_BEFORE = "ends_before"   # in the policies mapping: {tool.argument: [end class, ...]} a span's values end before
ENDS_MAX_WORDS = 0.02     # the most distinct words per gold value a span may end before and still be held to them
UNSEEN = "unseen"         # in the policies mapping: the policy of a plain string argument no data was learned from
# Most string values people give a tool are their own words: 89 % of the first 3,125 seed requests' plain string values
# (datasets/seed-catalogues) are verbatim in the conversation; the rest are mostly dates and times (read by the
# resolver) and values composed from several words.
UNSEEN_DEFAULT = "free"
NOW_PREFIX = "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "



def _string_args(tool) -> Iterable[tuple[str, dict]]:
    for name, schema in (argument_schema(tool).get("properties") or {}).items():
        if isinstance(schema, dict) and schema.get("type") == "string" and not schema.get("enum"):
            yield name, schema


# ============================================================================================ learning
@dataclass
class ArgumentStats:
    n: int = 0
    verbatim: int = 0
    dated: int = 0        # values that hold a date/time expression ("Dinner on Friday")
    cut: int = 0          # values that end where a phrase goes on with them ("Mehndi| at Aunty Farah's")
    ends: Counter = field(default_factory=Counter)   # what the values end before (`spans.end_class`)

    @property
    def share(self) -> float:
        return self.verbatim / self.n if self.n else 0.0


def conversation_sources(messages: Sequence[dict]) -> list[str]:
    """What the model was given that values may be copied from: user turns and tool results."""
    out = []
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            out.append(m["content"])
        elif m.get("role") == "tool":
            out += list(_strings(m.get("content")))
    return out


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        try:
            parsed = jsontext.loads(value)
        except jsontext.JSONTextError:   # text (or JSON no file may hold): the string itself
            yield value
            return
        if isinstance(parsed, str):
            yield parsed
        else:
            yield from _strings(parsed)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _ends_before_more(value: str, text: str) -> bool:
    """Whether `value` is written in `text` right before a phrase that goes on with it (`spans.GOES_ON_RE`)."""
    i = text.find(value)
    while i >= 0:
        if GOES_ON_RE.match(text, i + len(value)):
            return True
        i = text.find(value, i + 1)
    return False


def _policy(kind: str, s: ArgumentStats, threshold: float) -> str:
    if kind in RESOLVED:
        return kind
    return kind if s.n >= MIN_EXAMPLES and s.share >= threshold else "free"


def _entry(s: ArgumentStats, policy: str) -> dict:
    out = {"n": s.n, "verbatim": s.verbatim, "share": round(s.share, 4), "policy": policy}
    if policy == "span":
        out["dated"] = s.dated
        out[UNDATED] = s.dated <= UNDATED_MAX * s.n
        out["cut"] = s.cut
        out[UNBROKEN] = s.cut <= UNDATED_MAX * s.n
        # Held to what they end before when that is a few words ("in", "on" my calendar) besides punctuation and
        # dates; a first name ends before every surname there is, so it is not.
        words = [c for c in s.ends if c not in END_CLASSES]
        if s.ends and len(words) <= ENDS_MAX_WORDS * s.n:
            out[ENDS_BEFORE] = dict(sorted(((c, k) for c, k in s.ends.items() if c not in ALWAYS_ENDS),
                                           key=lambda ck: (-ck[1], ck[0])))
    return out


def learn_policies(rows: Iterable[Any], threshold: float = SPAN_THRESHOLD) -> dict:
    """Per ``tool.argument`` (string arguments): how many gold values there are, how many are verbatim
    substrings of the conversation, and the policy that follows. `rows` are `dataset.Row`s.

    Turns that answer tool results are counted apart (``after_results``): there a value may be composed
    from a result ("Address of the Louvre"), while in the user's own turn it is copied ("email ana that I'm
    running late"). Pooled, the follow-ups would turn copying off for every email subject."""
    stats: dict[tuple[bool, str], ArgumentStats] = {}
    kinds: dict[str, str] = {}
    for row in rows:
        sources = conversation_sources(row.messages)
        strings = {t.name: dict(_string_args(t)) for t in row.tools}
        after = bool(row.prompt_messages) and row.prompt_messages[-1].get("role") == "tool"
        for call in row.calls:
            for arg, value in call.arguments.items():
                schema = strings.get(call.name, {}).get(arg)
                if schema is None or not isinstance(value, str):
                    continue
                key = f"{call.name}.{arg}"
                kinds[key] = value_kind(arg, schema)
                s = stats.setdefault((after, key), ArgumentStats())
                s.n += 1
                s.verbatim += any(value in src for src in sources)
                s.dated += kinds[key] == "span" and bool(expression_spans(value))
                s.cut += kinds[key] == "span" and any(_ends_before_more(value, src) for src in sources)
                if kinds[key] == "span":
                    s.ends.update(end_class(src, m.end()) for src in sources for m in re.finditer(re.escape(value), src)
                                  if value)
    out = {}
    for key in sorted(kinds):
        first, follow = stats.get((False, key)), stats.get((True, key))
        main = first or follow
        out[key] = _entry(main, _policy(kinds[key], main, threshold))
        if first and follow:
            out[key][AFTER_RESULTS] = _entry(follow, _policy(kinds[key], follow, threshold))
    return {"threshold": threshold, "arguments": out}


def read_policies(folder: str | Path | None) -> dict[str, Any]:
    """``tool.argument -> policy`` from a model folder's ``grounding.json`` (empty when there is none),
    under ``CUES`` the cues set there, ``tool.argument -> [cue, ...]``, and under ``AFTER_RESULTS`` the
    policies for turns that answer tool results, where they were learned apart."""
    if folder is None:
        return {}
    path = Path(folder) / POLICY_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    args = data.get("arguments", {})
    out: dict[str, Any] = {k: v["policy"] for k, v in args.items() if v.get("policy") in POLICIES}
    for flag in (UNDATED, UNBROKEN):
        marked = sorted(k for k, v in args.items() if v.get(flag) is True)
        if marked:
            out[flag] = marked
    ends = {k: sorted(c for c in v[ENDS_BEFORE] if isinstance(c, str)) for k, v in args.items()
            if isinstance(v.get(ENDS_BEFORE), dict)}
    if ends:
        out[ENDS_BEFORE] = ends
    after = {k: v[AFTER_RESULTS]["policy"] for k, v in args.items()
             if isinstance(v.get(AFTER_RESULTS), dict) and v[AFTER_RESULTS].get("policy") in POLICIES}
    if after:
        out[AFTER_RESULTS] = after
    cues = {k: [c for c in v["cues"] if isinstance(c, str) and c.strip()] for k, v in args.items()
            if isinstance(v.get("cues"), list)}
    if cues:
        out[CUES] = cues
    if data.get(UNSEEN) in ("span", "free"):
        out[UNSEEN] = data[UNSEEN]
    return out


def write_policies(folder_or_file: str | Path, learned: dict, data: str, rows: int) -> Path:
    """Write learned policies (`learn_policies`) as ``grounding.json`` (into a folder, or to a file path),
    keeping the cues an existing file there has; returns the path written."""
    path = Path(folder_or_file)
    path = path / POLICY_FILE if path.is_dir() else path
    keep_cues(learned, path)
    path.write_text(json.dumps({"data": data, "rows": rows, **learned}, indent=2) + "\n", encoding="utf-8")
    return path


def keep_cues(learned: dict, path: Path) -> None:
    """Carry the cues of an existing ``grounding.json`` into newly learned policies: cues are set by
    people (words that introduce a value), not learned, so relearning the policies must not drop them."""
    if not path.is_file():
        return
    old = json.loads(path.read_text(encoding="utf-8")).get("arguments", {})
    for key, v in learned["arguments"].items():
        if isinstance(old.get(key, {}).get("cues"), list):
            v["cues"] = old[key]["cues"]


CUED_WHOLE_WORDS = 3   # the longest closed cue segment taken whole ("Fatima Zahra", "van der Berg")
# a cue's value ends at punctuation or a joining word (lexicon `values.cue_ends`)
_SEGMENT_END = re.compile(r"[,;.!?\n()]|\s(?:" + lexicon.alternation(lexicon.load().values.cue_ends) + r")\s",
                          re.IGNORECASE)


def cue_segments(text: str, cues: Sequence[str], stops: Sequence[str] = ()) -> list[tuple[str, bool]]:
    """What follows each cue in `text`, up to punctuation, a joining word or another cue (`stops`), and
    whether it is one whole value: one of those closed it before the text ended, and it is a few words with no
    number or address. "surname del Río, first name Fatima" with cue "surname" gives [("del Río", True)]; "last
    name Raghunathan email priya.r@x.org" gives [("Raghunathan email priya.r@x.org", False)], a span to take the
    name from, not "Raghunathan email priya" whole."""
    inside = inside_addresses(text)   # "priya.r@x.org": an address's dot ends nothing
    out = []
    for cue in cues:
        for m in re.finditer(rf"(?<![^\W_]){re.escape(cue)}(?![^\W_])", text, re.IGNORECASE):
            after = text[m.end():]
            start = m.end() + len(after) - len(after.lstrip(" \t:=-\"'“”‘’"))
            end = next((e for e in _SEGMENT_END.finditer(text, start) if e.start() not in inside), None)
            seg = text[start:end.start()] if end else text[start:]
            closed = end is not None and bool(text[end.end():].strip())   # not the request's last "?" or "."
            for stop in stops:
                hit = re.search(rf"(?<![^\W_]){re.escape(stop)}(?![^\W_])", seg, re.IGNORECASE)
                if hit:
                    seg, closed = seg[:hit.start()], True
            seg = seg.strip().strip("\"'“”‘’").strip()
            if seg:   # a few words, no number or address: a name, not "Conceição number +54 9 11 ... ok"
                out.append((seg, closed and len(seg.split()) <= CUED_WHOLE_WORDS and not re.search(r"[\d@]", seg)))
    return out


# ============================================================================================ per request
def now_of(messages: Sequence[dict]) -> datetime | None:
    for m in messages:
        if m.get("role") in ("developer", "system") and isinstance(m.get("content"), str):
            for line in m["content"].splitlines():
                if line.startswith(NOW_PREFIX):
                    try:
                        return datetime.strptime(line[len(NOW_PREFIX):].strip(), "%Y-%m-%dT%H:%M:%S")
                    except ValueError:
                        return None
    return None


def _outside_dates(text: str) -> list[str]:
    """`text` cut at its date/time expressions: the pieces an undated value may come from."""
    pieces, last = [], 0
    for start, end in expression_spans(text):
        pieces.append(text[last:start])
        last = end
    return pieces + [text[last:]]


def _outside_labels(text: str, tool: Any, arg: str) -> list[str]:
    """`text` cut at the names of `tool`'s other arguments ("subject", "body", "phone number"; names of three
    letters or more, underscores read as spaces): a copied value never runs over the label of another value.
    No gold value in the Mobile Actions data does; a 270M model writes "subject Chaves body deixei as chaves"
    as the subject."""
    labels = [n.replace("_", " ") for n in argument_schema(tool).get("properties") or {} if n != arg and len(n) > 2]
    if not labels:
        return [text]
    return re.split(r"(?<![^\W_])(?:" + "|".join(re.escape(n) for n in labels) + r")(?![^\W_])", text,
                    flags=re.IGNORECASE)


def _quotes_apart(pieces: Iterable[str]) -> tuple[list[str], list[str]]:
    """`pieces` cut at the text people put in quotes, and what is inside the quotes: a quoted value is taken
    whole or not at all. A 270M model otherwise titles "add 'Piano lesson – Mateo' ..." "Piano lesson", or
    starts a body at the opening quote."""
    outside, inside = [], []
    for piece in pieces:
        last = 0
        for m in QUOTED_RE.finditer(piece):
            outside.append(piece[last:m.start()])
            inside.append(m.group(0)[1:-1].strip())
            last = m.end()
        outside.append(piece[last:])
    return [p for p in outside if p.strip()], [q for q in inside if q]


def _unique(xs: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for x in xs if x))


@dataclass
class Grounding:
    """What one request offers to copy from, and the policy of every string argument."""
    sources: tuple[str, ...]
    user_text: str
    now: datetime | None
    policies: dict[str, str] = field(default_factory=dict)
    after_results: bool = False       # the turn answers tool results (a follow-up), not the user
    calls: tuple = ()                 # the calls of the conversation's earlier turns (`ToolCall`s)
    request: str = ""                 # the last user message: what the turn must cover (`coverage`)
    _datetimes: tuple[str, ...] | None = None
    _clocks: tuple[str, ...] | None = None

    @classmethod
    def from_messages(cls, messages: Sequence[dict], policies: dict[str, str] | None = None) -> "Grounding":
        from mobile_actions import wire

        msgs = list(messages)
        if msgs and msgs[-1].get("role") == "assistant":
            msgs = msgs[:-1]
        users = [m["content"] for m in msgs if m.get("role") == "user" and isinstance(m.get("content"), str)]
        calls = tuple(c for m in msgs if m.get("role") == "assistant" for c in wire.calls_of(m))
        return cls(_unique(conversation_sources(msgs)), "\n".join(users), now_of(msgs), dict(policies or {}),
                   bool(msgs) and msgs[-1].get("role") == "tool", calls, users[-1] if users else "")

    @property
    def owed_emails(self) -> tuple[str, ...]:
        """In a turn after tool results, the email addresses the user wrote that no call has used yet. The
        request is not done while one is owed ("email the Louvre's address to ana@example.com": the map's
        answer is back, the email is still to send), so such a turn makes a call rather than a text reply;
        a 270M model trained on both kinds of follow-up otherwise answers the chain with the address as text."""
        if not self.after_results:
            return ()
        used = json.dumps([c.arguments for c in self.calls], ensure_ascii=False)
        return tuple(e for e in _unique(EMAIL_RE.findall(self.user_text)) if e not in used)

    @property
    def emails(self) -> tuple[str, ...]:
        return _unique(m.group(0) for s in self.sources for m in EMAIL_RE.finditer(s))

    @property
    def phones(self) -> tuple[str, ...]:
        return _unique(m.group(0).strip() for s in self.sources for m in PHONE_RE.finditer(s)
                       if sum(c.isdigit() for c in m.group(0)) >= 7)

    @property
    def datetimes(self) -> tuple[str, ...]:
        if self._datetimes is None:
            self._datetimes = _unique(resolve(self.user_text, self.now)) if self.now else ()
        return self._datetimes

    @property
    def clocks(self) -> tuple[str, ...]:
        """The times of day the request says ("HH:MM:SS"): a date said alone is no time (`resolve_clocks`)."""
        if self._clocks is None:
            self._clocks = _unique(resolve_clocks(self.user_text, self.now)) if self.now else ()
        return self._clocks

    def policy(self, tool: str, arg: str, schema: dict) -> str:
        """The catalogue's ``x-grounding`` first, then the learned policy; for an argument of a tool no data was
        learned from, its schema: a date-time, date or time is read by the resolver, an address or number is one
        written in the conversation, and any other string follows `UNSEEN` (see `UNSEEN_DEFAULT`)."""
        given = schema.get("x-grounding")
        if given in POLICIES:
            return given
        learned = (self.after_results and (self.policies.get(AFTER_RESULTS) or {}).get(f"{tool}.{arg}")
                   or self.policies.get(f"{tool}.{arg}"))
        if learned in POLICIES:
            return learned
        kind = value_kind(arg, schema)   # an argument no data was learned from: its schema says
        return kind if kind != "span" else self.policies.get(UNSEEN, UNSEEN_DEFAULT)

    def cued(self, tool: Any, arg: str) -> list[tuple[str, bool]]:
        """The segments the request gives this argument by its cues (empty: no cue said), each with whether
        something closed it (`cue_segments`).

        Cues are the words that introduce an argument's value ("surname", "first name"): a catalogue sets
        them with ``"x-cues": [...]`` on the argument, a model folder's ``grounding.json`` with
        ``"cues"`` beside an argument's policy. A 270M model swaps "surname Yılmaz, first name Benoît";
        with cues the two names can only go where the request put them."""
        stored = self.policies.get(CUES) or {}
        props = argument_schema(tool).get("properties") or {}

        def cues_of(name: str) -> list[str]:
            given = (props.get(name) or {}).get("x-cues") if isinstance(props.get(name), dict) else None
            return [c for c in (given if isinstance(given, list) else stored.get(f"{tool.name}.{name}") or [])
                    if isinstance(c, str) and c.strip()]

        mine = cues_of(arg)
        if not mine:
            return []
        others = [c for name in props if name != arg for c in cues_of(name)]
        return cue_segments(self.user_text, mine, others)

    def values(self, policy: str, schema: dict | None = None) -> tuple[str, ...] | None:
        """The whole values a policy allows (None: not a list of whole values). A date is the date of a
        resolved date-time, a time its clock ("HH:MM", with seconds when the schema says "HH:MM:SS")."""
        if policy == "email":
            return self.emails
        if policy == "phone":
            return self.phones
        if policy == "date":
            return _unique(v[:10] for v in self.datetimes)
        if policy == "time":
            seconds = "hh:mm:ss" in str((schema or {}).get("description", "")).lower()
            return _unique(v if seconds else v[:5] for v in self.clocks)
        return self.datetimes if policy == "datetime" else None

    def tool_schema(self, tool, clauses: Sequence[Any] = ()) -> dict:
        """`tool`'s argument schema narrowed for this request. With the request's `clauses`
        (`coverage.clauses`), an optional email or number written only in clauses that ask other tools for
        something is not this tool's ("add Rohan to contacts and email careers@x.com": not Rohan's email), and
        a span is not taken from such a clause ("schedule lunch tomorrow and show me Cafe Central on the map":
        the event is not called "Cafe Central"). A tool that switches something on is not callable when the
        request's clauses only say "off" (`switched`), and the other way round: "Flashlight still on??
        switch it off pls" turns nothing on."""
        schema = copy.deepcopy(argument_schema(tool))
        said = switched(clauses)
        if said and {"on", "off"} - {said} <= set(tool.name.lower().split("_")):
            schema["x-callable"] = False
        props = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        for arg, sub in list(_string_args(tool)):
            policy = self.policy(tool.name, arg, sub)
            target = props[arg]
            if policy in ("span", "words"):
                spans = tuple(s for s in self.sources if s.strip())
                if policy == "span":   # not from a clause that asks another tool for something
                    spans = tuple(piece for s in spans for piece in outside_others(clauses, tool, s) if piece.strip())
                cued = self.cued(tool, arg) if policy == "span" else []
                if cued:   # the request names this argument ("surname ..."): its value is what follows, all of it
                    spans = tuple(seg for seg, closed in cued if not closed)   # when something closes it
                wholes: list[str] = []                                      # ("first name Fatima Zahra, ...")
                if policy == "span":
                    spans, wholes = _quotes_apart(spans)
                    spans = [piece for s in spans for piece in _outside_labels(s, tool, arg) if piece.strip()]
                    wholes += [seg for seg, closed in cued if closed]
                if f"{tool.name}.{arg}" in (self.policies.get(UNDATED) or ()):   # not "December 3rd" as a title
                    spans = tuple(piece for s in spans for piece in _outside_dates(s) if piece.strip())
                if (spans or wholes) and policy == "span":
                    if f"{tool.name}.{arg}" in (self.policies.get(UNBROKEN) or ()):   # not "Mehndi" for "Mehndi at ..."
                        target["x-span-unbroken"] = True
                    ends = (self.policies.get(ENDS_BEFORE) or {}).get(f"{tool.name}.{arg}")
                    if ends is not None:   # not "Dentist" for "Dentist apointment for Ruby"
                        target["x-span-ends-before"] = list(ends)
                    if spans:
                        target["x-span"] = list(spans)
                    if wholes:
                        target["x-span-whole"] = list(_unique(wholes))
                elif spans:   # a goal is an action: it starts with one of the request's verbs, if it has any
                    target["x-words"] = sorted({w.lower() for s in spans for w in GOAL_WORD_RE.findall(s)})
                    target["x-words-first"] = [w for w in target["x-words"] if w in VERBS]
                elif arg not in required:
                    del props[arg]
                continue
            values = self.values(policy, sub)
            if values is None:
                continue
            if policy in ("email", "phone") and tool.effect == "sends":   # a recipient: the person's own words only,
                said = {m.strip() for m in (EMAIL_RE if policy == "email" else PHONE_RE).findall(self.user_text)}
                values = tuple(v for v in values if v in said)                # never a tool result's or a screen's
            if arg not in required:
                values = tuple(v for v in values if not claimed_elsewhere(self.request, clauses, tool, v))
            if values:
                target["enum"] = list(values)
            elif arg not in required:
                del props[arg]
            else:   # an email or number nobody wrote: the tool cannot be called in this request
                schema["x-callable"] = False
        said = None
        for arg, sub in list(numbers.numeric_args(schema)):
            if sub.get("x-grounding") == "free":
                continue
            said = said or numbers.read("\n".join(self.sources), self.now,
                                        [x for c in self.calls for x in numbers.call_numbers(c.arguments)])
            values = numbers.offered(said, sub, arg)
            if values:
                sub["x-numbers"] = list(values)
            elif arg not in required:
                del props[arg]
            else:   # an amount nobody said: asking beats a made-up number
                schema["x-callable"] = False
        for arg, sub in list(props.items()):   # a list of weekdays: the lists the person said, each whole
            items = days.weekday_items(sub) if isinstance(sub, dict) and sub.get("x-grounding") != "free" else None
            if items is None:
                continue
            lists = days.offered(days.said(self.user_text), items)
            if lists:
                sub["x-values"] = lists
            elif arg not in required:
                del props[arg]
        return schema


def _says(said: set[str], words: Iterable[str]) -> bool:
    """Whether a word of `words` (`numbers.name_words`: an argument's name or an enum value) of two characters or
    more is one of `said`: the same word, or, for words of four letters or more, the same first letters as far as
    the shorter goes, at least four ("incl" / "include", "notify" / "notifications")."""
    for w in (w for w in words if len(w) >= 2):
        for s in said:
            n = min(len(w), len(s), 5)
            if w == s or (n >= 4 and w[:n] == s[:n]):
                return True
    return False


def is_choice(schema: dict) -> bool:
    """An enum or a yes/no argument: a value picked, never copied from the request."""
    return isinstance(schema, dict) and (bool(schema.get("enum")) or str(schema.get("type", "")).lower() == "boolean")


def words_said(text: str) -> set[str]:
    """A request's words, lower-cased, of two characters or more: what `unnamed_choices` matches options against."""
    return {w.lower() for w in re.findall(r"[^\W_]+", text) if len(w) >= 2}


def unnamed_choices(schema: dict, said: set[str], declared: dict, path: str = "") -> list[str]:
    """Leave out of `schema` (in place, nested objects too) every optional choice the tool declares
    (`declared`, its schema before grounding narrowed it: an enum or a yes/no flag, `is_choice`) that the request
    names nothing of (`said`, its `words_said`): not a word of the argument's name, nor of one of its values. Of an optional enum
    the request names values of, only those values are left. Returns the arguments left out or narrowed.

    Why: a 270M model writes options nobody asked for ("unit": "percent", "priority": "low", "urgent": true)
    on tools it has never seen, and an option picked for the person is a call the person did not ask for.
    Word matching knows no language: the catalogue's own names against the request's words. An argument with
    ``"x-grounding": "free"`` keeps every value."""
    props, decl = schema.get("properties"), declared.get("properties")
    if not isinstance(props, dict) or not isinstance(decl, dict):
        return []
    required, changed = set(declared.get("required") or ()), []
    for arg, sub in list(props.items()):
        own = decl.get(arg)
        if not isinstance(sub, dict) or not isinstance(own, dict) or own.get("x-grounding") == "free":
            continue
        where = f"{path}{arg}"
        if isinstance(own.get("properties"), dict):
            changed += unnamed_choices(sub, said, own, f"{where}.")
            if not sub.get("properties") and arg not in required:   # nothing left to say in it
                del props[arg]
            continue
        if arg in required or not is_choice(own):
            continue
        named = [v for v in sub.get("enum") or () if _says(said, numbers.name_words(v))]
        if named and len(named) < len(sub["enum"]):
            sub["enum"] = named
            changed.append(f"{where} ∈ {named}")
        elif not named and not _says(said, numbers.name_words(arg)):
            del props[arg]
            changed.append(where)
    return changed
