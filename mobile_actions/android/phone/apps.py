"""The virtual phone's apps: which activities exist, and the widgets each screen shows.

Why widgets are rebuilt from state every time: the PNG, the uiautomator XML and hit-testing for
``input tap`` must agree exactly, so all three read the same list, and nothing can go stale.
Widget actions are small closures that call ``VirtualPhone`` methods (they never run shell text).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

from mobile_actions.android.phone.state import HEIGHT, WIDTH, Activity

if TYPE_CHECKING:  # pragma: no cover
    from mobile_actions.android.phone.core import VirtualPhone

STATUS_H = 84
APPBAR_H = 168
NAV_H = 126
CONTENT_TOP = STATUS_H + APPBAR_H
CONTENT_BOTTOM = HEIGHT - NAV_H
ROW_H = 168


@dataclass
class Widget:
    kind: str                       # text|button|input|switch|tile|item|icon|appbar|map|scrim|panel|card|fab|nav
    bounds: tuple[int, int, int, int]
    text: str = ""
    rid: str = ""                   # resource-id
    desc: str = ""                  # content-desc
    cls: str = "android.widget.TextView"
    package: str = ""
    clickable: bool = False
    focused: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    hint: str = ""
    subtitle: str = ""
    color: tuple[int, int, int] | None = None
    on_tap: Callable[[], None] | None = None
    on_long_press: Callable[[], None] | None = None
    field: str = ""                 # an input's form key (the floating Paste toolbar anchors to it)

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    def contains(self, x: float, y: float) -> bool:
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2


@dataclass(frozen=True)
class App:
    package: str
    label: str
    main: str
    kind: str
    color: tuple[int, int, int]


APPS: tuple[App, ...] = (
    App("com.android.contacts", "Contacts", "com.android.contacts.activities.PeopleActivity", "contacts", (25, 118, 210)),
    App("com.android.calendar", "Calendar", "com.android.calendar.AllInOneActivity", "calendar", (66, 133, 244)),
    App("com.google.android.apps.maps", "Maps", "com.google.android.maps.MapsActivity", "maps", (52, 168, 83)),
    App("com.google.android.gm", "Gmail", "com.google.android.gm.ConversationListActivityGmail", "mail", (234, 67, 53)),
    App("com.mobileactions.notes", "Notes", "com.mobileactions.notes.NotesActivity", "notes", (251, 188, 5)),
    App("com.android.settings", "Settings", "com.android.settings.Settings", "settings", (96, 125, 139)),
    App("com.android.chrome", "Chrome", "com.google.android.apps.chrome.Main", "browser", (0, 137, 123)),
)
LAUNCHER = App("com.android.launcher3", "Home", "com.android.launcher3.Launcher", "launcher", (30, 30, 30))
APP_BY_PACKAGE = {a.package: a for a in (*APPS, LAUNCHER)}

# kind -> (package, activity class) for screens that are not an app's main activity
SCREENS: dict[str, tuple[str, str]] = {a.kind: (a.package, a.main) for a in (*APPS, LAUNCHER)}
SCREENS.update({
    "wifi": ("com.android.settings", "com.android.settings.Settings$WifiSettingsActivity"),
    "contact_edit": ("com.android.contacts", "com.android.contacts.activities.ContactEditorActivity"),
    "event_edit": ("com.android.calendar", "com.android.calendar.event.EditEventActivity"),
    "compose": ("com.google.android.gm", "com.google.android.gm.ComposeActivityGmail"),
    "note_edit": ("com.mobileactions.notes", "com.mobileactions.notes.EditNoteActivity"),
})
KIND_BY_COMPONENT = {v: k for k, v in SCREENS.items()}

# form fields per screen: (key, label, multiline)
FORMS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "contact_edit": (("name", "Name", False), ("phone", "Phone", False), ("email", "Email", False)),
    "event_edit": (("title", "Title", False), ("location", "Location", False), ("description", "Description", True)),
    "compose": (("to", "To", False), ("subject", "Subject", False), ("body", "Compose email", True)),
    "note_edit": (("text", "Note", True),),
    "maps": (("query", "Search here", False),),
    "browser": (("url", "Search or type URL", False),),
}


# fields that submit (the IME action Android shows on the keyboard; here an on-screen button beside the
# field, also KEYCODE_ENTER): kind -> (field key, button label, resource-id)
SUBMIT: dict[str, tuple[str, str, str]] = {
    "maps": ("query", "Search", "com.google.android.apps.maps:id/search_button"),
    "browser": ("url", "Go", "com.android.chrome:id/go_button"),
}


def new_activity(kind: str, **fields: str) -> Activity:
    package, name = SCREENS[kind]
    form = {key: "" for key, _, _ in FORMS.get(kind, ())}
    form.update({k: v for k, v in fields.items() if k in form})
    act = Activity(package, name, kind, fields=form)
    if kind in ("contact_edit", "event_edit", "compose", "note_edit"):
        act.focus = next((k for k, _, _ in FORMS[kind] if not form[k]), FORMS[kind][0][0])
    return act


# ------------------------------------------------------------------------------- screen building
@dataclass
class Screen:
    base: list[Widget]
    overlay: list[Widget]

    @property
    def interactive(self) -> list[Widget]:
        """What a tap can reach and uiautomator sees: the top window only."""
        return self.overlay or self.base


def build(phone: "VirtualPhone") -> Screen:
    st = phone.state
    act = st.top
    views = VIEWS[act.kind](phone, act)
    base = status_bar(phone) + views + paste_toolbar(phone, act, views) + nav_bar(phone)
    overlay: list[Widget] = []
    if st.overlay in ("shade", "quick_settings"):
        overlay = quick_settings(phone, expanded=st.overlay == "quick_settings") + status_bar(phone)
    elif st.overlay == "recents":
        overlay = status_bar(phone) + recents(phone) + nav_bar(phone)
    return Screen(base, overlay)


def status_bar(phone: "VirtualPhone") -> list[Widget]:
    now = phone.now()
    icons = []
    if phone.state.wifi:
        icons.append("Wi-Fi")
    if phone.state.torch:
        icons.append("Flashlight on")
    return [Widget("statusbar", (0, 0, WIDTH, STATUS_H), text=now.strftime("%H:%M"), package="com.android.systemui",
                   rid="com.android.systemui:id/status_bar", desc=", ".join(icons + [f"Battery {phone.state.battery} percent"]))]


def nav_bar(phone: "VirtualPhone") -> list[Widget]:
    y1, w = CONTENT_BOTTOM, WIDTH // 3
    pkg = "com.android.systemui"
    return [
        Widget("nav", (0, y1, w, HEIGHT), desc="Back", rid=f"{pkg}:id/back", package=pkg, cls="android.widget.ImageView",
               clickable=True, on_tap=phone.back),
        Widget("nav", (w, y1, 2 * w, HEIGHT), desc="Home", rid=f"{pkg}:id/home", package=pkg, cls="android.widget.ImageView",
               clickable=True, on_tap=phone.home),
        Widget("nav", (2 * w, y1, WIDTH, HEIGHT), desc="Overview", rid=f"{pkg}:id/recent_apps", package=pkg,
               cls="android.widget.ImageView", clickable=True, on_tap=phone.show_recents),
    ]


def app_bar(act: Activity, title: str, back: bool = True) -> list[Widget]:
    app = APP_BY_PACKAGE[act.package]
    out = [Widget("appbar", (0, STATUS_H, WIDTH, CONTENT_TOP), text=title, package=act.package, color=app.color,
                  rid=f"{act.package}:id/toolbar_title")]
    return out


def _list(phone: "VirtualPhone", act: Activity, rows: list[Widget], empty: str) -> list[Widget]:
    """Place rows under the app bar, honouring the activity's scroll offset; off-screen rows vanish."""
    if not rows:
        return [Widget("text", (48, CONTENT_TOP + 48, WIDTH - 48, CONTENT_TOP + 160), text=empty, package=act.package,
                       rid=f"{act.package}:id/empty")]
    total = len(rows) * ROW_H
    view_h = CONTENT_BOTTOM - CONTENT_TOP
    act.scroll = max(0, min(act.scroll, max(0, total - view_h)))
    container = Widget("list", (0, CONTENT_TOP, WIDTH, CONTENT_BOTTOM), package=act.package,
                       rid=f"{act.package}:id/list", cls="androidx.recyclerview.widget.RecyclerView",
                       scrollable=total > view_h)
    out = [container]
    for i, row in enumerate(rows):
        y1 = CONTENT_TOP + i * ROW_H - act.scroll
        if y1 + ROW_H <= CONTENT_TOP or y1 >= CONTENT_BOTTOM:
            continue
        row.bounds = (0, max(y1, CONTENT_TOP), WIDTH, min(y1 + ROW_H, CONTENT_BOTTOM))
        out.append(row)
    return out


def _fab(act: Activity, desc: str, on_tap: Callable[[], None], rid: str) -> Widget:
    return Widget("fab", (WIDTH - 240, CONTENT_BOTTOM - 240, WIDTH - 48, CONTENT_BOTTOM - 48), text="+", desc=desc,
                  rid=f"{act.package}:id/{rid}", package=act.package, cls="android.widget.ImageButton", clickable=True,
                  color=APP_BY_PACKAGE[act.package].color, on_tap=on_tap)


def text_field(phone: "VirtualPhone", act: Activity, key: str, bounds: tuple[int, int, int, int], hint: str,
               rid: str) -> list[Widget]:
    """An EditText (tap: focus; long press: the floating Paste toolbar) and, for a submitting field that
    has focus, its action button (Go / Search) at its right end."""
    def menu(k: str = key) -> None:
        phone.focus(k)
        if phone.state.clipboard:
            act.data["paste_menu"] = k

    focused = act.focus == key
    spec = SUBMIT.get(act.kind)
    button = None
    x1, y1, x2, y2 = bounds
    if spec and spec[0] == key and focused:
        label, brid = spec[1], spec[2]
        bw = 220 if len(label) > 2 else 170
        button = Widget("button", (x2 - bw, y1 + 30, x2, y2 - 8), text=label, desc=label, rid=brid, package=act.package,
                        cls="android.widget.Button", clickable=True, color=(26, 115, 232), on_tap=phone.submit)
        bounds = (x1, y1, x2 - bw - 20, y2)
    field = Widget("input", bounds, text=act.fields.get(key, ""), hint=hint, rid=rid, package=act.package,
                   cls="android.widget.EditText", clickable=True, focused=focused, field=key,
                   on_tap=lambda: phone.focus(key), on_long_press=menu)
    return [field] + ([button] if button else [])


def paste_toolbar(phone: "VirtualPhone", act: Activity, views: list[Widget]) -> list[Widget]:
    """Android's floating text toolbar over the long-pressed field: one Paste item."""
    key = act.data.get("paste_menu")
    if not key or phone.state.overlay or key not in act.fields or not phone.state.clipboard:
        return []
    field = next((w for w in views if w.kind == "input" and w.field == key), None)
    if field is None:
        return []
    x1, y1, _, y2 = field.bounds
    top = y1 - 118 if y1 - 118 > STATUS_H else y2 + 12
    return [Widget("popup", (x1 + 24, top, x1 + 304, top + 112), text="Paste", desc="Paste", package=act.package,
                   rid="android:id/paste", cls="android.widget.Button", clickable=True,
                   on_tap=lambda: phone.paste_into(key))]


def _form(phone: "VirtualPhone", act: Activity, top: int, readonly: list[tuple[str, str]] = ()) -> list[Widget]:
    out, y = [], top
    for key, label, multiline in FORMS[act.kind]:
        h = 420 if multiline else 150
        out += text_field(phone, act, key, (48, y, WIDTH - 48, y + h), label, f"{act.package}:id/{key}")
        y += h + 36
    for label, value in readonly:
        out.append(Widget("text", (48, y, WIDTH - 48, y + 120), text=value, subtitle=label, package=act.package,
                          rid=f"{act.package}:id/{label.lower()}"))
        y += 140
    return out


def _save_bar(phone: "VirtualPhone", act: Activity, title: str, action: str, on_save: Callable[[], None],
              rid: str) -> list[Widget]:
    app = APP_BY_PACKAGE[act.package]
    return [
        Widget("appbar", (0, STATUS_H, WIDTH, CONTENT_TOP), text=title, package=act.package, color=app.color,
               rid=f"{act.package}:id/toolbar_title"),
        Widget("button", (24, STATUS_H + 24, 144, CONTENT_TOP - 24), desc="Cancel", package=act.package,
               rid=f"{act.package}:id/cancel", cls="android.widget.ImageButton", clickable=True, on_tap=phone.back),
        Widget("button", (WIDTH - 300, STATUS_H + 30, WIDTH - 36, CONTENT_TOP - 30), text=action, desc=action,
               package=act.package, rid=f"{act.package}:id/{rid}", cls="android.widget.Button", clickable=True,
               on_tap=on_save),
    ]


# ------------------------------------------------------------------------------- the screens
def launcher(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    now = phone.now()
    out = [Widget("clock", (0, 200, WIDTH, 420), text=now.strftime("%H:%M"), subtitle=now.strftime("%A, %d %B"),
                  package=act.package, rid="com.android.launcher3:id/clock")]
    cell_w, cell_h, top = WIDTH // 4, 330, 700
    for i, app in enumerate(APPS):
        col, row = i % 4, i // 4
        x1, y1 = col * cell_w, top + row * cell_h
        out.append(Widget("icon", (x1, y1, x1 + cell_w, y1 + cell_h), text=app.label, desc=app.label,
                          package=act.package, cls="android.widget.TextView", clickable=True, color=app.color,
                          on_tap=lambda p=app.package: phone.launch(p)))
    return out


def settings(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    rows = [
        Widget("item", (0, 0, 0, 0), text="Network & internet", subtitle="Wi-Fi, mobile data, hotspot", clickable=True,
               package=act.package, rid="android:id/title", on_tap=lambda: phone.open("wifi")),
        Widget("item", (0, 0, 0, 0), text="Connected devices", subtitle="Bluetooth, pairing", package=act.package,
               rid="android:id/title"),
        Widget("item", (0, 0, 0, 0), text="Apps", subtitle="Recent apps, default apps", package=act.package,
               rid="android:id/title"),
        Widget("item", (0, 0, 0, 0), text="Battery", subtitle=f"{phone.state.battery}%", package=act.package,
               rid="android:id/title"),
        Widget("item", (0, 0, 0, 0), text="Display", subtitle="Dark theme, font size, brightness", package=act.package,
               rid="android:id/title"),
    ]
    return app_bar(act, "Settings") + _list(phone, act, rows, "")


WIFI_NETWORKS = (("HomeNet", "Connected"), ("CafeGuest", "Saved"), ("Neighbour-5G", "Secured"), ("PrinterDirect", "Open"))


def wifi(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    on = phone.state.wifi
    out = app_bar(act, "Wi-Fi")
    out.append(Widget("switch", (0, CONTENT_TOP, WIDTH, CONTENT_TOP + 200), text="Use Wi-Fi", package=act.package,
                      rid="com.android.settings:id/switch_widget", cls="android.widget.Switch", clickable=True,
                      checkable=True, checked=on, on_tap=lambda: phone.set_wifi(not phone.state.wifi)))
    if not on:
        out.append(Widget("text", (48, CONTENT_TOP + 260, WIDTH - 48, CONTENT_TOP + 400),
                          text="To see available networks, turn Wi-Fi on.", package=act.package,
                          rid="android:id/empty"))
        return out
    for i, (ssid, status) in enumerate(WIFI_NETWORKS):
        y = CONTENT_TOP + 220 + i * ROW_H
        out.append(Widget("item", (0, y, WIDTH, y + ROW_H), text=ssid, subtitle=status, package=act.package,
                          rid="android:id/title", clickable=True))
    return out


def contacts(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    rows = [Widget("item", (0, 0, 0, 0), text=c.get("name", ""), subtitle=c.get("phone") or c.get("email", ""),
                   package=act.package, rid="com.android.contacts:id/cliv_name_textview", clickable=True)
            for c in sorted(phone.state.contacts, key=lambda c: c.get("name", "").lower())]
    return (app_bar(act, "Contacts") + _list(phone, act, rows, "No contacts yet")
            + [_fab(act, "Create contact", lambda: phone.open("contact_edit"), "floating_action_button")])


def contact_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    return (_save_bar(phone, act, "Create contact", "Save", phone.save_contact, "editor_menu_save_button")
            + _form(phone, act, CONTENT_TOP + 60))


def calendar(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    events = sorted(phone.state.events, key=lambda e: e.get("begin_ms", 0))
    rows = [Widget("item", (0, 0, 0, 0), text=e.get("title", ""), subtitle=phone.format_span(e), package=act.package,
                   rid="com.android.calendar:id/event_title", clickable=True) for e in events]
    return (app_bar(act, "Calendar") + _list(phone, act, rows, "No upcoming events")
            + [_fab(act, "Create new event", lambda: phone.open("event_edit"), "floating_action_button")])


def event_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    span = [("Starts", phone.format_ms(act.data.get("begin_ms"))), ("Ends", phone.format_ms(act.data.get("end_ms")))]
    return (_save_bar(phone, act, "New event", "Save", phone.save_event, "action_done")
            + _form(phone, act, CONTENT_TOP + 60, readonly=span))


def maps(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    query = act.data.get("result")
    place = act.data.get("place") or {}
    name = place.get("name") or query or ""
    pkg = "com.google.android.apps.maps"
    out = [Widget("map", (0, STATUS_H, WIDTH, CONTENT_BOTTOM), package=act.package,
                  rid=f"{pkg}:id/mainmap_container", desc="Google Map", cls="android.view.View", text=name)]
    out += text_field(phone, act, "query", (36, STATUS_H + 36, WIDTH - 36, STATUS_H + 186), "Search here",
                      f"{pkg}:id/search_omnibox_text_box")
    if query:
        top = CONTENT_BOTTOM - 600
        address = place.get("address", "")
        summary = place.get("category", "Search result") + (f" · {place['hours']}" if place.get("hours") else "")
        copy_address = lambda: phone.copy(address, "Address copied to clipboard")  # noqa: E731
        out.append(Widget("card", (0, top, WIDTH, CONTENT_BOTTOM), text=name, subtitle=summary,
                          package=act.package, rid=f"{pkg}:id/title"))
        out.append(Widget("address", (48, top + 215, WIDTH - 48, top + 335), text=address, desc=f"Address: {address}",
                          package=act.package, rid=f"{pkg}:id/address", clickable=True,
                          on_tap=copy_address, on_long_press=copy_address))
        y1, y2 = CONTENT_BOTTOM - 200, CONTENT_BOTTOM - 60
        out.append(Widget("button", (48, y1, 368, y2), text="Directions",
                          desc="Directions", package=act.package, cls="android.widget.Button", clickable=True,
                          rid=f"{pkg}:id/directions_button", color=(26, 115, 232),
                          on_tap=lambda: phone.toast_msg(f"Directions to {name}")))
        out.append(Widget("button", (392, y1, 612, y2), text="Copy", desc="Copy name", package=act.package,
                          cls="android.widget.Button", clickable=True, rid=f"{pkg}:id/copy_button",
                          color=(232, 240, 254), on_tap=lambda: phone.copy(name)))
        out.append(Widget("button", (636, y1, WIDTH - 48, y2), text="Copy address", desc="Copy address",
                          package=act.package, cls="android.widget.Button", clickable=True,
                          rid=f"{pkg}:id/copy_address_button", color=(232, 240, 254), on_tap=copy_address))
    return out


def mail(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    rows = [Widget("item", (0, 0, 0, 0), text=m.get("subject") or "(no subject)", subtitle="To: " + m.get("to", ""),
                   package=act.package, rid="com.google.android.gm:id/subject", clickable=True)
            for m in reversed(phone.state.outbox)]
    return (app_bar(act, "Sent") + _list(phone, act, rows, "Nothing in Sent")
            + [_fab(act, "Compose", lambda: phone.open("compose"), "compose_button")])


def compose(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    return (_save_bar(phone, act, "Compose", "Send", phone.send_email, "send")
            + [Widget("text", (48, CONTENT_TOP + 30, WIDTH - 48, CONTENT_TOP + 130), text="me@example.com",
                      subtitle="From", package=act.package, rid="com.google.android.gm:id/from_account_name")]
            + _form(phone, act, CONTENT_TOP + 160))


def notes(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    rows = [Widget("item", (0, 0, 0, 0), text=(n.splitlines() or [""])[0], subtitle=f"{len(n)} characters",
                   package=act.package, rid="com.mobileactions.notes:id/note", clickable=True,
                   on_tap=lambda i=i: phone.open("note_edit", text=phone.state.notes[i], index=i))
            for i, n in enumerate(phone.state.notes)]
    return (app_bar(act, "Notes") + _list(phone, act, rows, "No notes")
            + [_fab(act, "New note", lambda: phone.open("note_edit"), "new_note")])


def note_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    y = CONTENT_TOP + 60 + 420 + 60
    buttons = [
        Widget("button", (48, y, 348, y + 140), text="Copy", desc="Copy", package=act.package, clickable=True,
               cls="android.widget.Button", rid="com.mobileactions.notes:id/copy",
               on_tap=lambda: phone.copy(act.fields.get("text", ""))),
        Widget("button", (390, y, 690, y + 140), text="Paste", desc="Paste", package=act.package, clickable=True,
               cls="android.widget.Button", rid="com.mobileactions.notes:id/paste", on_tap=phone.paste),
    ]
    return _save_bar(phone, act, "Note", "Save", phone.save_note, "save") + _form(phone, act, CONTENT_TOP + 60) + buttons


def browser(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    url = act.data.get("url", "")
    out = text_field(phone, act, "url", (36, STATUS_H + 24, WIDTH - 36, CONTENT_TOP - 24), "Search or type URL",
                     "com.android.chrome:id/url_bar")
    out.append(Widget("text", (48, CONTENT_TOP + 60, WIDTH - 48, CONTENT_TOP + 400),
                      text=f"Page: {url}" if url else "New tab", package=act.package,
                      rid="com.android.chrome:id/page"))
    return out


VIEWS: dict[str, Callable[["VirtualPhone", Activity], list[Widget]]] = {
    "launcher": launcher, "settings": settings, "wifi": wifi, "contacts": contacts, "contact_edit": contact_edit,
    "calendar": calendar, "event_edit": event_edit, "maps": maps, "mail": mail, "compose": compose,
    "notes": notes, "note_edit": note_edit, "browser": browser,
}


# ------------------------------------------------------------------------------- system UI overlays
SHADE_BOTTOM = 1000
QS_BOTTOM = 1640
# the expanded panel's extra tiles: label -> (settings namespace, key, value when on)
SETTING_TILES = (("Do Not Disturb", "global", "zen_mode", "1"),
                 ("Auto-rotate", "system", "accelerometer_rotation", "1"),
                 ("Battery Saver", "global", "low_power", "1"), ("Location", "secure", "location_mode", "3"))
SETTING_DEFAULTS = {"location_mode": "3"}


def setting_on(phone: "VirtualPhone", namespace: str, key: str) -> bool:
    return phone.state.settings[namespace].get(key, SETTING_DEFAULTS.get(key, "0")) not in ("", "0")


def quick_settings(phone: "VirtualPhone", expanded: bool = True) -> list[Widget]:
    """The pulled-down system UI. ``expanded=False``: the notification shade (the first swipe) with the
    four main tiles and the notifications; ``True``: Quick Settings fully expanded (a second swipe down,
    or ``cmd statusbar expand-settings``) with brightness, eight tiles and Edit."""
    st, pkg = phone.state, "com.android.systemui"
    bottom = QS_BOTTOM if expanded else SHADE_BOTTOM
    out = [Widget("scrim", (0, 0, WIDTH, HEIGHT), package=pkg, rid=f"{pkg}:id/scrim", clickable=True,
                  cls="android.view.View", on_tap=phone.collapse),
           Widget("panel", (0, STATUS_H, WIDTH, bottom), package=pkg, text=phone.now().strftime("%a, %d %b"),
                  rid=f"{pkg}:id/quick_settings_panel" if expanded else f"{pkg}:id/notification_panel",
                  desc="Quick Settings" if expanded else "Notification shade",
                  cls="android.widget.FrameLayout", clickable=True, on_tap=lambda: None)]
    tiles = [("Internet", st.wifi, lambda: phone.set_wifi(not phone.state.wifi)),
             ("Bluetooth", st.bluetooth, lambda: phone.set_flag("bluetooth")),
             ("Flashlight", st.torch, lambda: phone.set_flag("torch")),
             ("Airplane mode", st.airplane, lambda: phone.set_flag("airplane"))]
    top = 220
    if expanded:
        out.append(Widget("slider", (48, 200, WIDTH - 48, 290), desc="Display brightness", package=pkg,
                          rid=f"{pkg}:id/brightness_slider", cls="android.widget.SeekBar"))
        top = 330
        tiles += [(label, setting_on(phone, ns, key), lambda ns=ns, key=key, v=v: phone.toggle_setting(ns, key, v))
                  for label, ns, key, v in SETTING_TILES]
    for i, (label, on, tap) in enumerate(tiles):
        col, row = i % 2, i // 2
        x1, y1 = 48 + col * 504, top + row * 250
        out.append(Widget("tile", (x1, y1, x1 + 480, y1 + 220), text=label, subtitle="On" if on else "Off", desc=label,
                          package=pkg, rid=f"{pkg}:id/tile", cls="android.widget.Switch", clickable=True,
                          checkable=True, checked=on, on_tap=tap))
    if expanded:
        out.append(Widget("button", (WIDTH // 2 - 200, bottom - 200, WIDTH // 2 + 200, bottom - 70),
                          text="Edit tiles", desc="Edit", package=pkg, rid=f"{pkg}:id/edit", clickable=True,
                          cls="android.widget.Button", on_tap=lambda: None))
    else:
        out.append(Widget("text", (48, top + 2 * 250 + 20, WIDTH - 48, bottom - 70), text="No notifications",
                          package=pkg, rid=f"{pkg}:id/no_notifications"))
    return out


def recents(phone: "VirtualPhone") -> list[Widget]:
    pkg = "com.android.systemui"
    out = [Widget("scrim", (0, STATUS_H, WIDTH, CONTENT_BOTTOM), package=pkg, rid=f"{pkg}:id/overview",
                  clickable=True, cls="android.view.View", on_tap=phone.home, color=(40, 40, 40))]
    for i, package in enumerate(phone.recent_packages()[:5]):
        app = APP_BY_PACKAGE[package]
        y1 = 200 + i * 360
        out.append(Widget("card", (120, y1, WIDTH - 120, y1 + 320), text=app.label, desc=app.label, package=pkg,
                          rid=f"{pkg}:id/snapshot", clickable=True, color=app.color,
                          on_tap=lambda p=package: phone.launch(p)))
    out.append(Widget("button", (WIDTH // 2 - 200, CONTENT_BOTTOM - 180, WIDTH // 2 + 200, CONTENT_BOTTOM - 40),
                      text="Clear all", desc="Clear all", package=pkg, rid=f"{pkg}:id/clear_all", clickable=True,
                      cls="android.widget.Button", on_tap=phone.clear_recents))
    return out


def epoch_ms_to_local(ms: int, tz) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone(tz)
