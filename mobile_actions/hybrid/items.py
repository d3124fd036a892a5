"""Which item a tap that removes or saves something acts on, and whether the goal names that item.

Why: asked to delete "the 6:30 alarm" when only 6:00 and 7:30 exist, or "ana gomez" when the phone has Ana Ruiz
and Ana Lopez, a navigator taps Delete on the nearest look-alike. Confirmation asks a person about "Delete", not
about which item, and `--yes` asks no one. So before such a tap the item it acts on is read from the screen --
the button's own description when it says more than its label ("Delete 6:00 AM alarm"), else the form's
first filled field when the screen is a form (a note being edited: its title, not the bar's "Note"), else the screen's
toolbar title (a contact's name on its card, an event's title; no title, no check) -- and the words that tell
that item from others must all be in the goal: its times, its numbers and its capitalised words (names); of a form's
first field (a note's title as someone typed it, "Recipe - lasagna"), every word. Otherwise the tap is refused before it
happens, naming the item and the word the goal does not say. Nothing here is English: times and numbers are
digits, names are the words the screen capitalises; a goal that names its item loosely ("delete jake" for Jake
Miller) is refused too, which is the safe side of a destructive tap.

A switch that names its item by a time or a number (an alarm's "6:50 AM alarm") is checked the same way before
a tap turns it on or off. A tap that saves a form ("Save" on a note or contact being edited) stores the item the form holds: asked to "add
bananas to the groceries note", a navigator opened "Groceries 2" and saved it. The form's item is its first filled
text field ("Groceries 2", "Mike Torres"), read with what the navigator itself typed in this task counted as said
(a new item's name comes from the goal by way of the navigator's typing, so it passes; a look-alike's name that
was already on the form does not).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from mobile_actions.hybrid.device import bounds
from mobile_actions.lexicon import normalise
from mobile_actions.navigator.goals import name_fit, name_words, says_word

_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2})(?:[:.h](\d{2})|(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?(?![\d:])", re.I)
_CAPITAL_RE = re.compile(r"(?<![\w'])[A-Z][\w'-]*")
_WORD_RE = re.compile(r"[\w'-]+")
_MERIDIEM = {"am", "pm", "a.m.", "p.m.", "a.m", "p.m"}


@dataclass(frozen=True)
class Item:
    """What a tap acts on, as the screen writes it, and where that was read."""
    text: str
    source: str      # "description" (the button's own) | "title" (the screen's) | "field" (a form's first)
    #                  | "switch" (a switch's own label)
    package: str = ""  # the app whose screen shows it
    others: tuple[str, ...] = ()   # the items of the screen's other buttons of the same label ("Delete": each row's)


@dataclass(frozen=True)
class Unnamed:
    """A tap's item that the goal does not name: the item, and the word of it the goal does not say."""
    item: Item
    missing: str

    @property
    def why(self) -> str:
        return f"it acts on {self.item.text!r}, and the goal does not say {self.missing!r}"


def tapped_item(elements: list[dict[str, str]], node: dict[str, str]) -> Item | None:
    """The item a tap on `node` acts on, from the screen's nodes (`uiautomator dump` attributes, in order)."""
    label = (node.get("text") or "").strip()
    rest = _described(node, label)
    if rest and (re.search(r"\d", rest) or _CAPITAL_RE.search(rest)):   # "6:00 AM alarm", not just "note"
        others = tuple(r for e in elements if e != node and (e.get("text") or "").strip() == label
                       for r in [_described(e, label)] if r)
        return Item(rest, "description", node.get("package", ""), others)
    in_form = form_item(elements, node)   # a form's Delete removes what the form holds, not its bar's "Note"
    return in_form if in_form is not None else screen_title(elements, node)


def _described(node: dict[str, str], label: str) -> str:
    """What a button's own description says besides its label ("Delete 6:00 AM alarm": "6:00 AM alarm"), else ''."""
    desc = (node.get("content-desc") or "").strip()
    if not (label and desc and desc != label and label.lower() in desc.lower()):
        return ""
    at = desc.lower().index(label.lower())
    return (desc[:at] + desc[at + len(label):]).strip()


def screen_title(elements: list[dict[str, str]], node: dict[str, str]) -> Item | None:
    """The title of the screen `node` is on: its app's title text (an id that says so, as toolbars have), above
    the node; None when there is none."""
    package = node.get("package", "")
    for e in elements:
        rid = (e.get("resource-id") or "").rsplit("/", 1)[-1].lower()
        if e.get("package") != package or "title" not in rid or not (e.get("text") or "").strip():
            continue
        box, tapped = bounds(e), bounds(node)
        if box is not None and tapped is not None and box[1] < tapped[1]:
            return Item(e["text"].strip(), "title", package)
        break
    return None


def switched_item(node: dict[str, str]) -> Item | None:
    """The item a tap on a switch turns on or off when the switch names it by a time or a number (an alarm's
    "6:50 AM alarm"), else None: a navigator asked to "switch off my saturday alarm" switched off the 6:50 one."""
    label = (node.get("text") or node.get("content-desc") or "").strip()
    if node.get("checkable") != "true" or not re.search(r"\d", label):
        return None
    return Item(label, "switch", node.get("package", ""))


def form_item(elements: list[dict[str, str]], node: dict[str, str]) -> Item | None:
    """The item a save-type tap on `node` stores: the first text field of its app's form that holds text (a
    field showing only its hint holds none). None when the form has no filled field."""
    package = node.get("package", "")
    for e in elements:
        if e.get("package") == package and "EditText" in e.get("class", "") and _filled(e):
            return Item(_filled(e), "field", package)
    return None


def typed_over(elements: list[dict[str, str]]) -> Item | None:
    """The entry a TYPE into the focused field edits when that field is its form's first text field and holds
    text: what it holds, the entry's name before the navigator types over it (asked to "rename my plumber note",
    a navigator opened "Books" and typed the new title over it). None otherwise."""
    focused = next((e for e in elements if e.get("focused") == "true" and "EditText" in e.get("class", "")), None)
    if focused is None:
        return None
    first = form_item(elements, focused)
    return first if first is not None and first.text == _filled(focused) else None


def _filled(field: dict[str, str]) -> str:
    """What a text field holds ("" when it shows only its hint)."""
    text = (field.get("text") or "").strip()
    return text if text != (field.get("hint") or "").strip() else ""


def recipient_item(elements: list[dict[str, str]], node: dict[str, str], address_fields: tuple[str, ...]) -> Item | None:
    """Whom a send-type tap on `node` sends to: its app's address field (a hint or id of `address_fields`, "To")
    as it is filled in, with the navigator's own typing counted as said (a contact picked from the suggestions is
    not: asked to "text sofia", a navigator typed "sofia" and picked Sofiane Haddad); else, on a screen with no
    such field, the screen's title (a conversation's contact: asked to "reply to dads text", a navigator sent in
    Dana Cole's thread). A recipient is never one the screen chose."""
    package = node.get("package", "")
    for e in elements:
        names = {(e.get("hint") or "").strip().lower(), (e.get("resource-id") or "").rsplit("/", 1)[-1].lower()}
        if e.get("package") == package and "EditText" in e.get("class", "") and names & set(address_fields):
            return Item(_filled(e), "field", package) if _filled(e) else None
    return screen_title(elements, node)


def _is_time(m: re.Match) -> bool:
    """A `_TIME_RE` match with minutes or am/pm and a clock's hour and minute: a time, not a bare number. Four
    digits in a row are a number unless am/pm follows (the "7911" of "+44 7911 123456", the "2024" of "Gift
    ideas 2024"); three are a time ("645")."""
    if m.group(3) and len(m.group(1)) == 2 and not m.group(4):
        return False
    return bool(m.group(2) or m.group(3) or m.group(4)) and int(m.group(1)) <= 24 \
        and int(m.group(2) or m.group(3) or 0) <= 59


def _minutes(text: str, goal: bool) -> set[int]:
    """Minutes of the day the text writes as times; in a goal a bare number up to 24 may be an hour, and a time
    without am/pm may be either half of the day."""
    out: set[int] = set()
    for m in _TIME_RE.finditer(text):
        hour, minute = int(m.group(1)), int(m.group(2) or m.group(3) or 0)
        meridiem = (m.group(4) or "").lower().replace(".", "")
        if not goal and not _is_time(m):
            continue   # an item's bare number is a number, not a time
        if hour > 24 or minute > 59:
            continue
        if meridiem:
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
            out.add(hour * 60 + minute)
        else:
            out.update({hour * 60 + minute, ((hour + 12) % 24) * 60 + minute} if hour <= 12 else {hour * 60 + minute})
    return out


def said_words(goal: str) -> set[str]:
    """The goal's words, lower case, without the quotes around a name ("open the event 'Team sync'" says "team")."""
    return {w.strip("'") for w in _WORD_RE.findall(normalise(goal))} - {""}


def unnamed(goal: str, item: Item, label: str = "") -> Unnamed | None:
    """Whether `goal` fails to name `item`: a time of the item the goal does not say (unless the goal says all of
    the item's name besides it and no other time: "the alarm called Medicine" names "8:00 AM alarm Medicine"; the
    time said, the rest of the name is not needed), a number it does not write, or a capitalised word of it (other than the button's `label`) missing from the goal."""
    text = item.text
    times = [m for m in _TIME_RE.finditer(text) if _is_time(m)]
    rest = _TIME_RE.sub(lambda m: " " if _is_time(m) else m.group(0), text)
    goal_words = said_words(goal)
    # the button's own words say nothing of the item, unless the button is the item (a switch's "6:15 AM alarm Gym")
    skip = (set(_WORD_RE.findall(normalise(label))) if label != text else set()) | _MERIDIEM
    by_time = False
    if times:
        said = _minutes(goal, goal=True)
        by_time = bool(said & _minutes(text, goal=False))
        # a goal that says no time names an item with a name besides its time ("8:00 AM alarm Medicine") by all
        # of that name; one that says another time names another item
        name = [w for w in _CAPITAL_RE.findall(rest) if normalise(w) not in skip and not (w.isupper() and len(w) <= 2)]
        # beside rows of the same button, the words no other row has tell it apart too ("2:00 PM alarm nap" of
        # "6:00 AM alarm work" and "7:30 AM alarm": "nap", as a person labelled it)
        own = _TIME_RE.sub(" ", rest)
        apart = [w for w in _WORD_RE.findall(normalise(own)) if w not in skip and not w.isdigit()
                 and not any(w in _WORD_RE.findall(normalise(o)) for o in item.others)] if item.others else []
        name = name or apart
        if not by_time and (said or not name or not all(says_word(goal_words, normalise(w)) for w in name)):
            return Unnamed(item, times[0].group(0).strip())
    goal_numbers = set(re.findall(r"\d+", goal))
    for m in _TIME_RE.finditer(goal):   # "645" says the 6 and the 45 of an alarm's hour and minute fields
        if _is_time(m):
            goal_numbers |= {str(int(m.group(1))), m.group(2) or m.group(3) or "00"}
    for number in re.findall(r"\d+", rest):
        if number not in goal_numbers:
            return Unnamed(item, number)
    # a form's first field is what a person wrote (a note's title "Recipe - lasagna"): every word of it tells it
    # from its look-alikes, lower case or not; elsewhere the screen's capitalised words do
    words = [w for w in _WORD_RE.findall(rest) if len(w) >= 3 and not w.isdigit()] if item.source == "field" \
        else [] if by_time else _CAPITAL_RE.findall(rest)   # (an item named by its time needs no other name)
    for word in words:
        w = normalise(word)
        if w in skip or w.upper() == word and len(word) <= 2:
            continue
        if not says_word(goal_words, w):
            return Unnamed(item, word)
    return None


def list_rows(elements: list[dict[str, str]]) -> list[tuple[str, str]]:
    """A screen's rows as (package, text): the clickable text views of its lists (a contact's name, an event's
    title), not its buttons, fields or switches. What a navigator saw on the way to an item."""
    rows = []
    for e in elements:
        cls, text = e.get("class", ""), (e.get("text") or "").strip()
        if (text and e.get("clickable") == "true" and e.get("checkable") != "true"
                and not any(k in cls for k in ("Button", "EditText", "Switch", "CheckBox"))):
            rows.append((e.get("package", ""), text))
    return rows


def better_named(goal: str, item: Item, rows: set[str]) -> str | None:
    """A list row seen in this run that the goal's words fit better than `item`, which the goal names ("delete
    the old wifi password note" names "Wifi password", and "Wifi password old" better): the tap acts on the
    lesser of two look-alikes. None when the item is the best fit, or tied (as `loosely_named` reads fit), or
    named by none of the goal's words."""
    words = {w for w in said_words(goal) if len(w) >= 3}
    mine = name_fit(words, item.text)
    if not mine:     # an item the goal names by no word (an alarm's hour typed in its form) has no look-alikes
        return None
    item_words = set(name_words(item.text))
    better = [r for r in rows if normalise(r) != normalise(item.text) and name_fit(words, r) > mine
              and set(name_words(r)) >= {w for w in item_words if w in words}]
    return max(better, key=lambda r: name_fit(words, r)) if better else None


def loosely_named(goal: str, wrong: Unnamed, rows: set[str]) -> bool:
    """Whether the goal names `wrong.item` by part of it ("priya" for Priya Nair, "coffee w lars" for Coffee
    with Lars) and it alone: the item is among the list rows this task saw, the goal says one of its words, and
    no other row seen fits the goal's words as well ("delete ana" with Ana Ruiz and Ana Lopez listed fits both:
    refused). A time or number the goal does not say is never loose; neither is an item the navigator did not
    pass on a list (nothing to tell it from)."""
    if re.search(r"\d", wrong.missing) or wrong.item.source == "switch":
        return False
    words = {w for w in said_words(goal) if len(w) >= 3}
    item = normalise(wrong.item.text)
    if item not in {normalise(r) for r in rows}:
        return False
    best = name_fit(words, wrong.item.text)
    return best > 0 and all(name_fit(words, r) < best for r in rows if normalise(r) != item)
