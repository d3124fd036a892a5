"""The virtual phone's apps: which activities exist, and the widgets each screen shows.

Why widgets are rebuilt from state every time: the PNG, the uiautomator XML and hit-testing for
``input tap`` must agree exactly, so all three read the same list, and nothing can go stale.
Widget actions are small closures that call ``VirtualPhone`` methods (they never run shell text).
A slider (``on_slide``) gets where along its track it was touched, 0..1, as a SeekBar does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

from mobile_actions.android.phone.state import HEIGHT, WEEKDAYS, WIDTH, Activity

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
    selected: bool = False
    scrollable: bool = False
    hint: str = ""
    subtitle: str = ""
    color: tuple[int, int, int] | None = None
    on_tap: Callable[[], None] | None = None
    on_long_press: Callable[[], None] | None = None
    field: str = ""                 # an input's form key (the floating Paste toolbar anchors to it)
    on_slide: Callable[[float], None] | None = None     # a SeekBar: touched at this fraction of its width
    level: int | None = None        # a SeekBar's value, 0-100
    inset: bool = False             # an app bar whose title follows a navigation button (Cancel)

    def track_fraction(self, x: float) -> float:
        """Where along a SeekBar's track ``x`` is, 0..1: the track stops a thumb's radius short of each end,
        so a touch at either end gives the minimum or the maximum."""
        x1, y1, x2, y2 = self.bounds
        pad = (y2 - y1) // 2
        return min(1.0, max(0.0, (x - x1 - pad) / max(1, x2 - x1 - 2 * pad)))

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
    App("com.google.android.deskclock", "Clock", "com.android.deskclock.DeskClock", "clock", (26, 115, 232)),
    App("com.google.android.apps.messaging", "Messages", "com.google.android.apps.messaging.ui.ConversationListActivity",
        "messages", (11, 87, 208)),
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
    "contact_view": ("com.android.contacts", "com.android.contacts.quickcontact.QuickContactActivity"),
    "event_view": ("com.android.calendar", "com.android.calendar.EventInfoActivity"),
    "display": ("com.android.settings", "com.android.settings.Settings$DisplaySettingsActivity"),
    "sound": ("com.android.settings", "com.android.settings.Settings$SoundSettingsActivity"),
    "alarm_edit": ("com.google.android.deskclock", "com.android.deskclock.alarms.AlarmEditActivity"),
    "message_new": ("com.google.android.apps.messaging",
                    "com.google.android.apps.messaging.ui.conversation.NewConversationActivity"),
    "message_thread": ("com.google.android.apps.messaging",
                       "com.google.android.apps.messaging.ui.conversation.ConversationActivity"),
})
KIND_BY_COMPONENT = {v: k for k, v in SCREENS.items()}

# form fields per screen: (key, label, multiline)
FORMS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "contact_edit": (("name", "Name", False), ("phone", "Phone", False), ("email", "Email", False)),
    "event_edit": (("title", "Title", False), ("date", "Date (YYYY-MM-DD)", False), ("time", "Time", False),
                   ("duration", "Duration (minutes)", False), ("location", "Location", False),
                   ("description", "Description", True)),
    "compose": (("to", "To", False), ("subject", "Subject", False), ("body", "Compose email", True)),
    "note_edit": (("title", "Title", False), ("text", "Note", True)),
    "alarm_edit": (("hour", "Hour", False), ("minute", "Minute", False), ("label", "Label", False)),
    "clock": (("hours", "Hours", False), ("minutes", "Minutes", False), ("seconds", "Seconds", False),
              ("timer_label", "Label", False)),      # the Timer tab's fields
    "message_new": (("to", "To", False), ("text", "Text message", True)),
    "message_thread": (("text", "Text message", True),),
    "maps": (("query", "Search here", False),),
    "browser": (("url", "Search or type URL", False),),
}


# fields that submit (the IME action Android shows on the keyboard; here an on-screen button beside the
# field, also KEYCODE_ENTER): kind -> (field key, button label, resource-id)
SUBMIT: dict[str, tuple[str, str, str]] = {
    "maps": ("query", "Search", "com.google.android.apps.maps:id/search_button"),
    "browser": ("url", "Go", "com.android.chrome:id/go_button"),
}


# where the cursor is when a form opens: a field, or the first empty one (FIRST_EMPTY)
FIRST_EMPTY = "first empty"
FOCUS = {"contact_edit": FIRST_EMPTY, "event_edit": FIRST_EMPTY, "compose": FIRST_EMPTY, "message_new": FIRST_EMPTY,
         "note_edit": "text", "alarm_edit": "hour", "message_thread": "text"}
# confirm dialogs (AlertDialog): key -> (message, positive button, VirtualPhone method the button calls)
DIALOGS = {"delete_note": ("Delete this note?", "Delete", "delete_note"),
           "delete_contact": ("Delete this contact?", "Delete", "delete_contact"),
           "delete_event": ("Delete this event?", "Delete", "delete_event")}


def new_activity(kind: str, **fields: str) -> Activity:
    package, name = SCREENS[kind]
    form = {key: "" for key, _, _ in FORMS.get(kind, ())}
    form.update({k: v for k, v in fields.items() if k in form})
    act = Activity(package, name, kind, fields=form)
    focus = FOCUS.get(kind)
    if focus == FIRST_EMPTY:
        act.focus = next((k for k, _, _ in FORMS[kind] if not form[k]), FORMS[kind][0][0])
    elif focus:
        act.focus = focus
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
    elif act.data.get("dialog") in DIALOGS:
        overlay = dialog(phone, act, act.data["dialog"]) + nav_bar(phone)
    return Screen(base, overlay)


def dialog(phone: "VirtualPhone", act: Activity, key: str) -> list[Widget]:
    """An AlertDialog over the app: its message, Cancel and the positive button (a tap outside cancels)."""
    message, positive, _ = DIALOGS[key]
    pkg = act.package
    y1, y2 = HEIGHT // 2 - 260, HEIGHT // 2 + 200
    return [
        Widget("scrim", (0, 0, WIDTH, HEIGHT), package=pkg, rid="", clickable=True, cls="android.view.View",
               on_tap=phone.dismiss_dialog),
        Widget("dialog", (90, y1, WIDTH - 90, y2), package=pkg, rid="android:id/parentPanel",
               cls="android.widget.LinearLayout", clickable=True, on_tap=lambda: None),
        Widget("text", (150, y1 + 60, WIDTH - 150, y1 + 260), text=message, package=pkg, rid="android:id/message"),
        Widget("button", (WIDTH - 640, y2 - 170, WIDTH - 400, y2 - 50), text="Cancel", package=pkg,
               rid="android:id/button2", cls="android.widget.Button", clickable=True, color=(255, 255, 255),
               on_tap=phone.dismiss_dialog),
        Widget("button", (WIDTH - 380, y2 - 170, WIDTH - 140, y2 - 50), text=positive, package=pkg,
               rid="android:id/button1", cls="android.widget.Button", clickable=True, color=(255, 255, 255),
               on_tap=phone.confirm_dialog),
    ]


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


def _rows(act: Activity, rows: list[list[Widget]], top: int, bottom: int, row_h: int, empty: str) -> list[Widget]:
    """Rows of several widgets each (bounds relative to the row's top), scrolled by the activity's offset;
    a row not wholly in view is left out."""
    if not rows:
        return [Widget("text", (48, top + 48, WIDTH - 48, top + 160), text=empty, package=act.package,
                       rid=f"{act.package}:id/empty")]
    total = len(rows) * row_h
    act.scroll = max(0, min(act.scroll, max(0, total - (bottom - top))))
    out = [Widget("list", (0, top, WIDTH, bottom), package=act.package, rid=f"{act.package}:id/list",
                  cls="androidx.recyclerview.widget.RecyclerView", scrollable=total > bottom - top)]
    for i, row in enumerate(rows):
        y = top + i * row_h - act.scroll
        if y < top or y + row_h > bottom:
            continue
        for w in row:
            x1, y1, x2, y2 = w.bounds
            w.bounds = (x1, y + y1, x2, y + y2)
            out.append(w)
    return out


def _fab(act: Activity, desc: str, on_tap: Callable[[], None], rid: str, bottom: int = CONTENT_BOTTOM) -> Widget:
    return Widget("fab", (WIDTH - 240, bottom - 240, WIDTH - 48, bottom - 48), text="+", desc=desc,
                  rid=f"{act.package}:id/{rid}", package=act.package, cls="android.widget.ImageButton", clickable=True,
                  color=APP_BY_PACKAGE[act.package].color, on_tap=on_tap)


def text_field(phone: "VirtualPhone", act: Activity, key: str, bounds: tuple[int, int, int, int], hint: str,
               rid: str) -> list[Widget]:
    """An EditText (tap: focus; long press: the floating Paste toolbar) and, for a submitting field that
    has focus, its action button (Go / Search) at its right end."""
    def menu(k: str = key) -> None:
        phone.focus(k)
        if phone.state.clipboard or act.fields.get(k):
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
    """Android's floating text toolbar over the long-pressed field: Select all (the field has text), then Cut
    and Copy (its text is selected), and Paste (the clipboard has text). Typing or pasting over a selection
    replaces it: how a value already in a field is changed without a key for each character."""
    key = act.data.get("paste_menu")
    if not key or phone.state.overlay or key not in act.fields:
        return []
    field = next((w for w in views if w.kind == "input" and w.field == key), None)
    if field is None:
        return []
    selected = act.data.get("selected") == key
    items: list[tuple[str, str, Callable[[], None]]] = []
    if act.fields[key] and not selected:
        items.append(("Select all", "selectAll", lambda: phone.select_all(key)))
    if selected:
        items += [("Cut", "cut", lambda: phone.copy_selection(key, cut=True)),
                  ("Copy", "copy", lambda: phone.copy_selection(key))]
    if phone.state.clipboard:
        items.append(("Paste", "paste", lambda: phone.paste_into(key)))
    x1, y1, _, y2 = field.bounds
    top = y1 - 118 if y1 - 118 > STATUS_H else y2 + 12
    out, x = [], x1 + 24
    for label, rid, on_tap in items:
        w = 280 if len(label) > 5 else 200
        out.append(Widget("popup", (x, top, x + w, top + 112), text=label, desc=label, package=act.package,
                          rid=f"android:id/{rid}", cls="android.widget.Button", clickable=True, on_tap=on_tap))
        x += w + 8
    return out


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


def _save_bar(phone: "VirtualPhone", act: Activity, title: str, action: str | None = None,
              on_save: Callable[[], None] | None = None, rid: str = "") -> list[Widget]:
    """A form's app bar: Cancel (X), the title and its action button (Save, Send), if any."""
    app = APP_BY_PACKAGE[act.package]
    out = [
        Widget("appbar", (0, STATUS_H, WIDTH, CONTENT_TOP), text=title, package=act.package, color=app.color,
               rid=f"{act.package}:id/toolbar_title", inset=True),
        Widget("button", (24, STATUS_H + 24, 144, CONTENT_TOP - 24), desc="Cancel", package=act.package,
               rid=f"{act.package}:id/cancel", cls="android.widget.ImageButton", clickable=True, on_tap=phone.back),
    ]
    if action:
        out.append(Widget("button", (WIDTH - 300, STATUS_H + 30, WIDTH - 36, CONTENT_TOP - 30), text=action,
                          desc=action, package=act.package, rid=f"{act.package}:id/{rid}", cls="android.widget.Button",
                          clickable=True, on_tap=on_save))
    return out


def _button(act: Activity, bounds: tuple[int, int, int, int], text: str, on_tap: Callable[[], None], rid: str,
            desc: str = "", primary: bool = False) -> Widget:
    return Widget("button", bounds, text=text, desc=desc or text, package=act.package, rid=f"{act.package}:id/{rid}",
                  cls="android.widget.Button", clickable=True, on_tap=on_tap,
                  color=(26, 115, 232) if primary else (232, 240, 254))


def slider(package: str, label: str, value: int, y: int, on_set: Callable[[int], None], rid: str) -> list[Widget]:
    """A labelled SeekBar: the label and the value as text, then the track (a tap sets the value in proportion
    to where it lands). The node's text is the value and its content-desc says label and value."""
    def slide(fraction: float) -> None:
        on_set(round(100 * fraction))

    return [
        Widget("text", (48, y, 700, y + 80), text=label, package=package, rid="android:id/title"),
        Widget("text", (760, y, WIDTH - 48, y + 80), text=f"{value}%", package=package, rid=f"{package}:id/{rid}_value"),
        Widget("slider", (48, y + 100, WIDTH - 48, y + 190), text=str(value), desc=f"{label} {value}%", package=package,
               rid=f"{package}:id/{rid}", cls="android.widget.SeekBar", clickable=True, level=value, on_slide=slide),
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
               rid="android:id/title", clickable=True, on_tap=lambda: phone.open("display")),
        Widget("item", (0, 0, 0, 0), text="Sound & vibration", subtitle="Volume, Do Not Disturb", package=act.package,
               rid="android:id/title", clickable=True, on_tap=lambda: phone.open("sound")),
    ]
    return app_bar(act, "Settings") + _list(phone, act, rows, "")


def display(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    return app_bar(act, "Display") + slider(act.package, "Brightness", phone.state.brightness, CONTENT_TOP + 60,
                                            lambda v: phone.set_level("brightness", v), "brightness")


def sound(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    st = phone.state
    y = CONTENT_TOP + 60
    out = app_bar(act, "Sound & vibration")
    out += slider(act.package, "Media volume", st.media_volume, y, lambda v: phone.set_level("media_volume", v),
                  "media_volume")
    out += slider(act.package, "Ring volume", st.ring_volume, y + 260, lambda v: phone.set_level("ring_volume", v),
                  "ring_volume")
    out.append(Widget("switch", (0, y + 520, WIDTH, y + 720), text="Do Not Disturb", package=act.package,
                      rid="com.android.settings:id/switch_widget", cls="android.widget.Switch", clickable=True,
                      checkable=True, checked=st.dnd, on_tap=lambda: phone.set_dnd(not phone.state.dnd)))
    return out


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
    order = sorted(range(len(phone.state.contacts)), key=lambda i: phone.state.contacts[i].get("name", "").lower())
    rows = [Widget("item", (0, 0, 0, 0), text=c.get("name", ""), subtitle=c.get("phone") or c.get("email", ""),
                   package=act.package, rid="com.android.contacts:id/cliv_name_textview", clickable=True,
                   on_tap=lambda i=i: phone.open("contact_view", index=i))
            for i in order for c in [phone.state.contacts[i]]]
    return (app_bar(act, "Contacts") + _list(phone, act, rows, "No contacts yet")
            + [_fab(act, "Create contact", lambda: phone.open("contact_edit"), "floating_action_button")])


def contact_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    title = "Edit contact" if isinstance(act.data.get("index"), int) else "Create contact"
    return (_save_bar(phone, act, title, "Save", phone.save_contact, "editor_menu_save_button")
            + _form(phone, act, CONTENT_TOP + 60))


def _item_at(items: list, index) -> dict | None:
    return items[index] if isinstance(index, int) and 0 <= index < len(items) else None


def contact_view(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """A contact's card: name, phone, email; Edit and Delete."""
    index = act.data.get("index")
    c = _item_at(phone.state.contacts, index)
    if c is None:
        return app_bar(act, "Contact") + _list(phone, act, [], "This contact no longer exists")
    pkg, y = act.package, CONTENT_TOP + 60
    out = app_bar(act, c.get("name") or "(No name)")
    for label, key in (("Phone", "phone"), ("Email", "email")):
        if c.get(key):
            out.append(Widget("text", (48, y, WIDTH - 48, y + 120), text=c[key], subtitle=label, package=pkg,
                              rid=f"{pkg}:id/{key}"))
            y += 150
    y += 40
    out.append(_button(act, (48, y, 348, y + 140), "Edit", lambda: phone.open(
        "contact_edit", name=c.get("name", ""), phone=c.get("phone", ""), email=c.get("email", ""), index=index),
        "menu_edit"))
    out.append(_button(act, (390, y, 690, y + 140), "Delete", lambda: phone.ask("delete_contact"), "menu_delete"))
    return out


def calendar(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    events = phone.state.events
    order = sorted(range(len(events)), key=lambda i: events[i].get("begin_ms", 0))
    rows = [Widget("item", (0, 0, 0, 0), text=events[i].get("title", ""), subtitle=phone.format_span(events[i]),
                   package=act.package, rid="com.android.calendar:id/event_title", clickable=True,
                   on_tap=lambda i=i: phone.open("event_view", index=i)) for i in order]
    return (app_bar(act, "Calendar") + _list(phone, act, rows, "No upcoming events")
            + [_fab(act, "Create new event", phone.new_event, "floating_action_button")])


def event_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    title = "Edit event" if isinstance(act.data.get("index"), int) else "New event"
    return (_save_bar(phone, act, title, "Save", phone.save_event, "action_done")
            + _form(phone, act, CONTENT_TOP + 40))


def event_view(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """An event's details (when, where, what), Edit and Delete."""
    e = _item_at(phone.state.events, act.data.get("index"))
    if e is None:
        return app_bar(act, "Event") + _list(phone, act, [], "This event no longer exists")
    pkg, y = act.package, CONTENT_TOP + 60
    out = app_bar(act, e.get("title") or "(No title)")
    for label, value in (("When", phone.format_span(e)), ("Location", e.get("location", "")),
                         ("Description", e.get("description", ""))):
        if value:
            out.append(Widget("text", (48, y, WIDTH - 48, y + 120), text=value, subtitle=label, package=pkg,
                              rid=f"{pkg}:id/{label.lower()}"))
            y += 150
    y += 40
    out.append(_button(act, (48, y, 348, y + 140), "Edit", lambda: phone.edit_event(act.data["index"]), "edit"))
    out.append(_button(act, (380, y, 680, y + 140), "Delete", lambda: phone.ask("delete_event"), "delete"))
    return out


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
    """The list shows each note's title (or, untitled, its first line), the text's first line below."""
    rows = []
    for i, n in enumerate(phone.notes()):
        first = (n["text"].splitlines() or [""])[0]
        rows.append(Widget("item", (0, 0, 0, 0), text=n["title"] or first, subtitle=first if n["title"] else "",
                           package=act.package, rid="com.mobileactions.notes:id/note", clickable=True,
                           on_tap=lambda i=i, n=n: phone.open("note_edit", title=n["title"], text=n["text"], index=i)))
    return (app_bar(act, "Notes") + _list(phone, act, rows, "No notes")
            + [_fab(act, "New note", lambda: phone.open("note_edit"), "new_note")])


def note_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    y = CONTENT_TOP + 60 + 150 + 36 + 420 + 60
    buttons = [
        Widget("button", (48, y, 348, y + 140), text="Copy", desc="Copy", package=act.package, clickable=True,
               cls="android.widget.Button", rid="com.mobileactions.notes:id/copy",
               on_tap=lambda: phone.copy(act.fields.get("text", ""))),
        Widget("button", (390, y, 690, y + 140), text="Paste", desc="Paste", package=act.package, clickable=True,
               cls="android.widget.Button", rid="com.mobileactions.notes:id/paste", on_tap=phone.paste),
    ]
    if isinstance(act.data.get("index"), int):       # a saved note can be deleted (a new one is discarded by Cancel)
        buttons.append(Widget("button", (732, y, WIDTH - 48, y + 140), text="Delete", desc="Delete note",
                              package=act.package, clickable=True, cls="android.widget.Button",
                              rid="com.mobileactions.notes:id/delete", on_tap=lambda: phone.ask("delete_note")))
    return _save_bar(phone, act, "Note", "Save", phone.save_note, "save") + _form(phone, act, CONTENT_TOP + 60) + buttons


def browser(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    url = act.data.get("url", "")
    out = text_field(phone, act, "url", (36, STATUS_H + 24, WIDTH - 36, CONTENT_TOP - 24), "Search or type URL",
                     "com.android.chrome:id/url_bar")
    out.append(Widget("text", (48, CONTENT_TOP + 60, WIDTH - 48, CONTENT_TOP + 400),
                      text=f"Page: {url}" if url else "New tab", package=act.package,
                      rid="com.android.chrome:id/page"))
    return out


# ------------------------------------------------------------------------------- Clock
CLOCK_TABS = (("alarm", "Alarm"), ("timer", "Timer"), ("stopwatch", "Stopwatch"))
TABS_TOP = CONTENT_BOTTOM - 190
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def twelve_hour(time24: str) -> str:
    """``"07:05"`` -> ``"7:05 AM"``, as the Clock app shows times in an en-US locale."""
    h, m = (int(x) for x in time24.split(":"))
    return f"{h % 12 or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"


def clock(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """Alarm / Timer / Stopwatch, switched by the tab bar at the bottom (as DeskClock's)."""
    tab = act.data.get("tab", "alarm")
    out = app_bar(act, dict(CLOCK_TABS)[tab]) + {"alarm": _alarms, "timer": _timers, "stopwatch": _stopwatch}[tab](phone, act)
    w = WIDTH // len(CLOCK_TABS)
    for i, (key, label) in enumerate(CLOCK_TABS):
        out.append(Widget("tab", (i * w, TABS_TOP, (i + 1) * w, CONTENT_BOTTOM), text=label, desc=label,
                          package=act.package, rid=f"{act.package}:id/tab_menu_{key}", cls="android.widget.FrameLayout",
                          clickable=True, selected=key == tab, on_tap=lambda k=key: phone.clock_tab(k)))
    return out


def _alarms(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    pkg = act.package
    rows = []
    for i, a in enumerate(phone.state.alarms):
        shown = twelve_hour(a["time"])
        named = f"{shown} alarm" + (f" {a['label']}" if a["label"] else "")   # as a screen reader says the row
        days = ", ".join(a["days"].split(",")) if a["days"] else "Not scheduled"
        if a["days"] == ",".join(WEEKDAYS):
            days = "Every day"
        rows.append([
            Widget("item", (0, 0, 700, 250), text=shown, subtitle=" · ".join(x for x in (a["label"], days) if x),
                   package=pkg, rid=f"{pkg}:id/digital_clock", clickable=True,
                   on_tap=lambda i=i: phone.edit_alarm(i)),
            Widget("toggle", (WIDTH - 240, 30, WIDTH - 48, 130), desc=named, package=pkg,
                   rid=f"{pkg}:id/onoff", cls="android.widget.Switch", clickable=True, checkable=True,
                   checked=a["enabled"], on_tap=lambda i=i: phone.toggle_alarm(i)),
            Widget("button", (WIDTH - 300, 150, WIDTH - 48, 240), text="Delete", desc=f"Delete {named}",
                   package=pkg, rid=f"{pkg}:id/delete", cls="android.widget.Button", clickable=True,
                   color=(232, 240, 254), on_tap=lambda i=i: phone.delete_alarm(i)),
        ])
    return (_rows(act, rows, CONTENT_TOP, TABS_TOP, 270, "No alarms")
            + [_fab(act, "Add alarm", lambda: phone.open("alarm_edit"), "fab", bottom=TABS_TOP)])


def alarm_edit(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """The time picker in keyboard mode (Hour and Minute fields, AM / PM), repeat-day chips, a label."""
    pkg, y = act.package, CONTENT_TOP + 50
    pm = bool(act.data.get("pm"))
    days = set(act.data.get("days", []))
    out = _save_bar(phone, act, "Alarm", "Save", phone.save_alarm, "save")
    out.append(Widget("text", (48, y, WIDTH - 48, y + 80), text="Type in time", package=pkg, rid="android:id/title"))
    y += 100
    out += text_field(phone, act, "hour", (48, y, 348, y + 170), "Hour", "android:id/input_hour")
    out.append(Widget("text", (360, y + 40, 408, y + 150), text=":", package=pkg, rid="android:id/input_separator"))
    out += text_field(phone, act, "minute", (420, y, 720, y + 170), "Minute", "android:id/input_minute")
    for i, (label, on) in enumerate((("AM", not pm), ("PM", pm))):
        out.append(Widget("chip", (760, y + 10 + i * 85, WIDTH - 48, y + 90 + i * 85), text=label, desc=label,
                          package=pkg, rid=f"android:id/{label.lower()}_label", cls="android.widget.RadioButton",
                          clickable=True, checkable=True, checked=on,
                          on_tap=lambda v=label == "PM": phone.set_form_data("pm", v)))
    y += 230
    out.append(Widget("text", (48, y, WIDTH - 48, y + 80), text="Repeat", package=pkg, rid=f"{pkg}:id/repeat"))
    y += 100
    step = (WIDTH - 96) // 7
    for i, (day, name) in enumerate(zip(WEEKDAYS, DAY_NAMES)):
        x = 48 + i * step
        out.append(Widget("chip", (x + 6, y, x + step - 6, y + step - 12), text=name[0], desc=name, package=pkg,
                          rid=f"{pkg}:id/day_button_{i}", cls="android.widget.ToggleButton", clickable=True,
                          checkable=True, checked=day in days, on_tap=lambda d=day: phone.toggle_alarm_day(d)))
    y += step + 40
    out += text_field(phone, act, "label", (48, y, WIDTH - 48, y + 150), "Label", f"{pkg}:id/edit_label")
    return out


def _timers(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    pkg, y = act.package, CONTENT_TOP + 40
    out: list[Widget] = []
    for i, key in enumerate(("hours", "minutes", "seconds")):
        x = 48 + i * 342
        out += text_field(phone, act, key, (x, y, x + 300, y + 150), key.capitalize(), f"{pkg}:id/timer_{key}")
    y += 186
    out += text_field(phone, act, "timer_label", (48, y, WIDTH - 48, y + 150), "Label", f"{pkg}:id/timer_label")
    y += 186
    out.append(_button(act, (48, y, 348, y + 130), "Start", phone.start_timer, "timer_start", primary=True))
    rows = []
    for i, t in enumerate(phone.state.timers):
        h, rest = divmod(t["seconds"], 3600)
        left = f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
        state = "Running" if t["running"] else "Paused"
        rows.append([
            Widget("item", (0, 0, 560, 200), text=left, subtitle=" · ".join(x for x in (t["label"], state) if x),
                   package=pkg, rid=f"{pkg}:id/timer_time"),
            Widget("button", (580, 50, 800, 150), text="Pause" if t["running"] else "Resume", package=pkg,
                   desc=f"{'Pause' if t['running'] else 'Resume'} timer {left}", rid=f"{pkg}:id/play_pause",
                   cls="android.widget.Button", clickable=True, color=(232, 240, 254),
                   on_tap=lambda i=i: phone.toggle_timer(i)),
            Widget("button", (820, 50, WIDTH - 48, 150), text="Delete", desc=f"Delete timer {left}", package=pkg,
                   rid=f"{pkg}:id/delete", cls="android.widget.Button", clickable=True, color=(232, 240, 254),
                   on_tap=lambda i=i: phone.delete_timer(i)),
        ])
    return out + _rows(act, rows, y + 170, TABS_TOP, 210, "No timers")


def _stopwatch(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    pkg, running = act.package, phone.state.stopwatch_running
    y = CONTENT_TOP + 300
    return [
        Widget("text", (48, y, WIDTH - 48, y + 200), text="Running" if running else "00:00.00", package=pkg,
               rid=f"{pkg}:id/stopwatch_time_text"),
        _button(act, (120, y + 400, 500, y + 560), "Stop" if running else "Start",
                lambda: phone.set_stopwatch(not phone.state.stopwatch_running), "fab", primary=True),
        _button(act, (580, y + 400, 960, y + 560), "Reset", lambda: phone.set_stopwatch(False), "reset"),
    ]


# ------------------------------------------------------------------------------- Messages
def messages(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """Conversations, newest first: who (a contact's name, else the number) and the last message."""
    rows = [Widget("item", (0, 0, 0, 0), text=phone.thread_name(number), subtitle=last["text"], package=act.package,
                   rid=f"{act.package}:id/conversation_name", clickable=True,
                   on_tap=lambda n=number: phone.open("message_thread", number=n))
            for number, last in phone.threads()]
    return (app_bar(act, "Messages") + _list(phone, act, rows, "No conversations")
            + [_fab(act, "Start chat", lambda: phone.open("message_new"), "start_chat_fab")])


def _compose_bar(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """The message field at the bottom; its Send button shows only once there is text to send."""
    pkg = act.package
    y1, y2 = CONTENT_BOTTOM - 190, CONTENT_BOTTOM - 30
    out = text_field(phone, act, "text", (48, y1, WIDTH - 240, y2), "Text message", f"{pkg}:id/compose_message_text")
    if act.fields.get("text", "").strip():
        out.append(Widget("button", (WIDTH - 210, y1 + 20, WIDTH - 48, y2), text="Send", desc="Send SMS", package=pkg,
                          rid=f"{pkg}:id/send_message_button_icon", cls="android.widget.ImageButton",
                          clickable=True, color=(11, 87, 208), on_tap=phone.send_message))
    return out


def message_new(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """Start chat: the To field (a contact's name or a number; matching contacts are offered below it)."""
    pkg = act.package
    out = _save_bar(phone, act, "New conversation")
    out += text_field(phone, act, "to", (48, CONTENT_TOP + 30, WIDTH - 48, CONTENT_TOP + 180), "To",
                      f"{pkg}:id/recipient_text_view")
    # every contact whose name holds what is typed, the exact one too, until one is picked (as Messages does)
    typed = act.fields.get("to", "").strip().lower()
    picked = act.data.get("picked", {}).get("to") == act.fields.get("to")
    y = CONTENT_TOP + 220
    for c in phone.state.contacts:
        if typed and not picked and typed in c.get("name", "").lower() and c.get("phone"):
            out.append(Widget("item", (0, y, WIDTH, y + ROW_H), text=c["name"], subtitle=c["phone"], package=pkg,
                              rid=f"{pkg}:id/contact_name", clickable=True,
                              on_tap=lambda n=c["name"]: phone.set_field("to", n)))
            y += ROW_H
            if y > CONTENT_TOP + 220 + 3 * ROW_H:
                break
    return out + _compose_bar(phone, act)


def message_thread(phone: "VirtualPhone", act: Activity) -> list[Widget]:
    """One conversation: its messages as bubbles (sent on the right), newest at the bottom, and a reply field."""
    pkg, number = act.package, act.data.get("number", "")
    out = _save_bar(phone, act, phone.thread_name(number))
    y = CONTENT_BOTTOM - 230
    for m in reversed(phone.thread(number)):
        lines = max(1, min(4, len(m["text"]) // 28 + 1))
        h = 60 + 56 * lines
        if y - h < CONTENT_TOP + 20:
            break
        sent = m["direction"] == "sent"
        x1, x2 = (WIDTH - 860, WIDTH - 48) if sent else (48, 860)
        out.append(Widget("bubble", (x1, y - h, x2, y), text=m["text"], package=pkg, rid=f"{pkg}:id/message_text",
                          desc=("You: " if sent else "") + m["text"],
                          color=(211, 227, 253) if sent else (241, 243, 244)))
        y -= h + 24
    return out + _compose_bar(phone, act)


VIEWS: dict[str, Callable[["VirtualPhone", Activity], list[Widget]]] = {
    "launcher": launcher, "settings": settings, "wifi": wifi, "display": display, "sound": sound,
    "contacts": contacts, "contact_edit": contact_edit, "contact_view": contact_view,
    "calendar": calendar, "event_edit": event_edit, "event_view": event_view, "maps": maps, "mail": mail,
    "compose": compose, "notes": notes, "note_edit": note_edit, "browser": browser,
    "clock": clock, "alarm_edit": alarm_edit, "messages": messages, "message_new": message_new,
    "message_thread": message_thread,
}


# ------------------------------------------------------------------------------- system UI overlays
SHADE_BOTTOM = 1000
QS_BOTTOM = 1640
# the expanded panel's extra tiles: label -> (settings namespace, key, value when on)
SETTING_TILES = (("Auto-rotate", "system", "accelerometer_rotation", "1"),
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
        b = st.brightness
        out.append(Widget("slider", (48, 200, WIDTH - 48, 290), text=str(b), desc=f"Display brightness {b}%",
                          package=pkg, rid=f"{pkg}:id/brightness_slider", cls="android.widget.SeekBar", clickable=True,
                          level=b, on_slide=lambda f: phone.set_level("brightness", round(100 * f))))
        top = 330
        tiles.append(("Do Not Disturb", st.dnd, lambda: phone.set_dnd(not phone.state.dnd)))
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
