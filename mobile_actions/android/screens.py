"""What the text navigator knows of stock Android apps' screens, as data (`screens.json` beside this module).

Why data, and why here: a switch's label and the names people call it by ("Flashlight": torch), a form field's
label and the words that give its value ("Subject": "about ..."), the browser's address field, the launcher's
package are facts about the apps on the phone, like the bindings' selectors, not about English or about the
navigator's rules (`navigator.guards`). A phone whose apps show other labels gets another file, not new code.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from mobile_actions.errors import BindingError

SCREENS_FILE = Path(__file__).resolve().with_name("screens.json")


@dataclass(frozen=True)
class AndroidScreens:
    """`screens.json`, checked (its ``description`` says what each entry means). Labels are lower case."""
    home_package: str
    switch_aliases: Mapping[str, tuple[str, ...]]
    slider_aliases: Mapping[str, tuple[str, ...]]
    field_cues: Mapping[str, tuple[str, ...]]
    message_fields: tuple[str, ...]
    title_fields: tuple[str, ...]
    text_fields: tuple[str, ...]
    append_cues: tuple[str, ...]   # a text field that holds text: the words after which the goal adds to it
    address_fields: tuple[str, ...]
    web_address_field: str
    web_words: tuple[str, ...]
    app_places: tuple[str, ...]
    select_all: str
    app_packages: Mapping[str, tuple[str, ...]]   # an app's name as people write it -> its packages
    hour_fields: tuple[str, ...]
    minute_fields: tuple[str, ...]
    duration_fields: Mapping[str, int]   # a duration picker's field -> the seconds one of its units counts
    half_day_toggles: Mapping[str, tuple[str, ...]]   # "am" / "pm" -> the toggles' labels
    field_shapes: Mapping[str, re.Pattern]   # a form field -> the form its value takes ("2025-06-05")


def _words(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
        raise BindingError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _table(value: Any, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise BindingError(f"{where} must be an object of lists of words")
    return {label.lower(): _words(words, f"{where}.{label}") for label, words in value.items()}


def _units(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.strip() and type(v) is int and v > 0
                                              for k, v in value.items()):
        raise BindingError(f"{where} must be an object of positive whole numbers")
    return {label.lower(): v for label, v in value.items()}


def _shapes(value: Any, where: str) -> dict[str, re.Pattern]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.strip() and isinstance(v, str)
                                              for k, v in value.items()):
        raise BindingError(f"{where} must be an object of patterns")
    try:
        return {label.lower(): re.compile(v) for label, v in value.items()}
    except re.error as e:
        raise BindingError(f"{where}: {e}") from None


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BindingError(f"{where} must be a non-empty string")
    return value


@lru_cache(maxsize=None)
def load_screens(path: Path = SCREENS_FILE) -> AndroidScreens:
    """The screens file, checked against its shape (a bad entry is named, with the file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BindingError(f"{path}: cannot read the Android screens file: {e}") from None
    if not isinstance(data, dict):
        raise BindingError(f"{path}: expected an object")
    at = f"{path}: "
    return AndroidScreens(
        home_package=_text(data.get("home_package"), at + "home_package"),
        switch_aliases=_table(data.get("switch_aliases"), at + "switch_aliases"),
        slider_aliases=_table(data.get("slider_aliases", {}), at + "slider_aliases"),
        field_cues=_table(data.get("field_cues"), at + "field_cues"),
        message_fields=tuple(w.lower() for w in _words(data.get("message_fields"), at + "message_fields")),
        title_fields=tuple(w.lower() for w in _words(data.get("title_fields"), at + "title_fields")),
        text_fields=tuple(w.lower() for w in _words(data.get("text_fields"), at + "text_fields")),
        append_cues=_words(data.get("append_cues", ["add"]), at + "append_cues"),
        address_fields=tuple(w.lower() for w in _words(data.get("address_fields"), at + "address_fields")),
        web_address_field=_text(data.get("web_address_field"), at + "web_address_field").lower(),
        web_words=_words(data.get("web_words"), at + "web_words"),
        app_places=_words(data.get("app_places"), at + "app_places"),
        select_all=_text(data.get("select_all"), at + "select_all").lower(),
        app_packages=_table(data.get("app_packages"), at + "app_packages"),
        hour_fields=tuple(w.lower() for w in _words(data.get("hour_fields"), at + "hour_fields")),
        minute_fields=tuple(w.lower() for w in _words(data.get("minute_fields"), at + "minute_fields")),
        duration_fields=_units(data.get("duration_fields"), at + "duration_fields"),
        half_day_toggles=_table(data.get("half_day_toggles"), at + "half_day_toggles"),
        field_shapes=_shapes(data.get("field_shapes", {}), at + "field_shapes"))
