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
