"""A delete-type tap acts only on the item the goal names (`mobile_actions.hybrid.items`), on the virtual phone."""
import pytest

from mobile_actions.android.phone import setup
from mobile_actions.hybrid.items import Item, tapped_item, unnamed
from tests.test_hybrid import runner
from tests.test_hybrid_fakes import ScriptedCaller, ScriptedNavigator, phone, session  # noqa: F401


@pytest.mark.parametrize("goal, item, missing", [
    ("delete the 6:30 alarm", "6:00 AM alarm", "6:00 AM"),
    ("delete the alarm", "6:00 AM alarm", "6:00 AM"),            # which one is not said: refused
    ("delete the 6 pm alarm", "6:00 AM alarm", "6:00 AM"),
    ("delete ana gomez", "Ana Lopez", "Lopez"),
    ("delete the groceries note", "Groceries 2", "2"),
])
def test_an_item_the_goal_does_not_name_is_reported_with_the_word_missing(goal, item, missing):
    wrong = unnamed(goal, Item(item, "description"), "Delete")
    assert wrong is not None and wrong.missing == missing and repr(item) in wrong.why


@pytest.mark.parametrize("goal, item", [
    ("delete my 6am alarm", "6:00 AM alarm"), ("get rid of the 730 one", "7:30 AM alarm"),
    ("delete the 6 pm alarm", "6:00 PM alarm"), ("delete the 18:00 alarm", "6:00 PM alarm"),
    ("delete ana lopez from my contacts", "Ana Lopez"), ("remove ana's number", "Ana"),
    ("delete the dentist appointment", "Dentist"), ("delete the note", "note"),
])
def test_an_item_the_goal_names_passes(goal, item):
    assert unnamed(goal, Item(item, "description"), "Delete") is None


def test_the_item_is_the_buttons_own_description_else_the_screens_title():
    row = {"text": "Delete", "content-desc": "Delete 6:00 AM alarm", "package": "clock", "bounds": "[780,402][1032,492]"}
    assert tapped_item([], row) == Item("6:00 AM alarm", "description")
    title = {"text": "Ana Lopez", "package": "contacts", "resource-id": "contacts:id/toolbar_title", "bounds": "[0,84][1080,252]"}
    bar = {"text": "20:10", "package": "systemui", "clickable": "false", "bounds": "[0,0][1080,84]"}
    button = {"text": "Delete", "content-desc": "Delete", "package": "contacts", "clickable": "true",
              "bounds": "[390,502][690,642]"}
    assert tapped_item([bar, title, button], button) == Item("Ana Lopez", "title")
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


def test_a_contacts_delete_is_checked_against_the_name_on_its_card(session, phone, tmp_path):
    setup.apply_setup(phone, {"contacts": [{"name": "Ana Lopez", "phone": "5551112222"},
                                           {"name": "Ana Ruiz", "phone": "5553334444"}]})
    phone.open("contact_view", index=0)
    nav = ScriptedNavigator(phone, ("tap", "Delete"), ("tap", "Delete"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run("delete ana gomez from my contacts")
    assert len(phone.snapshot()["contacts"]) == 2 and rep.refused and "'Lopez'" in rep.refused[0].reason
