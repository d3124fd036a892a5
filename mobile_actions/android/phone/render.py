"""Draw the virtual phone's screen (PNG / raw RGBA) and describe it (uiautomator XML).

Why both from ``apps.build``: a GUI navigator looks at the picture and taps coordinates, a script reads
the XML bounds; they must describe the same widgets, so both walk one widget list. Phone-sized
(1080x2400) with a TrueType font so that screenshots are legible to people and to vision models.
"""

from __future__ import annotations

import io
import re
import struct
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw, ImageFont

from mobile_actions.android.phone import apps
from mobile_actions.android.phone.apps import Widget
from mobile_actions.android.phone.state import HEIGHT, WIDTH

if TYPE_CHECKING:  # pragma: no cover
    from mobile_actions.android.phone.core import VirtualPhone

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/share/fonts/TTF",
             "/Library/Fonts", "C:/Windows/Fonts")
PRIMARY = (26, 115, 232)
TEXT = (32, 33, 36)
GREY = (95, 99, 104)
LIGHT = (218, 220, 224)


@lru_cache(maxsize=32)
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu when the system has it (wide Unicode coverage), else Pillow's bundled TrueType font."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    for d in FONT_DIRS:
        path = Path(d) / name
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _oneline(text: str) -> str:
    return _CONTROL.sub("·", text[:400].replace("\n", " ⏎ "))


def fit(draw: ImageDraw.ImageDraw, text: str, f, width: int) -> str:
    """Trim to the pixel width with an ellipsis (binary search: values may be 10 kB long)."""
    text = _oneline(text)
    if draw.textlength(text, font=f) <= width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if draw.textlength(text[:mid] + "…", font=f) <= width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…"


def wrap(draw: ImageDraw.ImageDraw, text: str, f, width: int, max_lines: int) -> list[str]:
    lines: list[str] = []
    for para in text[:2000].split("\n"):
        words, cur = _CONTROL.sub("·", para).split(" "), ""
        for w in words:
            cand = f"{cur} {w}" if cur else w
            if draw.textlength(cand, font=f) <= width:
                cur = cand
                continue
            if cur:
                lines.append(cur)
            cur = fit(draw, w, f, width) if draw.textlength(w, font=f) > width else w
        lines.append(cur)
        if len(lines) >= max_lines:
            break
    if len(lines) > max_lines:
        lines = lines[:max_lines]
    return lines


# ------------------------------------------------------------------------------------------- drawing
def image(phone: "VirtualPhone") -> Image.Image:
    with phone.lock:
        st = phone.state
        img = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 0))
        if not st.screen_on:
            return img
        screen = apps.build(phone)
        draw = ImageDraw.Draw(img)
        bg = (18, 52, 86) if st.top.kind == "launcher" else (255, 255, 255)
        draw.rectangle((0, 0, WIDTH, HEIGHT), fill=bg)
        for w in screen.base:
            _draw(draw, w, dark=st.top.kind == "launcher")
        if screen.overlay:
            shade = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 0))
            img = Image.blend(img, shade, 0.55)
            draw = ImageDraw.Draw(img)
            for w in screen.overlay:
                _draw(draw, w, dark=True)
        if st.toast:
            f = font(38)
            text = fit(draw, st.toast, f, WIDTH - 200)
            tw = int(draw.textlength(text, font=f))
            y = apps.CONTENT_BOTTOM - 180
            draw.rounded_rectangle(((WIDTH - tw) // 2 - 48, y, (WIDTH + tw) // 2 + 48, y + 100), 50, fill=(50, 50, 50))
            draw.text((WIDTH // 2, y + 50), text, font=f, fill="white", anchor="mm")
        return img


def png(phone: "VirtualPhone") -> bytes:
    buf = io.BytesIO()
    image(phone).save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def rgba(phone: "VirtualPhone") -> bytes:
    return image(phone).convert("RGBA").tobytes()


def raw(phone: "VirtualPhone") -> bytes:
    """``screencap`` without -p: width, height, format (1 = RGBA_8888), dataspace, then pixels."""
    return struct.pack("<4I", WIDTH, HEIGHT, 1, 0) + rgba(phone)


def _draw(d: ImageDraw.ImageDraw, w: Widget, dark: bool) -> None:
    x1, y1, x2, y2 = w.bounds
    k = w.kind
    if k == "statusbar":
        color = "white" if dark else TEXT
        d.text((48, 42), w.text, font=font(38, True), fill=color, anchor="lm")
        x = WIDTH - 60
        d.rectangle((x - 70, 26, x, 58), outline=color, width=3)
        d.rectangle((x - 66, 30, x - 66 + int(62 * 0.87), 54), fill=color)
        x -= 110
        if "Wi-Fi" in w.desc:
            d.pieslice((x - 46, 20, x + 6, 72), 225, 315, fill=color)
            x -= 80
        if "Flashlight" in w.desc:
            d.polygon([(x, 18), (x - 26, 46), (x - 8, 46), (x - 18, 68), (x + 14, 36), (x - 4, 36)], fill=(251, 188, 5))
    elif k == "appbar":
        d.rectangle(w.bounds, fill=w.color or PRIMARY)
        d.text((180 if w.inset else 60, (y1 + y2) // 2),
               fit(d, w.text, font(54, True), WIDTH - 560), font=font(54, True), fill="white", anchor="lm")
    elif k == "nav":
        if w.desc == "Back":
            d.rectangle((0, y1, WIDTH, y2), fill=(241, 243, 244))
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            d.polygon([(cx + 22, cy - 26), (cx + 22, cy + 26), (cx - 24, cy)], outline=TEXT, width=4)
        elif w.desc == "Home":
            cx, cy = w.center
            d.ellipse((cx - 28, cy - 28, cx + 28, cy + 28), outline=TEXT, width=5)
        else:
            cx, cy = w.center
            d.rounded_rectangle((cx - 24, cy - 24, cx + 24, cy + 24), 6, outline=TEXT, width=5)
    elif k == "button":
        if w.desc == "Cancel":
            cx, cy = w.center
            d.line((cx - 24, cy - 24, cx + 24, cy + 24), fill="white", width=6)
            d.line((cx - 24, cy + 24, cx + 24, cy - 24), fill="white", width=6)
            return
        on_bar = y2 <= apps.CONTENT_TOP and w.color is None
        fill = "white" if on_bar else (w.color or PRIMARY)
        tonal = sum(fill) > 600 if isinstance(fill, tuple) else True      # light button: blue label
        d.rounded_rectangle(w.bounds, (y2 - y1) // 2, fill=fill)
        d.text(w.center, fit(d, w.text, font(42, True), x2 - x1 - 30), font=font(42, True),
               fill=PRIMARY if tonal else "white", anchor="mm")
    elif k == "input":
        multiline = y2 - y1 > 200
        d.rounded_rectangle((x1, y1 + 18, x2, y2), 16, outline=PRIMARY if w.focused else (128, 134, 139),
                            width=5 if w.focused else 3, fill="white")
        if w.text or w.focused:
            lw = d.textlength(w.hint, font=font(30))
            d.rectangle((x1 + 30, y1, x1 + 50 + lw, y1 + 38), fill="white")
            d.text((x1 + 40, y1 + 18), w.hint, font=font(30), fill=PRIMARY if w.focused else GREY, anchor="lm")
        f = font(44)
        if not w.text:
            if not w.focused:
                d.text((x1 + 40, y1 + 18 + (75 if not multiline else 60)), w.hint, font=f, fill=GREY, anchor="lm")
            else:
                d.line((x1 + 40, y1 + 60, x1 + 40, y1 + 120), fill=PRIMARY, width=4)
            return
        if multiline:
            lines = wrap(d, w.text, f, x2 - x1 - 80, max(1, (y2 - y1 - 60) // 56))
            for i, line in enumerate(lines):
                d.text((x1 + 40, y1 + 70 + i * 56), line, font=f, fill=TEXT, anchor="lm")
        else:
            d.text((x1 + 40, (y1 + 18 + y2) // 2), fit(d, w.text, f, x2 - x1 - 80), font=f, fill=TEXT, anchor="lm")
    elif k == "switch":
        d.text((48, (y1 + y2) // 2), w.text, font=font(48, True), fill=TEXT, anchor="lm")
        tx = WIDTH - 200
        cy = (y1 + y2) // 2
        d.rounded_rectangle((tx, cy - 36, tx + 140, cy + 36), 36, fill=PRIMARY if w.checked else LIGHT)
        kx = tx + 104 if w.checked else tx + 36
        d.ellipse((kx - 30, cy - 30, kx + 30, cy + 30), fill="white")
        d.line((0, y2 - 2, WIDTH, y2 - 2), fill=LIGHT, width=2)
    elif k == "item":
        left = 60
        if "contacts" in w.rid and w.text:
            cx, cy = 110, (y1 + y2) // 2
            d.ellipse((cx - 54, cy - 54, cx + 54, cy + 54), fill=(25, 118, 210))
            d.text((cx, cy), _oneline(w.text)[:1].upper(), font=font(52, True), fill="white", anchor="mm")
            left = 200
        d.text((left, y1 + 58), fit(d, w.text, font(46), WIDTH - left - 60), font=font(46), fill=TEXT, anchor="lm")
        if w.subtitle:
            d.text((left, y1 + 116), fit(d, w.subtitle, font(34), WIDTH - left - 60), font=font(34), fill=GREY,
                   anchor="lm")
        d.line((left, y2 - 1, WIDTH, y2 - 1), fill=LIGHT, width=2)
    elif k == "fab":
        d.rounded_rectangle(w.bounds, 48, fill=w.color or PRIMARY)
        cx, cy = w.center
        d.line((cx - 40, cy, cx + 40, cy), fill="white", width=10)
        d.line((cx, cy - 40, cx, cy + 40), fill="white", width=10)
    elif k == "icon":
        cx = (x1 + x2) // 2
        d.ellipse((cx - 88, y1 + 30, cx + 88, y1 + 206), fill=w.color)
        d.text((cx, y1 + 118), w.text[:1], font=font(84, True), fill="white", anchor="mm")
        d.text((cx, y1 + 258), w.text, font=font(38), fill="white", anchor="mm")
    elif k == "clock":
        d.text((WIDTH // 2, y1 + 80), w.text, font=font(150, True), fill="white", anchor="mm")
        d.text((WIDTH // 2, y1 + 200), w.subtitle, font=font(44), fill="white", anchor="mm")
    elif k == "map":
        _map(d, w)
    elif k == "card":
        if w.package == "com.android.systemui":
            d.rounded_rectangle(w.bounds, 36, fill=w.color or GREY)
            d.text(w.center, w.text, font=font(60, True), fill="white", anchor="mm")
            return
        d.rounded_rectangle((x1, y1, x2, y2 + 40), 48, fill="white", outline=LIGHT, width=3)
        d.rounded_rectangle((WIDTH // 2 - 60, y1 + 20, WIDTH // 2 + 60, y1 + 30), 5, fill=LIGHT)   # drag handle
        d.text((60, y1 + 95), fit(d, w.text, font(60, True), WIDTH - 120), font=font(60, True), fill=TEXT, anchor="lm")
        d.text((60, y1 + 170), fit(d, w.subtitle, font(38), WIDTH - 120), font=font(38), fill=(24, 128, 56),
               anchor="lm")
    elif k == "address":
        cx, cy = x1 + 30, (y1 + y2) // 2                                     # a small location pin
        d.ellipse((cx - 18, cy - 34, cx + 18, cy + 2), fill=PRIMARY)
        d.polygon([(cx - 16, cy - 10), (cx + 16, cy - 10), (cx, cy + 24)], fill=PRIMARY)
        d.ellipse((cx - 7, cy - 23, cx + 7, cy - 9), fill="white")
        lines = wrap(d, w.text, font(40), x2 - x1 - 90, 2)
        top = cy - 24 * (len(lines) - 1)
        for i, line in enumerate(lines):
            d.text((x1 + 90, top + i * 48), line, font=font(40), fill=TEXT, anchor="lm")
    elif k == "popup":
        d.rounded_rectangle((x1 + 4, y1 + 8, x2 + 4, y2 + 8), 24, fill=(200, 200, 200))             # shadow
        d.rounded_rectangle(w.bounds, 24, fill="white", outline=LIGHT, width=2)
        d.text(w.center, w.text, font=font(42, True), fill=TEXT, anchor="mm")
    elif k == "slider":
        cy, r = (y1 + y2) // 2, (y2 - y1) // 2
        level = (w.level or 0) / 100
        dark = w.package == "com.android.systemui"
        d.rounded_rectangle((x1, y1, x2, y2), r, fill=(60, 64, 67) if dark else LIGHT)
        kx = x1 + r + int((x2 - x1 - 2 * r) * level)                       # the thumb, on the inner track
        d.rounded_rectangle((x1, y1, kx + r, y2), r, fill=(138, 180, 248) if dark else PRIMARY)
        d.ellipse((kx - r + 8, cy - r + 8, kx + r - 8, cy + r - 8), fill=(23, 42, 84) if dark else "white")
    elif k == "toggle":
        cx, cy = w.center
        d.rounded_rectangle((cx - 70, cy - 36, cx + 70, cy + 36), 36, fill=PRIMARY if w.checked else LIGHT)
        kx = cx + 34 if w.checked else cx - 34
        d.ellipse((kx - 30, cy - 30, kx + 30, cy + 30), fill="white")
    elif k == "chip":
        d.rounded_rectangle(w.bounds, min(40, (y2 - y1) // 2), fill=PRIMARY if w.checked else "white",
                            outline=PRIMARY if w.checked else (128, 134, 139), width=3)
        d.text(w.center, w.text, font=font(40, True), fill="white" if w.checked else TEXT, anchor="mm")
    elif k == "tab":
        d.rectangle(w.bounds, fill=(241, 243, 244))
        if w.selected:
            cx = (x1 + x2) // 2
            d.rounded_rectangle((cx - 90, y1 + 24, cx + 90, y1 + 90), 33, fill=(211, 227, 253))
        d.text(((x1 + x2) // 2, y1 + 130), w.text, font=font(36, w.selected), fill=TEXT, anchor="mm")
    elif k == "bubble":
        d.rounded_rectangle(w.bounds, 40, fill=w.color or LIGHT)
        for i, line in enumerate(wrap(d, w.text, font(40), x2 - x1 - 80, max(1, (y2 - y1 - 40) // 56))):
            d.text((x1 + 40, y1 + 55 + i * 56), line, font=font(40), fill=TEXT, anchor="lm")
    elif k == "dialog":
        d.rounded_rectangle(w.bounds, 48, fill="white")
    elif k == "text" and w.package == "com.android.systemui":
        d.text(((x1 + x2) // 2, (y1 + y2) // 2), w.text, font=font(40), fill=(189, 193, 198), anchor="mm")
    elif k == "text":
        if w.subtitle:
            d.text((x1, y1 + 20), w.subtitle, font=font(30), fill=GREY, anchor="lm")
            d.text((x1, y1 + 72), fit(d, w.text, font(44), x2 - x1), font=font(44), fill=TEXT, anchor="lm")
        else:
            lines = wrap(d, w.text, font(44), x2 - x1, max(1, (y2 - y1) // 56))
            for i, line in enumerate(lines):
                d.text((x1, y1 + 30 + i * 56), line, font=font(44), fill=GREY if "empty" in w.rid else TEXT, anchor="lm")
    elif k == "panel":
        d.rounded_rectangle((0, -60, WIDTH, y2), 60, fill=(32, 33, 36))
        d.text((60, y1 + 60), w.text, font=font(40, True), fill="white", anchor="lm")
        d.rounded_rectangle((WIDTH // 2 - 60, y2 - 30, WIDTH // 2 + 60, y2 - 20), 5, fill=(154, 160, 166))
    elif k == "tile":
        fill, ink = ((138, 180, 248), (23, 42, 84)) if w.checked else ((60, 64, 67), (232, 234, 237))
        d.rounded_rectangle(w.bounds, 50, fill=fill)
        d.text((x1 + 50, y1 + 80), w.text, font=font(44, True), fill=ink, anchor="lm")
        d.text((x1 + 50, y1 + 145), w.subtitle, font=font(36), fill=ink, anchor="lm")
    elif k == "scrim" and w.color:
        d.rectangle(w.bounds, fill=w.color)


def _map(d: ImageDraw.ImageDraw, w: Widget) -> None:
    x1, y1, x2, y2 = w.bounds
    d.rectangle(w.bounds, fill=(236, 232, 221))
    d.polygon([(x1, 900), (x2, 700), (x2, 820), (x1, 1030)], fill=(170, 218, 255))        # river
    d.rounded_rectangle((120, 1150, 460, 1500), 40, fill=(200, 230, 201))                  # park
    d.rounded_rectangle((650, 300, 980, 600), 40, fill=(200, 230, 201))
    for x in range(0, WIDTH, 270):
        d.line((x + 60, y1, x - 40, y2), fill="white", width=22)
    for y in range(400, y2, 330):
        d.line((x1, y, x2, y + 60), fill="white", width=18)
    d.line((x1, 1280, x2, 1100), fill=(255, 214, 102), width=30)                           # highway
    if w.text:
        cx, cy = WIDTH // 2, 1150
        d.ellipse((cx - 50, cy - 150, cx + 50, cy - 50), fill=(234, 67, 53))
        d.polygon([(cx - 44, cy - 84), (cx + 44, cy - 84), (cx, cy)], fill=(234, 67, 53))
        d.ellipse((cx - 18, cy - 118, cx + 18, cy - 82), fill=(165, 14, 14))
        label = fit(d, w.text, font(40, True), 700)
        tw = d.textlength(label, font=font(40, True))
        d.rounded_rectangle((cx - tw / 2 - 24, cy - 250, cx + tw / 2 + 24, cy - 170), 20, fill="white")
        d.text((cx, cy - 210), label, font=font(40, True), fill=TEXT, anchor="mm")


# ------------------------------------------------------------------------------------------- uiautomator
_XML_BAD = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _attr(value: str) -> str:
    value = _XML_BAD.sub("\ufffd", value)
    return quoteattr(value, {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


CLASS_BY_KIND = {"statusbar": "android.view.ViewGroup", "appbar": "android.widget.TextView",
                 "list": "androidx.recyclerview.widget.RecyclerView", "panel": "android.widget.FrameLayout"}


def _node(w: Widget, index: int) -> str:
    x1, y1, x2, y2 = w.bounds
    cls = CLASS_BY_KIND.get(w.kind, w.cls)
    text = w.text if w.kind != "nav" else ""
    attrs = [
        ("index", str(index)), ("text", text), ("resource-id", w.rid), ("class", cls), ("package", w.package),
        ("content-desc", w.desc), ("checkable", _b(w.checkable)), ("checked", _b(w.checked)),
        ("clickable", _b(w.clickable)), ("enabled", "true"), ("focusable", _b(w.clickable or w.kind == "input")),
        ("focused", _b(w.focused)), ("scrollable", _b(w.scrollable)),
        ("long-clickable", _b(w.on_long_press is not None)),
        ("password", "false"), ("selected", _b(w.selected)), ("hint", w.hint), ("bounds", f"[{x1},{y1}][{x2},{y2}]"),
    ]
    body = " ".join(f"{k}={_attr(v)}" for k, v in attrs)
    if w.subtitle and w.kind in ("item", "tile", "card", "text", "clock"):
        sub = Widget("text", w.bounds, text=w.subtitle, package=w.package, rid=w.rid.rsplit("/", 1)[0] + "/summary"
                     if "/" in w.rid else "android:id/summary")
        return f"<node {body}>{_node(sub, 0)}</node>"
    return f"<node {body} />"


def _b(v: bool) -> str:
    return "true" if v else "false"


def ui_xml(phone: "VirtualPhone") -> str:
    """The top window as ``uiautomator dump`` writes it (one root, widgets as children in z-order)."""
    with phone.lock:
        st = phone.state
        widgets = apps.build(phone).interactive if st.screen_on else []
        package = "com.android.systemui" if st.overlay else st.top.package
        children = "".join(_node(w, i) for i, w in enumerate(widgets))
        if st.toast:   # as devices that dump accessibility windows show a toast
            children += (f'<node index="{len(widgets)}" text={_attr(st.toast)} resource-id="" '
                         f'class="android.widget.Toast" package="com.android.systemui" content-desc="" '
                         'checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
                         'focused="false" scrollable="false" long-clickable="false" password="false" '
                         f'selected="false" bounds="[100,{HEIGHT - 400}][{WIDTH - 100},{HEIGHT - 250}]" />')
        root = (f'<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package={_attr(package)} '
                f'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" '
                f'focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" '
                f'selected="false" bounds="[0,0][{WIDTH},{HEIGHT}]">{children}</node>')
        return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                f'<hierarchy rotation="0">{root}</hierarchy>')
