"""The virtual phone's realism for GUI navigators: the shade by swipe, on-screen submit buttons, Maps
addresses, copy/paste across apps. State-based; one chain also runs through the real adb server."""

import re
import xml.etree.ElementTree as ET

import pytest

from mobile_actions.android.phone import VirtualPhone
from mobile_actions.android.phone.places import _TABLE, lookup
from mobile_actions.android.phone.render import image, ui_xml
from tests.adb_fixtures import fresh, rig  # noqa: F401

PRIMARY = (26, 115, 232)


@pytest.fixture
def phone():
    return VirtualPhone()


def nodes(phone, **attrs):
    return [n for n in ET.fromstring(ui_xml(phone)).iter("node") if all(n.get(k) == v for k, v in attrs.items())]


def node(phone, **attrs):
    found = nodes(phone, **attrs)
    assert found, f"no node {attrs}"
    return found[0]


def centre(n):
    x1, y1, x2, y2 = map(int, re.findall(r"\d+", n.get("bounds")))
    return (x1 + x2) // 2, (y1 + y2) // 2


def tap(phone, **attrs):
    x, y = centre(node(phone, **attrs))
    assert phone.run(f"input tap {x} {y}").exit_code == 0


def long_press(phone, **attrs):
    x, y = centre(node(phone, **attrs))
    assert phone.run(f"input swipe {x} {y} {x} {y} 800").exit_code == 0


# ------------------------------------------------------------------------------------------ 1. the shade
def test_scroll_down_on_home_opens_the_shade_then_quick_settings(phone):
    from mobile_actions.hybrid.device import action_argv
    from mobile_actions.navigator.actions import parse_command

    down = " ".join(action_argv(parse_command("SCROLL: DOWN"), 1080, 2400))
    up = " ".join(action_argv(parse_command("SCROLL: UP"), 1080, 2400))
    phone.run(down)                                   # the navigator's path: from the status bar, as demonstrated
    assert phone.snapshot()["screen"] == "shade"
    assert {n.get("text") for n in nodes(phone, **{"resource-id": "com.android.systemui:id/tile"})} == {
        "Internet", "Bluetooth", "Flashlight", "Airplane mode"}
    tap(phone, **{"content-desc": "Flashlight"})
    assert phone.state.torch is True and phone.state.overlay == "shade"
    assert node(phone, **{"content-desc": "Flashlight"}).get("checked") == "true"
    phone.run(down)                                   # a second swipe expands Quick Settings
    assert phone.state.overlay == "quick_settings"
    assert len(nodes(phone, **{"resource-id": "com.android.systemui:id/tile"})) == 8
    tap(phone, **{"content-desc": "Do Not Disturb"})
    assert phone.run("settings get global zen_mode").stdout.strip() == b"1"
    phone.run(up)
    assert phone.state.overlay is None and phone.state.top.kind == "launcher"


def test_in_an_app_only_the_status_bar_pulls_the_shade(phone):
    for i in range(12):
        phone.state.contacts.append({"name": f"P{i:02d}", "phone": "", "email": ""})
    phone.run("monkey -p com.android.contacts 1")
    phone.run("input swipe 540 1500 540 900 300")     # scroll the list a little
    phone.run("input swipe 540 720 540 1680 300")     # a swipe down in the content scrolls back, no shade
    assert phone.state.overlay is None and phone.state.top.scroll == 0
    phone.run("input swipe 540 20 540 900 300")       # from the status bar: the shade
    assert phone.state.overlay == "shade"
    tap(phone, **{"resource-id": "com.android.systemui:id/scrim"})  # outside the panel closes it
    assert phone.state.overlay is None and phone.state.top.kind == "contacts"
    from mobile_actions.hybrid.device import action_argv
    from mobile_actions.navigator.actions import parse_command

    phone.run(" ".join(action_argv(parse_command("SCROLL: DOWN"), 1080, 2400)))   # a navigator's "swipe down"
    assert phone.state.overlay == "shade" and phone.state.top.kind == "contacts"


def test_shade_by_key_and_cmd(phone):
    phone.run("input keyevent KEYCODE_NOTIFICATION")
    assert phone.state.overlay == "shade"
    phone.run("input keyevent BACK")
    assert phone.state.overlay is None
    phone.run("cmd statusbar expand-notifications")
    assert phone.state.overlay == "shade"
    phone.run("cmd statusbar expand-settings")
    assert phone.state.overlay == "quick_settings"
    phone.run("cmd statusbar collapse")
    assert phone.state.overlay is None


# ------------------------------------------------------------------------------------------ 2. submitting text
def test_chrome_go_button_is_a_real_widget_and_submits(phone):
    phone.run("monkey -p com.android.chrome 1")
    assert not nodes(phone, text="Go")                 # only while the address bar has focus
    tap(phone, **{"resource-id": "com.android.chrome:id/url_bar"})
    go = node(phone, text="Go")
    assert go.get("resource-id") == "com.android.chrome:id/go_button" and go.get("clickable") == "true"
    bar = node(phone, **{"resource-id": "com.android.chrome:id/url_bar"})
    bx1 = int(re.findall(r"\d+", go.get("bounds"))[0])
    assert int(re.findall(r"\d+", bar.get("bounds"))[2]) < bx1  # side by side, no overlap
    gx, gy = centre(go)
    assert image(phone).getpixel((gx - 60, gy)) == PRIMARY        # drawn: a blue pill
    tap(phone, text="Go")                              # empty: nothing to open
    assert phone.state.visited_urls == []
    phone.run("input text example.com")
    tap(phone, text="Go")
    assert phone.state.visited_urls == ["https://example.com"]
    assert not nodes(phone, text="Go")
    assert "example.com" in node(phone, **{"resource-id": "com.android.chrome:id/page"}).get("text")


def test_enter_submits_chrome_search_and_maps(phone):
    phone.run("monkey -p com.android.chrome 1")
    tap(phone, **{"resource-id": "com.android.chrome:id/url_bar"})
    phone.run("input text pizza%snear%sme && input keyevent 66")
    assert phone.state.visited_urls == ["https://www.google.com/search?q=pizza+near+me"]
    phone.run("monkey -p com.google.android.apps.maps 1")
    tap(phone, **{"resource-id": "com.google.android.apps.maps:id/search_omnibox_text_box"})
    phone.run("input text Big%sBen")
    tap(phone, text="Search")
    assert phone.state.map_searches == ["Big Ben"]
    tap(phone, **{"resource-id": "com.google.android.apps.maps:id/search_omnibox_text_box"})
    phone.run("input keyevent KEYCODE_DEL KEYCODE_DEL KEYCODE_DEL && input text Colosseum")
    phone.run("input keyevent KEYCODE_ENTER")
    assert phone.state.map_searches == ["Big Ben", "Big Colosseum"]


# ------------------------------------------------------------------------------------------ 3. addresses
def test_place_table_and_fallback():
    assert len(_TABLE) >= 30
    assert lookup("Louvre").address == "Rue de Rivoli, 75001 Paris, France"
    assert lookup("the Louvre in Paris").name == lookup("Musée du Louvre").name == "Louvre Museum"
    assert lookup("Sagrada Familia").address.endswith("Barcelona, Spain")
    for q in ("Eiffel Tower", "Big Ben", "Brandenburg Gate", "Colosseum", "Central Park", "Sydney Opera House"):
        assert lookup(q).known and lookup(q).address
    a, b = lookup("Harbour Cafe"), lookup("harbour  cafe")
    assert a.address == b.address and not a.known and re.match(r"^\d+ \w", a.address) and a.category == "Café"
    assert lookup("City Museum").address != a.address and lookup("City Museum").name == "City Museum"


def test_maps_card_shows_the_address_in_xml_state_and_png(phone):
    phone.run("am start -a android.intent.action.VIEW -d 'geo:0,0?q=Louvre'")
    assert node(phone, **{"resource-id": "com.google.android.apps.maps:id/title"}).get("text") == "Louvre Museum"
    addr = node(phone, **{"resource-id": "com.google.android.apps.maps:id/address"})
    assert addr.get("text") == "Rue de Rivoli, 75001 Paris, France" and addr.get("long-clickable") == "true"
    st = phone.snapshot()
    assert st["map_results"] == [{"query": "Louvre", "name": "Louvre Museum", "category": "Art museum",
                                  "address": "Rue de Rivoli, 75001 Paris, France"}]
    assert st["stack"][-1]["data"]["place"]["address"] == "Rue de Rivoli, 75001 Paris, France"
    x1, y1, x2, y2 = map(int, re.findall(r"\d+", addr.get("bounds")))
    crop = image(phone).crop((x1, y1, x2, y2))
    assert PRIMARY in {c for _, c in crop.getcolors(100000)}           # the pin
    assert sum(1 for _, c in crop.getcolors(100000) if sum(c) < 200) > 0  # and dark text


def test_copy_address_then_paste_into_mail_and_notes(phone):
    phone.run("am start -a android.intent.action.VIEW -d 'geo:0,0?q=Eiffel%20Tower'")
    tap(phone, text="Copy address")
    eiffel = "Champ de Mars, 5 Av. Anatole France, 75007 Paris, France"
    assert phone.state.clipboard == eiffel
    phone.state.clipboard = ""
    long_press(phone, **{"resource-id": "com.google.android.apps.maps:id/address"})
    assert phone.state.clipboard == eiffel and "copied" in phone.state.toast
    # Gmail: long press the body -> the floating toolbar's Paste
    phone.run("am start -a android.intent.action.SENDTO -d mailto:ana@example.com")
    long_press(phone, **{"resource-id": "com.google.android.gm:id/body"})
    paste = node(phone, text="Paste")
    assert paste.get("resource-id") == "android:id/paste" and paste.get("clickable") == "true"
    tap(phone, text="Paste")
    assert phone.state.top.fields["body"] == eiffel and not nodes(phone, text="Paste")
    tap(phone, text="Send")
    assert phone.state.outbox[0]["body"] == eiffel
    # Notes: KEYCODE_PASTE (279)
    phone.run("am start -n com.mobileactions.notes/.EditNoteActivity && input keyevent 279")
    assert phone.state.top.fields["text"] == eiffel


def test_long_press_elsewhere_is_a_tap_and_no_paste_menu_without_a_clip(phone):
    phone.run("am start -a android.intent.action.SENDTO -d mailto:")
    long_press(phone, **{"resource-id": "com.google.android.gm:id/subject"})
    assert phone.state.top.focus == "subject" and not nodes(phone, text="Paste")
    long_press(phone, text="Send")                      # not long-clickable: Android performs the click
    assert phone.state.toast == "Add at least one recipient."


def test_address_through_adb_and_the_hybrid_reader(fresh):
    from mobile_actions.android.bindings import load_bindings
    from mobile_actions.android.dispatch import dump_ui, find_node

    d = fresh.adbutils_device()
    d.shell(["am", "start", "-a", "android.intent.action.VIEW", "-d", "geo:0,0?q=Brandenburg Gate"])
    xml_text = dump_ui(fresh.device)
    read = {r.field: (find_node(xml_text, r.selector) or {}).get("text") for r in load_bindings()["show_map"].reads}
    assert read["place"] == "Brandenburg Gate" and read["address"] == "Pariser Platz, 10117 Berlin, Germany"
    x, y = centre(node(fresh.phone, **{"resource-id": "com.google.android.apps.maps:id/address"}))
    d.shell(["input", "swipe", str(x), str(y), str(x), str(y), "800"])
    assert d.shell(["cmd", "clipboard", "get"]) == "Pariser Platz, 10117 Berlin, Germany"
