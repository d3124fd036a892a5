"""A schema-driven grammar for tools we know nothing about (users bring their own catalogues).

The tool's description becomes an imperative ("Sends an SMS." -> "send an SMS"), each property
becomes a slot phrase ("phone_number" -> "phone number") and values are chosen from the
property's type, format, enum, bounds and name/description (email, phone, name, date, url...).
Families are sentence structures over those pieces, so the held-out split works here too.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from random import Random
from typing import Any, Callable

from mobile_actions.catalog import Tool
from mobile_actions.datagen import values as V
from mobile_actions.datagen.dates import sample_when
from mobile_actions.datagen.templates import LITERAL, SURFACE, TEXT, Segment, Value

DATETIME_HINT = "YYYY-MM-DDTHH:MM:SS"
_UNSAFE = re.compile(r"[()\[\]{}<>|]")
_IRREGULAR = {"does": "do", "goes": "go", "has": "have", "is": "be"}
_NOT_VERBS = {"this", "its", "is", "was", "has", "as", "us", "always", "news", "status", "alias", "gas", "bus"}


# ------------------------------------------------------------------------------------------ words
def words_of(name: str) -> str:
    """`phone_number` / `phoneNumber` -> "phone number"."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[_\-.]+", " ", name).strip().lower()


def _base_verb(word: str) -> str | None:
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if not w.endswith("s") or w.endswith("ss") or w in _NOT_VERBS or len(w) < 3:
        return None
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes", "zes")):
        return w[:-2]
    return w[:-1]


def verb_phrases(tool: Tool) -> list[str]:
    """Imperatives for the tool: from its description's first sentence when it starts with a verb, and from its name."""
    out = []
    first = re.split(r"(?<=[.!?])\s", tool.description.strip(), maxsplit=1)[0].rstrip(".!? ")
    first = _UNSAFE.sub("", first)
    words = first.split()
    if words:
        base = _base_verb(words[0])
        if base and len(words) <= 14:
            out.append(" ".join([base, *words[1:]]))
    name = words_of(tool.name)
    if name:
        out.append(name)
    return out or ["do it"]


def prop_phrase(name: str, schema: dict) -> str:
    return _UNSAFE.sub("", words_of(name))


# ------------------------------------------------------------------------------------------ values
_NOUNS = ("weekly sync", "blue notebook", "grocery list", "summer trip", "garage door", "living room", "project alpha",
          "morning routine", "team lunch", "spare bedroom", "red jacket", "kitchen lights", "quarterly goals", "book draft",
          "birthday gift", "front porch", "marketing deck", "yoga mat", "road trip", "study notes")
_SEARCH = ("best ramen near me", "how to fix a leaky tap", "cheap flights to Lisbon", "vegan lasagna recipe",
           "Champions League results", "used bikes", "python list comprehension", "Kyoto temples", "sourdough starter",
           "running shoes for flat feet", "electric cars 2025", "things to do in Montréal")
_SONGS = ("Bohemian Rhapsody", "Clair de Lune", "Despacito", "La Vie en rose", "Gangnam Style", "Hey Jude", "Dancing Queen",
          "Chan Chan", "Águas de Março", "99 Luftballons", "Blinding Lights", "Shape of You")
_ARTISTS = ("Queen", "Rosalía", "Stromae", "BTS", "Björk", "Caetano Veloso", "Adele", "Bad Bunny", "Édith Piaf", "Fela Kuti")
_LANGS = ("French", "Spanish", "Japanese", "German", "Portuguese", "Korean", "Italian", "Arabic", "Hindi", "Polish")
_COLORS = ("red", "blue", "green", "warm white", "purple", "orange", "teal", "yellow")
_ROOMS = ("living room", "kitchen", "bedroom", "kids' room", "office", "bathroom", "garage", "hallway", "guest room", "basement")
_COUNTRIES = ("France", "Japan", "Brazil", "Kenya", "Canada", "Germany", "India", "Mexico", "Norway", "Vietnam")


@dataclass(frozen=True)
class Filled:
    value: Any
    surface: Value


def _has(text: str, *keys: str) -> bool:
    return any(re.search(rf"\b{k}", text) for k in keys)


def sample_value(rng: Random, name: str, schema: dict, now: datetime) -> Filled:
    """A plausible value for one property, and how the request says it."""
    if "enum" in schema:
        v = rng.choice(schema["enum"])
        return Filled(v, Value(str(v) if not isinstance(v, bool) else ("yes" if v else "no"), LITERAL if isinstance(v, str) else SURFACE))
    t = schema.get("type", "string")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    hint = f"{words_of(name)} {schema.get('description', '').lower()}"
    if t == "boolean":
        v = rng.random() < 0.5
        word = rng.choice((("yes", "no"), ("on", "off"), ("true", "false"), ("enabled", "disabled")))[0 if v else 1]
        return Filled(v, Value(word, SURFACE))
    if t in ("integer", "number"):
        return _number(rng, hint, schema, integer=t == "integer")
    if t == "array":
        items = schema.get("items", {"type": "string"})
        k = rng.randint(max(1, schema.get("minItems", 1)), max(max(1, schema.get("minItems", 1)), min(3, schema.get("maxItems", 3))))
        filled = [sample_value(rng, name.rstrip("s"), items, now) for _ in range(k)]
        parts = [f.surface.surface for f in filled]
        said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return Filled([f.value for f in filled], Value(said, LITERAL))
    if t == "object":
        props = schema.get("properties", {})
        req = set(schema.get("required", []))
        keep = [k for k in props if k in req or rng.random() < 0.5]
        filled = {k: sample_value(rng, k, props[k], now) for k in keep}
        said = ", ".join(f"{words_of(k)} {f.surface.surface}" for k, f in filled.items()) or "defaults"
        return Filled({k: f.value for k, f in filled.items()}, Value(said, LITERAL))
    return _string(rng, hint, schema, now)


def _number(rng: Random, hint: str, schema: dict, integer: bool) -> Filled:
    lo, hi = 1, 50
    if _has(hint, "volume", "level", "percent", "brightness", "progress"):
        lo, hi = 0, 100
    elif _has(hint, "minute", "duration"):
        lo, hi = 1, 120
    elif _has(hint, "hour"):
        lo, hi = 0, 23
    elif _has(hint, "year"):
        lo, hi = 2024, 2027
    elif _has(hint, "age"):
        lo, hi = 18, 90
    elif _has(hint, "price", "amount", "cost", "total"):
        lo, hi = 2, 500
    elif _has(hint, "temperature", "temp"):
        lo, hi = 16, 28
    elif _has(hint, "count", "number of", "quantity", "servings", "people", "guests", "seats"):
        lo, hi = 1, 12
    if isinstance(schema.get("minimum"), (int, float)):
        lo = math.ceil(schema["minimum"])
        hi = max(hi, lo)
    if isinstance(schema.get("maximum"), (int, float)):
        hi = math.floor(schema["maximum"])
        lo = min(lo, hi)
    if hi < lo:
        hi = lo
    if integer or rng.random() < 0.5:
        v: int | float = rng.randint(lo, hi)
    else:
        v = round(rng.uniform(lo, hi), 2 if _has(hint, "price", "amount", "cost") else 1)
        v = min(max(v, schema.get("minimum", v)), schema.get("maximum", v))
    return Filled(v, Value(str(v), LITERAL))


def _string(rng: Random, hint: str, schema: dict, now: datetime) -> Filled:
    fmt = schema.get("format", "")
    desc = schema.get("description", "")
    if fmt in ("date-time", "datetime") or DATETIME_HINT in desc or _has(hint, "datetime", "date time", "start time"):
        w = sample_when(rng, now)
        return Filled(w.iso, Value(w.text, SURFACE))
    if fmt == "date" or "YYYY-MM-DD" in desc or _has(hint, "date", "day", "deadline", "birthday"):
        w = sample_when(rng, now, with_time=False)
        return Filled(w.value.strftime("%Y-%m-%d"), Value(w.text, SURFACE))
    if fmt == "time" or "HH:MM" in desc or _has(hint, "time"):
        h, m = rng.randint(6, 22), rng.choice((0, 15, 30, 45))
        v = f"{h:02d}:{m:02d}" + (":00" if fmt == "time" or "HH:MM:SS" in desc else "")
        return Filled(v, Value(v, LITERAL))
    text = _string_by_name(rng, hint, fmt)
    return Filled(text, Value(text, LITERAL))


def _string_by_name(rng: Random, hint: str, fmt: str) -> str:
    p = V.person(rng)
    rules: list[tuple[Callable[[], bool], Callable[[], str]]] = [
        (lambda: fmt in ("email", "idn-email") or _has(hint, "email", "e-mail", "recipient address"), lambda: V.email_for(rng, p)),
        (lambda: _has(hint, "phone", "mobile", r"tel\b", "telephone", r"cell\b", "contact number"), lambda: V.phone(rng)),
        (lambda: fmt in ("uri", "url") or _has(hint, "url", "link", "website", "web address", "homepage"),
         lambda: f"https://www.{V.company_domain(rng)}/{rng.choice(('', 'about', 'menu', 'docs/start', 'blog/2025', 'shop'))}"),
        (lambda: _has(hint, "first name", "given name", "firstname"), lambda: p.first),
        (lambda: _has(hint, "last name", "surname", "family name", "lastname"), lambda: p.last),
        (lambda: _has(hint, "name of the (person|contact|recipient|user|guest|friend)", "full name", "contact", "recipient", "person", "friend", "guest", "attendee", "username"),
         lambda: p.full),
        (lambda: _has(hint, "city", "town"), lambda: V.city(rng)),
        (lambda: _has(hint, "room", "zone", "area"), lambda: rng.choice(_ROOMS)),
        (lambda: _has(hint, "country"), lambda: rng.choice(_COUNTRIES)),
        (lambda: _has(hint, "address", "street"), lambda: V.address(rng)),
        (lambda: _has(hint, "location", "place", "destination", "origin", "venue", "where"), lambda: V.map_query(rng)),
        (lambda: _has(hint, "restaurant", "business", "store", "shop", "company"), lambda: V.business(rng)),
        (lambda: _has(hint, "song", "track"), lambda: rng.choice(_SONGS)),
        (lambda: _has(hint, "artist", "band", "singer"), lambda: rng.choice(_ARTISTS)),
        (lambda: _has(hint, "language", "locale"), lambda: rng.choice(_LANGS)),
        (lambda: _has(hint, "colou?r"), lambda: rng.choice(_COLORS)),
        (lambda: _has(hint, "subject", "title", "headline"), lambda: V.subject(rng) if rng.random() < 0.5 else V.event_title(rng)),
        (lambda: _has(hint, "message", "body", "text", "content", "note", "comment", "description", "reply"), lambda: V.body(rng)),
        (lambda: _has(hint, "query", "search", "keyword", "term"), lambda: rng.choice(_SEARCH)),
        (lambda: _has(hint, "id", "code", "reference", "number", "sku"),
         lambda: f"{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}-{rng.randint(1000, 99999)}"),
        (lambda: _has(hint, "name", "label", "tag", "category", "list", "playlist", "album", "item", "task"),
         lambda: V.event_title(rng) if rng.random() < 0.5 else rng.choice(_NOUNS)),
    ]
    for test, make in rules:
        if test():
            return make()
    return rng.choice(_NOUNS) if rng.random() < 0.6 else V.event_title(rng)


# ------------------------------------------------------------------------------------------ families
Arg = tuple[str, Value]   # (property phrase, value surface)
Builder = Callable[[Random, str, list[Arg], tuple[str, str]], list[Segment]]


def _v(value: Value, quote: tuple[str, str], quoted: bool = False) -> list[Segment]:
    if value.kind == SURFACE and value.surface.startswith("on "):  # "set the date to on Friday"
        value = Value(value.surface[3:], SURFACE)
    if quoted and quote[0] and value.kind == LITERAL and " " in value.surface:
        return [(quote[0], LITERAL), (value.surface, value.kind), (quote[1], LITERAL)]
    return [(value.surface, value.kind)]


def _list(args: list[Arg], quote: tuple[str, str], piece: Callable[[str, list[Segment]], list[Segment]],
          sep: str = ", ", last: str = " and ") -> list[Segment]:
    out: list[Segment] = []
    for i, (p, v) in enumerate(args):
        if i:
            out.append((last if i == len(args) - 1 else sep, TEXT))
        out += piece(p, _v(v, quote, quoted=True))
    return out


def _with(rng, verb, args, q):
    if not args:
        return [(verb, TEXT)]
    return [(f"{verb} {rng.choice(('with', 'using', 'where'))} ", TEXT), *_list(args, q, lambda p, v: [(f"{p} ", TEXT), *v])]


def _colon(rng, verb, args, q):
    out: list[Segment] = [(verb, TEXT)]
    if args:
        out.append((rng.choice((": ", " - ", ". ")), TEXT))
        out += _list(args, q, lambda p, v: [(f"{p}: ", TEXT), *v], sep=", ", last=", ")
    return out


def _set_to(rng, verb, args, q):
    out: list[Segment] = [(verb, TEXT)]
    if args:
        out.append((rng.choice((" and set the ", ", setting the ", " - set the ")), TEXT))
        out += _list(args, q, lambda p, v: [(f"{p} to ", TEXT), *v], sep=", the ", last=" and the ")
    return out


def _want(rng, verb, args, q):
    out: list[Segment] = [(f"I {rng.choice(('want', 'need', 'would like', 'have'))} to {verb}", TEXT)]
    if args:
        out.append((". ", TEXT))
        out += _list(args, q, lambda p, v: [(f"the {p} {'are' if _plural(p) else 'is'} ", TEXT), *v])
    return out


def _plural(phrase: str) -> bool:
    return phrase.endswith("s") and not phrase.endswith(("ss", "us", "is"))


def _as_the(rng, verb, args, q):
    out: list[Segment] = [(verb, TEXT)]
    if args:
        out.append((rng.choice((" using ", " with ", ", ")), TEXT))
        out += _list(args, q, lambda p, v: [*v, (f" as the {p}", TEXT)])
    return out


def _question(rng, verb, args, q):
    out: list[Segment] = [(f"{rng.choice(('can', 'could', 'would'))} you {verb}", TEXT)]
    if args:
        out.append((rng.choice((" with ", " for ", " using ")), TEXT))
        out += _list(args, q, lambda p, v: [(f"{p} ", TEXT), *v])
    return out + [("?", TEXT)]


def _terse(rng, verb, args, q):
    out: list[Segment] = [(verb, TEXT)]
    for p, v in args:
        out += [(f" {p.replace(' ', '_')}=", TEXT), *_v(v, q)]
    return out


def _args_first(rng, verb, args, q):
    if not args:
        return [(f"{verb} now", TEXT)]
    return [*_list(args, q, lambda p, v: [(f"{p} ", TEXT), *v], sep=", ", last=", "), (rng.choice((" - ", ". ", "; ")), TEXT), (f"{verb}", TEXT)]


def _parenthetical(rng, verb, args, q):
    out: list[Segment] = [(f"{rng.choice(('please ', 'go ahead and ', 'time to '))}{verb}", TEXT)]
    if args:
        out.append((" (", TEXT))
        out += _list(args, q, lambda p, v: [(f"{p}: ", TEXT), *v], sep="; ", last="; ")
        out.append((")", TEXT))
    return out


# (family name, mode, builder)
FAMILIES: tuple[tuple[str, str, Builder], ...] = (
    ("with_args", "imp", _with), ("colon_fields", "free", _colon), ("set_to", "imp", _set_to), ("i_want", "free", _want),
    ("value_as_the", "imp", _as_the), ("question", "free", _question), ("terse_kv", "free", _terse),
    ("args_first", "free", _args_first), ("parenthetical", "free", _parenthetical),
)
