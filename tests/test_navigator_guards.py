"""The text navigator's guards, one at a time on hand-made screens, then the rules that compose them, the records
they leave, and the data their words come from (the lexicon's ``navigator`` section, `android/screens.json`)."""
from __future__ import annotations

import json

import pytest

from mobile_actions.errors import BindingError, CatalogueError
from mobile_actions.navigator import goals
from mobile_actions.navigator import guards as g
from mobile_actions.navigator.guards import MOVES, Firing, Narrowing, StepView, narrow
from mobile_actions.navigator.screen import Element, Screen


def el(label: str, kind: str = "button", **kw) -> Element:
    kw.setdefault("clickable", kind != "text")
    return Element(label, kind, (0, 0, 100, 100), **kw)


def screen(*elements: Element, package: str = "com.example.app") -> Screen:
    return Screen(package, elements, (1080, 2400))


def view(goal: str, s: Screen, *done: str) -> StepView:
    return StepView(goal, s, tuple(done))


SHADE = screen(el("Bluetooth", "switch", checkable=True), el("Flashlight", "switch", checkable=True, checked=True),
               el("Airplane mode", "switch", checkable=True), el("Settings"), package="com.android.systemui")
HOME = screen(el("Notes"), el("Chrome"), el("Contacts"), el("Settings"), package="com.android.launcher3")


def mail(to: str = "", subject: str = "", focus: str | None = None) -> Screen:
    return screen(el("To", "field", text=to, focused=focus == "To"),
                  el("Subject", "field", text=subject, focused=focus == "Subject"),
                  el("Send"), el("Cancel"), package="com.google.android.gm")


def but(*kept: str, also: tuple[str, ...] = ()) -> frozenset[str]:
    return frozenset(MOVES) - set(kept) | set(also)


# ============================================================================================ one guard at a time
def test_focused_field_offers_typing_only_into_a_focused_field_and_no_finish_beside_one():
    guard = g.FocusedField()
    assert guard.narrow(view("", HOME)) == Narrowing(blocked=frozenset({"type_text"}))
    assert guard.narrow(view("", mail(focus="To"))) == Narrowing(blocked=frozenset({"finish"}))


def test_switch_to_set_makes_the_switch_in_the_other_state_the_only_step():
    guard = g.SwitchToSet()
    assert guard.narrow(view("turn on Bluetooth and airplane mode", SHADE)) == Narrowing(
        blocked=but("tap", also=("type_text",)), tap_only=("Bluetooth", "Airplane mode"))
    assert guard.narrow(view("enable flight mode please", SHADE)).tap_only == ("Airplane mode",)
    assert guard.narrow(view("switch the torch on", SHADE)) is None          # already on
    assert guard.narrow(view("open Chrome", SHADE)) is None


def test_switch_already_set_is_never_tapped_back():
    guard = g.SwitchAlreadySet()
    assert guard.narrow(view("switch the torch on", SHADE)) == Narrowing(tap_never=frozenset({"Flashlight"}))
    assert guard.narrow(view("turn off airplane mode", SHADE)) == Narrowing(tap_never=frozenset({"Airplane mode"}))
    assert guard.narrow(view("turn on Bluetooth", SHADE)) is None


def test_form_field_value_types_exactly_the_focused_fields_value():
    guard = g.FormFieldValue()
    goal = "send an email to a@b.co about Invoice"
    assert guard.narrow(view(goal, mail(focus="To"))) == Narrowing(blocked=frozenset(MOVES), text_only=("a@b.co",))
    assert guard.narrow(view(goal, mail(to="a@b.co", focus="To"))) is None      # it holds its value
    assert guard.narrow(view(goal, mail(focus="To"), 'type_text "a@b.co"')) is None
    assert guard.narrow(view("turn on Bluetooth", mail(focus="To"))) is None   # the goal gives no value


def test_form_field_order_taps_a_field_that_lacks_its_value_before_anything_else():
    guard = g.FormFieldOrder()
    goal = "send an email to a@b.co about Invoice"
    assert guard.narrow(view(goal, mail(to="a@b.co", focus="To"))) == Narrowing(blocked=but("tap"),
                                                                               tap_only=("Subject",))
    # before the form has the focus, the keys stay
    assert guard.narrow(view(goal, mail())) == Narrowing(
        blocked=frozenset({"long_press", "swipe", "finish", "give_up", "type_text"}), tap_only=("To", "Subject"))
    assert guard.narrow(view(goal, mail(focus="To"))) is None                  # the focused one takes its value
    assert guard.narrow(view(goal, mail(to="a@b.co", subject="Invoice"))) is None
    # an empty focused field may take a detail said without its field's word, but nothing is saved meanwhile
    event = screen(el("Title", "field", text="dentist"), el("Duration (minutes)", "field", text="60"),
                   el("Location", "field", focused=True), el("Save"), el("Cancel"), package="com.android.calendar")
    said = "open the event 'dentist' and I need to bring the x-rays, duration 150"
    assert guard.narrow(view(said, event)) == Narrowing(blocked=frozenset({"finish"}), tap_never=frozenset({"Save"}))


def test_goal_button_is_the_step_once_the_form_is_settled_until_it_is_tapped():
    guard = g.GoalButton()
    goal = "send an email to a@b.co about Invoice"
    assert guard.narrow(view(goal, mail(to="a@b.co", subject="Invoice"))) == Narrowing(blocked=but("tap"),
                                                                                       tap_only=("Send",))
    assert guard.narrow(view(goal, mail(to="a@b.co", subject="Invoice"), 'tap "Send"')) is None
    assert guard.narrow(view(goal, mail(to="a@b.co"))) is None                 # Subject still lacks its value
    card = screen(el("Copy"), el("Copy address"), el("Directions"))
    assert guard.narrow(view("copy its name", card)).tap_only == ("Copy",)
    assert guard.narrow(view("copy the address", card)).tap_only == ("Copy address",)


def test_filled_field_is_not_tapped_again_once_the_form_is_settled():
    guard = g.FilledField()
    goal = "send an email to a@b.co about Invoice"
    assert guard.narrow(view(goal, mail(to="a@b.co", subject="Invoice"))) == Narrowing(
        tap_rather_not=frozenset({"To", "Subject"}))
    assert guard.narrow(view(goal, mail(to="a@b.co"))) is None
    assert guard.narrow(view("turn on Bluetooth", mail(to="a@b.co"))) is None


def test_a_focused_field_keeps_finish_once_the_goal_is_over():
    chrome = screen(el("Search or type URL", "field", focused=True), el("Tabs"), package="com.android.chrome")
    assert g.FocusedField().narrow(view("open Chrome", chrome, 'tap "Chrome"')) is None
    assert g.FocusedField().narrow(view("open Chrome and search cats", chrome, 'tap "Chrome"')) == Narrowing(
        blocked=frozenset({"finish"}))


ALARM = screen(el("Hour", "field", text="7", focused=True), el("Minute", "field", text="30"), el("AM", "chip"),
               el("PM", "chip"), el("Label", "field", text="gym"), el("Save"),
               package="com.google.android.deskclock")


def test_a_time_pickers_hour_and_minute_are_typed_over_for_a_goal_that_moves_the_alarm():
    for goal in ("push my 7:30 alarm to 5:50", "change my 7:30 alarm to 5:50"):
        v = view(goal, ALARM, 'tap "Clock"', 'tap "7:30 AM"')
        assert goals.form_values(goal, ALARM) == {"Hour": "5", "Minute": "50"}, goal
        assert g.ReplaceValue().narrow(v) == Narrowing(blocked=but("long_press", also=("type_text",)),
                                                      tap_only=("Hour",)), goal
    # "turn off my 5:30 alarm" names an alarm by its time: nothing is typed over the one opened
    assert g.ReplaceValue().narrow(view("turn off my 5:30 alarm", ALARM, 'tap "Clock"', 'tap "7:30 AM"')) is None


def test_what_a_field_holds_names_the_item_and_no_cue_reads_across_it():
    note = screen(el("Title", "field", text="Books to read", focused=True), el("Note", "field", text="dune"),
                  el("Save"), package="com.mobileactions.notes")
    assert goals.form_values("rename the Books to read note to packing list", note) == {"Title": "packing list"}
    renamed = screen(el("Title", "field", text="meal plan", focused=True), el("Note", "field", text="buy milk"),
                     el("Save"), package="com.mobileactions.notes")
    # after the rename is typed, the quoted old name inside "rename … to" is no value of the note's text
    assert goals.form_values("could u rename my note 'todo' to meal plan", renamed) == {"Title": "meal plan"}
    mail_filled = mail(to="a@b.co", subject="Invoice")
    assert goals.form_values("send an email to a@b.co about Invoice", mail_filled)["Subject"] == "Invoice"


def test_a_value_after_a_colon_keeps_its_commas():
    note = screen(el("Title", "field"), el("Note", "field", focused=True), el("Save"), package="com.mobileactions.notes")
    assert goals.form_values("make a note: cabin door code 4471, wifi pinecone88 thx", note) == {
        "Note": "cabin door code 4471, wifi pinecone88"}
    assert goals.form_values("make a note saying buy milk, then open Chrome", note) == {"Note": "buy milk"}


def test_a_notes_title_and_text_come_from_the_cues_people_write():
    note = screen(el("Title", "field"), el("Note", "field", focused=True), el("Save"), package="com.mobileactions.notes")
    assert goals.form_values("pls save a note called gate code with 4821#", note) == {
        "Title": "gate code", "Note": "4821#"}
    assert goals.form_values("new note title 'Packing' text passport, charger, sunscreen", note) == {
        "Title": "Packing", "Note": "passport, charger, sunscreen"}     # free text runs past its commas
    assert goals.form_values("make a note - cabin wifi password is pinecone2025", note) == {
        "Note": "cabin wifi password is pinecone2025"}


def test_a_saved_note_takes_what_the_goal_adds_to_it():
    saved = screen(el("Title", "field", text="Questions for doctor"),
                   el("Note", "field", text="- can I run again?", focused=True), el("Save"),
                   package="com.mobileactions.notes")
    assert goals.form_values("In my note 'Questions for doctor' please add one more: is it ok to take ibuprofen?",
                             saved) == {"Note": "is it ok to take ibuprofen?"}   # verbatim after the colon
    assert goals.form_values("add avocados to my Questions for doctor note", saved) == {"Note": "avocados"}
    new = screen(el("Title", "field"), el("Note", "field", focused=True), el("Save"), package="com.mobileactions.notes")
    assert goals.form_values("add a note titled Trip", new) == {"Title": "Trip"}     # nothing held: nothing added


def test_goals_read_past_the_openers_people_write_and_start_opens_no_app():
    assert goals.removes_only("could u remove the note with the old wifi password in it")
    assert goals.removes_only("hey can you delete ben from my contacts")
    assert goals.app_to_open("start the stopwatch", HOME) is None
    assert goals.app_to_open("pls open Notes", HOME) == "Notes"


def test_open_app_taps_the_apps_icon_on_the_home_screen():
    guard = g.OpenApp()
    assert guard.narrow(view("launch the Chrome app", HOME)) == Narrowing(blocked=but("tap", also=("type_text",)),
                                                                          tap_only=("Chrome",))
    assert guard.narrow(view("please open Notes.", HOME)).tap_only == ("Notes",)
    for goal in ("open Spotify", "open Notes and write buy milk"):
        assert guard.narrow(view(goal, HOME)) is None, goal
    # in another app, Home first; once a step is taken, or for a goal that names more than an app, nothing
    assert guard.narrow(view("open my contacts", screen(el("Notes")))) == Narrowing(
        blocked=but("press_home", also=("type_text",)))
    assert guard.narrow(view("open Notes", screen(el("Notes")), "press_home")) is None
    assert guard.narrow(view("switch to Contacts from recent apps", screen(el("Notes")))) is None


def test_entry_app_opens_the_app_that_keeps_the_entry_a_call_made():
    guard = g.EntryApp()
    home = screen(el("Notes"), el("Calendar"), el("Contacts"), el("Messages"), package="com.android.launcher3")
    handed = "open the event 'Vet for Biscuit' and Note to self: ask about the flea meds"
    assert guard.narrow(view(handed, home)) == Narrowing(blocked=but("tap", also=("type_text",)),
                                                         tap_only=("Calendar",))
    assert guard.narrow(view("open the contact 'Ana Ruiz' and note she moved", home)).tap_only == ("Contacts",)
    assert guard.narrow(view(handed, screen(el("Edit"), package="com.android.calendar"))) is None   # in an app
    assert guard.narrow(view("make a note: ask the vet about the flea meds", home)) is None          # no hand-over
    assert guard.narrow(view("open the alarm '07:00' and label it gym", home)) is None               # no such icon


def test_app_opened_finishes_a_goal_that_only_opens_an_app():
    guard = g.AppOpened()
    chrome = screen(el("Search or type URL", "field", focused=True), package="com.android.chrome")
    assert guard.narrow(view("Open Chrome", chrome, 'tap "Chrome"')) == Narrowing(blocked=but("finish",
                                                                                            also=("type_text",)))
    assert guard.narrow(view("Open Chrome", chrome)) is None                      # its icon was never tapped
    assert guard.narrow(view("Open Chrome", HOME, 'tap "Chrome"')) is None        # still on the home screen
    assert guard.narrow(view("open Chrome and go to example.com", chrome, 'tap "Chrome"')) is None


def alarm_form(*on: str, minute: str = "30") -> Screen:
    days = [el(name[0] + (" (2)" if name in ("Thursday", "Sunday") else ""), "switch", checkable=True,
               checked=name in on, description=name)
            for name in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")]
    return screen(el("Save"), el("Minute", "field", text=minute, focused=True), *days,
                  package="com.google.android.deskclock")


def test_days_to_set_keeps_the_form_open_until_the_days_are_right():
    guard = g.DaysToSet()
    goal = "set an alarm for 6:30 on weekdays"
    assert guard.narrow(view(goal, alarm_form())) == Narrowing(
        blocked=but("tap"), tap_only=("M", "T", "W", "T (2)", "F", "Minute"))      # not Save, not finish
    assert guard.narrow(view(goal, alarm_form("Monday", "Sunday"))).tap_only == ("T", "W", "T (2)", "F", "S (2)",
                                                                                 "Minute")
    assert guard.narrow(view(goal, alarm_form("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))) is None
    assert guard.narrow(view("alarm 7pm mon and thu", alarm_form())).tap_only == ("M", "T (2)", "Minute")
    assert guard.narrow(view("set an alarm for 6:30", alarm_form())) is None
    assert guard.narrow(view(goal, mail(focus="To"))) is None               # no day toggles on the screen


def test_a_day_already_in_its_asked_state_is_never_tapped():
    guard = g.DaysAlreadySet()
    goal = "set an alarm for 6:30 on weekdays"
    weekdays = alarm_form("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
    assert guard.narrow(view(goal, weekdays)).tap_never == {"M", "T", "W", "T (2)", "F", "S", "S (2)"}
    assert guard.narrow(view(goal, alarm_form("Friday"))).tap_never == {"F", "S", "S (2)"}
    assert guard.narrow(view("set an alarm for 6:30", weekdays)) is None        # the goal says no days


def test_a_goal_that_says_no_days_taps_no_days_toggle():
    """"set an alarm tomorrow at 6" and "turn off my 7:15 alarm" say no days: no day's toggle is tapped."""
    guard = g.DaysUnsaid()
    every_day = {"M", "T", "W", "T (2)", "F", "S", "S (2)"}
    assert guard.narrow(view("set an alarm tomorrow at 6", alarm_form())).tap_never == every_day
    assert guard.narrow(view("turn off my 7:15 alarm", alarm_form("Monday"))).tap_never == every_day
    assert guard.narrow(view("set an alarm for 6:30 on weekdays", alarm_form())) is None   # days-to-set's
    assert guard.narrow(view("set an alarm tomorrow at 6", mail(focus="To"))) is None       # no day toggles


def test_a_time_said_without_minutes_is_on_the_hour():
    from mobile_actions.navigator.goals import form_values

    form = screen(el("Hour", "field", text="", focused=True), el("Minute", "field", text=""),
                  package="com.google.android.deskclock")
    assert form_values("set an alarm tomorrow at 6", form) == {"Hour": "6", "Minute": "00"}
    assert form_values("move my 6:45 alarm to 7:15", form) == {"Hour": "7", "Minute": "15"}


def test_back_goal_is_not_a_way_home():
    guard = g.BackGoal()
    assert guard.narrow(view("back out of this screen", HOME)) == Narrowing(blocked=frozenset({"press_home"}))
    assert guard.narrow(view("go back to the home screen", HOME)) is None
    assert guard.narrow(view("open Notes, then go back to Chrome", HOME)) is None


def test_home_goal_is_not_finished_outside_a_launcher():
    guard = g.HomeGoal()
    assert guard.narrow(view("go to the home screen", mail())) == Narrowing(blocked=frozenset({"finish"}))
    assert guard.narrow(view("go to the home screen", HOME)) is None


def test_a_goal_that_only_removes_types_nothing_and_makes_nothing_new():
    guard = g.RemoveOnly()
    notes = screen(el("New note"), el("Groceries"), el("Search notes", "field"), package="com.mobileactions.notes")
    assert guard.narrow(view("delete every note", notes)) == Narrowing(blocked=frozenset({"type_text"}),
                                                                      tap_never=frozenset({"New note"}))
    assert guard.narrow(view("delete the draft and add a new note", notes)) is None
    assert guard.narrow(view("open Notes", notes)) is None


def test_a_goal_that_changes_something_that_exists_makes_nothing_new():
    guard = g.EditOnly()
    contacts = screen(el("Create contact"), el("Mike Chen"), el("Mike Torres"), package="com.android.contacts")
    assert guard.narrow(view("change mike johnsons number to 555 0100", contacts)) == Narrowing(
        tap_never=frozenset({"Create contact"}))
    assert guard.narrow(view("move the dentist to 11", contacts)) is not None
    assert guard.narrow(view("add a new contact, or change mike's number", contacts)) is None
    assert guard.narrow(view("call mike", contacts)) is None


def test_a_value_that_replaces_another_is_typed_over_a_selection():
    guard, form = g.ReplaceValue(), g.FormFieldValue()
    held = screen(el("Name", "field", text="Mike Torres"), el("Phone", "field", text="415-555-0147", focused=True),
                  el("Save"), package="com.android.contacts")
    goal = "can you change mike torres number to 415 555 0199"
    assert guard.narrow(view(goal, held)).tap_only == ("Phone",)            # long press the field ...
    assert "long_press" not in guard.narrow(view(goal, held)).blocked and form.narrow(view(goal, held)) is None
    menu = screen(*held.elements, el("Select all"), package="com.android.contacts")
    assert guard.narrow(view(goal, menu, 'long_press "Phone"')).tap_only == ("Select all",)   # ... select all ...
    assert guard.narrow(view(goal, menu, 'tap "Select all"')) is None                         # ... and type
    assert form.narrow(view(goal, menu, 'tap "Select all"')).text_only == ("415 555 0199",)
    # a number or an address is held whole: typed over the old one whatever the verb ("X got a new email ...")
    assert guard.narrow(view("mike got a new number 415 555 0199", held)).tap_only == ("Phone",)
    note = screen(el("Note", "field", text="milk", focused=True), el("Save"), package="com.mobileactions.notes")
    assert guard.narrow(view("jot down eggs in the note", note)) is None                     # not an edit: adds
    # composed: the press names the focused field alone (handed "... duration 75", the model held Location down)
    offer = g.narrow(view(goal, held))
    assert offer.labels == ("Phone",) and offer.blocked == but("long_press", also=("type_text",))
    event = screen(el("Title", "field", text="yoga class"), el("Duration (minutes)", "field", text="60", focused=True),
                   el("Location", "field", text="the lotus studio"), el("Save"), package="com.android.calendar")
    length = "open the event 'yoga class' and it's at the lotus studio, it goes for 75 minutes, duration 75"
    assert goals.form_values(length, event)["Duration (minutes)"] == "75"
    assert g.narrow(view(length, event)).labels == ("Duration (minutes)",)    # 75 is typed over the 60, not after
    # the first value after the field's word that has the field's form: "45 mins" is not one, "45" is
    said_twice = "open the event 'yoga class' and at the lotus studio, duration 45 mins, duration 45"
    assert goals.form_values(said_twice, event)["Duration (minutes)"] == "45"
    # a span a cue reaches that is not in the form the field takes is no value of it
    blank = screen(el("Title", "field", focused=True), el("Date (YYYY-MM-DD)", "field", text="2025-06-02"),
                   el("Time", "field", text="11:00"), el("Save"), package="com.android.calendar")
    assert goals.form_values("tea time at the Ritz", blank) == {}
    placed = screen(*blank.elements, el("Location", "field"), package="com.android.calendar")
    assert goals.form_values("dentist on the 12th at 3:40pm", placed) == {}      # "at" reaches a time: no place
    assert goals.form_values("dinner at Nonna's on 5th", placed) == {"Location": "Nonna's on 5th"}
    # the item is named once, first: a later word of its name is part of a value ("Eastside Physio")
    opened = screen(el("Title", "field", text="physio"), el("Location", "field", focused=True), el("Save"),
                    package="com.android.calendar")
    assert goals.form_values("open the event 'physio' and it's at Eastside Physio on King Street", opened) == {
        "Title": "physio", "Location": "Eastside Physio on King Street"}
    assert goals.form_values("tea at the Ritz, date 2025-06-05, time 16:30", blank) == {
        "Date (YYYY-MM-DD)": "2025-06-05", "Time": "16:30"}


def test_a_typed_value_ends_before_the_courtesy_words_that_close_a_request():
    from mobile_actions.navigator.goals import form_values, whole_value

    form = screen(el("Location", "field", focused=True), el("Phone", "field"), el("Save"))
    assert form_values("change the yoga location to Harbour Cafe thx", form)["Location"] == "Harbour Cafe"
    assert form_values("pls change omar's number to 555 6685 asap", form)["Phone"] == "555 6685"
    assert whole_value("wei.chen@outlook.com") and whole_value("+91 98450 12345") and not whole_value("eggs 12")
    assert whole_value("45", "Duration (minutes)") and not whole_value("5", "Hour")


def test_an_address_in_the_goal_names_no_app():
    from mobile_actions.navigator.goals import named_apps

    assert named_apps("chen wei got a new email, pls update it to wei.chen@outlook.com") == []
    assert [name for name, _ in named_apps("send it to bob on outlook")] == ["outlook"]


def test_untyped_text_is_typed_before_the_goal_is_finished():
    guard = g.UntypedText()
    assert guard.narrow(view("write a note saying buy milk", HOME)) == Narrowing(blocked=frozenset({"finish"}))
    assert guard.narrow(view("write a note saying buy milk", HOME, 'type_text "buy milk"')) is None
    assert guard.narrow(view("look at the notifications", HOME)) is None


def test_last_step_done_leaves_only_finish_after_the_copy():
    guard = g.LastStepDone()
    card = screen(el("Copy"), el("Copy address"))
    assert guard.narrow(view("copy its name", card, 'tap "Copy"')) == Narrowing(
        blocked=but("finish", also=("type_text",)))
    assert guard.narrow(view("copy its name", card)) is None
    assert guard.narrow(view("copy the address and paste it in Notes", card, 'tap "Copy address"')) is None
    assert guard.narrow(view("send it to a@b.co", card, 'tap "Send"')) is None   # a send changes the screen
    # it gives way while the goal's text is not typed
    assert guard.narrow(view("write a note saying hi and copy", card, 'tap "Copy"')) is None


def test_every_guard_has_a_name_of_its_own():
    names = [guard.name for guard in g.GUARDS]
    assert len(set(names)) == len(names) == 26 and all(n == n.lower() and " " not in n for n in names)


# ============================================================================================ composition
class Fixed:
    """A guard that says what it is told."""

    def __init__(self, name: str, narrowing: Narrowing | None) -> None:
        self.name, self.narrowing = name, narrowing

    def narrow(self, view: StepView) -> Narrowing | None:
        return self.narrowing


ABC = screen(el("A"), el("B"), el("C"), el("D"))


def test_blocked_tools_are_the_union_and_each_firing_names_only_what_it_added():
    offer = narrow(view("", ABC), [Fixed("one", Narrowing(blocked=frozenset({"finish", "swipe"}))),
                                   Fixed("two", Narrowing(blocked=frozenset({"finish", "give_up"}))),
                                   Fixed("three", Narrowing(blocked=frozenset({"give_up"}))),
                                   Fixed("quiet", None)])
    assert offer.blocked == {"finish", "swipe", "give_up"}
    assert offer.firings == (Firing("one", ("swipe", "finish")), Firing("two", ("give_up",)))


def test_tap_lists_intersect_in_the_later_order_and_one_that_would_leave_nothing_is_overruled():
    offer = narrow(view("", ABC), [Fixed("wide", Narrowing(tap_only=("A", "B", "C"))),
                                   Fixed("narrow", Narrowing(tap_only=("C", "B", "D"))),
                                   Fixed("elsewhere", Narrowing(tap_only=("D",))),
                                   Fixed("never", Narrowing(tap_never=frozenset({"B"})))])
    assert offer.tap_targets == ("C",) and offer.labels == ("A", "B", "C", "D") and "tap" not in offer.blocked
    assert [f.describe() for f in offer.firings] == [
        "guard wide narrowed tap targets 4 → 3", "guard narrow narrowed tap targets 3 → 2",
        "guard elsewhere overruled (it would leave nothing to tap, or no action at all)",
        "guard never narrowed tap targets 2 → 1"]


def test_rather_not_never_leaves_nothing_to_tap_but_never_does():
    rather = narrow(view("", ABC), [Fixed("only", Narrowing(tap_only=("A", "B"))),
                                    Fixed("rather", Narrowing(tap_rather_not=frozenset({"A", "B"})))])
    assert rather.tap_targets == ("A", "B") and [f.guard for f in rather.firings] == ["only"]
    never = narrow(view("", ABC), [Fixed("never", Narrowing(tap_never=frozenset({"A", "B", "C", "D"})))])
    assert never.tap_targets == () and "tap" in never.blocked


def test_a_guard_that_would_leave_no_action_at_all_is_overruled():
    """Two guards that disagree (typing only, then no typing) must not leave the grammar no call to admit:
    the model would write free text."""
    offer = narrow(view("", ABC), [Fixed("type-only", Narrowing(blocked=frozenset(MOVES), text_only=("x",))),
                                   Fixed("no-typing", Narrowing(blocked=frozenset({"type_text"})))])
    assert offer.blocked == frozenset(MOVES) and offer.text == ("x",)
    assert [f.describe() for f in offer.firings][-1] == (
        "guard no-typing overruled (it would leave nothing to tap, or no action at all)")


def test_a_goal_that_only_removes_gives_no_field_a_value():
    note = screen(el("Title", "field", text="wifi"), el("Note", "field", text="old router pw: tigerlily2019",
                                                         focused=True), el("Delete"), el("Save"),
                  package="com.mobileactions.notes")
    offer = narrow(view("delete the note with the old wifi password", note, 'tap "Notes"', 'tap "wifi"'))
    assert "tap" not in offer.blocked and "Delete" in offer.tap_targets
    assert "form-field-value" not in [f.guard for f in offer.firings]


def test_texts_to_type_intersect_and_nothing_left_blocks_typing():
    offer = narrow(view("", ABC), [Fixed("one", Narrowing(text_only=("x", "y"))),
                                   Fixed("two", Narrowing(text_only=("y",)))])
    assert offer.text == ("y",) and "type_text" not in offer.blocked
    assert offer.firings[1].describe() == "guard two narrowed type_text to 'y'"
    assert "type_text" in narrow(view("", ABC), [Fixed("one", Narrowing(text_only=("x",))),
                                                 Fixed("two", Narrowing(text_only=("y",)))]).blocked


def test_the_shipped_guards_on_a_form_say_what_they_did():
    offer = narrow(view("send an email to a@b.co about Invoice", mail(to="a@b.co", focus="To")))
    assert offer.tap_targets == ("Subject",) and offer.blocked == but("tap", also=("type_text",))
    assert [f.describe() for f in offer.firings] == [
        "guard focused-field blocked finish",
        "guard form-field-order narrowed tap targets 4 → 1, blocked long_press, swipe, press_back, press_home, "
        "show_recent_apps, give_up",
        "guard filled-field blocked type_text"]


def test_firings_go_through_json_and_a_bad_record_is_a_clear_error():
    f = Firing("form-field-value", ("swipe",), (4, 1), ("a@b.co",), False)
    assert Firing.from_json(json.loads(json.dumps(f.to_json()))) == f
    for bad in ({}, {"guard": "x", "tap_targets": [1]}, {"guard": "x", "blocked": "finish"}, "guard", {"guard": 3}):
        with pytest.raises(ValueError):
            Firing.from_json(bad)


# ============================================================================================ words as data
def test_the_navigator_section_of_the_lexicon_is_checked(tmp_path, monkeypatch):
    from mobile_actions import lexicon

    data = json.loads((lexicon.LEXICON_DIR / "en.json").read_text(encoding="utf-8"))
    assert {"copy", "send", "save"} == set(lexicon.load().navigator.final_verbs)
    data["navigator"]["final_verbs"] = "copy"
    (tmp_path / "xx.json").write_text(json.dumps(data), encoding="utf-8")
    del data["navigator"]
    (tmp_path / "yy.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(lexicon, "LEXICON_DIR", tmp_path)
    lexicon.load.cache_clear()
    try:
        with pytest.raises(CatalogueError, match="navigator.final_verbs must be a list"):
            lexicon.load("xx")
        with pytest.raises(CatalogueError, match="object 'navigator'"):
            lexicon.load("yy")
    finally:
        lexicon.load.cache_clear()


def test_the_android_screens_file_is_checked(tmp_path):
    from mobile_actions.android.screens import SCREENS_FILE, load_screens

    assert "torch" in load_screens().switch_aliases["flashlight"]
    data = json.loads(SCREENS_FILE.read_text(encoding="utf-8"))
    data["field_cues"]["subject"] = ["about", ""]
    (tmp_path / "bad.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BindingError, match="field_cues.subject must be a list of non-empty strings"):
        load_screens(tmp_path / "bad.json")
    (tmp_path / "not.json").write_text("{", encoding="utf-8")
    with pytest.raises(BindingError, match="cannot read"):
        load_screens(tmp_path / "not.json")


def test_the_words_are_the_datas():
    """Another app's labels or another word for a final verb change what the guards read, not the code."""
    from dataclasses import replace

    from mobile_actions import lexicon
    from mobile_actions.android.screens import load_screens
    from mobile_actions.navigator.goals import GoalWords

    words = replace(lexicon.load().navigator, home_words=("start screen",))
    screens = load_screens()
    built = GoalWords.build(words, screens)
    assert built.home_goal.search("go to the start screen") and not built.home_goal.search("go home")
    words = replace(words, open_verbs=("fire up",), open_app_words=("application",))
    assert GoalWords.build(words, screens).open_goal.match("fire up the Notes application")[1] == "Notes"


def test_result_readers_are_binding_data(tmp_path):
    from mobile_actions.android.bindings import Bindings, load_bindings

    reads = load_bindings()["show_map"].reads
    assert [r.field for r in reads] == ["place", "address", "details"]
    assert reads[0].selector == (("resource-id", "com.google.android.apps.maps:id/title"),)
    spec = {"tools": {"t": {"steps": [{"shell": ["true"]}], "reads": {"name": {"colour": "red"}}}}}
    with pytest.raises(BindingError, match="t: reads: name: 'selector' key 'colour'"):
        Bindings.from_json(spec)


@pytest.mark.parametrize("goal, want", [
    ("set an alarm for 6:30 on weekdays", ("6", "30", "")), ("alarm 7pm mon and thu", ("7", "", "pm")),
    ("move my 6:45 alarm to 7:15", ("7", "15", "")),     # a change: the new time
    ("set an alarm for 10:30 tonight labeled bed", ("10", "30", "pm")),   # the part of the day says the half
    ("wake me at quarter to 8", ("7", "45", "")),        # in words: the date reader's clock
    ("Could you wake me up at half past seven tomorrow morning?", ("7", "30", "am")),
    ("set an alarm at 18:30", None),                     # a 12-hour picker takes 1-12
])
def test_a_time_picker_takes_the_time_the_goal_writes(goal, want):
    from mobile_actions.navigator.goals import SaidTime, said_time

    assert said_time(goal) == (SaidTime(*want) if want else None)


def test_the_half_of_the_day_follows_the_goals_time():
    guard = g.HalfDayToSet()
    form = lambda pm: screen(el("Save"), el("Hour", "field", text="10"), el("Minute", "field", text="30"),  # noqa: E731
                             el("AM", "switch", checkable=True, checked=not pm),
                             el("PM", "switch", checkable=True, checked=pm), package="com.google.android.deskclock")
    tonight = "set an alarm for 10:30 tonight"
    assert guard.narrow(view(tonight, form(False))) == Narrowing(blocked=but("tap"), tap_only=("PM", "Hour", "Minute"))
    assert guard.narrow(view(tonight, form(True))).tap_never == {"AM", "PM"}
    assert guard.narrow(view("set an alarm for 6:30", form(False))).tap_never == {"AM", "PM"}   # no half said
    assert guard.narrow(view("wake me at quarter to 8", form(False))).tap_never == {"AM", "PM"}
    assert guard.narrow(view("somewhere to be, alarm pls", form(False))) is None    # no time said


def test_a_goal_that_removes_nothing_taps_nothing_that_removes():
    guard = g.KeepItems()
    clock = screen(el("7:10 AM alarm", "switch", checkable=True, checked=True), el("Delete 7:10 AM alarm"),
                   el("Add alarm"), package="com.google.android.deskclock")
    assert guard.narrow(view("turn off my 7:10 alarm pls", clock)) == Narrowing(tap_never=frozenset({"Delete 7:10 AM alarm"}))
    assert guard.narrow(view("get rid of my 7:10 alarm", clock)) is None
    assert guard.narrow(view("delete the 7:10 alarm", clock)) is None


def test_a_rename_gives_its_value_to_the_title_not_to_the_field_named_in_passing():
    """"rename my groceries note to Party plan": the span after "to" is the title's ("rename … to"), though the
    note field's cue ("note") reaches it too; the cue said first claims a shared span."""
    from mobile_actions.navigator.goals import form_values

    note = screen(el("Title", "field", text="Groceries"), el("Note", "field", text="eggs"), el("Save"))
    assert form_values("rename my groceries note to Party plan", note) == {"Title": "Party plan"}
    assert form_values("change the title of the groceries note to Party plan pls", note) == {"Title": "Party plan"}
    assert form_values("write a note saying buy milk", note) == {"Note": "buy milk"}
    assert form_values("rename my note 'groceries' to Party plan", note) == {"Title": "Party plan"}   # its name
    contact = screen(el("Name", "field", text="Tom Baker"), el("Phone", "field"), el("Save"))
    assert form_values("rename tom baker to Tommy B", contact) == {"Name": "Tommy B"}


def test_a_time_written_in_capitals_keeps_its_half_of_the_day():
    from mobile_actions.navigator.goals import said_time

    assert said_time("Create an alarm for 6:05 PM").half == "pm" and said_time("alarm at 7 AM").half == "am"


def test_cancelling_an_event_may_tap_its_delete():
    delete = screen(el("Edit"), el("Delete"), package="com.android.calendar")
    assert g.KeepItems().narrow(view("could u cancel yoga on thursday, take it off the calendar", delete)) is None
    assert g.KeepItems().narrow(view("move yoga to thursday", delete)).tap_never == frozenset({"Delete"})


@pytest.mark.parametrize("goal, home", [
    ("go back to the home screen", True), ("close this and show home", True), ("discard it and go home", True),
    ("text mum did you get home ok?", False), ("msg dad im home", False), ("note: home insurance renewal", False),
])
def test_a_goal_ends_on_the_home_screen_only_when_it_says_so_not_when_a_message_says_home(goal, home):
    from mobile_actions.navigator import goals

    assert goals.says_home(goal) is home


# ============================================================================================ messages
def compose(to: str = "", text: str = "", focus: str | None = None, *offered: str,
            title: str = "New conversation") -> Screen:
    return screen(el(title, "text"), el("To", "field", text=to, focused=focus == "To"), *(el(o) for o in offered),
                  el("Text message", "field", text=text, focused=focus == "Text message"), el("Send"),
                  package="com.google.android.apps.messaging")


@pytest.mark.parametrize("goal,to,want", [
    ("tell Diego Ramírez the spare key is in the blue flowerpot", "Diego Ramírez",
     "the spare key is in the blue flowerpot"),
    ("pls send sms to 07912345678 : wait me at the gate, i come around 8", "07912345678",
     "wait me at the gate, i come around 8"),
    ("remind olusegun adeyemi to bring the extension cord tmrw", "Olusegun Adeyemi", "bring the extension cord tmrw"),
    ("could you let Katarzyna Nowak know that I landed safely?", "Katarzyna Nowak", "I landed safely"),
    ("text mum did you get home ok?", "Mum", "did you get home ok?"),
    ("text mum im running late pls", "Mum", "im running late"),
    ("Tell Chloe Wang happy birthday by text", "Chloe Wang", "happy birthday"),
    ("text him 'welcome to the team, see you monday'", "Kwame", "welcome to the team, see you monday"),
])
def test_a_message_field_takes_the_message_the_goal_passes_on_without_its_recipient(goal, to, want):
    assert goals.form_values(goal, compose(to, focus="Text message")) == {"Text message": want}
    assert goals.said_message("open Chrome", compose(to)) == ""


def test_a_conversations_title_names_the_recipient_whose_words_are_not_the_message():
    thread = screen(el("Diego Ramírez", "text"), el("are u home?", "text"), el("Text message", "field", focused=True),
                    package="com.google.android.apps.messaging")
    assert goals.said_message("tell diego ramírez the key is under the mat", thread) == "the key is under the mat"


def test_a_contact_offered_for_the_typed_recipient_may_be_picked_and_the_one_the_goal_names_first():
    guard = g.FormFieldOrder()
    offered = compose("Mei Lin", "", "To", "Mei Ling", "Mei Lin")
    assert guard.narrow(view("shoot Mei Lin a text saying happy birthday", offered)).tap_only == (
        "Text message", "Mei Lin")
    assert guard.narrow(view("text mei saying hi", compose("mei", "", "To", "Mei Ling", "Mei Lin"))).tap_only == (
        "Text message", "Mei Ling", "Mei Lin")
    assert view("alarm at 6", screen(el("Hour", "field", text="6", focused=True), el("6:00 AM"))).suggestions == ()


def test_nothing_more_is_typed_into_a_field_that_holds_its_value():
    label = screen(el("Label", "field", text="piano", focused=True), el("PM", "switch", checkable=True), el("Save"))
    assert "type_text" in g.FilledField().narrow(view("alarm at 8:10 pm with the label 'piano'", label)).blocked
    empty = screen(el("Label", "field", text="pia", focused=True), el("Save"))
    assert g.FilledField().narrow(view("alarm at 8:10 with the label 'piano'", empty)) is None


def test_a_goal_that_switches_nothing_taps_no_switch_but_a_forms_toggles():
    wifi = screen(el("Use Wi-Fi", "switch", checkable=True, checked=True), el("Home-5G"), package="com.android.settings")
    guard = g.SwitchUnasked()
    assert guard.narrow(view("Open my contacts", wifi)) == Narrowing(tap_never=frozenset({"Use Wi-Fi"}))
    assert guard.narrow(view("wifi off pls", wifi)) is None
    # a goal that switches something else taps no switch it does not name
    assert guard.narrow(view("silence notifications", wifi)) == Narrowing(tap_never=frozenset({"Use Wi-Fi"}))
    shade = screen(el("Bluetooth", "switch", checkable=True, checked=True), el("Internet", "switch", checkable=True),
                   el("Do Not Disturb", "switch", checkable=True))
    assert guard.narrow(view("could you please put the phone on do not disturb? thanks", shade)) == Narrowing(
        tap_never=frozenset({"Bluetooth", "Internet"}))
    clock = screen(el("6:00 AM alarm Work", "switch", checkable=True, checked=True),
                   el("6:15 AM alarm Gym", "switch", checkable=True, checked=True))
    assert guard.narrow(view("switch off my gym alarm, dont delete it", clock)) == Narrowing(
        tap_never=frozenset({"6:00 AM alarm Work"}))
    days = [el(d, "switch", checkable=True, description=n) for d, n in zip(("M", "T", "W", "T (2)", "F", "S", "S (2)"), (
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"))]
    form = screen(el("Hour", "field", text="7"), el("PM", "switch", checkable=True), *days,
                  el("7:10 AM alarm", "switch", checkable=True), el("Save"))
    assert guard.narrow(view("set an alarm for 7 every monday", form)) == Narrowing(tap_never=frozenset({"7:10 AM alarm"}))


def test_a_title_ends_at_a_dash_or_colon_and_what_follows_is_the_notes_text():
    editor = screen(el("Title", "field"), el("Note", "field", focused=True), el("Save"), package="com.mobileactions.notes")
    assert goals.form_values("note titled Packing list - passport, charger, adapter plug", editor) == {
        "Title": "Packing list", "Note": "passport, charger, adapter plug"}
    assert goals.form_values("new note called groceries: eggs, milk pls", editor) == {
        "Title": "groceries", "Note": "eggs, milk"}
    assert goals.form_values("note titled Packing list", editor) == {"Title": "Packing list"}


def test_of_several_delete_buttons_a_removal_taps_the_one_its_words_name():
    rows = screen(el("7:10 AM"), el("Delete", description="Delete 7:10 AM alarm school run"),
                  el("6:00 PM"), el("Delete (2)", description="Delete 6:00 PM alarm swim"),
                  el("6:30 AM"), el("Delete (3)", description="Delete 6:30 AM alarm"), package="com.google.android.deskclock")
    guard = g.RemoveNamed()
    assert guard.narrow(view("delete the swim alarm", rows)).tap_never == frozenset({"Delete", "Delete (3)"})
    assert guard.narrow(view("get rid of the 6:30 alarm pls", rows)).tap_never == frozenset({"Delete", "Delete (2)"})
    assert guard.narrow(view("delete my alarm", rows)) is None              # nothing tells them apart
    assert guard.narrow(view("turn off the swim alarm", rows)) is None      # no removal asked


def test_a_removal_the_goal_declines_is_no_removal():
    assert not goals.says_remove("switch off my gym alarm, dont delete it tho, need it again next month")
    assert goals.says_remove("hey delete the contact Omar Said") and goals.says_remove("cancel yoga on thursday")


def test_a_message_after_a_colon_runs_on_past_its_sentence():
    assert goals.said_message("msg Diego: landed!! see u at baggage claim", compose("Diego", focus="Text message")) \
        == "landed!! see u at baggage claim"
    assert goals.said_message("reply to amara: yes still on, 8pm", compose("Amara", focus="Text message")) \
        == "yes still on, 8pm"


def test_a_slider_the_goal_names_goes_to_the_level_it_says():
    def display(at: int) -> Screen:
        return screen(*(el(f"Brightness {p}%", "level", checkable=True, checked=p == at) for p in range(0, 101, 10)),
                      package="com.android.settings")
    guard = g.LevelToSet()
    up = "screen is sooo dim i cant see anything outside, brightness all the way up pls"
    assert guard.narrow(view(up, display(0))) == Narrowing(blocked=g._but("tap"), tap_only=("Brightness 100%",))
    assert guard.narrow(view(up, display(100))).tap_never == {f"Brightness {p}%" for p in range(0, 100, 10)}
    assert guard.narrow(view("put brightness at 30% pls", display(0))).tap_only == ("Brightness 30%",)
    assert guard.narrow(view("turn on bluetooth", display(0))) is None


def test_the_look_alikes_of_the_row_the_goal_names_best_are_not_tapped():
    guard = g.NamedRow()
    people = screen(el("Mikaela Ross"), el("Mike Ross"), el("Mike Rossi"), el("Create contact"))
    declined = "Please delete Mike Ross from my contacts, we don't work together anymore. Not Mike Rossi, he stays!"
    assert guard.narrow(view(declined, people)) == Narrowing(tap_never=frozenset({"Mikaela Ross", "Mike Rossi"}))
    dans = screen(el("Dan Whitfield"), el("Dana Whitfield"))
    assert guard.narrow(view("can u change dana whitfield's number to 555-0198", dans)) == Narrowing(
        tap_never=frozenset({"Dan Whitfield"}))
    home = screen(el("Maps"), el("Notes"), el("Chrome"))     # two apps the goal names are no look-alikes
    assert guard.narrow(view("copy Central Library's address from Maps into a new note", home)) is None
    notes = screen(el("Groceries"), el("Groceries 2"), el("New note"))      # the "2" is not said
    assert guard.narrow(view("add avocados to my groceries note", notes)) == Narrowing(
        tap_never=frozenset({"Groceries 2"}))
    assert guard.narrow(view("add avocados to my groceries 2 note", notes)) == Narrowing(
        tap_never=frozenset({"Groceries"}))
