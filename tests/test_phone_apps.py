"""The virtual phone's apps driven like a user would: taps found in the uiautomator XML, keys, swipes."""

import re
import xml.etree.ElementTree as ET

import pytest

from mobile_actions.android.phone import VirtualPhone
from mobile_actions.android.phone.render import ui_xml


@pytest.fixture
def phone():
    return VirtualPhone()


def tap(phone, **attrs):
    """Tap the centre of the first node whose attributes match (as a GUI agent would)."""
    for node in ET.fromstring(ui_xml(phone)).iter("node"):
        if all(node.get(k) == v for k, v in attrs.items()):
            x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.get("bounds")))
            assert phone.run(f"input tap {(x1 + x2) // 2} {(y1 + y2) // 2}").exit_code == 0
            return
    raise AssertionError(f"no node {attrs}")


def test_launcher_contact_form_by_gui(phone):
    tap(phone, text="Contacts")
    tap(phone, **{"content-desc": "Create contact"})
    phone.run("input text Grace%sHopper")
    phone.run("input keyevent TAB")
    phone.run("input text 555-0100")
    tap(phone, text="Save")
    assert phone.state.contacts == [{"name": "Grace Hopper", "phone": "555-0100", "email": ""}]
    assert phone.state.top.kind == "contacts" and phone.state.toast == "Contact saved"


def test_notes_copy_then_paste_into_mail(phone):
    phone.run("monkey -p com.mobileactions.notes -c android.intent.category.LAUNCHER 1")
    tap(phone, **{"content-desc": "New note"})
    phone.run("input text 'Call Ada'")
    tap(phone, text="Copy")
    tap(phone, text="Save")
    assert phone.state.notes == [{"title": "", "text": "Call Ada"}] and phone.state.clipboard == "Call Ada"
    phone.run("am start -a android.intent.action.SENDTO -d mailto:me@example.com")
    tap(phone, **{"resource-id": "com.google.android.gm:id/body"})
    phone.run("input keyevent PASTE")
    tap(phone, text="Send")
    assert phone.state.outbox[0]["body"] == "Call Ada"


def long_press(phone, **attrs):
    for node in ET.fromstring(ui_xml(phone)).iter("node"):
        if all(node.get(k) == v for k, v in attrs.items()):
            x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.get("bounds")))
            x, y = (x1 + x2) // 2, (y1 + y2) // 2
            assert phone.run(f"input swipe {x} {y} {x} {y} 800").exit_code == 0
            return
    raise AssertionError(f"no node {attrs}")


def test_a_fields_text_is_replaced_by_select_all_then_typing(phone):
    phone.state.contacts.append({"name": "Mike Torres", "phone": "415-555-0147", "email": ""})
    phone.open("contact_edit", index=0, name="Mike Torres", phone="415-555-0147", email="")
    long_press(phone, **{"resource-id": "com.android.contacts:id/phone"})
    popups = lambda: [n.get("text") for n in ET.fromstring(ui_xml(phone)).iter("node")  # noqa: E731
                      if n.get("resource-id", "").startswith("android:id/") and n.get("class") == "android.widget.Button"]
    assert popups() == ["Select all"]
    tap(phone, text="Select all")
    assert popups() == ["Cut", "Copy"]
    phone.run("input text '415 555 0199'")          # typed over the selection
    assert phone.state.top.fields["phone"] == "415 555 0199" and popups() == []
    phone.run("input text 0")                       # the selection is gone: typing adds again
    assert phone.state.top.fields["phone"] == "415 555 01990"
    long_press(phone, **{"resource-id": "com.android.contacts:id/phone"})
    tap(phone, text="Select all")
    tap(phone, text="Cut")
    assert phone.state.top.fields["phone"] == "" and phone.state.clipboard == "415 555 01990"
    long_press(phone, **{"resource-id": "com.android.contacts:id/name"})
    tap(phone, text="Select all")
    tap(phone, text="Save")                          # a tap elsewhere collapses the selection
    assert phone.state.contacts[0]["name"] == "Mike Torres"


def test_quick_settings_tiles_and_back_home_recents(phone):
    phone.run("input swipe 540 10 540 1200 200")
    tap(phone, **{"content-desc": "Internet"})
    assert phone.state.wifi is False
    phone.run("input keyevent BACK")
    assert phone.state.overlay is None
    phone.run("am start -a android.settings.WIFI_SETTINGS")
    tap(phone, text="Use Wi-Fi")
    assert phone.state.wifi is True
    phone.run("input keyevent HOME")
    assert phone.state.top.kind == "launcher"
    phone.run("input keyevent APP_SWITCH")
    tap(phone, **{"content-desc": "Settings"})
    assert phone.state.top.kind == "wifi"


def test_lists_scroll_and_offscreen_rows_leave_the_xml(phone):
    for i in range(30):
        phone.run(f"am start -a android.intent.action.INSERT -t vnd.android.cursor.dir/contact -e name 'P{i:02d}'")
        phone.save_contact()
    names = lambda: [n.get("text") for n in ET.fromstring(ui_xml(phone)).iter("node")  # noqa: E731
                     if n.get("resource-id") == "com.android.contacts:id/cliv_name_textview"]
    first = names()
    assert first[0] == "P00" and "P29" not in first
    phone.run("input swipe 540 2000 540 400 300")
    assert names()[0] != "P00"


def test_screen_off_ignores_taps_and_renders_black(phone):
    from mobile_actions.android.phone.render import image
    phone.run("input keyevent SLEEP")
    phone.run("input tap 400 800")
    assert phone.state.top.kind == "launcher"
    assert image(phone).getbbox() is None


# ------------------------------------------------------------------------------------------ the everyday apps
def nodes(phone, **attrs):
    return [n for n in ET.fromstring(ui_xml(phone)).iter("node") if all(n.get(k) == v for k, v in attrs.items())]


def track(node, fraction):
    """A point at a fraction of a SeekBar's track (which stops half the bar's height short of each end)."""
    x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.get("bounds")))
    pad = (y2 - y1) // 2
    return round(x1 + pad + fraction * (x2 - x1 - 2 * pad)), (y1 + y2) // 2


def tap_at(phone, fraction, **attrs):
    x, y = track(nodes(phone, **attrs)[0], fraction)
    phone.run(f"input tap {x} {y}")


def test_clock_alarm_editor_days_label_switch_and_delete(phone):
    tap(phone, text="Clock")
    assert nodes(phone, text="No alarms") and nodes(phone, text="Alarm", selected="true")
    tap(phone, **{"content-desc": "Add alarm"})
    phone.run("input text 7")                                  # the Hour field has the cursor
    tap(phone, **{"resource-id": "android:id/input_minute"})
    phone.run("input text 30")
    tap(phone, text="PM")
    tap(phone, **{"content-desc": "Monday"})
    tap(phone, **{"content-desc": "Wednesday"})
    tap(phone, **{"content-desc": "Monday"})                 # off again
    tap(phone, **{"content-desc": "Friday"})
    tap(phone, hint="Label")
    phone.run("input text Gym")
    tap(phone, text="Save")
    assert phone.state.alarms == [{"time": "19:30", "days": "Wed,Fri", "label": "Gym", "enabled": True}]
    assert phone.state.top.kind == "clock" and phone.state.toast == "Alarm set for 7:30 PM"
    (switch,) = nodes(phone, **{"content-desc": "7:30 PM alarm Gym"})     # as a screen reader says the row
    assert switch.get("checkable") == "true" and switch.get("checked") == "true"
    tap(phone, **{"content-desc": "7:30 PM alarm Gym"})
    assert phone.state.alarms[0]["enabled"] is False
    tap(phone, text="7:30 PM")                                 # the row opens the editor, filled in
    assert phone.state.top.fields["hour"] == "7" and phone.state.top.data["pm"] is True
    phone.run("input keyevent BACK")
    tap(phone, **{"content-desc": "Delete 7:30 PM alarm Gym"})
    assert phone.state.alarms == []


def test_clock_alarm_editor_rejects_a_bad_time(phone):
    phone.open("alarm_edit")
    phone.run("input text 13")
    tap(phone, text="Save")
    assert phone.state.alarms == [] and phone.state.toast == "Enter a valid time"


def test_clock_timer_and_stopwatch(phone):
    phone.launch("com.google.android.deskclock")
    tap(phone, text="Timer")
    tap(phone, hint="Minutes")
    phone.run("input text 5")
    tap(phone, hint="Seconds")
    phone.run("input text 30")
    tap(phone, hint="Label")
    phone.run("input text Tea")
    tap(phone, text="Start")
    assert phone.state.timers == [{"seconds": 330, "label": "Tea", "running": True}]
    assert nodes(phone, text="5:30")
    tap(phone, text="Pause")
    assert phone.state.timers[0]["running"] is False
    tap(phone, text="Delete")
    assert phone.state.timers == []
    tap(phone, text="Stopwatch")
    tap(phone, text="Start")
    assert phone.state.stopwatch_running is True
    tap(phone, text="Stop")
    tap(phone, text="Start")
    tap(phone, text="Reset")
    assert phone.state.stopwatch_running is False


def test_messages_start_chat_by_contact_name_and_reply_in_the_thread(phone):
    phone.state.contacts.append({"name": "Ana Lima", "phone": "555-0100", "email": ""})
    tap(phone, text="Messages")
    tap(phone, **{"content-desc": "Start chat"})
    assert not nodes(phone, text="Send")                      # no text yet: no Send button
    phone.run("input text ana")
    tap(phone, text="Ana Lima")                               # the suggestion fills To
    phone.run("input text 'Running late'")
    tap(phone, text="Send")
    assert phone.state.messages == [{"to": "Ana Lima", "number": "555-0100", "text": "Running late",
                                     "direction": "sent"}]
    assert phone.state.top.kind == "message_thread" and nodes(phone, text="Ana Lima")
    phone.run("input text 'See you at 8'")
    tap(phone, **{"content-desc": "Send SMS"})
    assert [m["text"] for m in phone.state.messages] == ["Running late", "See you at 8"]
    assert nodes(phone, text="See you at 8", **{"resource-id": "com.google.android.apps.messaging:id/message_text"})
    phone.run("input keyevent BACK")
    (row,) = nodes(phone, **{"resource-id": "com.google.android.apps.messaging:id/conversation_name"})
    assert row.get("text") == "Ana Lima"


def test_messages_offers_every_contact_that_holds_the_typed_name_until_one_is_picked(phone):
    """As Messages does: the contact named exactly is offered beside its look-alikes ("Mei Lin", "Mei Ling")."""
    phone.state.contacts.extend([{"name": "Mei Ling", "phone": "555-0917", "email": ""},
                                 {"name": "Mei Lin", "phone": "555-0182", "email": ""}])
    phone.open("message_new")
    phone.run("input text 'Mei Lin'")
    offered = [n.get("text") for n in nodes(phone, **{"resource-id": "com.google.android.apps.messaging:id/contact_name"})]
    assert offered == ["Mei Ling", "Mei Lin"]
    tap(phone, text="Mei Lin", **{"resource-id": "com.google.android.apps.messaging:id/contact_name"})
    assert not nodes(phone, **{"resource-id": "com.google.android.apps.messaging:id/contact_name"})
    phone.run("input text hi")
    tap(phone, text="Send")
    assert phone.state.messages[0]["number"] == "555-0182"


def test_messages_to_a_number_and_to_nobody(phone):
    phone.open("message_new")
    phone.run("input text 'Bob Nobody' && input keyevent TAB && input text hi")
    tap(phone, text="Send")
    assert phone.state.messages == [] and "phone number" in phone.state.toast
    phone.open("message_new")
    phone.run("input text +1%s555%s0199 && input keyevent TAB && input text hi")
    tap(phone, text="Send")
    assert phone.state.messages == [{"to": "+1 555 0199", "number": "+1 555 0199", "text": "hi", "direction": "sent"}]


def test_settings_sliders_and_do_not_disturb(phone):
    phone.launch("com.android.settings")
    tap(phone, text="Display")
    (bar,) = nodes(phone, **{"class": "android.widget.SeekBar"})
    assert bar.get("text") == "50" and bar.get("content-desc") == "Brightness 50%"
    tap_at(phone, 0.8, **{"class": "android.widget.SeekBar"})
    assert phone.state.brightness == 80 and phone.state.settings["system"]["screen_brightness"] == "204"
    assert nodes(phone, text="80%")
    phone.run("input keyevent BACK")
    tap(phone, text="Sound & vibration")
    tap_at(phone, 0.25, **{"content-desc": "Media volume 40%"})
    tap_at(phone, 1.0, **{"content-desc": "Ring volume 60%"})
    assert (phone.state.media_volume, phone.state.ring_volume) == (25, 100)
    (bar,) = nodes(phone, **{"content-desc": "Ring volume 100%"})
    (x1, y), (x2, _) = track(bar, 1.0), track(bar, 0.1)
    phone.run(f"input swipe {x1} {y} {x2} {y} 300")           # the thumb dragged
    assert phone.state.ring_volume == 10
    tap(phone, text="Do Not Disturb")
    assert phone.state.dnd is True and phone.state.settings["global"]["zen_mode"] == "1"
    phone.run("input keyevent VOLUME_UP")
    assert phone.state.media_volume == 33                     # one of 15 steps up from 25
    phone.run("settings put global zen_mode 0 && settings put system screen_brightness 255")
    assert phone.state.dnd is False and phone.state.brightness == 100


def test_quick_settings_do_not_disturb_tile_and_brightness_slider(phone):
    phone.run("cmd statusbar expand-settings")
    tap(phone, **{"content-desc": "Do Not Disturb"})
    assert phone.state.dnd is True
    tap_at(phone, 0.3, **{"resource-id": "com.android.systemui:id/brightness_slider"})
    assert phone.state.brightness == 30
    (bar,) = nodes(phone, **{"resource-id": "com.android.systemui:id/brightness_slider"})
    assert bar.get("text") == "30" and "30%" in bar.get("content-desc")


def test_notes_title_text_edit_and_delete_with_confirmation(phone):
    phone.launch("com.mobileactions.notes")
    tap(phone, **{"content-desc": "New note"})
    phone.run("input text 'milk, eggs'")                     # the cursor starts in the note's text
    tap(phone, hint="Title")
    phone.run("input text Shopping")
    tap(phone, text="Save")
    assert phone.state.notes == [{"title": "Shopping", "text": "milk, eggs"}]
    (row,) = nodes(phone, **{"resource-id": "com.mobileactions.notes:id/note"})
    assert row.get("text") == "Shopping"
    tap(phone, text="Shopping")
    phone.run("input text ', bread'")
    tap(phone, text="Save")
    assert phone.state.notes == [{"title": "Shopping", "text": "milk, eggs, bread"}]
    tap(phone, text="Shopping")
    tap(phone, text="Delete")
    assert nodes(phone, text="Delete this note?") and not nodes(phone, text="Save")   # the dialog is the top window
    tap(phone, text="Cancel")
    assert phone.state.notes and phone.state.top.kind == "note_edit"
    tap(phone, text="Delete")
    phone.run("input keyevent BACK")                          # back dismisses the dialog only
    assert phone.state.top.kind == "note_edit" and not nodes(phone, text="Delete this note?")
    tap(phone, text="Delete")
    tap(phone, **{"resource-id": "android:id/button1"})
    assert phone.state.notes == [] and phone.state.top.kind == "notes" and phone.state.toast == "Note deleted"


def test_contacts_view_edit_and_delete(phone):
    phone.state.contacts += [{"name": "Zed", "phone": "1", "email": ""}, {"name": "Ada", "phone": "555-0100",
                                                                          "email": "ada@example.com"}]
    phone.launch("com.android.contacts")
    tap(phone, text="Ada")
    assert nodes(phone, text="ada@example.com") and nodes(phone, text="555-0100")
    tap(phone, text="Edit")
    assert phone.state.top.fields["name"] == "Ada"
    tap(phone, hint="Phone")
    phone.run("input keyevent DEL DEL DEL DEL && input text 9999")
    tap(phone, text="Save")
    assert phone.state.contacts[1] == {"name": "Ada", "phone": "555-9999", "email": "ada@example.com"}
    assert phone.state.top.kind == "contacts"
    tap(phone, text="Zed")
    tap(phone, text="Delete")
    assert nodes(phone, text="Delete this contact?")
    tap(phone, text="Delete", **{"resource-id": "android:id/button1"})
    assert [c["name"] for c in phone.state.contacts] == ["Ada"]


def test_calendar_form_duration_location_then_view_and_delete(phone):
    phone.launch("com.android.calendar")
    tap(phone, **{"content-desc": "Create new event"})
    phone.run("input text Dentist")
    for field, value in (("Date (YYYY-MM-DD)", "2025-06-10"), ("Time", "9:30%sam"), ("Duration (minutes)", "45"),
                         ("Location", "Main%sSt"), ("Description", "checkup")):
        (node,) = nodes(phone, **{"resource-id": "com.android.calendar:id/" + {
            "Date (YYYY-MM-DD)": "date", "Time": "time", "Duration (minutes)": "duration"}.get(field, field.lower())})
        x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.get("bounds")))
        phone.run(f"input tap {(x1 + x2) // 2} {(y1 + y2) // 2}")
        phone.run("input keyevent " + " ".join(["DEL"] * 12))
        phone.run(f"input text {value}")
    tap(phone, text="Save")
    (event,) = phone.snapshot()["events"]
    assert (event["title"], event["begin"], event["duration_min"], event["location"], event["description"]) == (
        "Dentist", "2025-06-10T09:30", 45, "Main St", "checkup")
    tap(phone, text="Dentist")
    assert nodes(phone, text="Main St")
    tap(phone, text="Delete")
    tap(phone, **{"resource-id": "android:id/button1"})
    assert phone.state.events == [] and phone.state.top.kind == "calendar"


def test_calendar_form_rejects_a_bad_date(phone):
    phone.new_event()
    phone.state.top.fields["date"] = "next tuesday"
    tap(phone, text="Save")
    assert phone.state.events == [] and "YYYY-MM-DD" in phone.state.toast


def test_launcher_shows_the_new_apps_and_every_screen_renders(phone):
    from mobile_actions.android.phone.render import png

    assert nodes(phone, text="Clock") and nodes(phone, text="Messages")
    phone.state.alarms.append({"time": "06:00", "days": "Mon,Tue,Wed,Thu,Fri,Sat,Sun", "label": "", "enabled": True})
    phone.add_message("555-0100", "555-0100", "hello there", "received")
    for kind, extra in (("clock", {}), ("alarm_edit", {}), ("messages", {}), ("message_new", {}),
                        ("message_thread", {"number": "555-0100"}), ("display", {}), ("sound", {}),
                        ("contact_view", {"index": 0}), ("event_view", {"index": 0})):
        phone.open(kind, **extra)
        assert png(phone)[:4] == b"\x89PNG"
    phone.open("clock")
    assert nodes(phone, text="6:00 AM") and nodes(phone, text="Every day")


def test_gmail_refuses_a_recipient_that_is_not_an_address():
    """As Gmail does: "Ana" or a phrase in To is no address, and nothing is sent."""
    from mobile_actions.android.phone import VirtualPhone

    p = VirtualPhone()
    for to in ("Ana", "an uber to the airport", "ana@example.com, bob"):
        p.reset()
        p.launch("com.google.android.gm")
        with p.lock:
            p.open("compose")
            p.state.top.fields.update(to=to, subject="hi", body="")
        p.send_email()
        assert p.state.outbox == [] and "is invalid" in (p.state.toast or "")
    p.reset()
    p.launch("com.google.android.gm")
    with p.lock:
        p.open("compose")
        p.state.top.fields.update(to="ana@example.com, bob@example.org", subject="hi", body="")
    p.send_email()
    assert p.state.outbox[0]["to"] == "ana@example.com, bob@example.org"
