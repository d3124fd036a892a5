"""How a request is said, independent of what it asks: register, openers, closers, joining several
requests, casing, typos.

All noise is applied to template words only (segment kind TEXT); argument values (LITERAL) are
never altered, so the gold arguments stay copyable from the text. Relative dates (SURFACE) may
change case but get no typos: a misspelt "tomorow" is fine for people and a needless trap for
a 270M model.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from random import Random

from mobile_actions.datagen import values as V
from mobile_actions.datagen.templates import LITERAL, TEXT, Segment

REGISTERS = ("plain", "polite", "casual", "terse", "runon")
_REGISTER_WEIGHTS = (34, 26, 20, 10, 10)
QUOTES = (('"', '"'), ('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("", ""), ("", ""))

# (text, makes a question)
_OPENERS = {
    "plain": (("", False), ("", False), ("", False), ("", False), ("go ahead and ", False), ("I want you to ", False),
              ("I need you to ", False), ("just ", False), ("now ", False)),
    "polite": (("please ", False), ("could you please ", True), ("can you ", True), ("could you ", True), ("would you ", True),
               ("I'd like you to ", False), ("kindly ", False), ("can you please ", True), ("would you please ", True),
               ("I'd appreciate it if you could ", False), ("if you don't mind, ", False), ("hi, could you ", True),
               ("hello! please ", False), ("would you be so kind as to ", True)),
    "casual": (("hey, ", False), ("hey can you ", True), ("yo ", False), ("ok so ", False), ("quick one: ", False),
               ("hi! ", False), ("hey there, could you ", True), ("hiya, ", False), ("ok, ", False), ("alright, ", False),
               ("hey assistant, ", False), ("hey phone, ", False), ("can u ", True), ("pls ", False)),
    "terse": (("", False),),
    "runon": (("", False),),
}
_FREE_OPENERS = ("", "", "", "", "hey, ", "hi, ", "ok so ", "so ", "um, ", "hello! ", "right, ", "hmm, ")
_CLOSERS = {
    "plain": ("", ".", ".", ".", "!"),
    "polite": (".", " please.", ", thank you.", ", thanks!", ". Thanks in advance.", " please, thank you!",
               ". Much appreciated.", ", thanks a lot.", " - thank you!"),
    "casual": ("", "!", " thx", " pls", " ty", " asap", " \U0001F64F", " :)", ", cheers", "!!", " lol", " thanks!"),
    "terse": ("",),
    "runon": ("", " thanks", " ok thanks", " ok?", " thank you so much", ""),
}
_QUESTION_CLOSERS = ("?", "?", "?", " please?", "? thanks", "? thank you!", "??", " for me?")
_RUNON_PREAMBLES = ("ugh I'm running so late and ", "ok so listen ", "before I forget ", "my boss just called and ",
                    "I'm on the train right now so ", "so basically ", "hey so um ", "long day lol ",
                    "I just got out of a meeting and ", "sorry I'm driving so ", "ok wait ", "so yeah ")
_CONNECTORS = {
    "plain": (" and ", " and also ", ", then ", ". Also, ", ". Then ", "; ", ", plus ", " and after that ",
              ". Oh, and ", ", and ", " and then ", ". After that, ", ". Next, "),
    "runon": (" and ", " and then ", " and also ", " and um ", " oh and ", " and then also ", " also "),
    "terse": ("; ", ", ", " + ", " and ", ". "),
    "inline": (" and ", " and also ", ", and ", " and then ", ", then ", ", and also "),
}
_AFTER_STOP = (" Also ", " Also, ", " Then ", " And ", " Oh, and ", " Next, ", " Plus ")
ASIDE_RATE = 0.06   # requests that open with context asking for nothing (`values.aside`)
_TERSE_DROP = re.compile(r"\b(the|a|an|my|please|some)\b ?", re.IGNORECASE)
_KEYS = "qwertyuiop asdfghjkl zxcvbnm"


@dataclass(frozen=True)
class Style:
    register: str
    casing: str            # "normal" | "lower" | "upper"
    typos: int
    quote: tuple[str, str]

    def tags(self) -> dict:
        return {"register": self.register, "casing": self.casing, "typos": self.typos}


def sample_style(rng: Random) -> Style:
    register = rng.choices(REGISTERS, _REGISTER_WEIGHTS)[0]
    if register in ("terse", "runon"):
        casing = "lower" if rng.random() < 0.6 else "normal"
    else:
        casing = rng.choices(("normal", "lower", "upper"), (84, 14, 2))[0]
    typos = rng.choices((0, 1, 2), (84, 12, 4))[0]
    return Style(register, casing, typos, rng.choice(QUOTES))


def compose(rng: Random, style: Style, clauses: list[tuple[list[Segment], str]]) -> str:
    """Clauses (segments, mode) -> one user request in this style."""
    opener, question = _opener(rng, style, clauses[0][1])
    segs = _join(rng, style, clauses, inline_only=question)
    segs = _wrap(rng, style, segs, opener, question)
    if style.register == "terse":
        segs = [(_TERSE_DROP.sub("", t) if k == TEXT and rng.random() < 0.6 else t, k) for t, k in segs]
    if style.register == "runon":
        segs = [(t.replace(". ", " ").replace(",", "") if k == TEXT else t, k) for t, k in segs]
    segs = _typos(rng, segs, style.typos)
    segs = _case(segs, style.casing)
    return _clean(segs)


def _join(rng: Random, style: Style, clauses: list[tuple[list[Segment], str]], inline_only: bool) -> list[Segment]:
    """Clauses joined in order; after a question opener ("can you ...") only joins that keep one sentence."""
    out = list(clauses[0][0])
    kind = "inline" if inline_only else style.register if style.register in _CONNECTORS else "plain"
    if len(clauses) == 3 and kind == "plain" and clauses[0][1] == "imp" and rng.random() < 0.25:
        out = [("first ", TEXT), *_initial(out, upper=False)]
        for connector, (segs, _) in zip((", then ", ", and finally "), clauses[1:]):
            out += [(connector, TEXT), *_initial(segs, upper=False)]
        return out
    for segs, _ in clauses[1:]:
        connector = rng.choice(_CONNECTORS[kind])
        if out[-1][0].rstrip().endswith((".", "!", "?")) and not inline_only:  # a value ended the clause with its own stop
            connector = rng.choice(_AFTER_STOP)
        out += [(connector, TEXT), *_initial(segs, upper=connector == ". ")]
    return out


def _opener(rng: Random, style: Style, first_mode: str) -> tuple[str, bool]:
    """The request's first words and whether they make it a question."""
    question = False
    if first_mode == "imp":
        opener, question = rng.choice(_OPENERS[style.register])
    else:
        opener = rng.choice(_FREE_OPENERS) if style.register in ("plain", "casual", "polite") else ""
    if style.register == "runon" and rng.random() < 0.7:
        opener = rng.choice(_RUNON_PREAMBLES) + opener
    elif style.register != "terse" and rng.random() < ASIDE_RATE:
        opener = V.aside(rng) + (". " if opener else rng.choice((", so ", ". ", ", "))) + opener
    return opener, question


def _wrap(rng: Random, style: Style, segs: list[Segment], opener: str, question: bool) -> list[Segment]:
    if opener:
        segs = [(opener, TEXT), *_initial(segs, upper=False)]
    last = segs[-1][0].rstrip() if segs else ""
    if last.endswith(("?", "!", ".")):
        closer = rng.choice(("", "", " thanks", " \U0001F64F")) if style.register != "terse" else ""
    elif question:
        closer = rng.choice(_QUESTION_CLOSERS)
    else:
        closer = rng.choice(_CLOSERS[style.register])
    return segs + [(closer, TEXT)] if closer else segs


def _initial(segs: list[Segment], upper: bool) -> list[Segment]:
    """Segments with the first letter of the first word re-cased (never inside a value, never "I")."""
    if not segs:
        return segs
    text, kind = segs[0]
    if kind == LITERAL or not text:
        return segs
    if not upper and re.match(r"I\b", text):
        return segs
    text = (text[0].upper() if upper else text[0].lower()) + text[1:]
    return [(text, kind), *segs[1:]]


def _typos(rng: Random, segs: list[Segment], count: int) -> list[Segment]:
    if not count:
        return segs
    candidates = [(i, m) for i, (t, k) in enumerate(segs) if k == TEXT for m in re.finditer(r"[A-Za-z]{4,}", t)]
    if not candidates:
        return segs
    segs = list(segs)
    for i, m in rng.sample(candidates, min(count, len(candidates))):
        text = segs[i][0]
        # Another typo may have shifted this word; skip rather than corrupt a neighbour.
        if text[m.start():m.end()] != m.group():
            continue
        segs[i] = (text[:m.start()] + _typo(rng, m.group()) + text[m.end():], TEXT)
    return segs


def _typo(rng: Random, word: str) -> str:
    j = rng.randrange(1, len(word) - 1)
    op = rng.randrange(4)
    if op == 0:
        return word[:j] + word[j + 1] + word[j] + word[j + 2:]
    if op == 1:
        return word[:j] + word[j + 1:]
    if op == 2:
        return word[:j] + word[j] + word[j:]
    row = next((r for r in _KEYS.split() if word[j].lower() in r), None)
    if not row:
        return word
    k = row.index(word[j].lower())
    near = row[k - 1] if k and (k == len(row) - 1 or rng.random() < 0.5) else row[min(k + 1, len(row) - 1)]
    return word[:j] + near + word[j + 1:]


def _case(segs: list[Segment], casing: str) -> list[Segment]:
    if casing == "lower":
        return [(t.lower() if k != LITERAL else t, k) for t, k in segs]
    if casing == "upper":
        return [(t.upper() if k == TEXT else t, k) for t, k in segs]
    return _initial(segs, upper=True)


def _clean(segs: list[Segment]) -> str:
    """Spacing and doubled punctuation fixed in template words; values are masked so they stay byte-exact."""
    values: list[str] = []
    parts: list[str] = []
    for text, kind in segs:
        if kind == LITERAL:
            parts.append(f"\x00{len(values)}\x01")
            values.append(text)
        else:
            parts.append(text)
    text = _clean_text("".join(parts))
    return re.sub(r"\x00(\d+)\x01", lambda m: values[int(m.group(1))], text)


def _clean_text(text: str) -> str:
    text = re.sub(r" {2,}", " ", text)
    text = re.sub(r" ([,.;:?!])(?=\s|$)", r"\1", text)
    text = re.sub(r"([,;:])\1+", r"\1", text)
    text = text.replace(",.", ".").replace(".,", ",").replace(",?", "?").replace(".?", "?").replace(",!", "!")
    return text.strip()
