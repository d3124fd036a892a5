"""Whether the request asks for the calls a caller wrote: the gate between a caller's output and the phone.

A 270M caller acts on mentions: "please don't switch the torch on" gives `turn_on_flashlight()`, "should I save
Marta 555 0142?" a new contact. Doing nothing is always safer than doing what the person said not to do, so
every call passes this gate before it is dispatched, whatever decoded it. The request is read into pieces
(sentences, and the parts of one between joining words and commas); each piece gets a `Polarity` from the
lexicon's cues (`mobile_actions/lexicon/en.json`: "don't", "should I", "if", "already", "told me to", "never
mind", ...). A call belongs to the pieces that write its values or name its tool; it is refused when none of
them is asked -- except that a question may be answered by a tool that changes nothing. A call that reaches
someone (``sends``) must also take its recipient from the person's own words, never from a tool result or a
screen. The gate knows no tool and no English of its own: the words are the lexicon's, the tool's keywords
are the catalogue's, and every refusal names the cue and the piece that decided it.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from typing import Any, Callable, Literal, Sequence

from mobile_actions import asks
from mobile_actions import lexicon as lexicons
from mobile_actions.calls import ToolCall, argument_schema, value_kind
from mobile_actions.catalog import Catalogue, name_words
from mobile_actions.decoding import coverage
from mobile_actions.decoding.coverage import EMAIL_RE, FIELD_LABEL_RE, PHONE_RE, keywords, mask_quotes
from mobile_actions.decoding.datementions import Mention
from mobile_actions.decoding.datetimes import clock_readings, mentions_as_written
from mobile_actions.decoding.grounding import now_of

_WORD_RE = re.compile(r"[\w'@.+-]*\w")
_SPACED_NUMBER = re.compile(r"(?<![\w.:])\+?\d+(?: \d+)+(?![\w.:])")    # a phone number written in groups
_SENTENCE_RE = re.compile(r"[.!?;\n]+(?=\s|$)|\.{2,}|\u2026|\s[-\u2013\u2014]{1,2}\s|\s*\(|\)")
MESSAGE_MARKS = frozenset({"-", "--", "\u2013", "\u2014", ":"})   # what may stand before a message or a content
_SENTENCE_START_RE = re.compile(rf"(?:^|{_SENTENCE_RE.pattern})\s*$")   # on the text before a word: it opens one


class Polarity(str, Enum):
    """How a piece of a request stands to the action it names."""
    ASKED = "asked"
    NEGATED = "negated"
    QUESTION = "question"
    HYPOTHETICAL = "hypothetical"
    REPORTED = "reported"
    PAST = "past"
    CANCELLED = "cancelled"
    STATED = "stated"       # "I know where Tesco is": asks only if nothing refuses the tool it names


REASONS = {Polarity.STATED: "the request only says something about it", Polarity.NEGATED: "the request says not to",
           Polarity.QUESTION: "the request only asks a question", Polarity.HYPOTHETICAL: "the request only supposes it",
           Polarity.REPORTED: "it reports someone else's words", Polarity.PAST: "the request says it was already done",
           Polarity.CANCELLED: "the request takes it back"}


@dataclass(frozen=True)
class Piece:
    """A part of the request and how it stands to its action; `cue` is the lexicon phrase that decided."""
    text: str
    start: int
    polarity: Polarity = Polarity.ASKED
    cue: str = ""
    sentence: int = 0
    passes_on: str = ""     # the speech opener after which cues are the message's ("tell mom": "i landed" in it)
    message: tuple[int, int] | None = None   # the span of the request a speech opener's message takes, if any

    @property
    def asked(self) -> bool:
        """Whether the piece may ask for an action (a statement may: "I need the torch")."""
        return self.polarity in (Polarity.ASKED, Polarity.STATED)


@dataclass(frozen=True)
class Refusal:
    """A call the gate kept from the phone, and why (shown in `call --json`, run reports and traces)."""
    call: ToolCall
    reason: str
    cue: str = ""
    piece: str = ""
    for_screen: str = ""   # the rule that found the request asking for what this tool does not do, which a screen
    #                        may: "edits-what-exists" (a change to a saved entry), "message-passed-on"

    @property
    def misrouted(self) -> bool:
        """The call is not what the request asks (no tie to it, or its values belong to another ask), as opposed
        to something the request declines, asks about or tells: the request may still ask the screen."""
        return self.reason == UNTIED or self.reason.startswith(BORROWED)

    @property
    def why(self) -> str:
        """The reason with the cue and the piece that decided it."""
        return self.reason + (f" ({self.cue!r} in {self.piece!r})" if self.cue else "")

    def __str__(self) -> str:
        return f"refused {self.call.name}: {self.why}"

    def to_json(self) -> dict:
        out = {"call": self.call.to_json(), "reason": self.reason, "cue": self.cue, "piece": self.piece}
        return {**out, "for_screen": self.for_screen} if self.for_screen else out

    @classmethod
    def from_json(cls, data: dict) -> "Refusal":
        return cls(ToolCall.from_json(data["call"]), str(data.get("reason", "")), str(data.get("cue", "")),
                   str(data.get("piece", "")), str(data.get("for_screen") or ""))


# ============================================================================================ reading
def read(request: str, lexicon: lexicons.Lexicon | None = None, content: Sequence[tuple[int, int]] = (),
         speaks_of: Callable[[str], bool] | None = None, names_action: Callable[[str], bool] | None = None
         ) -> tuple[Piece, ...]:
    """The pieces of `request`, each with its polarity (quoted text is a value, never a cue). For one call
    (`Reading`): `content` are spans of the request the call copies as what it says (a message's text), read
    like quotes; `speaks_of` says whether a refusal that refers back ("... but don't delete it") is about the
    call (default: it is). `names_action` says whether a piece names something a catalogue's tool does
    (`action_names`): a bare take-back takes back the last such piece, not the reason told after it."""
    w = (lexicon or lexicons.load()).polarity
    masked = lexicons.normalise(mask_quotes(request))
    for m in w.names.all(masked):   # "turn on do not disturb": a setting's name, no "do not"
        masked = masked[:m.start()] + re.sub(r"\w", "x", m.group()) + masked[m.end():]
    for m in _SPACED_NUMBER.finditer(masked):   # "+44 7911 123456" is one word: an opener's '*' takes it whole
        masked = masked[:m.start()] + m.group().replace(" ", "_") + masked[m.end():]
    for a, b in content:            # blank words: no cue, comma or joining word inside; cues after keep their place
        masked = masked[:a] + re.sub(r"\S", "_", masked[a:b]) + masked[b:]
    split_re = re.compile(r"\s*,\s*|\s+(?:" + "|".join(re.escape(x) for x in w.split.words) + r")(?![\w'])\s*|\s+(?=(?:"
                          + "|".join(re.escape(x) for x in w.split_before.words) + r")(?![\w']))")
    pieces: list[Piece] = []
    # "Dr. Nakamura", "St. Mary's": a period after an abbreviation ends no sentence
    reach = max(map(len, w.abbreviations.words), default=0) + 1   # the longest abbreviation and the space before it

    def abbreviated(m: re.Match) -> bool:
        before = masked[max(0, m.start() - reach):m.start()]
        return m.group() == "." and any(a.end() == len(before) for a in w.abbreviations.all(before))

    for n, (s0, s1) in enumerate(_spans(masked, _SENTENCE_RE, 0, len(masked), abbreviated)):
        asks = not masked[s1:s1 + 3].lstrip().startswith("?")   # a sentence that does not end in "?"
        for a, b in _spans(masked, split_re, s0, s1):
            text = masked[a:b]
            said = _content_words(w.fillers.pattern.sub(" ", text), w.interjections)
            if said or w.take_backs(text) or w.cancel_verbs.find(text):
                pol, cue, passes_on, message_at = _polarity(text, w, asks)
                if not asks and pieces and pieces[-1].sentence == n and pieces[-1].polarity is Polarity.QUESTION \
                        and pol in (Polarity.ASKED, Polarity.STATED) and not cue:
                    pol, cue = Polarity.QUESTION, pieces[-1].cue   # "which note was it, Groceries or Groceries 2?"
                pieces.append(Piece(request[a:b], a, pol, cue, n, passes_on,
                                    (a + message_at, b) if message_at >= 0 else None))
    removes = (lexicon or lexicons.load()).effect.removes
    pieces = _messages_go_on(pieces, masked, names_action, w.content_markers.pattern)
    return tuple(_carried(pieces, masked, w, speaks_of, names_action, removes))


_NAME_RUN = re.compile(r"(?<![\w'])[A-ZÀ-ÖØ-Þ][\w'-]*(?:\s+[A-ZÀ-ÖØ-Þ][\w'-]*)*")


def named_addressee(part: str, request: str, lexicon: lexicons.Lexicon | None = None) -> str:
    """`part` of `request` with the pronoun that its speech opener addresses ("text him welcome to the team",
    the lexicon's `addressee_pronouns`) replaced by the last name the request writes before the part ("add Tomás
    Ferreira as a contact, ..., and text him ..."): a navigator handed "text him" alone types "him" as the
    recipient. A name is a run of capitalised words, not the first word of a sentence, as people write names;
    `part` is returned as it is when there is no such name, no such pronoun, or `part` is not in `request`."""
    w = (lexicon or lexicons.load()).polarity
    at = request.find(part)
    pieces = read(part, lexicon)
    opener = next((p for p in pieces if p.message is not None), None)
    if at < 0 or opener is None or not w.addressee_pronouns.words:
        return part
    head = part[opener.start:opener.message[0]]
    pronoun = re.search(rf"(?<![\w'])(?:{'|'.join(map(re.escape, w.addressee_pronouns.words))})(?![\w'])", head, re.I)
    if pronoun is None:
        return part
    names = [m for m in _NAME_RUN.finditer(request[:at])
             if m.group().lower() not in w.addressee_pronouns.words and m.group() != "I"
             and not re.search(r"(?:^|[.!?]\s*)$", request[:m.start()])]
    if not names:
        return part
    where = opener.start + pronoun.start()
    return part[:where] + names[-1].group() + part[where + len(pronoun.group()):]


def _messages_go_on(pieces: list[Piece], masked: str, names_action: Callable[[str], bool] | None,
                    markers: re.Pattern) -> list[Piece]:
    """A message passed on runs on past commas ("dm lena the party is in Kreuzberg, Oranienstrasse 25, from
    10pm") until its sentence ends, a joining word parts it, or a piece names something a tool does ("text Ben
    I'm late, show me Nandos on the map"); a message after a dash or a colon runs on past its sentence ("msg bao -
    r u home yet? ill swing by w the drill", "msg diego: landed!! see u at baggage claim": the rest of the
    request); a piece after a joining word that opens with a content marker goes on with it too ("reply saying
    yes and that i'll bring dessert")."""
    out = list(pieces)
    for i, p in enumerate(out):
        if p.message is None:
            continue
        end = p.message[1]
        empty = p.message[0] >= end        # the opener ends its piece
        after_mark = empty and i + 1 < len(out) \
            and masked[end:out[i + 1].start].strip() in MESSAGE_MARKS   # "msg bao - ...": all that follows
        # "msg diego: landed!! see u at baggage claim": a message after a colon or a dash runs on past its sentence
        after_mark = after_mark or masked[p.message[0]:end].lstrip()[:1] in MESSAGE_MARKS
        for q in out[i + 1:]:
            gap, same = masked[end:q.start].strip(), q.sentence == p.sentence
            told_too = same and markers.match(lexicons.normalise(q.text)) is not None   # "... and that ..."
            if (not same and not after_mark) \
                    or (same and gap != "," and not told_too and not (empty and gap in MESSAGE_MARKS)) \
                    or (names_action is not None and names_action(lexicons.normalise(q.text))):
                break
            end = q.start + len(q.text)
        out[i] = replace(p, message=(p.message[0], end))
    return out


def _spans(text: str, cut: re.Pattern, start: int, end: int, keep: Callable[[re.Match], bool] | None = None
           ) -> list[tuple[int, int]]:
    """The spans of `text[start:end]` between the matches of `cut` (those `keep` says do not cut, skipped)."""
    out, at = [], start
    for m in cut.finditer(text, start, end):
        if keep is not None and keep(m):
            continue
        if m.start() > at:
            out.append((at, m.start()))
        at = max(at, m.end())
    if end > at:
        out.append((at, end))
    return [(a + len(text[a:b]) - len(text[a:b].lstrip()), b - len(text[a:b]) + len(text[a:b].rstrip()))
            for a, b in out if text[a:b].strip()]


def _content_words(text: str, skip: lexicons.Phrases) -> list[str]:
    return [x for x in _WORD_RE.findall(text) if x not in skip]


def _index(text: str, pos: int, interjections: lexicons.Phrases) -> int:
    """How many words other than interjections come before `pos`: where a cue stands in its piece."""
    return len(_content_words(text[:pos], interjections))


def _polarity(text: str, w: lexicons.PolarityWords, asks: bool = True) -> tuple[Polarity, str, str, int]:
    """A piece's polarity, the cue that decided it, the speech opener that changed the reading ('' if none:
    "tell mom i landed safe" asks, its "i landed" being the message's) and where in `text` the message that a
    speech opener passes on begins (-1 if no opener), read in an order that lets "don't forget
    to" ask, "can you not" refuse and "delete the note hmm no scratch that" take itself back. `asks`: its
    sentence does not end in "?" (then "Can Öztürk 0541 ..." is a name, not a question)."""
    # a content marker starts what is said ("email Ana that I'm late"), but not inside a cue that takes the
    # request back or reports it ("... actually scratch that im not going", "my roommate keeps telling me '...'";
    # "a note that says ...": the marker opens the cue, and what follows is said)
    cues = [(m.start(), m.end()) for m in (*w.take_backs(text), *w.reported.all(text))]
    marker = next((m for m in w.content_markers.all(text) if _WORD_RE.search(text, m.end())
                   and not any(a < m.start() < b for a, b in cues)), None)
    head = text[:marker.start()] if marker else text
    # "tell mom i landed safe": what follows a speech opener is the message passed on, its tense and its "ill" the
    # message's; a "don't" or a "never mind" there is still read as the person's (refusing is the safe mistake)
    # (an opener may run into the marker: "send a text message to Amira saying ...")
    # (and may end its piece: "msg bao - r u home yet?", the message after the dash)
    speech = next((m for m in w.speech_openers.all(text) if m.start() < len(head)
                   and _index(head, m.start(), w.interjections) <= w.cue_within_words), None)
    if speech is None:
        return (*_cued(head, head, w, asks), "", -1)
    read_whole = _cued(head, head, w, asks)
    # the opener's own words tell nothing of the person's stance ("ask mei if ...": no supposition)
    pol, cue = _cued(head, head[:speech.start()], w, asks)
    return pol, cue, (speech.group() if (pol, cue) != read_whole else ""), speech.end()


def _cued(head: str, told: str, w: lexicons.PolarityWords, asks: bool) -> tuple[Polarity, str]:
    """`_polarity`'s reading of `head`, where narrative cues (reported, past, supposed, asked about) count only in
    `told`, the part before any message the piece passes on."""

    def early(phrases: lexicons.Phrases, within: int = w.cue_within_words, text: str = told) -> str:
        for m in phrases.all(text):
            if _index(text, m.start(), w.interjections) <= within:
                return m.group()
        return ""

    if cue := early(w.still_asks, text=head):
        return Polarity.ASKED, cue
    if m := next(iter(w.take_backs(head)), None):
        return Polarity.CANCELLED, m.group()
    if (cue := early(w.cancel_verbs, text=head)) and set(_rest(head, cue, w)) <= set(w.back_references.words):
        return Polarity.CANCELLED, cue     # "nah cancel", "forget it"; not "cancel my 3pm"
    if cue := early(w.negated, text=head):
        return Polarity.NEGATED, cue
    for phrases, pol in ((w.reported, Polarity.REPORTED), (w.past, Polarity.PAST)):
        if cue := early(phrases):
            return pol, cue
    if cue := _past_action(told, w):
        return Polarity.PAST, cue
    if cue := early(w.request_openers):
        return Polarity.ASKED, cue
    if cue := early(w.hypothetical):
        return Polarity.HYPOTHETICAL, cue
    if (cue := early(w.question_openers, 0)) and (" " in cue or not asks or cue in w.question_words.words):
        return Polarity.QUESTION, cue
    if early(w.statement_openers, 0):
        return Polarity.STATED, ""
    return Polarity.ASKED, ""


def _past_action(head: str, w: lexicons.PolarityWords) -> str:
    """"Sent Olga the address", "I emailed ...", "we just cranked ...": a verb in the past opening the piece (not
    one spelt like a request: "set", "put"), or after a subject early in it: a `past_subjects` one, or any word a
    past adverb follows ("dad just texted me about sunday")."""
    toks = [t for t in _WORD_RE.findall(head) if t not in w.interjections or t in w.past_adverbs]
    lead = next((t for t in toks if t not in w.past_adverbs), "")
    if lead in w.past_verbs and lead not in w.past_verbs_base_form:
        return lead
    for i, tok in enumerate(toks[:w.cue_within_words + 1]):
        if tok in w.past_subjects or i + 1 < len(toks) and toks[i + 1] in w.past_adverbs:
            j = i + 1
            while j < len(toks) and toks[j] in w.past_adverbs:
                j += 1
            verb = toks[j] if j < len(toks) else ""
            if verb in w.past_verbs or (w.past_suffix and verb.endswith(w.past_suffix)
                                        and len(verb) > len(w.past_suffix) + 3 and verb not in w.not_past):
                return f"{tok} {verb}"
    return ""


def _carried(pieces: list[Piece], masked: str, w: lexicons.PolarityWords,
             speaks_of: Callable[[str], bool] | None = None,
             names_action: Callable[[str], bool] | None = None,
             removes: lexicons.Phrases | None = None) -> list[Piece]:
    """Polarity that reaches past its own piece:
    - a cancellation takes back the piece before it when it opens its own, past pieces that only refuse or take
      back ("add lunch friday, scratch that", "turn on the flashlight -- oh nvm the lights came back"); one that
      is nothing but its cue (or a bare "no need") reaches past the reasons told since, pieces without a cue
      or telling what happened that name nothing a tool does ("open wifi settings -- oh wait, it connected.
      never mind"; "... she already got it from Mike. cancel that"; not past "was gonna add chocolate" or "book
      the 7am");
    - a cancel verb opening a piece, whose other words were all said in an earlier piece, takes that piece back
      ("turn on flashlight... actually forget the flashlight"; "cancel my 3pm" alone asks to remove something);
    - a "don't" of "it" refuses the piece before ("type Lena 555 0161 but don't save it"; "I found it" refuses
      nothing), and a piece that is nothing but a "don't" refuses the piece before and the rest of its sentence
      ("open wifi. no wait, don't"; "do not, under any circumstances, email Ana"); a "don't <verb> it" whose
      verb an earlier asked piece says refers to that piece ("add coffee at 10... he cancelled so don't add it"),
      and one whose verb removes (`removes`: the lexicon's `effect.removes`) refuses nothing a piece that removes
      nothing asks: it says what not to do on the way ("switch off my 7:15 alarm but dont delete it");
    - a condition governs the piece after it ("if it rains, text Leo")."""
    out = list(pieces)

    def piece_text(j: int) -> str:
        return masked[out[j].start:out[j].start + len(out[j].text)]

    def said_before(i: int, rest: Sequence[str]) -> int:
        """The nearest piece before `i` that says every word of `rest` but its determiners, or -1."""
        words = [t for t in rest if t not in w.determiners and t not in w.back_references]
        if not words or len(words) > 3:
            return -1
        return next((j for j in range(i - 1, -1, -1) if out[j].asked
                     and set(words) <= set(_WORD_RE.findall(piece_text(j)))), -1)

    for i in range(len(out)):
        p = out[i]
        if p.asked and not (p.polarity is Polarity.ASKED and not p.cue):
            continue
        own = masked[p.start:p.start + len(p.text)]
        rest = _rest(own, p.cue, w)
        opens_with = lambda phrases: (m := phrases.find(own)) is not None and _index(own, m.start(), w.interjections) == 0  # noqa: E731
        prev = [i - 1] if i > 0 else []
        nxt = [i + 1] if i + 1 < len(out) and out[i + 1].sentence == p.sentence else []
        rest_of_sentence = [j for j in range(i + 1, len(out)) if out[j].sentence == p.sentence]
        earlier = [j for j in range(i - 1, -1, -1) if out[j].polarity not in REFUSING]
        if not rest and names_action is not None:   # past the reasons told since ("oh wait, it connected"):
            while len(earlier) > 1 and (out[earlier[0]].asked and not out[earlier[0]].cue
                                        or out[earlier[0]].polarity in TOLD) \
                    and not names_action(lexicons.normalise(out[earlier[0]].text)):   # told, naming nothing
                earlier = earlier[1:]
        targets: list[int] = []
        if p.polarity is Polarity.CANCELLED and (not rest or opens_with(w.cancelled) or opens_with(w.cancel_verbs)) \
                and (not rest or speaks_of is None or speaks_of(own)):
            # (one that names another tool's things takes back only those: "turn the flashlight on but dont
            # bother with wifi settings")
            # past pieces that only refuse or take back themselves: "mute the chat. ugh no actually i need it, leave
            # it" takes back the muting; "we already set the alarm so dont bother with that" the alarm
            targets = earlier[:1] or prev
        elif p.asked and not p.cue and opens_with(w.cancel_verbs) \
                and (said := said_before(i, _rest(own, verb := w.cancel_verbs.find(own).group(), w))) >= 0:
            out[i] = p = replace(p, polarity=Polarity.CANCELLED, cue=verb)
            targets = [said]
        elif p.polarity is Polarity.NEGATED and not rest:   # "do not, under any circumstances, email Ana"
            targets = (earlier[:1] or prev) + rest_of_sentence
        elif p.polarity is Polarity.NEGATED and _refers_back_only(rest, w) and (
                speaks_of is None or not prev or out[prev[0]].sentence != p.sentence or speaks_of(own)):
            # (a sentence of its own that refers back corrects: "... no actually just like it"); one whose verb
            # an earlier asked piece says refers to that piece, past the story told since ("add coffee with
            # Rahul at 10... he just cancelled on me so don't add it")
            said = said_before(i, rest[:1]) if rest[0] not in w.back_references else -1
            targets = [said] if said >= 0 else prev
            after = own[own.find(p.cue) + len(p.cue):].split()[:1] if p.cue in own else []
            if removes is not None and after == rest[:1] and removes.find(rest[0]) and said < 0:
                targets = [t for t in targets if removes.find(piece_text(t))]   # the cue negates the removal
        elif p.polarity is Polarity.HYPOTHETICAL and opens_with(w.governs_next):
            targets = nxt
        for t in targets:
            if out[t].asked and (not out[t].cue or p.polarity is Polarity.CANCELLED):
                out[t] = replace(out[t], polarity=p.polarity, cue=p.cue)
    return out


def _refers_back_only(rest: Sequence[str], w: lexicons.PolarityWords) -> bool:
    """Whether the words of a piece besides its cue end on a back-reference in a few words ("save it")."""
    return bool(rest) and rest[-1] in w.back_references and len(rest) <= 3


def _rest(text: str, cue: str, w: lexicons.PolarityWords) -> list[str]:
    """The words of a piece besides its cue, interjections and trailing words ("don't send it yet": send, it)."""
    at = text.find(cue) if cue else -1
    if at >= 0:
        text = text[:at] + " " + text[at + len(cue):]
    toks = [t for t in _WORD_RE.findall(text) if t not in w.interjections]
    while toks and toks[-1] in w.trailing:
        toks.pop()
    return toks


def unasked(request: str, texts: Sequence[str], lexicon: lexicons.Lexicon | None = None) -> frozenset[int]:
    """The indexes of `texts` (parts of `request`, e.g. coverage's clauses) that lie only in pieces the person
    does not ask for: what a turn never owes ("turn on the torch. Send no email to carla@x.com")."""
    pieces = read(request, lexicon)
    out, at = set(), 0
    for i, text in enumerate(texts):
        start = request.find(text, at)
        if start < 0:
            start = request.find(text)
        if start < 0:
            continue
        at = start + len(text)
        over = [p for p in pieces if p.start < start + len(text) and start < p.start + len(p.text)]
        if over and not any(p.asked for p in over):
            out.add(i)
    return frozenset(out)


@dataclass(frozen=True)
class Declined:
    """A request none of whose pieces asks for anything, and the piece and cue that say so."""
    text: str
    polarity: Polarity
    cue: str

    @property
    def why(self) -> str:
        return REASONS[self.polarity] + (f" ({self.cue!r} in {self.text!r})" if self.cue else "")


def asks_nothing(request: str, lexicon: lexicons.Lexicon | None = None) -> Declined | None:
    """Whether no piece of `request` asks for an action ("whatever you do, don't email Ana"): then nothing is
    handed to a navigator either. A statement alone may ask ("I need the torch"); a question may not. (The
    asks-now reader judges calls only: it reads "write it up but dont send it" as asking nothing, where the
    screen should draft it and every Send tap is refused.)"""
    pieces = read(request, lexicon)
    if not pieces or any(p.asked for p in pieces):
        return None
    first = pieces[0]
    return Declined(first.text, first.polarity, first.cue)


Readers = asks.Reader | Sequence[asks.Reader] | None | Literal["shipped"]


def not_asking_now(message: str, reader: Readers = "shipped") -> str:
    """The first asks-now reader's verdict that is sure `message` asks for nothing now, as a cue ("asks-now-lm
    0.99"), else "" (also with no reader: None, or none bundled). Each reader has its own threshold, so either
    being sure is enough: they read different things (openers, context)."""
    if reader == "shipped":
        readers = asks.shipped()
    elif reader is None:
        readers = ()
    else:
        readers = tuple(reader) if isinstance(reader, Sequence) else (reader,)
    for r in readers:
        p = r.p_not_asking(message)
        if p >= r.threshold:
            return f"{r.name} {p:.2f}"
    return ""


@dataclass(frozen=True)
class LeftOut:
    """A clause of the request no call answered, as the model is asked about it, and the tools that answer it."""
    text: str
    tools: tuple[str, ...]


def left_out(messages: Sequence[dict], calls: Sequence[ToolCall], catalogue: Catalogue) -> list[LeftOut]:
    """The clauses of the person's request (`coverage.clauses`) that ask for something a tool that changes or
    sends something could do and that no call of the turn answers ("Add Lee Chen, 555-0199, to my contacts and
    email lee@example.com saying hello" with only the contact made: "email lee@example.com saying hello").
    Decoding never forces such a call; a caller may ask the model about the clause on its own instead, and the
    model decides. Clauses the person does not ask for (`unasked`) and those after tool results are left alone."""
    if not messages or messages[-1].get("role") != "user" or not isinstance(messages[-1].get("content"), str):
        return []
    request = messages[-1]["content"]
    parts = coverage.clauses(request, catalogue)
    done = set(unasked(request, [p.text for p in parts]))
    names, fallback = set(catalogue.names), coverage.fallback_tool(catalogue)
    out = []
    while (owed := coverage.owed(parts, list(calls), names, fallback, False, done)) is not None:
        i, tools = owed
        done.add(i)
        if any(catalogue[t].effect != "none" for t in tools):
            head = next((p for p in reversed(parts[:i]) if not p.listed), None)
            # a list item says no verb of its own: "add Dentist Monday 9am, Haircut Wed 4pm" -> "add Haircut Wed 4pm"
            text = f"{coverage.verb_phrase(head.text)} {parts[i].text}" if parts[i].listed and head else parts[i].text
            out.append(LeftOut(text, tools))
    return out


def clause_of(call: ToolCall, request: str, catalogue: Catalogue, others: Sequence[str] | None = None,
              lexicon: lexicons.Lexicon | None = None) -> str:
    """What the person said about `call`, to judge what it made on the phone by: in the sentences that write its
    values or name its tool, the pieces that ask or state something and either name its tool before any other,
    or write its values and name no other tool, or name no tool and follow such a piece ("add book club tomorrow
    at 7pm to my calendar, and put the location as Maple Street Library"; "email rob@x.com ..., tell him the bulb
    is out" is the email's, not the torch's). "Tom got a new number, it's 555-0188. Can you update his
    contact?" for a new contact keeps the "update", so the check can see a new contact is not it. `others`: the tools the other calls
    of the turn went to (default: every other tool of the catalogue). '' when no piece owns the call."""
    pieces = read(request, lexicon)
    tool = catalogue[call.name] if call.name in catalogue else None
    hits, _ = _ties(call, tool, pieces)
    own = _tool_mention(tool) if tool is not None else None
    mentions = [m for name in (catalogue.names if others is None else others)
                if name != call.name and name in catalogue for m in [_tool_mention(catalogue[name])] if m]
    kept, ours, sentence, sentences = [], True, None, set()
    for p, h in zip(pieces, hits):
        if p.sentence != sentence:
            ours, sentence = True, p.sentence
        text = lexicons.normalise(p.text)
        mine = own.search(text) if own else None
        first = min((m.start() for m in (x.search(text) for x in mentions) if m), default=None)
        if h or mine or first is not None:   # a piece that says whose it is; pieces after it naming no tool follow it
            # its tool named first ("email rob@x.com subject hallway light" is the email's), or its values and
            # no other tool
            ours = (mine is not None and (first is None or mine.start() <= first)) or (bool(h) and first is None)
            sentences |= {p.sentence} if h or mine else set()
        if ours:
            kept.append(p)
    return _as_written(request, [p for p in kept if p.sentence in sentences
                                 and p.polarity in (Polarity.ASKED, Polarity.STATED)], pieces)


def _as_written(request: str, chosen: Sequence[Piece], pieces: Sequence[Piece]) -> str:
    """The `chosen` pieces in the person's own words: pieces next to each other in the reading are one stretch of
    the request, with the words the reading split them at ("at The Crown and Anchor", "3 hours or so"), and
    stretches apart are joined with ", ". Joining every piece with ", " made "at The Crown, Anchor" a place."""
    index = {id(p): i for i, p in enumerate(pieces)}
    runs: list[list[Piece]] = []
    for p in chosen:
        if runs and index[id(p)] == index[id(runs[-1][-1])] + 1 and p.sentence == runs[-1][-1].sentence:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(request[run[0].start:run[-1].start + len(run[-1].text)].strip(" ,;") for run in runs)


# ============================================================================================ one call's reading
@dataclass(frozen=True)
class Reading:
    """The request as it stands to one call. What the call copies as what it says is the person's message, not
    their intent: in "text dad yes ill be there around noon" the "ill" is Dad's news, not a supposition, and in
    "text Sam start without me" the "without" refuses nothing. A refusal that refers back ("switch off my 6am
    alarm, but don't delete it") is about the call only when it names no tool of the catalogue, or the call's."""
    pieces: tuple[Piece, ...]
    content: tuple[str, ...] = ()     # the parts of the request read as what the call says
    elsewhere: str = ""               # a back-referring refusal read as another tool's ('' if none)

    def __str__(self) -> str:
        said = [f"{c!r} read as what it says" for c in self.content]
        return "; ".join(said + ([f"{self.elsewhere!r} speaks of another tool"] if self.elsewhere else []))


def reading(call: ToolCall, request: str, catalogue: Catalogue, pieces: Sequence[Piece] | None = None,
            lexicon: lexicons.Lexicon | None = None) -> Reading:
    """`call`'s `Reading` of `request` (`pieces`: the request's plain reading, if already made).

    A string argument of two words or more that is neither an address, a number nor a date, and that the call
    copies from the request after the request names its tool (not by a word any tool may have: "send") or
    writes another of its values in the same sentence, is what the call says. It stops at a piece that takes the
    call back ("..., actually don't send it", "..., nvm the message"): those stay the person's."""
    w = (lexicon or lexicons.load()).polarity
    pieces = tuple(pieces) if pieces is not None else read(request, lexicon, names_action=action_names(catalogue))
    tool = catalogue[call.name] if call.name in catalogue else None
    if tool is None:
        return Reading(pieces)
    norm = lexicons.normalise(request)
    own, introduced_by = _named_by(call.name, tool), _named_by(call.name, tool, generic=False)
    props = argument_schema(tool).get("properties") or {}
    values = [lexicons.normalise(str(v).strip()) for v in _scalars(call.arguments) if len(str(v).strip()) >= 2]
    spans: list[tuple[int, int]] = list(_names_copied(call, request))
    for name, value in call.arguments.items():
        sub = props.get(name)
        if not isinstance(value, str) or len(value.split()) < 2 or not isinstance(sub, dict) or sub.get("enum") \
                or value_kind(name, sub) != "span":
            continue
        said = lexicons.normalise(value.strip())
        for m in re.finditer(rf"(?<!\w){re.escape(said)}(?!\w)", norm):
            at = [p for p in pieces if p.start <= m.start()]
            if not at:
                continue
            first = min(p.start for p in pieces if p.sentence == at[-1].sentence)
            before = norm[first:m.start()]
            named = bool(introduced_by and introduced_by.search(before))
            if not named and not any(re.search(rf"(?<!\w){re.escape(v)}(?!\w)", before) for v in values if v != said):
                continue
            end = next((p.start for p in pieces if m.start() < p.start < m.end() and _takes_back(p, own, w)),
                       m.end())
            while end > m.start() and not norm[end - 1].isalnum():   # the comma before "nvm" still parts it
                end -= 1
            spans.append((m.start(), end))
    others = [(t.name, rx) for t in catalogue if t.name != call.name and (rx := _named_by(t.name, t)) is not None]

    def speaks_of(text: str) -> bool:
        named = [n for n, rx in others if rx.search(text)]
        return not named or bool(own and own.search(text))

    acts = action_names(catalogue)
    written = [re.compile(rf"(?<!\w){re.escape(v)}(?!\w)") for v in values]
    mine = read(request, lexicon, spans, speaks_of, lambda text: acts(text) or any(v.search(text) for v in written))

    def elsewhere(i: int, p: Piece) -> bool:
        """A refusal that would refer back to the piece before, but names another tool's things (`_carried`)."""
        t = lexicons.normalise(p.text)
        if not i or speaks_of(t):
            return False
        rest = _rest(t, p.cue, w)
        return p.polarity is Polarity.CANCELLED and bool(rest) or (
            p.polarity is Polarity.NEGATED and mine[i - 1].sentence == p.sentence and _refers_back_only(rest, w))

    return Reading(mine, tuple(request[a:b] for a, b in spans),
                   next((p.text for i, p in enumerate(mine) if elsewhere(i, p)), ""))


def action_names(catalogue: Catalogue) -> Callable[[str], bool]:
    """Whether a text names something one of `catalogue`'s tools does, by a keyword or a word of its name
    ("flashlight", "map", "book")."""
    named = [rx for t in catalogue if (rx := _named_by(t.name, t)) is not None]
    return lambda text: any(rx.search(text) for rx in named)


def _names_copied(call: ToolCall, request: str) -> list[tuple[int, int]]:
    """Spans of `request` where the call copies a one-word value the person wrote capitalised inside a sentence:
    a name ("add a contact Omar Said 555-0142": "Said" is a surname, not reported speech), read as a value."""
    words = {v.strip() for v in _scalars(call.arguments) if isinstance(v, str)}
    return [(m.start(), m.end()) for word in words if word.isalpha() and word[:1].isupper() and not word.isupper()
            for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", request)
            if not _SENTENCE_START_RE.search(request, 0, m.start())]


def _takes_back(piece: Piece, own: re.Pattern | None, w: lexicons.PolarityWords) -> bool:
    """Whether a piece refuses or takes back by itself or of the call's tool ("don't", "nvm", "don't send it",
    "never mind the message"), not only as the words of a message ("don't wait up")."""
    if piece.polarity not in REFUSING:
        return False
    text = lexicons.normalise(piece.text)
    rest = _rest(text, piece.cue, w)
    return not rest or _refers_back_only(rest, w) or bool(own and own.search(text))


# ============================================================================================ the gate
def gate(calls: Sequence[ToolCall], request: str, catalogue: Catalogue, user_text: str | None = None,
         lexicon: lexicons.Lexicon | None = None, notes: list[str] | None = None,
         reader: Readers = "shipped", now: datetime | None = None
         ) -> tuple[list[ToolCall], list[Refusal]]:
    """The calls `request` asks for, and the others refused with their reason. `user_text` is everything the
    person wrote in the conversation (default: `request`): the only place a recipient may come from. `now` is
    the conversation's clock (default: this machine's), against which the request's days are read. `notes`
    gets a line for each call kept only because of its own `Reading` (traces show it as the `gate` rule's).
    Every call is refused when an asks-now `reader` (`asks.shipped()` by default, None: none)
    is sure the message asks for nothing now (`NOT_ASKED_NOW`), but the one that sends a message the request
    dictates to it: the lexicon reads the ways of saying so it lists, the reader the ways framings taught it."""
    framed = not_asking_now(request, reader) if calls else ""
    pieces = read(request, lexicon, names_action=action_names(catalogue))
    said = lexicons.normalise(user_text if user_text is not None else request)
    kept: list[ToolCall] = []
    refused: list[Refusal] = []
    for call in calls:
        tool = catalogue[call.name] if call.name in catalogue else None
        effect = tool.effect if tool is not None else "changes"
        why = _recipient_problem(call, tool, said) if effect == "sends" else None
        why = why or _address_in_two(call, request)
        if why is None:
            mine = reading(call, request, catalogue, pieces, lexicon)
            why = _polarity_problem(call, tool, effect, mine.pieces, lexicon)
            if why is None and mine.pieces != pieces and notes is not None \
                    and _polarity_problem(call, tool, effect, pieces, lexicon) is not None:
                notes.append(f"{call.name} kept: {mine}")
        if why is None and effect != "none":
            why = _borrowed_values(call, tool, catalogue, mine.pieces, lexicon) or _acts_later(call, tool, mine.pieces,
                                                                                              request, calls, now, lexicon)
        if why is None:
            why = _passed_on(call, tool, pieces, request) or _quoted_text(call, tool, request)
        if why is None and effect != "none":
            why = (_text_to_write(call, tool, pieces, request, lexicon) or _removal_unsaid(call, pieces, lexicon) or _verb_declined(call, tool, pieces, lexicon)
                   or _edits_what_exists(call, tool, effect, pieces, lexicon))
        if why is None and framed and not _carries_message(call, tool, pieces, request):
            why = Refusal(call, NOT_ASKED_NOW, framed, request)
        if why is None:
            kept.append(call)
            if notes is not None:
                by_value, by_name, _ = _owners(call, tool, pieces)
                notes.extend(f"{call.name} kept: {p.text.strip()!r} passes on a message after {p.passes_on!r}"
                             for p in (by_value or by_name or pieces) if p.passes_on and p.asked)
        else:
            refused.append(why)
    return kept, refused


def gate_messages(calls: Sequence[ToolCall], messages: Sequence[dict], catalogue: Catalogue,
                  notes: list[str] | None = None) -> tuple[list[ToolCall], list[Refusal]]:
    """`gate` for a conversation: the request is its last user message; recipients may come from any of the
    person's messages, never from a tool's response."""
    said = [m.get("content") for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    if not said or not isinstance(messages[-1].get("content"), str) and messages[-1].get("role") == "user":
        return [], [Refusal(c, "the request has no text to read it from") for c in calls]
    return gate(calls, said[-1], catalogue, "\n".join(said), notes=notes, now=now_of(messages))


def _carries_message(call: ToolCall, tool, pieces: Sequence[Piece], request: str) -> bool:
    """Whether `call` sends the message its request dictates ("text dad: don't wait up" with a texting tool):
    a tool that acts, with a value written inside a message the lexicon reads (`Piece.message`; the gate has
    already refused such a call when the message's opener does not name its tool). The asks-now reader reads
    every message passed on as asking nothing, which is right for every call but the one that sends it."""
    if tool is None or tool.effect == "none":
        return False
    values = [v.strip(" .,!?").lower() for v in _scalars(call.arguments) if isinstance(v, str) and v.strip(" .,!?")]
    return any(p.message is not None and any(v in request[p.message[0]:p.message[1]].lower() for v in values)
               for p in pieces)


# Polarities that tell a story rather than refuse: a value written there may still be asked for elsewhere ("I met
# Arjun Khalil, add him to my contacts"); a "don't" or a "never mind" is never overruled.
NARRATIVE = frozenset({Polarity.PAST, Polarity.REPORTED, Polarity.QUESTION, Polarity.HYPOTHETICAL})
REFUSING = frozenset({Polarity.NEGATED, Polarity.CANCELLED})
TOLD = frozenset({Polarity.PAST, Polarity.REPORTED})   # what happened: a reason, never an ask of its own
# A call that changes something, of which the person wrote no value and named no tool word: the caller's guess
# ("can u set alarms for every other day?" -> `turn_on_flashlight()`), never what they asked.
UNTIED = "the request neither names it nor says any of its values"
BORROWED = "its values are written where the request asks for "   # + the tool the request asks for there
# The asks-now reader (`asks.AsksNow`) is sure the whole message passes the action on, notes it or asks about it.
NOT_ASKED_NOW = "the message reads as one that asks for nothing now (passed on, noted, asked about)"
LIKE = 0.8          # how alike a written word and a tool's word must be to be one misspelt ("flashlite")


def _polarity_problem(call: ToolCall, tool, effect: str, pieces: Sequence[Piece],
                      lexicon: lexicons.Lexicon | None = None) -> Refusal | None:
    """Why `call` is not asked for, or None. Its owners are the pieces that write the most of its values, else
    every piece that names its tool, else the whole request:
    - a "don't" or a "never mind" among the pieces writing its values refuses it, whatever else does ("email jan
      ... and DON'T add him"); without values, so do the pieces naming its tool the most when all of them refuse
      ("... Actually, don't turn on the flashlight"; not "I don't need the flashlight anymore, switch it off");
      and so do the pieces naming it when all of them refuse and its values are in other sentences (a call
      that changes something; "not to everyone, just to Kwame" is one sentence that corrects itself);
    - an asked owner asks for it;
    - owners that only state something ask for it, unless a piece that names its tool refuses or tells of it
      ("no map needed, I know where Tesco is");
    - values only told about (`NARRATIVE`) are asked for when an asked piece names the tool or, after them,
      refers back to them ("I met Inés Pham, save them");
    - a question may be answered by a tool that changes nothing."""
    by_value, by_name, most = _owners(call, tool, pieces)
    owners = by_value or by_name or list(pieces)
    if not owners:
        return Refusal(call, "the request asks for nothing")
    if not by_value and not by_name and effect != "none" and not _misspelt(call, tool, pieces) \
            and not (tool is not None and argument_schema(tool).get("x-fallback") is True):
        return Refusal(call, UNTIED)     # (the catalogue's fallback carries a goal in the caller's words)
    refusing = ([p for p in by_value if p.polarity in REFUSING] if by_value
                else most if most and all(p.polarity in REFUSING for p in most) else [])
    if not refusing and by_value and effect != "none" and by_name and not set(by_value) & set(by_name) \
            and all(p.polarity in REFUSING for p in by_name) \
            and not {p.sentence for p in by_value} & {p.sentence for p in by_name}:
        refusing = by_name   # named only where it is refused, its values elsewhere: "don't react to his message.
        #                      leave him on read" is no message saying "leave him on read"
    if refusing:
        return _refusal(call, refusing[0])
    if any(p.polarity is Polarity.ASKED for p in owners):
        return None
    if all(p.polarity is Polarity.STATED for p in owners):
        against = [p for p in by_name if not p.asked]
        if not against or any(p.polarity is Polarity.ASKED for p in by_name):
            return None
        owners = against
    elif by_value and all(p.polarity in NARRATIVE | {Polarity.STATED} for p in by_value) and (
            any(p.polarity is Polarity.ASKED for p in by_name)
            or any(p.polarity is Polarity.ASKED and _refers_back(p, lexicon) for p in pieces
                   if p.start > by_value[0].start)):
        return None
    first = next(p for p in owners if p.polarity is not Polarity.STATED)
    if first.polarity is Polarity.QUESTION and effect == "none":
        return None
    return _refusal(call, first)


def _borrowed_values(call: ToolCall, tool, catalogue: Catalogue, pieces: Sequence[Piece],
                     lexicon: lexicons.Lexicon | None = None) -> Refusal | None:
    """A call that changes something, whose values are all written where the request asks another tool for
    something, is refused: "set an alarm for 6:30 and text Ana that I'm on my way" gives no `set_timer(label="Ana")`
    because "Ana" belongs to the texting, and "lock the back door" no `turn_on_lights(room="the back door")`.
    Kept when any piece writing one of its values (whole) names its own tool or names no tool, or when a later
    asked piece names its tool and refers back ("find the email from Ana and add them to my contacts"), or when a
    piece writes its address or number. A label before an address or a number is a field, not a tool ("...,
    email lan@x.vn" in a new contact)."""
    if tool is None or (own := lexicons.whole_words(keywords(tool))) is None:
        return None
    # a value whole, not a word inside an address ("oyelaran" in "k.oyelaran@x.ng")
    values = [(_whole_value(v), len(str(v).split())) for v in _scalars(call.arguments) if len(str(v).strip()) >= 2]
    others = [(t.name, rx) for t in catalogue
              if t.name != call.name and (rx := lexicons.whole_words(keywords(t))) is not None]
    addresses = [lexicons.normalise(str(v)) for v in _scalars(call.arguments)
                 if isinstance(v, str) and (EMAIL_RE.fullmatch(v.strip()) or PHONE_RE.fullmatch(v.strip()))]
    first: tuple[Piece, str, str] | None = None
    for piece in pieces:
        text = lexicons.normalise(piece.text)
        if not any(v.search(text) for v, _ in values):
            continue
        if any(a in text for a in addresses):   # the piece writes the call's address: it is the call's
            return None                          # ("send the wifi password ... to guest@example.com")
        text = FIELD_LABEL_RE.sub(" ", text)
        for v, words in values:   # a tool's word inside a value of several words is content ("subject 'Guest
            if words > 1:         # wifi broken'"); a value that is one word may be the tool's word ("a timer")
                text = v.sub(" ", text)
        other = next(((name, m.group()) for name, rx in others if (m := rx.search(text))), None)
        if own.search(text) or other is None:
            return None
        first = first or (piece, *other)
    if first is None or any(p.asked and p.start > first[0].start and own.search(lexicons.normalise(p.text))
                            and _refers_back(p, lexicon) for p in pieces):
        return None
    piece, other_tool, cue = first
    return Refusal(call, BORROWED + other_tool, cue, piece.text)


ACTS_LATER = "the request sets a time for it, and this tool acts now"


def _acts_later(call: ToolCall, tool, pieces: Sequence[Piece], request: str, calls: Sequence[ToolCall] = (),
                now: datetime | None = None, lexicon: lexicons.Lexicon | None = None) -> Refusal | None:
    """Refuses a call that acts now when a piece that asks for it says when it should happen ("email ana
    tomorrow morning saying the rent is paid", "torch on at 9pm"): its tool takes no date or time, so it would
    happen now, which is not what was asked. Found by the date reader, which knows no tool; a tool with a date
    or time argument takes the time, and so does the catalogue's fallback (the screen gets the goal in the
    person's words: "set an alarm for 6:30"). Not a time that overlaps one of the call's values, is inside what a
    message says (after a content marker: "email bo that I'll be late tomorrow"), is a bare hour ("an alert
    at 6" may be a number), or is the time another of the turn's `calls` took ("torch on n add camping tmrw 2pm":
    the event's)."""
    if tool is None:
        return None
    schema = argument_schema(tool)
    if schema.get("x-fallback") is True or any(value_kind(n, s) in ("datetime", "date", "time")
                                               for n, s in schema.get("properties", {}).items() if isinstance(s, dict)):
        return None
    markers = (lexicon or lexicons.load()).polarity.content_markers
    norm = lexicons.normalise(request)
    values = [(m.start(), m.end()) for v in _scalars(call.arguments) if len(str(v).strip()) >= 2
              for m in _whole_value(v).finditer(norm)]
    taken = [str(v) for other in calls if other is not call for v in _scalars(other.arguments) if isinstance(v, str)]
    by_value, by_name, _ = _owners(call, tool, pieces)
    for piece in (p for p in (by_value or by_name) if p.asked):
        said_from = min([m.start() for m in markers.all(lexicons.normalise(piece.text))] + [len(piece.text)])
        for m in mentions_as_written(piece.text, now or datetime.now()):
            at, end = piece.start + m.start, piece.start + m.end
            bare_hour = m.kind == "time" and not m.meridiem and not m.exact24 and m.clock[1] == 0
            if bare_hour or m.start >= said_from or (piece.message and piece.message[0] <= at) \
                    or any(a < end and at < b for a, b in values) or _time_taken(m, taken):
                continue
            return Refusal(call, ACTS_LATER, piece.text[m.start:m.end], piece.text.strip())
    return None


def _time_taken(mention: Mention, values: Sequence[str]) -> bool:
    """Whether one of `values` (another call's arguments) holds the day or a clock reading `mention` says."""
    if mention.kind == "day":
        return any(d.isoformat() in v for d in mention.days for v in values)
    if mention.kind == "time":
        return any(f"{h:02d}:{mi:02d}" in v for h, mi, _ in clock_readings(mention, mention.part) for v in values)
    return any(t.isoformat(timespec="minutes") in v for t in mention.values for v in values)


def _values_only_in(call: ToolCall, tool, request: str, spans: Sequence[tuple[int, int, Any]]) -> Any:
    """The thing of the first of `spans` ((start, end, thing) in `request`) that holds one of `call`'s values
    written whole, when every place the request writes any of them is inside one of `spans`; None when one is
    written elsewhere, when none is written, or for a tool that sends (`_recipient_problem` reads those) or is
    the catalogue's fallback (the screen takes any words)."""
    if tool is not None and (tool.effect == "sends" or argument_schema(tool).get("x-fallback") is True):
        return None
    first = None
    for at in _value_places(call, request):
        hit = next((thing for a, b, thing in spans if a <= at < b), None)
        if hit is None:
            return None
        first = hit if first is None else first
    return first


ADDRESS_IN_TWO = "it writes one stretch of the request, an address or a number, into two of its values"


def _address_in_two(call: ToolCall, request: str) -> Refusal | None:
    """A call in which a value is written in the request only where another of its values is, one of them an
    email address or a phone number, misread the request: "add in contacts fatima benali ... and mail
    fatima.benali@gmail.com merci" gave `send_email(to="fatima.benali@gmail.com", subject="fatima.benali@gmail.com
    merci")`, "last name Carty email siobhan.carty@..." a last name "Carty email siobhan", a notice passed on its
    own address as the subject. An address or a number names one thing, so it is never part of another value.
    A value that holds the other whole where it is written is not counted ("marlene.fischer@..." holds the first
    name "Marlene" written before it too); neither are values that are the same. No words: any catalogue."""
    norm = lexicons.normalise(request)
    values = sorted({lexicons.normalise(v.strip()) for v in _scalars(call.arguments)
                     if isinstance(v, str) and len(v.strip()) >= 2})
    places = {v: [(m.start(), m.end()) for m in re.finditer(rf"(?<!\w){re.escape(v)}(?!\w)", norm)] for v in values}

    def inside(x: int, x2: int, y: int, y2: int) -> bool:
        """[x, x2) overlaps [y, y2) without holding it whole."""
        return x < y2 and y < x2 and not (x <= y and y2 <= x2)

    ids = {v for v in values if EMAIL_RE.fullmatch(v) or PHONE_RE.fullmatch(v)}
    for a, b in itertools.permutations(values, 2):
        if places[a] and (a in ids or b in ids) and all(any(inside(*pa, *pb) for pb in places[b]) for pa in places[a]):
            return Refusal(call, ADDRESS_IN_TWO, a, b)
    return None


def _value_places(call: ToolCall, request: str) -> list[int]:
    """Where `request` writes each of `call`'s values (of two characters or more) whole, in the values' order."""
    norm = lexicons.normalise(request)
    return [m.start() for v in _scalars(call.arguments) if len(str(v).strip()) >= 2
            for m in _whole_value(v).finditer(norm)]


def _passed_on(call: ToolCall, tool, pieces: Sequence[Piece], request: str) -> Refusal | None:
    """A call whose values are all written inside a message the person passes on to someone, or in its
    opener, is that message's words or its addressee, not an ask: "text hiroshi meet at hachiko exit at noon"
    gives no `show_map("hachiko exit")`, "sms to Kwame: Grandpa will pick you up at 4pm" no event, "let
    Katarzyna Nowak know that I landed" no contact. The message begins after a speech opener (`Piece.message`,
    the lexicon's `polarity.speech_openers`). Kept when any of its values is written outside every message and
    opener, when the tool sends (a catalogue's `send_sms` for "sms to Raul: ...", `message_studio` for "msg the
    studio: ..."), or when the tool is the catalogue's fallback (`_values_only_in`)."""
    inside = _values_only_in(call, tool, request, [(p.start, p.message[1], p) for p in pieces if p.message])
    if inside is None:
        return None
    opener = request[inside.start:inside.message[0]].strip()
    return Refusal(call, "its values are the words of a message the request passes on", opener,
                   request[inside.start:inside.message[1]], for_screen="message-passed-on")


QUOTED_TEXT = "its tool is named only inside a text the request quotes, which holds its values"
QUOTED_TEXT_MIN_WORDS = 5   # a quote this long is a text someone wrote; a shorter one is a name ('add "Budget call"')


def _quoted_text(call: ToolCall, tool, request: str) -> Refusal | None:
    """A call whose tool the request names only inside quotes (`coverage.QUOTED_RE`, a quote of at least
    `QUOTED_TEXT_MIN_WORDS` words), with every value it writes inside them too, is the quoted text's words: 'fwd
    from gary: "all drivers add the depot meeting sat 7am to your calendars"' asks for no event. Quotation marks
    are punctuation, not English: the quote is someone's text, passed on, pasted or drafted. Kept when the tool is
    named outside every quote ('put this in my calendar: "Flu clinic, ..."'), when a value is written outside
    them ('email bob@x.com "running late, start without me"'), and for the catalogue's fallback (the screen)."""
    if tool is None or argument_schema(tool).get("x-fallback") is True:
        return None
    own = _named_by(call.name, tool)
    spans = [(m.start(), m.end()) for m in coverage.QUOTED_RE.finditer(request)
             if len(m.group().split()) >= QUOTED_TEXT_MIN_WORDS]
    if own is None or not spans:
        return None
    norm = lexicons.normalise(request)
    inside = lambda at: next(((a, b) for a, b in spans if a <= at < b), None)   # noqa: E731
    named = [m.start() for m in own.finditer(norm)]
    if not named or any(inside(at) is None for at in (*named, *_value_places(call, request))):
        return None
    a, b = inside(named[0])
    return Refusal(call, QUOTED_TEXT, request[a], request[a:b])


def _text_to_write(call: ToolCall, tool, pieces: Sequence[Piece], request: str,
                   lexicon: lexicons.Lexicon | None = None) -> Refusal | None:
    """A state-changing call whose values are all written in the text the request asks to write somewhere
    (after one of the lexicon's `navigator.text_cues`: "that says", "note down", "make a note to"), in a piece
    that does not name the call's tool before that cue, is that text's words, not an ask: 'Create a note titled
    "Book club" that says: next book ... on the 14th' gives no event titled "next book", "make a note to call
    the dentist tomorrow at 3" no event. The text goes to the screen (the sentence from that piece on). Tools
    that send and the catalogue's fallback are left alone (`_values_only_in`)."""
    cues = lexicons.Phrases(tuple(lexicons.normalise(c) for c in (lexicon or lexicons.load()).navigator.text_cues))
    own = _named_by(call.name, tool, generic=False)
    spans = []
    for p in pieces:
        m = cues.find(lexicons.normalise(p.text))
        if m is not None and not (own is not None and own.search(lexicons.normalise(p.text[:m.start()]))):
            spans.append((p.start + m.end(), p.start + len(p.text), (p, m.group())))
    inside = _values_only_in(call, tool, request, spans)
    if inside is None:
        return None
    piece, cue = inside
    end = max(p.start + len(p.text) for p in pieces if p.sentence == piece.sentence)
    return Refusal(call, "its values are the words of a text the request asks to write", cue, request[piece.start:end],
                   for_screen="text-to-write")


def _whole_value(value) -> re.Pattern:
    """A call's value as written whole in normalised text, not a word inside an address ("oyelaran" in
    "k.oyelaran@x.ng")."""
    return re.compile(rf"(?<![\w.@]){re.escape(lexicons.normalise(str(value).strip()))}(?![\w@]|\.\w)")


def _removal_unsaid(call: ToolCall, pieces: Sequence[Piece], lexicon: lexicons.Lexicon | None = None
                    ) -> Refusal | None:
    """A call to a tool whose name says it removes something (`delete_chat`, `cancel_order`) is made only when a
    part of the request that asks says a removal ("delete", "cancel", "get rid of": the lexicon's
    `effect.removes`): a caller that answers "show me my top 5 unread chats" with `delete_chat` has guessed the
    one thing that cannot be undone."""
    removes = (lexicon or lexicons.load()).effect.removes
    if not any(removes.find(w) for w in name_words(call.name)):
        return None
    if any(p.asked and removes.find(lexicons.normalise(p.text)) for p in pieces):
        return None
    return Refusal(call, "the request asks to remove nothing")


def _verb_declined(call: ToolCall, tool, pieces: Sequence[Piece], lexicon: lexicons.Lexicon | None = None
                   ) -> Refusal | None:
    """A call whose tool's name says what it does by a send or removal verb (`send_email`: "send", "email";
    `delete_note`: "delete"; the lexicon's `effect.sends` / `effect.removes`) is refused when a part of the
    request says not to do that verb to the thing already spoken of -- the verb then "it"/"that"/... (the
    lexicon's `polarity.back_references`), the tool's own words, or nothing: "draft an email to greg about the
    sink, dont send it" is no email sent, though its address and subject are in the part that asks. A "don't"
    with an object of its own is about something else ("dont remove the blocks", "don't message him")."""
    lex = lexicon or lexicons.load()
    said = lexicons.whole_words(_own_verbs(call.name, lex, removals=True))
    if said is None:
        return None
    named = _named_by(call.name, tool)
    back, determiners = lex.polarity.back_references.words, lex.polarity.determiners.words
    for p in pieces:
        if p.polarity is not Polarity.NEGATED:
            continue
        text = lexicons.normalise(p.text)
        for m in said.finditer(text):
            rest = text[m.end():].split()
            if rest and rest[0] in determiners:
                rest = rest[1:]
            if not rest or rest[0] in back or (named is not None and named.match(" ".join(rest))):
                return _refusal(call, p)
    return None


def _own_verbs(name: str, lex: lexicons.Lexicon, removals: bool) -> tuple[str, ...]:
    """The words of a tool's name that say it sends (`effect.sends`) or, with `removals`, removes something."""
    return tuple(v for v in name_words(name) if v in lex.effect.sends or removals and lex.effect.removes.find(v))


def _edits_what_exists(call: ToolCall, tool, effect: str, pieces: Sequence[Piece],
                       lexicon: lexicons.Lexicon | None = None) -> Refusal | None:
    """A call that makes something new or sends it is refused when every piece that writes its values begins by
    changing or removing something that exists (its first verb is one of the lexicon's `navigator.edit_verbs` or
    `effect.removes`) and the tool's own name says no such verb: "update Chen Wei's contact with his new email"
    is no new contact, "move my dentist appointment to Friday at 3pm" no second appointment; `update_contact`
    may still be called for it. A send must also say its own send word after that verb ("update aunt carols
    email to carol@x.com": "email" is a noun there), since "move two hundred to checking" keeps its transfer."""
    lex = lexicon or lexicons.load()
    if any(v in lex.navigator.edit_verbs or lex.effect.removes.find(v) for v in name_words(call.name)):
        return None
    by_value = _owners(call, tool, pieces)[0]
    object_word = lexicons.whole_words(_own_verbs(call.name, lex, removals=False)) if effect == "sends" else None
    if not by_value or effect == "sends" and object_word is None:
        return None
    verbs = lexicons.whole_words((*lex.navigator.request_verbs, *lex.navigator.edit_verbs, *lex.effect.sends,
                                  *lex.effect.removes.words))
    for p in by_value:
        text = lexicons.normalise(p.text)
        first = verbs.search(text) if verbs is not None else None   # the piece's first verb says what it asks
        if first is None or not (first.group(0) in lex.navigator.edit_verbs or lex.effect.removes.find(first.group(0))):
            return None
        if object_word is not None and not object_word.search(text, first.end()):
            return None
    return Refusal(call, "the request asks to change something that exists, not to "
                   + ("send it" if effect == "sends" else "make a new one"), "", by_value[0].text,
                   for_screen="edits-what-exists")


def _refusal(call: ToolCall, piece: Piece) -> Refusal:
    return Refusal(call, REASONS[piece.polarity], piece.cue, piece.text)


def _refers_back(piece: Piece, lexicon: lexicons.Lexicon | None = None) -> bool:
    """Whether a piece speaks of something said before it ("save them", "add that")."""
    w = (lexicon or lexicons.load()).polarity
    return any(t in w.back_references for t in _WORD_RE.findall(lexicons.normalise(piece.text)))


def _owners(call: ToolCall, tool, pieces: Sequence[Piece]) -> tuple[list[Piece], list[Piece], list[Piece]]:
    """The pieces that write the most of `call`'s values, the pieces that name its tool (its keywords or the
    words of its name), and those of them that name it with the most words."""
    hits, named = _ties(call, tool, pieces)
    best = max(hits, default=0)
    by_value = [p for p, h in zip(pieces, hits) if h == best] if best > 0 else []
    top = max(named, default=0)
    by_name = [p for p, n in zip(pieces, named) if n > 0]
    return by_value, by_name, [p for p, n in zip(pieces, named) if n == top and n > 0]


def _ties(call: ToolCall, tool, pieces: Sequence[Piece], generic: bool = True) -> tuple[list[int], list[int]]:
    """For each piece, how many of `call`'s values it writes and how many times it names its tool (`generic`:
    also by the words of its name any tool may have, "turn" of `turn_on_flashlight`)."""
    values = [lexicons.normalise(str(v)) for v in _scalars(call.arguments) if len(str(v).strip()) >= 2]
    mention = _named_by(call.name, tool, generic)
    texts = [lexicons.normalise(p.text) for p in pieces]
    return [sum(v in t for v in values) for t in texts], [len(mention.findall(t)) if mention else 0 for t in texts]


def _named_by(name: str, tool, generic: bool = True) -> re.Pattern | None:
    """A pattern for what names a tool: its keywords and (`generic`: also those any tool may have, "turn" of
    `turn_on_flashlight`) the words of its name; "flash light" is one mention, not three."""
    names = [lexicons.normalise(k) for k in (keywords(tool) if tool is not None else ())]
    names += [w for w in name_words(name) if len(w) >= 3 and (generic or w not in coverage.GENERIC)]
    return lexicons.whole_words(tuple(names))


def names_tool(text: str, tool) -> bool:
    """Whether `text` names `tool` by one of its keywords (`coverage.keywords`)."""
    mention = _tool_mention(tool)
    return bool(mention and mention.search(lexicons.normalise(text)))


def _tool_mention(tool) -> re.Pattern | None:
    """A pattern for `tool`'s keywords (`_mention`, cached)."""
    return lexicons.whole_words(tuple(lexicons.normalise(k) for k in keywords(tool)))


def claimed(call: ToolCall, request: str, catalogue: Catalogue, lexicon: lexicons.Lexicon | None = None
            ) -> tuple[Piece, ...]:
    """The pieces of `request` a call answers, whether it was made or refused: those that write any of its
    values or name its tool, misspelt or not ("turn off the flashlite now"). What no call claims may be left for
    the screen (`hybrid.runner`)."""
    pieces = read(request, lexicon)
    tool = catalogue[call.name] if call.name in catalogue else None
    hits, named = _ties(call, tool, pieces, generic=False)
    return tuple(p for p, h, n in zip(pieces, hits, named) if h or n or _misspelt(call, tool, [p]))


def _misspelt(call: ToolCall, tool, pieces: Sequence[Piece]) -> bool:
    """Whether the request names the call's tool with a word misspelt ("Put the flashligght on", "flashlite on
    plz"): people type fast, and a call is not untied because of it. Words of five letters or more only."""
    from difflib import SequenceMatcher

    names = {lexicons.normalise(k) for k in (keywords(tool) if tool is not None else ())}
    names |= set(re.split(r"[^a-z]+", lexicons.normalise(call.name)))
    names = {n for n in names if len(n) >= 5 and " " not in n}
    said = {w for p in pieces for w in _WORD_RE.findall(lexicons.normalise(p.text)) if len(w) >= 5}
    return any(SequenceMatcher(None, w, n).ratio() >= LIKE for w in said for n in names)


def _scalars(value) -> list:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _scalars(v)]
    if isinstance(value, list):
        return [x for v in value for x in _scalars(v)]
    return [] if isinstance(value, bool) or value is None else [value]


def _recipient_problem(call: ToolCall, tool, said: str) -> Refusal | None:
    """A call that reaches someone takes its address or number from what the person wrote, never from a tool
    result or a screen (a Maps card that says "evil@attacker.test" chooses no recipient), and it is an address
    or a number ("Osaka" is not a phone number even if the person wrote it) -- or a contact's name the person
    wrote, where the argument's description says it may be one (the phone then looks the name up in the person's
    own contacts: "text Ana that I'm on my way")."""
    if tool is None:
        return None
    props = argument_schema(tool).get("properties") or {}
    for name, value in call.arguments.items():
        sub = props.get(name)
        kind = value_kind(name, sub) if isinstance(sub, dict) else ""
        if kind not in ("email", "phone"):
            continue
        for v in (value if isinstance(value, list) else [value]):
            if not isinstance(v, str):
                continue
            if kind == "phone" and _takes_names(sub) and _written_name(v, said):
                continue
            if not (EMAIL_RE if kind == "email" else PHONE_RE).fullmatch(v.strip()):
                what = "an email address" if kind == "email" else "a phone number"
                return Refusal(call, f"the recipient {v!r} is not {what}")
            if not _written(v, said):
                return Refusal(call, f"the recipient {v!r} is not one the person wrote")
    return None


def _takes_names(schema: dict) -> bool:
    """Whether a phone-number argument's description says a contact's name may stand for the number."""
    words = re.findall(r"[a-z]+", lexicons.normalise(str(schema.get("description", ""))))
    return any(w in lexicons.load().effect.contact_names for w in words)


def _written_name(value: str, said: str) -> bool:
    """Whether `value` is a name (words, no digits or address) the person wrote whole."""
    v = lexicons.normalise(value.strip())
    return bool(re.fullmatch(r"[^\W\d_]+(?:[ '.-][^\W\d_]+)*", v)) and \
        re.search(rf"(?<!\w){re.escape(v)}(?!\w)", said) is not None


def _written(value: str, said: str) -> bool:
    """Whether `value` is an address or a number the person wrote, whole (not "ob@gmail.com" for "bob@gmail.com";
    a number may be written with other spaces or dashes)."""
    v = lexicons.normalise(value.strip())
    if v in EMAIL_RE.findall(said):
        return True
    digits = re.sub(r"\D", "", v)
    return len(digits) >= 5 and any(re.sub(r"\D", "", m) == digits for m in PHONE_RE.findall(said))
