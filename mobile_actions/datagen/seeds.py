"""Rows from seed catalogues: requests written by hand for many domains, each shown with more than one catalogue.

Why seeds: a caller that works with tools it has never seen learns it from many catalogues and from the way
people ask (`datasets/seed-catalogues`: 98 domains, about 60 requests each, a quarter of which must get no
call). Templates cannot write that variety; people can, and each request is then multiplied by the catalogues
it may be asked against: its domain's tools alone, or beside a few tools of another domain the request has
nothing to do with (a caller must not reach for a tool because it is there), or without the tools it calls
(the same request then gets no call: a caller must not reach for the nearest tool when the right one is missing),
or written into a message that does not ask for it now: passed on, noted for later, to be reworded, asked about,
quoted or supposed (`framings.json`, written by people; the same request then gets no call either), or wrapped in
words people put around an ask (`wrappings.json`: polite, hedged, with a reason; the same call), or with details
added that a scheduling tool has no argument for (`details.json`, written by people; the same call).

A seed folder holds ``DOMAIN.tools.json`` (the catalogue) and ``DOMAIN.rows.jsonl`` (Mobile Actions rows
without their ``tools``). Rows are split into train and held-out by a hash of domain and request, so a
held-out score measures requests the caller never saw, on catalogues it did.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mobile_actions.calls import validate_call, value_kind
from mobile_actions.catalog import Catalogue
from mobile_actions.dataset import parse_row
from mobile_actions.errors import CatalogueError, DatasetError

PARTS = ("all", "train", "heldout")
HELDOUT_SHARE = 20   # one row in this many is held out
VARIANTS = ("alone", "distractors", "missing", "framed", "wrapped", "details")
DEFAULT_VARIANTS = ("alone", "distractors")
MISSING_REPLY = "None of my tools can do that."
FRAMINGS_FILE = Path(__file__).with_name("framings.json")
DETAILS_FILE = Path(__file__).with_name("details.json")
WRAPPINGS_FILE = Path(__file__).with_name("wrappings.json")
QUOTES = "'\"‘’“”`«»"


@dataclass(frozen=True)
class SeedDomain:
    name: str
    tools: list[dict]
    rows: list[dict]


def load_seeds(folder: str | Path) -> list[SeedDomain]:
    """Every domain of a seed folder, each row checked against its domain's catalogue (a bad row is an error
    naming its file and line)."""
    folder = Path(folder)
    paths = sorted(folder.glob("*.tools.json"))
    if not paths:
        raise DatasetError(f"{folder}: no seed catalogues (DOMAIN.tools.json with DOMAIN.rows.jsonl)")
    out = []
    for tools_path in paths:
        name = tools_path.name[:-len(".tools.json")]
        rows_path = folder / f"{name}.rows.jsonl"
        try:
            tools = json.loads(tools_path.read_text(encoding="utf-8"))
            Catalogue.from_json(tools)
        except (ValueError, CatalogueError) as e:
            raise DatasetError(f"{tools_path}: {e}") from None
        rows = []
        for i, line in enumerate(rows_path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = {**json.loads(line), "tools": tools}
                row = parse_row(data, str(rows_path), i)
            except ValueError as e:
                raise DatasetError(f"{rows_path}:{i}: {e}") from None
            bad = [p for c in row.calls for p in validate_call(c, row.tools)]
            if bad:
                raise DatasetError(f"{rows_path}:{i}: {bad[0]}")
            rows.append(data)
        out.append(SeedDomain(name, tools, rows))
    return out


def part_of(domain: str, row: dict) -> str:
    """"heldout" for one row in `HELDOUT_SHARE`, by a hash of its domain and request; else "train"."""
    request = next((m.get("content") for m in row.get("messages", []) if m.get("role") == "user"), "")
    digest = hashlib.sha256(f"{domain}\n{request}".encode("utf-8")).digest()
    return "heldout" if digest[0] % HELDOUT_SHARE == 0 else "train"


def missing_tool_row(row: dict, tools: list[dict]) -> dict | None:
    """`row`'s first request against `tools` without the tools its first answer calls, answered with no call;
    None when that answer calls nothing or no tool would be left.

    Why: requests that no declared tool serves are the commonest way a caller is asked for nothing, and the
    hardest ones are those whose nearest tool is in the catalogue. Taking the right tool out of a real request's
    catalogue makes such a row from every asked row, in any domain, with no word list."""
    asked = _first_ask(row)
    if asked is None:
        return None
    messages, first_user, called = asked
    left = [t for t in tools if t["function"]["name"] not in called]
    if not left:
        return None
    reply = {"role": "assistant", "content": MISSING_REPLY, "tool_calls": []}
    return {**row, "messages": [*messages[:first_user + 1], reply], "tools": left}


def _first_ask(row: dict) -> tuple[list[dict], int, set[str]] | None:
    """(the row's messages, the index of its first user message, the tools its answer calls) when that answer
    is the assistant's and calls tools; else None (the request asks for nothing)."""
    messages = row.get("messages", [])
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    answer = messages[first_user + 1] if first_user is not None and first_user + 1 < len(messages) else {}
    called = {c["function"]["name"] for c in answer.get("tool_calls") or []}
    if answer.get("role") != "assistant" or not called:
        return None
    return messages, first_user, called


@dataclass(frozen=True)
class Framings:
    """Ways people write a request into a message without asking for it now (`framings.json`): templates with one
    ``{request}`` slot by kind, and the reply in words each kind gets."""
    kinds: dict[str, tuple[str, ...]]
    replies: dict[str, str]


def load_framings(path: str | Path = FRAMINGS_FILE, *, replies_needed: bool = True) -> Framings:
    """The framings file, checked: every template has exactly one ``{request}`` slot, every kind a reply (unless
    the framings keep the call and need none: `WRAPPINGS_FILE`)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    kinds = {k: tuple(v) for k, v in data.get("kinds", {}).items()}
    replies = dict(data.get("replies", {}))
    for kind, templates in kinds.items():
        if replies_needed and kind not in replies:
            raise DatasetError(f"{path}: kind {kind!r} has no reply")
        for t in templates:
            rest = t.replace("{request}", "", 1)
            if t.count("{request}") != 1 or "{" in rest or "}" in rest:
                raise DatasetError(f"{path}: {kind} template {t!r} must hold '{{request}}' once and no other braces")
    if not kinds:
        raise DatasetError(f"{path}: no framings")
    return Framings(kinds, replies)


def framed_row(row: dict, framings: Framings, rng: random.Random) -> dict | None:
    """`row`'s first request written into a framing of a random kind, answered with that kind's reply and no
    call; None when the row's first answer calls nothing (it asks nothing to frame).

    Why: a caller acts on an action written with all its details even when the message passes it on ("copy this
    for the choir whatsapp: ..."), notes it for later, or asks whether it could be done; rule-based readers
    miss the endless ways of saying so. Framing real requests of every domain teaches it from data."""
    asked = _first_ask(row)
    if asked is None:
        return None
    messages, first_user, _ = asked
    kind, user = _put_in(framings, messages[first_user], rng)
    reply = {"role": "assistant", "content": framings.replies[kind], "tool_calls": []}
    return {**row, "messages": [*messages[:first_user], user, reply], "kind": f"framed:{kind}"}


def _put_in(framings: Framings, user: dict, rng: random.Random) -> tuple[str, dict]:
    """(a random kind of `framings`, the `user` message with its request put into one of that kind's templates)."""
    kind = rng.choice(sorted(framings.kinds))
    template = rng.choice(framings.kinds[kind])
    return kind, {**user, "content": template.replace("{request}", str(user.get("content", "")).strip())}


def wrapped_row(row: dict, wrappings: Framings, rng: random.Random) -> dict | None:
    """`row`'s first request wrapped in words people put around an ask they want done now (`wrappings.json`:
    polite, with a reason, hedged, texted, with context), answered with the same calls; None when the row's first
    answer calls nothing.

    Why: beside framed rows (the same request, not asked now), a caller or the asks-now reader would learn that
    any words around a request mean it is not asked: "would you mind turning on the flashlight?", "if ur not
    busy lol put the torch on" are asks. The two together leave the framing's meaning as the only difference."""
    asked = _first_ask(row)
    if asked is None:
        return None
    messages, first_user, _ = asked
    kind, user = _put_in(wrappings, messages[first_user], rng)
    return {**row, "messages": [*messages[:first_user], user, *messages[first_user + 1:]], "kind": f"wrapped:{kind}"}


@dataclass(frozen=True)
class Details:
    """What people add when they schedule something, beyond what a scheduling tool takes (`details.json`: where it
    is, how long it takes, what to bring): phrases that follow the thing's name inside a request, and sentences said
    after it."""
    after_name: tuple[str, ...]
    sentences: tuple[str, ...]


def load_details(path: str | Path = DETAILS_FILE) -> Details:
    """The details file, checked: two non-empty lists of non-empty strings."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    lists = {}
    for key in ("after_name", "sentences"):
        values = data.get(key)
        if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
            raise DatasetError(f"{path}: {key!r} must be a non-empty list of phrases")
        lists[key] = tuple(v.strip() for v in values)
    return Details(**lists)


def details_row(row: dict, tools: list[dict], details: Details, rng: random.Random) -> dict | None:
    """`row`'s request with a detail its tool cannot hold added after the name of the thing it schedules (when
    that name is copied from the request) or after the request, answered with the same call; None unless the
    row's first answer is one call to a tool with a datetime argument (a thing at a time), filling every argument
    that tool has.

    Why: people say more about what they schedule than a scheduling tool takes ("parent teacher conference over
    at Lincoln Elementary thursday 6pm, should take an hour"), and a small caller copies it into the title or drops
    the call. When the call already fills every argument the tool has, the added words have nowhere to go in any
    catalogue: the same call is the answer (the hybrid runner hands them to the screen)."""
    asked = _first_ask(row)
    if asked is None:
        return None
    messages, first_user, _ = asked
    calls = messages[first_user + 1]["tool_calls"]
    if len(calls) != 1:
        return None
    call = calls[0]["function"]
    args = call.get("arguments") or {}
    tool = next((t["function"] for t in tools if t["function"]["name"] == call["name"]), {})
    props = tool.get("parameters", {}).get("properties", {})
    if not props or set(props) != set(args) or not any(value_kind(n, s) == "datetime" for n, s in props.items()):
        return None
    request = str(messages[first_user].get("content", "")).strip()
    names = [v for n, v in args.items() if isinstance(v, str) and v and value_kind(n, props[n]) == "span"]
    ends = [e for e in (_end_of_name(request, v) for v in names) if e is not None]
    if ends and rng.random() < 0.5:
        at, phrase = min(ends), rng.choice(details.after_name)
        said = f"{request[:at]}{'' if phrase[0] in ',;' else ' '}{phrase}{request[at:]}"
    else:
        sentence = rng.choice(details.sentences)
        joint = " " if request[-1] in ".!?" else ", " if sentence[0].islower() else ". "
        said = f"{request}{joint}{sentence}"
    user = {**messages[first_user], "content": said}
    return {**row, "messages": [*messages[:first_user], user, *messages[first_user + 1:]], "kind": "details"}


def _end_of_name(request: str, value: str) -> int | None:
    """Where `value` ends in `request` when it is written there as a name a detail can follow: not inside a
    word, nor inside quotes (a quoted name is all the person wants as the value)."""
    i = request.lower().find(value.lower())
    after = request[i + len(value):i + len(value) + 1] if i >= 0 else "x"
    return i + len(value) if after == "" or not (after.isalnum() or after in QUOTES) else None


def seed_rows(domains: Sequence[SeedDomain], *, part: str = "train", variants: Sequence[str] = DEFAULT_VARIANTS,
              distractors: int = 4, seed: int = 0) -> list[dict]:
    """The rows of `part`, each once per variant: its domain's tools ``alone``; with ``distractors`` tools
    of another domain after them (the same other domain and tools for every row of a domain, so rows that
    declare the same tools can be trained on one shared prompt prefix); or, for a request that calls tools,
    its domain's tools ``missing`` the ones it calls, with no call as the answer (`missing_tool_row`); or
    ``framed``: its request written into a message that does not ask for it now, with no call (`framed_row`);
    ``wrapped``: its request in words people put around an ask, with the same calls (`wrapped_row`); or
    ``details``: a scheduling request with details its tool cannot hold, with the same call (`details_row`)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, not {part!r}")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(sorted(unknown))}; variants are {', '.join(VARIANTS)}")
    rng = random.Random(seed)
    framings = load_framings() if "framed" in variants else None
    details = load_details() if "details" in variants else None
    wrappings = load_framings(WRAPPINGS_FILE, replies_needed=False) if "wrapped" in variants else None
    out = []
    for d in domains:
        others = [o for o in domains if o.name != d.name]
        extra: list[dict] = []
        if others and distractors > 0:
            mine = {t["function"]["name"] for t in d.tools}
            pool = [t for t in rng.choice(others).tools if t["function"]["name"] not in mine]
            extra = rng.sample(pool, min(distractors, len(pool)))
        for row in d.rows:
            if part != "all" and part_of(d.name, row) != part:
                continue
            for variant in variants:
                made = (missing_tool_row(row, d.tools) if variant == "missing"
                        else framed_row({**row, "tools": d.tools}, framings, rng) if variant == "framed"
                        else details_row(row, d.tools, details, rng) if variant == "details"
                        else wrapped_row(row, wrappings, rng) if variant == "wrapped"
                        else {**row, "tools": d.tools} if variant == "alone"
                        else {**row, "tools": d.tools + extra} if extra else None)
                if made is None:
                    continue
                out.append({**made, "metadata": "train" if part != "heldout" else "eval",
                            "meta": {"domain": d.name, "variant": variant}})
    rng.shuffle(out)
    return out
