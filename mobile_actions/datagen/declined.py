"""Requests that name a tool's action without asking for it: the caller's gold is to leave that action out.

A caller trained only on requests and on things no tool serves learns that naming an action means doing it:
"please don't email Ana", "should I save Marta's number?", "Ana told me to add the meeting", "add lunch on Friday
-- actually, never mind" all got a call. Here an ordinary clause of the generator (its values and its call drawn as
usual) is framed so that it is declined: negated, asked about, supposed, reported, told as done, or taken back.
In a row with other clauses only the declined clause's call is left out, so the caller learns to tell apart the
parts of one message. Each frame kind is a phrasing family (the unit of the held-out split); the frames are the
generator's own wording, written apart from any evaluation set.
"""
from __future__ import annotations

from dataclasses import dataclass
from random import Random

from mobile_actions.datagen import values as V
from mobile_actions.datagen.templates import TEXT, Segment


@dataclass(frozen=True)
class Frame:
    """Words around a clause in the imperative: `before` + clause + `after`; "{name}" is a person's first name."""
    before: str
    after: str = ""


FRAMES: dict[str, tuple[Frame, ...]] = {
    "negated": (
        Frame("don't "), Frame("please don't "), Frame("do not "), Frame("no need to "), Frame("you don't need to "),
        Frame("there's no need to "), Frame("whatever happens, do not "), Frame("I don't want you to "),
        Frame("let's not "), Frame("I'd rather you didn't "), Frame("never "), Frame("you shouldn't "),
        Frame("don't ", " yet"), Frame("don't ", " for now"), Frame("no need to ", ", I've got it"),
        Frame("don't ", ", I'll handle it myself"), Frame("dont ", " pls"), Frame("do NOT "),
    ),
    "question": (
        Frame("should I ", "?"), Frame("do you think I should ", "?"), Frame("is it a good idea to ", "?"),
        Frame("what would happen if I ", "?"), Frame("would it be rude to ", "?"), Frame("how would I ", "?"),
        Frame("do I really need to ", "?"), Frame("is it too late to ", "?"), Frame("should we ", " or not?"),
        Frame("hmm, would it make sense to ", "?"), Frame("wondering if I should ", ""),
    ),
    "hypothetical": (
        Frame("if it rains tomorrow I might "), Frame("maybe next week I'll "), Frame("in case the plans change, I'd "),
        Frame("once I'm back home I might "), Frame("if {name} says yes, I'll "), Frame("at some point I should probably "),
        Frame("I'm thinking about whether to "), Frame("if I have time later, I could "),
        Frame("when {name} lands, I'll probably "), Frame("someday I'll remember to "),
        Frame("depending on the traffic, I may "), Frame("I might have to ", " eventually"),
    ),
    "reported": (
        Frame("{name} told me to "), Frame("{name} wants me to "), Frame("{name} asked me to "),
        Frame("my boss said I should "), Frame("my sister keeps telling me to "), Frame("{name} suggested that I "),
        Frame("apparently I'm supposed to "), Frame("{name} said someone should "), Frame("the school wants parents to "),
        Frame("{name} mentioned she'd "), Frame("{name} says I ought to "),
    ),
    "past": (
        Frame("earlier you helped me ", ", so that's sorted"), Frame("I already asked you to ", " this morning and it worked"),
        Frame("yesterday I had to ", ", all done now"), Frame("last time I remembered to ", " myself"),
        Frame("no worries, I managed to ", " already"), Frame("I finally got around to it and did: ", ""),
        Frame("{name} and I already took care of it, we had to ", ""), Frame("I was able to ", " on my laptop"),
    ),
    "cancelled": (
        Frame("", "... actually never mind"), Frame("", " - wait, scratch that"), Frame("", ". no, forget it"),
        Frame("", ", oh nvm"), Frame("", ". on second thought, don't"), Frame("", "... nah, cancel that"),
        Frame("", ". hmm, ignore that"), Frame("", ". wait no, leave it"), Frame("", ", no hold on, don't"),
        Frame("", ". ugh, never mind, I changed my mind"),
    ),
}
KINDS = tuple(FRAMES)
# The gold answer when nothing is left to do: a short reply, no call.
REPLIES = ("OK, I won't do that.", "Okay, I'll leave it.", "Got it, nothing to do then.", "Sure, I'll hold off.")


def frame_ids() -> list[str]:
    """The phrasing families: one per frame kind and frame."""
    return [f"declined/{kind}/{i}" for kind, frames in FRAMES.items() for i in range(len(frames))]


def frame(family: str) -> Frame:
    _, kind, i = family.split("/")
    return FRAMES[kind][int(i)]


def declined(rng: Random, fr: Frame, segs: list[Segment]) -> list[Segment]:
    """`segs` (an imperative clause) inside frame `fr`: a clause that names an action and asks for nothing."""
    name = V.person(rng).first
    segs = list(segs)
    if segs and segs[0][1] == TEXT and segs[0][0][:1].isupper() and not segs[0][0].startswith("I "):
        segs[0] = (segs[0][0][0].lower() + segs[0][0][1:], TEXT)
    before, after = fr.before.replace("{name}", name), fr.after.replace("{name}", name)
    if segs and segs[-1][1] == TEXT:
        segs[-1] = (segs[-1][0].rstrip(" .!?"), TEXT)
    return [*([(before, TEXT)] if before else []), *segs, *([(after, TEXT)] if after else [])]
