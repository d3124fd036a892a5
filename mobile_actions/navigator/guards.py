"""The text navigator's guards: what the toolkit settles on a screen so that the 270M model does not have to.

Why guards: the screen's hierarchy says what a small model gets wrong (a switch already on, a field still
empty, the Copy button not tapped yet), and the grammar can then refuse the wrong step. Each guard is a named
object with one responsibility: it looks at a `StepView` (the goal, the screen, the actions so far) and returns
a `Narrowing` (tools it blocks, the labels `tap` may or may not name, the texts `type_text` may type), or None
when it has nothing to say. It never sees another guard's result, so each can be tested alone.

`narrow` composes `GUARDS` in their fixed order, and the rules are the same for every pair of guards:

- blocked tools: the union (no guard unblocks what another blocked);
- the labels `tap` may name: every actionable one to begin with; ``tap_only`` lists intersect (in the order the
  later guard gives), ``tap_never`` labels go; a guard whose ``tap_only`` shares none with the labels left is
  overruled (recorded, never silently), as a step with nothing to tap is no step; ``tap_rather_not`` labels
  go unless that leaves nothing;
- the labels `long_press` may name: every actionable one, or, when `tap` is blocked, those `tap` may name (a
  guard that only lets a field be held down names it as `tap_only`);
- texts to type: any span of the goal to begin with; ``text_only`` lists intersect;
- a guard that would leave no action at all (every tool blocked, or nothing to tap or type where those are all
  that is left) is overruled too: the grammar would then admit no call, and the model writes free text.

Where one guard must give way to another (a form waits while a switch the goal names is wrong), the one that
gives way says so in its own condition. Every guard that changes the step leaves a `Firing`, which the hybrid
runner writes into its trace (``guards_fired``) and `mobile-actions replay` shows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Protocol, Sequence

from mobile_actions.decoding.days import said, weekday_of
from mobile_actions.navigator import goals
from mobile_actions.navigator.screen import LEVEL_STEP, Element, Screen

MOVES = ("tap", "long_press", "swipe", "press_back", "press_home", "show_recent_apps", "finish", "give_up")
TOOLS = ("tap", "long_press", "type_text", "swipe", "press_back", "press_home", "show_recent_apps", "finish",
         "give_up")


def _but(*kept: str, also: Sequence[str] = ()) -> frozenset[str]:
    """Every move except `kept` (plus `also`): what a guard blocks when one step is the only one."""
    return frozenset(m for m in MOVES if m not in kept) | frozenset(also)


def _tap_only(labels: Sequence[str]) -> Narrowing:
    """A tap on one of `labels` is the only step (nothing typed): a switch, a button, an app's icon."""
    return Narrowing(blocked=_but("tap", also=("type_text",)), tap_only=tuple(labels))


@dataclass(frozen=True)
class StepView:
    """What a guard looks at: one step of the goal ("" for none), the screen, the actions so far (as
    `text.describe_call` writes them). The readings several guards share are computed once, here."""
    goal: str
    screen: Screen
    done: tuple[str, ...] = ()

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """What `tap` and `long_press` may name: the screen's actionable elements."""
        return tuple(e.label for e in self.screen.actionable)

    @cached_property
    def switches(self) -> dict[str, bool]:
        """The state the goal asks of each switch on the screen it names (`goals.switch_states`)."""
        return goals.switch_states(self.goal, self.screen) if self.goal else {}

    @cached_property
    def wrong_switches(self) -> tuple[str, ...]:
        """Switches the goal names that show the other state, in screen order."""
        return tuple(label for label, state in self.switches.items() if self.screen.element(label).checked != state)

    @cached_property
    def days_said(self) -> frozenset[int] | None:
        """The days the goal says something repeats on (0 Monday), when the screen has a toggle for each of the
        seven; None otherwise."""
        lists = said(self.goal) if self.goal and self.day_toggles else ()
        return lists[0] if lists else None

    @cached_property
    def wrong_days(self) -> tuple[str, ...]:
        """The day-of-week toggles on the screen in the other state than the days the goal says, in screen
        order (none when `days_said` is None)."""
        if self.days_said is None:
            return ()
        return tuple(label for label, d in self.day_toggles.items()
                     if (d in self.days_said) != self.screen.element(label).checked)

    @cached_property
    def day_toggles(self) -> dict[str, int]:
        """The screen's toggle for each day of the week, label -> day (0 Monday), when it has all seven."""
        days = {e.label: weekday_of(e.description or e.label) for e in self.screen.elements if e.checkable}
        days = {label: d for label, d in days.items() if d is not None}
        return days if set(days.values()) == set(range(7)) else {}

    @cached_property
    def form_values(self) -> dict[str, str]:
        """The value the goal gives each field (`goals.form_values`); none while a switch it names is wrong
        (the switch comes first), and none for a goal that only removes (it types nothing, `remove-only`:
        "delete the note with the old wifi password" gives the note's text no value)."""
        if not self.goal or self.wrong_switches or goals.removes_only(self.goal):
            return {}
        return goals.form_values(self.goal, self.screen)

    @cached_property
    def missing_values(self) -> tuple[str, ...]:
        """Fields that do not hold their value yet: not on the screen, not typed so far."""
        typed = set(goals.typed(self.done))
        return tuple(label for label, v in self.form_values.items()
                     if v.lower() not in self.screen.element(label).text.lower() and v not in typed)

    @cached_property
    def focus(self) -> str | None:
        """The label of the field that has the focus."""
        return next((e.label for e in self.screen.elements if e.kind == "field" and e.focused), None)

    @cached_property
    def replacing(self) -> bool:
        """A goal that changes something that exists, and its focused field lacks its value and holds other
        text, not yet selected: typing would add to that text, so it is selected first (the field's floating
        toolbar, Select all), as is a field whose value is an email address or a phone number, which nothing is
        added to ("X got a new email, update it to ..."). Other goals add to what a field holds ("jot down X" in
        an open note). A time picker's hour is typed over only for a goal that edits: "turn off my 5:30 alarm"
        names an alarm by its time, and typing 5 over the 6 of the 6:30 one opened would move it."""
        if (self.focus is None or self.focus not in self.missing_values or not self.screen.element(self.focus).text
                or not (goals.edits(self.goal) or goals.whole_value(self.form_values[self.focus], self.focus))):
            return False
        return not self.done or goals.tapped(self.done[-1:]) != [goals.goal_words().screens.select_all]

    @cached_property
    def last_step_over(self) -> bool:
        """The goal's last verb changes nothing on the screen and its button is tapped ("copy its name"), with
        no text left to type, no switch wrong and no field lacking its value (`last-step-done`)."""
        return bool(self.goal) and not (self.wrong_switches or self.missing_values
                                        or goals.untyped_text(self.goal, self.done)) \
            and goals.last_step_done(self.goal, self.done)

    @cached_property
    def over(self) -> bool:
        """Nothing the goal asks is left: an app-only goal's app is open (`app-opened`), or its last step is
        over (`last-step-done`)."""
        return bool(self.goal) and (goals.app_opened(self.goal, self.screen, self.done) or self.last_step_over)

    @cached_property
    def suggestions(self) -> tuple[str, ...]:
        """What the screen offers for the text the focused field holds: the items (not fields) whose label holds
        it ("Chloe Wang" below a To field holding "chloe"); of those, only the ones the goal writes every word of
        when there are any ("Mei Lin", not "Mei Ling", for "text Mei Lin ...")."""
        held = self.screen.element(self.focus).text.strip().lower() if self.focus is not None else ""
        if len(held) < 2 or not re.search(r"[^\W\d_]", held):
            return ()    # a digit typed in a time picker's hour is no name to look up
        offered = tuple(e.label for e in self.screen.actionable if e.kind != "field" and held in e.label.lower())
        said = goals.word_set(self.goal)
        named = tuple(label for label in offered if goals.word_set(label) <= said)
        return named or offered

    @property
    def awaits_text(self) -> bool:
        """A focused field is empty: text is the step, whatever the goal's button."""
        return self.focus is not None and not self.screen.element(self.focus).text

    @cached_property
    def confirming(self) -> frozenset[str]:
        """The screen's buttons that send, store or destroy what it shows (the lexicon's
        `navigator.confirm_buttons`: "Save", "Send")."""
        return frozenset(e.label for e in self.screen.actionable if e.kind != "field" and goals.confirm_button(e.label))

    @property
    def form_settled(self) -> bool:
        """No switch is wrong, no field lacks its value, no focused field waits for text: the goal's buttons
        and its end may be looked at."""
        return not self.wrong_switches and not self.missing_values and not self.awaits_text


@dataclass(frozen=True)
class Narrowing:
    """What one guard allows on this step. None in a field: no opinion."""
    blocked: frozenset[str] = frozenset()           # tools not offered
    tap_only: tuple[str, ...] | None = None         # the only labels `tap` may name, best first
    tap_never: frozenset[str] = frozenset()         # labels `tap` may not name
    tap_rather_not: frozenset[str] = frozenset()    # labels `tap` leaves out unless nothing else is left
    text_only: tuple[str, ...] | None = None        # the only texts `type_text` may type


class Guard(Protocol):
    """A named rule with one responsibility; `narrow` reads the view and never changes anything."""
    name: ClassVar[str]

    def narrow(self, view: StepView) -> Narrowing | None: ...


# ============================================================================================ the guards
class FocusedField:
    """Typed text goes nowhere without a focused field; with one, the text is not saved or sent yet (no
    demonstration ends with text in a field), so the goal is not finished, unless what it asks is over
    whatever the field holds (`StepView.over`: "open Chrome" with its address bar focused)."""
    name = "focused-field"

    def narrow(self, view: StepView) -> Narrowing | None:
        if view.focus is None:
            return Narrowing(blocked=frozenset({"type_text"}))
        return None if view.over else Narrowing(blocked=frozenset({"finish"}))


class SwitchToSet:
    """A switch the goal names shows the other state: tapping it is the step, and nothing else gets closer
    (the model said `finish` beside an "off" tile, or swiped again)."""
    name = "switch-to-set"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.wrong_switches:
            return None
        return _tap_only(view.wrong_switches)


class LevelToSet:
    """A slider the goal names shows another level than the one it says (`goals.said_level`: "brightness all the
    way up", "media volume to 20"): tapping that level is the step; at that level, no other level of it is
    tapped (the model tapped "Brightness 0%" for "all the way up")."""
    name = "level-to-set"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal:
            return None
        levels: dict[str, list[Element]] = {}
        for e in view.screen.elements:
            if e.kind == "level":
                levels.setdefault(e.label.rsplit(" ", 1)[0], []).append(e)
        for slider, elements in levels.items():
            said = goals.said_level(view.goal, slider)
            if said is None:
                continue
            want = f"{slider} {round(said / LEVEL_STEP) * LEVEL_STEP}%"
            if any(e.label == want and not e.checked for e in elements):
                return Narrowing(blocked=_but("tap"), tap_only=(want,))
            return Narrowing(tap_never=frozenset(e.label for e in elements if e.label != want))
        return None


class DaysToSet:
    """The goal says the days something repeats on ("on weekdays", "mon, wed and fri": `decoding.days`, the
    lexicon's words) and the screen has a toggle for each day of the week (its content-desc a weekday's name):
    while a day is in the wrong state, the form is not left -- taps go to those days, the fields and the other
    toggles, nothing is saved and nothing finished (the model typed the time of "an alarm for 6:30 on weekdays"
    and saved it repeating on no day)."""
    name = "days-to-set"

    def narrow(self, view: StepView) -> Narrowing | None:
        wrong = view.wrong_days
        if not wrong:
            return None
        days = set(view.day_toggles)
        form = tuple(e.label for e in view.screen.elements
                     if e.label in view.labels and (e.kind == "field" or e.checkable and e.label not in days))
        return Narrowing(blocked=_but("tap"), tap_only=wrong + form)


class DaysAlreadySet:
    """The goal says the days something repeats on, and a day's toggle already shows its asked state: a tap would
    undo it (the model tapped Friday, then Monday to Friday in order, and Friday off again)."""
    name = "days-already-set"

    def narrow(self, view: StepView) -> Narrowing | None:
        if view.days_said is None:
            return None
        right = frozenset(label for label in view.day_toggles if label not in view.wrong_days)
        return Narrowing(tap_never=right) if right else None


class DaysUnsaid:
    """The goal says no days something repeats on ("set an alarm tomorrow at 6", "turn off my 7:15 alarm"): a
    day's toggle is never tapped (the model ticked Monday to Friday on a one-time alarm, and moved a work
    alarm to the weekend when asked to switch it off)."""
    name = "days-unsaid"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or not view.day_toggles or view.days_said is not None:
            return None
        return Narrowing(tap_never=frozenset(view.day_toggles))


class HalfDayToSet:
    """A time picker's AM and PM toggles (`screens.json` ``half_day_toggles``) follow the goal's time
    (`goals.said_time`): the half it says ("10:30 tonight": PM) is tapped before the form is left, the fields and
    other toggles staying open; once it shows, and when the goal says no half ("6:30"), neither is tapped (the
    model set "6:30" to PM)."""
    name = "half-day-to-set"

    def narrow(self, view: StepView) -> Narrowing | None:
        halves = goals.goal_words().screens.half_day_toggles
        toggles = {half: e.label for e in view.screen.elements if e.checkable
                   for half, labels in halves.items() if e.label.lower() in labels}
        said = goals.said_time(view.goal) if view.goal and len(toggles) == len(halves) else None
        if said is None:
            return None
        want = toggles.get(said.half)
        if want is None or view.screen.element(want).checked:
            return Narrowing(tap_never=frozenset(toggles.values()))
        form = tuple(e.label for e in view.screen.elements if e.label in view.labels
                     and (e.kind == "field" or e.checkable and e.label not in toggles.values()))
        return Narrowing(blocked=_but("tap"), tap_only=(want, *form))


class SwitchAlreadySet:
    """A switch the goal names is already in the asked state: a tap would undo it."""
    name = "switch-already-set"

    def narrow(self, view: StepView) -> Narrowing | None:
        right = frozenset(label for label in view.switches if label not in view.wrong_switches)
        return Narrowing(tap_never=right) if right else None


class SwitchUnasked:
    """A switch the goal does not name (`goals.names_switch`: its label or another name of it, or an alarm's time
    or name) is not tapped; a goal that says no word of switching or of a state (`goals.says_switch`) taps no
    switch at all (a form's day and AM/PM toggles are its fields' values, not switches). Handed "open my
    contacts" on the Wi-Fi screen a look-up had opened, the model turned Wi-Fi off and on; handed "put the phone
    on do not disturb", it turned Bluetooth and Wi-Fi off."""
    name = "switch-unasked"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal:
            return None
        halves = {label for labels in goals.goal_words().screens.half_day_toggles.values() for label in labels}
        switches = [e.label for e in view.screen.actionable if e.kind == "switch"
                    and e.label not in view.day_toggles and e.label.lower() not in halves]
        says = goals.says_switch(view.goal)
        never = frozenset(s for s in switches if not (says and goals.names_switch(view.goal, s)))
        return Narrowing(tap_never=never) if never else None


class FormFieldValue:
    """The focused field lacks the value the goal gives it: typing exactly that value is the only step (the
    model typed "Invoice saying running late" into Subject)."""
    name = "form-field-value"

    def narrow(self, view: StepView) -> Narrowing | None:
        if view.focus is None or view.focus not in view.missing_values or view.replacing:
            return None
        return Narrowing(blocked=frozenset(MOVES), text_only=(view.form_values[view.focus],))


class ReplaceValue:
    """The focused field holds other text than the goal's value for it ("change mike's number to ..."):
    typing would add to it, so the step is a long press on the field, then its toolbar's Select all; the
    value is typed over the selection (`form-field-value`)."""
    name = "replace-value"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.replacing:
            return None
        select = goals.goal_words().screens.select_all
        shown = next((label for label in view.labels if label.lower() == select), None)
        if shown is not None:
            return _tap_only((shown,))
        return Narrowing(blocked=_but("long_press", also=("type_text",)), tap_only=(view.focus,))


class FormFieldOrder:
    """While a field lacks its value, tapping such a field is the step: nothing is saved, sent or finished
    yet (the model saved after the first field). Inside a form being filled nothing else is offered but what
    the screen suggests for the focused field's text (the contact offered for a recipient typed in part);
    before it the keys stay (a demonstration may take the long way round to the form)."""
    name = "form-field-order"

    def narrow(self, view: StepView) -> Narrowing | None:
        focus, missing = view.focus, view.missing_values
        if not missing or focus in missing:
            return None
        if view.awaits_text and focus not in view.form_values:
            # an empty field may take a detail said without its field's word first, but the form is not saved,
            # sent or finished while another field lacks its value (handed "... and I need to bring the x-rays,
            # duration 150", the model saved with the Duration at 60)
            return Narrowing(blocked=frozenset({"finish"}), tap_never=view.confirming)
        blocked = _but("tap") if focus else frozenset({"long_press", "swipe", "finish", "give_up", "type_text"})
        return Narrowing(blocked=blocked, tap_only=missing + view.suggestions)


class GoalButton:
    """Once the form is settled, the button the goal's final verb names ("copy its name": Copy; "copy the
    address": Copy address; send; save) is the step until a button of that verb has been tapped."""
    name = "goal-button"

    def narrow(self, view: StepView) -> Narrowing | None:
        named = goals.goal_buttons(view.goal, view.screen, view.done) if view.form_settled else []
        return Narrowing(blocked=_but("tap"), tap_only=tuple(named)) if named else None


class FilledField:
    """Once the form is settled, a field that holds its value is not tapped again, unless nothing else is left,
    and nothing more is typed into it (the model typed the reason for an alarm after its label "piano")."""
    name = "filled-field"

    def narrow(self, view: StepView) -> Narrowing | None:
        full = view.focus in view.form_values and view.focus not in view.missing_values
        blocked = frozenset({"type_text"}) if full else frozenset()
        if not view.form_settled or not view.form_values:
            return Narrowing(blocked=blocked) if blocked else None
        return Narrowing(blocked=blocked, tap_rather_not=frozenset(view.form_values))


class OpenApp:
    """On the home screen, a goal that only opens an app taps its icon (given "open Notes, then Chrome", the
    model tapped Chrome first); in another app, before that icon was tapped, Home is the step (handed "open my
    contacts" on the Wi-Fi screen a look-up had opened, the model tapped about Settings)."""
    name = "open-app"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or view.wrong_switches:
            return None
        if goals.opens_elsewhere(view.goal, view.screen, view.done):
            return Narrowing(blocked=_but("press_home", also=("type_text",)))
        icon = goals.app_to_open(view.goal, view.screen)
        return _tap_only((icon,)) if icon else None


class EntryApp:
    """The hand-over of an entry a call just made ("open the event 'Vet' and note to self: ask about the flea
    meds") opens, from the home screen, the app that keeps such entries (`goals.entry_app`), not the one a
    detail's words name (the model opened Notes or Messages in 22 of 76 failed hand-overs)."""
    name = "entry-app"

    def narrow(self, view: StepView) -> Narrowing | None:
        icon = goals.entry_app(view.goal, view.screen) if view.goal else None
        return _tap_only((icon,)) if icon else None


class AppOpened:
    """A goal that only opens an app is finished once its icon is tapped and the app is in front (in "Open
    Chrome and go to example.com", on the step "Open Chrome", the model went on to type "chrome" into the
    address bar)."""
    name = "app-opened"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or not goals.app_opened(view.goal, view.screen, view.done):
            return None
        return Narrowing(blocked=_but("finish", also=("type_text",)))


class BackGoal:
    """A goal whose action is the Back key ("go back", "back out of this screen") is not a way home."""
    name = "back-goal"

    def narrow(self, view: StepView) -> Narrowing | None:
        return Narrowing(blocked=frozenset({"press_home"})) if view.goal and goals.says_back(view.goal) else None


class HomeGoal:
    """A goal that ends on the home screen is not finished elsewhere (the model said `finish` in the app)."""
    name = "home-goal"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or not goals.says_home(view.goal) or goals.on_home_screen(view.screen):
            return None
        return Narrowing(blocked=frozenset({"finish"}))


class RemoveOnly:
    """A goal that only removes something types nothing and taps nothing that makes a new item: "delete every
    note" on a phone with no notes had the model open a new note and type "every note"."""
    name = "remove-only"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or not goals.removes_only(view.goal):
            return None
        return Narrowing(blocked=frozenset({"type_text"}),
                         tap_never=frozenset(label for label in view.labels if goals.makes_new(label)))


class KeepItems:
    """A goal that says no verb of removing (`navigator.remove_verbs`) taps nothing that removes: asked to "turn off
    my 7:10 alarm", the model tapped its Delete."""
    name = "keep-items"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or goals.says_remove(view.goal):
            return None
        gone = frozenset(label for label in view.labels if goals.removes(label))
        return Narrowing(tap_never=gone) if gone else None


class NamedRow:
    """Of the rows the goal's words fit (`goals.name_fit` over the words of its asking pieces), the look-alikes of
    the one they fit best are not tapped, when one fits best: asked to "change dana whitfield's number", the
    model opened Dan Whitfield; to "delete Mike Ross ... Not Mike Rossi", Mikaela Ross. A confirm or a refusal
    at the end would stop the wrong change, but the task would not be done."""
    name = "named-row"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal:
            return None
        said = goals.asked_words(view.goal)
        # how well the goal names each row, then how much of the row it says ("Groceries" before "Groceries 2"
        # for "my groceries note")
        fits = {e.label: (goals.name_fit(said, e.label), goals.said_balance(view.goal, e.label))
                for e in view.screen.actionable if e.kind in ("button", "item")
                and not (goals.makes_new(e.label) or goals.removes(e.label))}   # rows, not "Create contact"
        fitting = {label: n for label, n in fits.items() if n[0] > 0}
        if len(fitting) < 2:
            return None
        best = max(fitting.values())
        if list(fitting.values()).count(best) > 1:
            return None
        # only its look-alikes, the rows that share a word of its name ("Ross"): not the other app on the home
        # screen a goal names ("copy the address from Maps into a note")
        words = goals.name_words(next(label for label, n in fitting.items() if n == best))
        alike = frozenset(label for label, n in fitting.items() if n < best and goals.name_words(label) & words)
        return Narrowing(tap_never=alike) if alike else None


class RemoveNamed:
    """Of several buttons that remove ("Delete", "Delete (2)": one per row), the one whose own description ("Delete
    6:10 AM alarm") holds the most of what the goal says that tells the rows apart (its time's digits, its
    label's words) is the only one a goal that removes may tap: asked to "delete the school run alarm", the model
    tapped the first row's Delete. None when no description tells them apart or two fit as well."""
    name = "remove-named"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or not goals.says_remove(view.goal):
            return None
        rows = [e for e in view.screen.actionable if goals.removes(e.label) and e.description]
        if len(rows) < 2:
            return None
        tokens = [goals.word_set(e.description) for e in rows]
        common = set.intersection(*tokens)
        said = goals.word_set(view.goal)
        scores = [len((t - common) & said) for t in tokens]
        best = max(scores)
        if best == 0 or scores.count(best) > 1:
            return None
        return Narrowing(tap_never=frozenset(e.label for e, n in zip(rows, scores) if n < best))


class EditOnly:
    """A goal that changes something that exists taps nothing that makes a new item: asked to change the
    number of a contact the phone does not have (or one it has), the model created a new contact."""
    name = "edit-only"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.goal or not goals.edits_only(view.goal):
            return None
        return Narrowing(tap_never=frozenset(label for label in view.labels if goals.makes_new(label)))


class UntypedText:
    """A goal with text to type ("a note saying X", "google X") is not finished before it is typed."""
    name = "untyped-text"

    def narrow(self, view: StepView) -> Narrowing | None:
        untyped = view.goal and goals.untyped_text(view.goal, view.done)
        return Narrowing(blocked=frozenset({"finish"})) if untyped else None


class LastStepDone:
    """The goal ends on a verb whose button changes nothing on the screen ("copy its name") and that button is
    tapped: `finish` is the only step (the model, seeing no change, went on and copied an address over the
    name). Gives way while text to type is missing, a switch is wrong or a field lacks its value."""
    name = "last-step-done"

    def narrow(self, view: StepView) -> Narrowing | None:
        if not view.last_step_over:
            return None
        return Narrowing(blocked=_but("finish", also=("type_text",)))


# The fixed order: what the screen allows, then switches, the form, the goal's button, the app to open, keys and
# the end. It is the order of the trace records; it decides a result only where a rule depends on what is left
# (which of two disagreeing `tap_only` lists is overruled: the later one; what `tap_rather_not` may drop).
GUARDS: tuple[Guard, ...] = (FocusedField(), SwitchToSet(), LevelToSet(), DaysToSet(), DaysAlreadySet(),
                             DaysUnsaid(), HalfDayToSet(), SwitchAlreadySet(), SwitchUnasked(), FormFieldValue(),
                             ReplaceValue(), FormFieldOrder(), GoalButton(), FilledField(), OpenApp(), EntryApp(),
                             AppOpened(), BackGoal(), HomeGoal(), RemoveOnly(), KeepItems(), NamedRow(), RemoveNamed(),
                             EditOnly(), UntypedText(), LastStepDone())


# ============================================================================================ composition
@dataclass(frozen=True)
class Firing:
    """What one guard changed on one step: ``guard form-field-order narrowed tap targets 14 → 2``."""
    guard: str
    blocked: tuple[str, ...] = ()                   # tools it took away, in `TOOLS` order
    tap_targets: tuple[int, int] | None = None      # how many labels `tap` could name, before → after
    text: tuple[str, ...] | None = None             # the texts it left `type_text`
    overruled: bool = False                         # it would have left nothing to tap or to do: not applied

    def describe(self) -> str:
        parts = []
        if self.overruled:
            parts.append("overruled (it would leave nothing to tap, or no action at all)")
        if self.tap_targets is not None:
            parts.append(f"narrowed tap targets {self.tap_targets[0]} → {self.tap_targets[1]}")
        if self.text is not None:
            parts.append("narrowed type_text to " + " or ".join(repr(t) for t in self.text))
        if self.blocked:
            parts.append("blocked " + ", ".join(self.blocked))
        return f"guard {self.guard} " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"guard": self.guard}
        if self.blocked:
            out["blocked"] = list(self.blocked)
        if self.tap_targets is not None:
            out["tap_targets"] = list(self.tap_targets)
        if self.text is not None:
            out["text"] = list(self.text)
        if self.overruled:
            out["overruled"] = True
        return out

    @classmethod
    def from_json(cls, data: Any) -> "Firing":
        """A trace's record (any folder can be replayed): a wrong shape is a ValueError naming the field."""
        if not isinstance(data, dict) or not isinstance(data.get("guard"), str):
            raise ValueError("a guard record is an object with a 'guard' name")
        blocked, taps, text = data.get("blocked", []), data.get("tap_targets"), data.get("text")
        if not (isinstance(blocked, list) and all(isinstance(b, str) for b in blocked)):
            raise ValueError("'blocked' must be a list of tool names")
        if taps is not None and not (isinstance(taps, list) and len(taps) == 2
                                     and all(isinstance(n, int) for n in taps)):
            raise ValueError("'tap_targets' must be [before, after]")
        if text is not None and not (isinstance(text, list) and all(isinstance(t, str) for t in text)):
            raise ValueError("'text' must be a list of strings")
        return cls(data["guard"], tuple(blocked), (taps[0], taps[1]) if taps is not None else None,
                   tuple(text) if text is not None else None, bool(data.get("overruled", False)))


@dataclass(frozen=True)
class Offer:
    """What a step offers once the guards have spoken."""
    labels: tuple[str, ...]                 # what `long_press` may name
    tap_targets: tuple[str, ...]            # what `tap` may name
    text: tuple[str, ...] | None            # what `type_text` may type (None: a span of the goal)
    blocked: frozenset[str]                 # tools declared but not offered
    firings: tuple[Firing, ...] = field(default=())


def _callable(view: StepView, blocked: frozenset[str], taps: tuple[str, ...] | None,
              text: tuple[str, ...] | None) -> tuple[str, ...]:
    """The tools a step could still call under these narrowings (`narrow` ends with the same reading)."""
    gone = set(blocked)
    if not view.labels:
        gone.add("long_press")
    if not (view.labels if taps is None else taps):
        gone.add("tap")
    if text == ():
        gone.add("type_text")
    return tuple(t for t in TOOLS if t not in gone)


def narrow(view: StepView, guards: Sequence[Guard] = GUARDS) -> Offer:
    """The guards' narrowings composed in order, by the rules in the module's docstring. A tool whose argument
    has nothing left to name is not offered either."""
    taps: tuple[str, ...] | None = None        # None: every actionable label
    text: tuple[str, ...] | None = None        # None: any span of the goal
    blocked: frozenset[str] = frozenset()
    firings: list[Firing] = []
    for guard in guards:
        n = guard.narrow(view)
        if n is None:
            continue
        new_taps, overruled = taps, False
        if n.tap_only is not None:
            kept = n.tap_only if taps is None else tuple(t for t in n.tap_only if t in taps)
            overruled = not kept
            new_taps = taps if overruled else kept
        if n.tap_never:
            new_taps = tuple(t for t in (view.labels if new_taps is None else new_taps) if t not in n.tap_never)
        if n.tap_rather_not:
            left = view.labels if new_taps is None else new_taps
            new_taps = tuple(t for t in left if t not in n.tap_rather_not) or left
        new_text = text
        if n.text_only is not None:
            new_text = n.text_only if text is None else tuple(t for t in n.text_only if t in text)
        if not _callable(view, blocked | n.blocked, new_taps, new_text):
            firings.append(Firing(guard.name, overruled=True))
            continue
        added = tuple(t for t in TOOLS if t in n.blocked and t not in blocked)
        before, after = (view.labels if x is None else x for x in (taps, new_taps))
        if added or overruled or before != after or new_text != text:
            firings.append(Firing(guard.name, added, (len(before), len(after)) if before != after else None,
                                  new_text if new_text != text else None, overruled))
        taps, text, blocked = new_taps, new_text, blocked | n.blocked
    blocked = frozenset(t for t in TOOLS if t not in _callable(view, blocked, taps, text))
    # a step that may only press (`replace-value`: the focused field, held down) presses what tap may name
    presses = taps if taps is not None and "tap" in blocked else view.labels
    taps = view.labels if taps is None else taps
    return Offer(presses, taps, text, blocked, tuple(firings))
