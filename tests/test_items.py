"""A delete-type tap acts only on the item the goal names (`mobile_actions.hybrid.items`), on the virtual phone."""
import pytest

from mobile_actions.android.phone import setup
from mobile_actions.hybrid.items import (Item, better_named, form_item, list_rows, loosely_named, recipient_item,
                                         switched_item, tapped_item, unnamed)
from tests.test_hybrid import runner
from tests.test_hybrid_fakes import ScriptedCaller, ScriptedNavigator, phone, session  # noqa: F401


@pytest.mark.parametrize("goal, item, missing", [
    ("delete the 6:30 alarm", "6:00 AM alarm", "6:00 AM"),
    ("delete the alarm", "6:00 AM alarm", "6:00 AM"),            # which one is not said: refused
    ("delete the 6 pm alarm", "6:00 AM alarm", "6:00 AM"),
    ("delete ana gomez", "Ana Lopez", "Lopez"),
    ("delete the groceries note", "Groceries 2", "2"),
    ("delete the yoga alarm", "8:00 AM alarm Medicine", "8:00 AM"),     # its name is not said
    ("delete the medicine alarm at 9", "8:00 AM alarm Medicine", "8:00 AM"),   # another time: another alarm
])
def test_an_item_the_goal_does_not_name_is_reported_with_the_word_missing(goal, item, missing):
    wrong = unnamed(goal, Item(item, "description"), "Delete")
    assert wrong is not None and wrong.missing == missing and repr(item) in wrong.why


@pytest.mark.parametrize("goal, item", [
    ("delete my 6am alarm", "6:00 AM alarm"), ("get rid of the 730 one", "7:30 AM alarm"),
    ("delete the 6 pm alarm", "6:00 PM alarm"), ("delete the 18:00 alarm", "6:00 PM alarm"),
    ("delete ana lopez from my contacts", "Ana Lopez"), ("remove ana's number", "Ana"),
    ("delete the dentist appointment", "Dentist"), ("delete the note", "note"),
    ("can you delete the alarm called Medicine?", "8:00 AM alarm Medicine"),   # named by its label, no time said
    ("delete my 8am alarm", "8:00 AM alarm Medicine"),                        # by its time: the label not needed
    ("open the event 'Team sync' and location Room 4B", "Team sync"),         # a name in quotes is said
])
def test_an_item_the_goal_names_passes(goal, item):
    assert unnamed(goal, Item(item, "description"), "Delete") is None


def test_a_label_people_wrote_in_lower_case_tells_a_row_from_its_siblings():
    """"delete the nap alarm" beside a "work" alarm and an unlabelled one: the word no other row has names it;
    an unlabelled row has none, so its time must be said."""
    others = ("6:00 AM alarm work", "7:30 AM alarm")
    assert unnamed("delete the nap alarm", Item("2:00 PM alarm nap", "description", "clock", others), "Delete") is None
    assert unnamed("delete the work alarm", Item("2:00 PM alarm nap", "description", "clock", others),
                   "Delete").missing == "2:00 PM"
    alone = Item("7:30 AM alarm", "description", "clock", ("6:00 AM alarm work", "2:00 PM alarm nap"))
    assert unnamed("delete the alarm", alone, "Delete").missing == "7:30 AM"
    rows = [{"text": "Delete", "content-desc": f"Delete {d}", "package": "clock"} for d in ("6:00 AM alarm work",
                                                                                          "2:00 PM alarm nap")]
    assert tapped_item(rows, rows[1]) == Item("2:00 PM alarm nap", "description", "clock", ("6:00 AM alarm work",))
    assert tapped_item(rows, dict(rows[1])).others == ("6:00 AM alarm work",)   # the node as read again


def test_the_item_is_the_buttons_own_description_else_the_screens_title():
    row = {"text": "Delete", "content-desc": "Delete 6:00 AM alarm", "package": "clock", "bounds": "[780,402][1032,492]"}
    assert tapped_item([], row) == Item("6:00 AM alarm", "description", "clock")
    title = {"text": "Ana Lopez", "package": "contacts", "resource-id": "contacts:id/toolbar_title", "bounds": "[0,84][1080,252]"}
    bar = {"text": "20:10", "package": "systemui", "clickable": "false", "bounds": "[0,0][1080,84]"}
    button = {"text": "Delete", "content-desc": "Delete", "package": "contacts", "clickable": "true",
              "bounds": "[390,502][690,642]"}
    assert tapped_item([bar, title, button], button) == Item("Ana Lopez", "title", "contacts")
    assert tapped_item([bar, button], button) is None   # no title: no item, no check ("Clear all" in recents)


def test_a_delete_tap_on_an_item_the_goal_does_not_name_is_refused_even_under_yes(session, phone, tmp_path):
    setup.apply_setup(phone, {"alarms": [{"time": "06:00"}, {"time": "07:30"}]})
    phone.open("clock")
    nav = ScriptedNavigator(phone, ("tap", "Delete 6:00 AM alarm"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("delete the 6:30 alarm")
    assert [a["time"] for a in phone.snapshot()["alarms"]] == ["06:00", "07:30"] and not rep.done
    assert rep.refused and "'6:00 AM'" in rep.refused[0].reason


def test_a_delete_tap_on_the_item_the_goal_names_goes_ahead(session, phone, tmp_path):
    setup.apply_setup(phone, {"alarms": [{"time": "06:00"}, {"time": "07:30"}]})
    phone.open("clock")
    nav = ScriptedNavigator(phone, ("tap", "Delete 7:30 AM alarm"), "COMPLETE")
    runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("delete my 730 alarm")
    assert [a["time"] for a in phone.snapshot()["alarms"]] == ["06:00"]


def test_a_delete_tap_on_the_row_its_lower_case_label_names_goes_ahead(session, phone, tmp_path):
    setup.apply_setup(phone, {"alarms": [{"time": "06:00"}, {"time": "06:30", "label": "gym"}, {"time": "07:00"}]})
    phone.open("clock")
    nav = ScriptedNavigator(phone, ("tap", "Delete 6:30 AM alarm gym"), "COMPLETE")
    runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("delete the gym alarm, not going this week")
    assert [a["time"] for a in phone.snapshot()["alarms"]] == ["06:00", "07:00"]


@pytest.mark.parametrize("opened, saved", [("Books", False), ("Groceries", True)])
def test_an_edit_saves_only_the_entry_the_goal_names_whatever_was_typed_over_its_name(session, phone, tmp_path,
                                                                                      opened, saved):
    """"rename my groceries note to Costco run": the navigator opened "Books" and typed the new title over it; the
    Save acts on "Books", which the goal does not name, so it is refused. Opening "Groceries" goes ahead."""
    from tests.test_hybrid import TreeReadingNavigator

    setup.apply_setup(phone, {"notes": [{"title": "Groceries", "text": "milk, eggs"},
                                        {"title": "Books", "text": "Piranesi"}]})
    phone.open("notes")
    nav = TreeReadingNavigator(phone, ("tap", opened), ("tap", "Title"), ("long", "Title"), ("tap", "Select all"),
                               "TYPE: Costco run", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("rename my groceries note to Costco run")
    titles = sorted(n["title"] for n in phone.snapshot()["notes"])
    assert titles == (["Books", "Costco run"] if saved else ["Books", "Groceries"])
    assert bool(rep.refused) is not saved


def test_a_contacts_delete_is_checked_against_the_name_on_its_card(session, phone, tmp_path):
    setup.apply_setup(phone, {"contacts": [{"name": "Ana Lopez", "phone": "5551112222"},
                                           {"name": "Ana Ruiz", "phone": "5553334444"}]})
    phone.open("contact_view", index=0)
    nav = ScriptedNavigator(phone, ("tap", "Delete"), ("tap", "Delete"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("delete ana gomez from my contacts")
    assert len(phone.snapshot()["contacts"]) == 2 and rep.refused and "'Lopez'" in rep.refused[0].reason


# ------------------------------------------------------------------------------------------ saves
def test_a_forms_item_is_its_first_filled_field_of_the_tapped_app():
    save = {"text": "Save", "package": "notes", "clickable": "true", "bounds": "[780,114][1044,222]"}
    hint_only = {"class": "android.widget.EditText", "text": "Title", "hint": "Title", "package": "notes"}
    body = {"class": "android.widget.EditText", "text": "milk, eggs", "hint": "Note", "package": "notes"}
    other_app = {"class": "android.widget.EditText", "text": "Groceries 2", "package": "launcher"}
    assert form_item([other_app, hint_only, body, save], save) == Item("milk, eggs", "field", "notes")
    title = {"class": "android.widget.EditText", "text": "Groceries 2", "hint": "Title", "package": "notes"}
    assert form_item([title, body, save], save) == Item("Groceries 2", "field", "notes")
    assert form_item([hint_only, save], save) is None


def _notes(phone):
    setup.apply_setup(phone, {"notes": [{"title": "Groceries", "text": "milk, eggs"},
                                        {"title": "Groceries 2", "text": "soap"}]})


def test_saving_a_look_alike_of_the_item_the_goal_names_is_refused_even_under_yes(session, phone, tmp_path):
    _notes(phone)
    phone.open("notes")
    nav = ScriptedNavigator(phone, ("tap", "Groceries 2"), "TYPE: bananas", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("add bananas to the groceries note")
    assert "bananas" not in str(phone.snapshot()["notes"]) and not rep.done
    assert rep.refused and "'Groceries 2'" in rep.refused[0].reason and "'2'" in rep.refused[0].reason


def test_saving_the_named_item_or_a_new_one_the_navigator_typed_goes_ahead(session, phone, tmp_path):
    _notes(phone)
    phone.open("notes")
    nav = ScriptedNavigator(phone, ("tap", "Groceries"), "TYPE: bananas", ("tap", "Save"), "COMPLETE")
    runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("add bananas to the groceries note")
    assert any(n["title"] == "Groceries" and "bananas" in n["text"] for n in phone.snapshot()["notes"])
    phone.open("note_edit")
    nav = ScriptedNavigator(phone, "TYPE: Trip 2", ("tap", "Save"), "COMPLETE")
    runner(session, tmp_path / "new", ScriptedCaller("no"), nav, yes=True).run("make a note for my trip")
    assert any("Trip 2" in n["text"] for n in phone.snapshot()["notes"])   # typed by the navigator: its own words


def test_a_save_tap_is_confirmed_and_refused_when_declined(session, phone, tmp_path):
    _notes(phone)
    phone.open("notes")
    nav = ScriptedNavigator(phone, ("tap", "Groceries"), "TYPE: bananas", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=False).run("add bananas to the groceries note")
    assert "bananas" not in str(phone.snapshot()["notes"]) and "not confirmed" in rep.refused[0].reason
    phone.open("notes")
    nav = ScriptedNavigator(phone, ("tap", "Groceries"), "TYPE: bananas", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path / "declined", ScriptedCaller("no"), nav, yes=True).run(
        "type bananas into the groceries note but dont save it yet")
    assert "bananas" not in str(phone.snapshot()["notes"]) and rep.refused and not rep.done


def test_a_bindings_save_the_request_declines_leaves_the_form_filled_and_unsaved(session, phone, tmp_path):
    caller = ScriptedCaller('<start_function_call>call:create_contact{first_name:<escape>derek<escape>,'
                            'last_name:<escape>nguyen<escape>,phone_number:<escape>555 310 8821<escape>}'
                            '<end_function_call>')
    rep = runner(session, tmp_path, caller, None, yes=True).run(
        "fill in a new contact for derek nguyen 555 310 8821 but dont hit save, want to double check the number")
    assert phone.snapshot()["contacts"] == [] and phone.state.top.fields["name"] == "derek nguyen"
    assert rep.refused and "'Save' not made" in rep.refused[0].reason and "dont" in rep.refused[0].reason


def test_a_delete_in_a_form_is_checked_against_the_forms_item_not_its_bars_title(session, phone, tmp_path):
    _notes(phone)
    phone.open("notes")
    nav = ScriptedNavigator(phone, ("tap", "Groceries 2"), ("tap", "Delete"), ("tap", "Delete"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("delete my groceries note")
    assert len(phone.snapshot()["notes"]) == 2 and rep.refused and "'Groceries 2'" in rep.refused[0].reason


def test_a_goal_that_removes_every_item_names_each_one_and_each_delete_is_still_confirmed(session, phone, tmp_path):
    _notes(phone)
    phone.open("notes")
    steps = [step for title in ("Groceries", "Groceries 2") for step in
             (("tap", title), ("tap", "Delete"), ("tap", "Delete"))]
    rep = runner(session, tmp_path, ScriptedCaller("no"), ScriptedNavigator(phone, *steps, "COMPLETE"),
                 yes=False).run("delete every note")
    assert len(phone.snapshot()["notes"]) == 2 and rep.refused and "not confirmed" in rep.refused[0].reason
    runner(session, tmp_path / "yes", ScriptedCaller("no"), ScriptedNavigator(phone, *steps, "COMPLETE"),
           yes=True).run("delete every note")
    assert phone.snapshot()["notes"] == []
    # a number names its items: "all the 6:30 alarms" is not every alarm
    setup.apply_setup(phone, {"alarms": [{"time": "06:00"}, {"time": "07:30"}]})
    phone.open("clock")
    nav = ScriptedNavigator(phone, ("tap", "Delete 6:00 AM alarm"), "COMPLETE")
    rep = runner(session, tmp_path / "n", ScriptedCaller("no"), nav, yes=True).run("delete all the 6:30 alarms")
    assert len(phone.snapshot()["alarms"]) == 2 and "'6:00 AM'" in rep.refused[0].reason


def test_every_word_of_a_forms_item_is_one_the_goal_must_say():
    """A note titled "Recipe - lasagna" is not "the lemon cake recipe note": lower case words count in a title
    someone typed; on a screen's own labels only the capitalised ones do ("Delete 6:00 AM alarm")."""
    assert unnamed("delete the lemon cake recipe note", Item("Recipe - lasagna", "field")).missing == "lasagna"
    assert unnamed("delete the lasagna recipe", Item("Recipe - lasagna", "field")) is None
    assert unnamed("delete my 6 am one", Item("6:00 AM alarm", "description")) is None


def test_a_time_in_the_goal_names_an_alarms_hour_and_minute_fields():
    assert unnamed("move my 645 alarm to 7:15", Item("6", "field")) is None
    assert unnamed("move my 645 alarm to 7:15", Item("9", "field")).missing == "9"


def test_a_switch_named_by_a_time_switches_only_the_item_the_goal_names(session, phone, tmp_path):
    setup.apply_setup(phone, {"alarms": [{"time": "06:50", "days": "Sat"}, {"time": "07:30"}]})
    phone.open("clock")
    nav = ScriptedNavigator(phone, ("tap", "6:50 AM alarm"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("switch off my saturday alarm this week")
    assert all(a["enabled"] for a in phone.snapshot()["alarms"]) and "'6:50 AM'" in rep.refused[0].reason
    nav = ScriptedNavigator(phone, ("tap", "7:30 AM alarm"), "COMPLETE")
    runner(session, tmp_path / "named", ScriptedCaller("no"), nav, yes=True).run("turn off my 730 alarm")
    assert [a["enabled"] for a in phone.snapshot()["alarms"]] == [True, False]
    assert switched_item({"text": "Wi-Fi", "checkable": "true"}) is None   # no time or number: no item to check


@pytest.mark.parametrize("request_, label", [
    ("fill in an event for jake's bday sat 2pm but hold off saving until i confirm", "Save"),
    ("fill it in, not saved yet pls", "Save"),
    ("dont bother sending it", "Send"),
])
def test_a_declined_verb_is_read_in_any_of_its_forms(request_, label):
    from mobile_actions.hybrid.runner import declined_tap

    assert declined_tap(request_, label) is not None
    assert declined_tap("save the event for jake's bday sat 2pm", "Save") is None


def test_a_goal_naming_an_app_the_phone_lacks_is_not_navigated(session, phone, tmp_path):
    """"whatsapp jen ...": the phone has Messages but no WhatsApp; an SMS would be a substitute nobody asked for."""
    setup.apply_setup(phone, {"contacts": [{"name": "Jen Alvarez", "phone": "5551234567"}]})
    nav = ScriptedNavigator(phone, ("tap", "Messages"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("whatsapp jen the keys are under the mat")
    assert not rep.done and not phone.snapshot()["messages"] and nav.calls == []
    assert "whatsapp" in rep.not_done[0].reason and "does not have" in rep.not_done[0].reason


def test_a_call_for_a_part_naming_an_app_the_phone_lacks_is_refused(session, phone, tmp_path):
    """"telegram kai the address": a map search is no stand-in for Telegram; the flashlight part still runs."""
    from tests.test_hybrid import raw_calls

    caller = ScriptedCaller(raw_calls(("turn_on_flashlight", {}), ("show_map", {"query": "the address"})))
    rep = runner(session, tmp_path, caller, ScriptedNavigator(phone, "COMPLETE"), yes=True).run(
        "turn on the flashlight and telegram kai the address")
    assert phone.snapshot()["torch"] and not phone.snapshot()["map_searches"]
    assert any("telegram" in r.reason for r in rep.refused)


# ------------------------------------------------------------------------------ items named as people do
class ReadingNavigator(ScriptedNavigator):
    """A scripted navigator that, like the text navigator, is handed the screen's hierarchy at each step."""
    reads_hierarchy = True

    def next_action(self, instruction, screen, history, hierarchy=None):
        return super().next_action(instruction, screen, history)


def test_an_item_named_by_part_passes_when_it_is_the_one_row_seen_that_fits():
    rows = {"Priya Nair", "Tom Baker"}
    wrong = unnamed("priya changed her number, its 9845012345 now", Item("Priya Nair", "title"))
    assert wrong is not None and loosely_named("priya changed her number", wrong, rows)
    assert not loosely_named("priya changed her number", wrong, rows | {"Priya Shah"})   # two Priyas: which?
    assert loosely_named("priya changed her number", wrong, rows | {"Priyanka Shah"})    # a whole word fits better
    assert not loosely_named("priya changed her number", wrong, {"Tom Baker"})           # never passed on a list
    lars = unnamed("coffee w lars tmrw moved", Item("Coffee with Lars", "field"))
    assert lars is not None and loosely_named("coffee w lars tmrw moved", lars, {"Coffee with Lars", "Team sync"})
    six = unnamed("delete my alarm", Item("6:00 AM alarm", "description"))
    assert not loosely_named("delete my alarm", six, {"6:00 AM alarm"})                 # a time is never loose


def test_a_named_item_is_refused_when_a_look_alike_seen_fits_the_goal_better():
    rows = {"Wifi password old", "Wifi password", "Book recs"}
    goal = "delete the old wifi password note"
    assert unnamed(goal, Item("Wifi password", "title")) is None          # every word of it is said ...
    assert better_named(goal, Item("Wifi password", "title"), rows) == "Wifi password old"   # ... and more of this
    assert better_named(goal, Item("Wifi password old", "title"), rows) is None
    assert better_named("delete the wifi password note", Item("Wifi password", "title"), rows) is None
    assert better_named("delete ana ruiz", Item("Ana Ruiz", "title"), {"Ana Ruiz", "Ana Ruiz Lopez"}) is None   # a tie
    # an alarm's form names its item by the hour typed: the Clock's "Alarm" tab is no look-alike of it
    assert better_named("set an alarm for 6:30 on weekdays", Item("6", "field"), {"Alarm", "Timer"}) is None


def test_list_rows_are_the_clickable_texts_not_buttons_fields_or_switches():
    nodes = [{"text": "Priya Nair", "clickable": "true", "class": "android.widget.TextView", "package": "contacts"},
             {"text": "Delete", "clickable": "true", "class": "android.widget.Button", "package": "contacts"},
             {"text": "555", "clickable": "true", "class": "android.widget.EditText", "package": "contacts"},
             {"text": "Contacts", "clickable": "false", "class": "android.widget.TextView", "package": "contacts"}]
    assert list_rows(nodes) == [("contacts", "Priya Nair")]


def test_a_contact_named_by_first_name_is_edited_when_it_is_the_only_one_of_that_name(session, phone, tmp_path):
    setup.apply_setup(phone, {"contacts": [{"name": "Priya Nair", "phone": "+91 98200 11223"},
                                           {"name": "Tom Baker", "phone": "555 0101"}]})
    phone.open("contacts")
    steps = [("tap", "Priya Nair"), ("tap", "Edit"), ("tap", "Phone"), ("tap", "Phone"), "TYPE: 9845012345",
             ("tap", "Save"), "COMPLETE"]
    rep = runner(session, tmp_path, ScriptedCaller("no"), ReadingNavigator(phone, *steps), yes=True).run(
        "priya changed her numbr, its 9845012345 now. update it")
    assert any(c["name"] == "Priya Nair" and "9845012345" in c["phone"] for c in phone.snapshot()["contacts"])
    assert not rep.refused
    # two of that first name on the list: the same tap is refused, naming the item
    phone.reset()
    setup.apply_setup(phone, {"contacts": [{"name": "Priya Nair", "phone": "1"}, {"name": "Priya Shah", "phone": "2"}]})
    phone.open("contacts")
    rep = runner(session, tmp_path / "two", ScriptedCaller("no"), ReadingNavigator(phone, *steps), yes=True).run(
        "priya changed her numbr, its 9845012345 now. update it")
    assert rep.refused and "'Nair'" in rep.refused[0].reason
    assert not any("9845012345" in c["phone"] for c in phone.snapshot()["contacts"])


def test_a_send_goes_only_to_the_recipient_the_goal_names(session, phone, tmp_path):
    """"reply to dads text": a Send in Dana Cole's thread is refused, `--yes` or not; in Dad's it is sent. A form
    with an address field checks what the field holds."""
    people = {"contacts": [{"name": "Dad", "phone": "5554443333"}, {"name": "Dana Cole", "phone": "5554449999"}],
              "messages": [{"to": "Dad", "number": "5554443333", "text": "sunday?", "direction": "received"},
                           {"to": "Dana Cole", "number": "5554449999", "text": "gym?", "direction": "received"}]}
    goal = "reply to dads text and tell him yes ill bring dessert"
    for thread, sent in (("Dana Cole", False), ("Dad", True)):
        phone.reset()
        setup.apply_setup(phone, people)
        phone.open("messages")
        nav = ReadingNavigator(phone, ("tap", thread), "TYPE: yes ill bring dessert", ("tap", "Send"), "COMPLETE")
        rep = runner(session, tmp_path / thread, ScriptedCaller("no"), nav, yes=True).run(goal)
        out = [m for m in phone.snapshot()["messages"] if m["direction"] == "sent"]
        assert bool(out) is sent and (sent or "'Dana Cole'" in rep.refused[0].reason)
    to = {"class": "android.widget.EditText", "text": "bob@x.com", "hint": "To", "package": "gm"}
    send = {"text": "Send", "package": "gm", "clickable": "true", "bounds": "[780,114][1044,222]"}
    title = {"text": "Compose", "package": "gm", "resource-id": "gm:id/toolbar_title", "bounds": "[0,84][1080,252]"}
    assert recipient_item([title, to, send], send, ("to",)) == Item("bob@x.com", "field", "gm")
    assert recipient_item([title, send], send, ("to",)) == Item("Compose", "title", "gm")


def test_a_recipient_picked_from_suggestions_must_be_the_one_the_goal_names(session, phone, tmp_path):
    """"text sofia ...": typing "sofia" offers Sofia Lindqvist and Sofiane Haddad; sending to Sofiane is refused,
    to Sofia sent (a whole word fits better than the start of one)."""
    two = {"contacts": [{"name": "Sofia Lindqvist", "phone": "+1 415-555-0175"},
                        {"name": "Sofiane Haddad", "phone": "+1 415-555-0188"}]}
    for picked, sent in (("Sofiane Haddad", False), ("Sofia Lindqvist", True)):
        phone.reset()
        setup.apply_setup(phone, two)
        phone.open("messages")
        nav = ReadingNavigator(phone, ("tap", "Start chat"), "TYPE: sofia", ("tap", picked), ("tap", "Text message"),
                               "TYPE: meet me there at 11", ("tap", "Send"), "COMPLETE")
        rep = runner(session, tmp_path / picked, ScriptedCaller("no"), nav, yes=True).run(
            "text sofia meet me there at 11")
        out = [m["to"] for m in phone.snapshot()["messages"] if m["direction"] == "sent"]
        assert out == ([picked] if sent else []) and (sent or "'Haddad'" in rep.refused[0].reason)


def test_a_look_alike_picked_beside_the_contact_the_goal_names_whole_is_refused(session, phone, tmp_path):
    """"text Mei Lin ...": typing "Mei Lin" offers Mei Ling and Mei Lin; a Send to Mei Ling is refused."""
    setup.apply_setup(phone, {"contacts": [{"name": "Mei Ling", "phone": "4155550917"},
                                           {"name": "Mei Lin", "phone": "4155550182"}]})
    phone.open("messages")
    nav = ReadingNavigator(phone, ("tap", "Start chat"), "TYPE: Mei Lin", ("tap", "Mei Ling"), "TYPE: happy birthday",
                           ("tap", "Send"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("text Mei Lin happy birthday")
    assert not [m for m in phone.snapshot()["messages"] if m["direction"] == "sent"]
    assert "'Ling'" in rep.refused[0].reason


def test_a_number_written_in_groups_is_named_by_its_groups_not_read_as_times():
    """"7911" of "+44 7911 123456" is no 79:11: the goal that writes the number names the recipient."""
    to = Item("+44 7911 123456", "field")
    assert unnamed("can u text +44 7911 123456 and say hi", to) is None
    assert unnamed("can u text +44 7911 123457 and say hi", to).missing == "123456"


def test_a_switch_that_is_its_item_is_named_by_its_name_besides_its_time():
    gym = Item("6:15 AM alarm Gym", "switch")
    assert unnamed("switch off my gym alarm, dont delete it", gym, gym.text) is None
    assert unnamed("switch off my swim alarm", gym, gym.text).missing == "6:15 AM"


def test_four_digits_in_a_title_are_a_number_the_goal_must_write():
    item = Item("Gift ideas 2024", "field")
    assert unnamed("new note called Gift ideas - mom: silk scarf", item).missing == "2024"
    assert unnamed("add a scarf to my gift ideas 2024 note", item) is None
