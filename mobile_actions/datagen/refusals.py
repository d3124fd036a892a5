"""Requests that no tool can serve, and the short refusals that are their gold answer.

Each topic is a phrasing family (the unit of the held-out split). `keywords` keep a topic out of a
catalogue that could serve it: for a user catalogue with a `play_music` tool, "play some jazz"
is not a refusal, so topics whose keywords occur in a tool's name or description are skipped.
Hard negatives near the Mobile Actions tools (read my email, delete a contact, turn on
Bluetooth, what is on my calendar) teach the caller where its tools end.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from random import Random

from mobile_actions.datagen import values as V
from mobile_actions.datagen.templates import LITERAL, Value

REFUSALS = (
    "Sorry, I can't do that with the tools I have.",
    "Sorry, I can't help with that.",
    "I'm sorry, but I don't have a tool for that.",
    "Sorry, that's not something I can do.",
)


@dataclass(frozen=True)
class Topic:
    name: str
    keywords: tuple[str, ...]
    template: str


TOPICS: tuple[Topic, ...] = (
    Topic("food_order", ("food", "order", "pizza", "restaurant", "deliver"),
          "(order me|get me|can you order) (a pizza|some sushi|a burger|pad thai|a large pepperoni pizza|tacos|a poke bowl)( from {_biz}| on Uber Eats| on DoorDash| for delivery|)"),
    Topic("weather", ("weather", "forecast", "rain", "temperature"),
          "(what's the weather|what is the weather like|will it rain|how hot will it be|what's the forecast)( today| tomorrow| this weekend| in {_city}|)(?|)"),
    Topic("music", ("music", "play", "song", "playlist", "audio", "spotify"),
          "(play|put on|start) (some jazz|my workout playlist|the new Taylor Swift album|lo-fi beats|something relaxing|Bohemian Rhapsody|some bossa nova)( on Spotify| please|)"),
    Topic("phone_call", ("call", "dial", "phone_call"),
          "(call|ring|phone|dial) ({_first}|mom|my dentist|{_phone}|{_biz})( now| please| for me|)"),
    Topic("sms", ("sms", "text", "message", "whatsapp", "chat"),
          "(text|send a text to|WhatsApp|send an SMS to) {_first} (that I'm on my way|saying I'll be late|to bring the charger)"),
    Topic("timer_alarm", ("alarm", "timer", "clock", "stopwatch"),
          "(set a timer for|start a timer for|set an alarm for|wake me up at) (10 minutes|25 minutes|6:30|7am|an hour)"),
    Topic("device_settings", ("bluetooth", "volume", "brightness", "airplane", "do not disturb", "dark mode"),
          "(turn on|turn off|enable|disable|turn up|turn down) (bluetooth|the volume|the brightness|airplane mode|do not disturb|dark mode|location services)"),
    Topic("read_email", ("read", "inbox", "unread", "check email", "get_email", "list_email"),
          "(read|check|show me|what's in) (my latest emails|my inbox|the last email from {_first}|my unread mail)(?|)"),
    Topic("read_calendar", ("agenda", "what's on", "list_event", "get_event", "read", "upcoming"),
          "(what's on my calendar|what do I have|am I free|what's my schedule) (tomorrow|on Friday|this afternoon|next week)(?|)"),
    Topic("delete_contact", ("delete", "remove", "edit", "update"),
          "(delete|remove|edit) (the contact|my contact) {_first} {_last}( from my phone|)"),
    # A change to something already saved: with only create_contact, "ana has a new number, 555 0142" is no
    # tool's job (not a second contact, not an email to the new address).
    Topic("edit_saved", ("edit", "update", "modify", "rename"),
          "((change|update|fix) {_first}'s (number|phone number|cell) to {_phone}"
          "|(change|update) {_first}'s (email|email address) to {_email}"
          "|{_first} (has|got) a new (number|phone number)(:| -|, it's|, its) {_phone}( now|, update (it|the contact)|)"
          "|{_first} (has|got) a new (email|email address)(:| -|, it's|, its) {_email}( now|, update (it|the contact)|)"
          "|(put|add) {_first}'s new number {_phone} (on|to) (her|his|their) contact"
          "|(put|add) {_first}'s new email {_email} (on|to) (her|his|their) contact"
          "|(move|push|reschedule) my {_event} (to|until) (tomorrow|friday|next week|3pm)"
          "|rename the {_event} (event|meeting) to {_event2})"),
    Topic("ride_travel", ("ride", "taxi", "uber", "flight", "book", "hotel", "travel", "trip"),
          "(book me|get me|find me) (an Uber|a taxi|a flight|a hotel room|a train ticket) to {_city}( for tomorrow| tonight| next week|)"),
    Topic("trivia", ("search", "answer", "question", "wiki", "fact", "web"),
          "(who won the World Cup in 2014|how tall is Mount Everest|what's the capital of Australia|who wrote Don Quixote|how far is the moon)(?|)"),
    Topic("translate_math", ("translate", "language", "calculate", "math", "convert"),
          "(translate \"good morning\" into (Japanese|Portuguese|Polish)|what's 15% of 240|convert 30 euros to dollars|how many ounces in a liter)(?|)"),
    Topic("camera_media", ("camera", "photo", "picture", "selfie", "video", "record", "screenshot"),
          "(take a selfie|take a photo|record a video|take a screenshot|open the camera)( now| please|)"),
    Topic("shopping_money", ("pay", "payment", "bank", "money", "transfer", "shop", "buy", "cart"),
          "(send {_first} 20 dollars|check my bank balance|pay the electricity bill|buy more printer ink|add milk to my shopping cart)"),
    Topic("chitchat", ("joke", "chat", "story", "poem"),
          "(tell me a joke|how are you today|write me a poem about the sea|sing me a song|what's the meaning of life)(?|)"),
    Topic("social_post", ("post", "social", "tweet", "instagram", "facebook", "share"),
          "(post this on Instagram|tweet that I'm at {_city}|share my location with {_first}|update my Facebook status)"),
    Topic("apps_system", ("install", "app", "uninstall", "update", "wallpaper", "restart", "battery"),
          "(install WhatsApp|uninstall TikTok|change my wallpaper|restart the phone|how much battery do I have left|update my apps)(?|)"),
    # Messages that are not email: with only send_email, "message Ana that ..." is no tool's job (not an
    # email to a made-up address, not a map of Ana). Phrased apart from the held-out `sms` topic.
    Topic("messenger", ("message", "messaging", "whatsapp", "telegram", "signal", "chat", "sms", "text", "dm"),
          "(message|send a message to|DM|ping|send a voice note to|reply to) {_first}( on WhatsApp| on Telegram| on Signal| on Messenger|) "
          "(saying|that|to tell them) (I'm on my way|the meeting moved to 3|dinner is at 8|I'm outside|I'll call back later)"),
)


def usable_topics(tool_texts: list[str]) -> list[Topic]:
    """Topics none of the tools could plausibly serve (keyword screen on names and descriptions)."""
    blob = " ".join(tool_texts).lower().replace("_", " ")
    words = set(re.findall(r"[a-z0-9]+", blob))
    out = []
    for topic in TOPICS:
        hit = any((k.replace("_", " ") in blob) if (" " in k or "_" in k) else any(w.startswith(k) for w in words)
                  for k in topic.keywords)
        if not hit:
            out.append(topic)
    return out


def refusal_slots(rng: Random, mentioned: frozenset[str] = frozenset()) -> dict[str, Value]:
    """Context values for a topic's template; slots beyond the first five are drawn only when the template
    `mentioned` them, so the rows of the older topics stay as they were for a given seed."""
    p = V.person(rng)
    slots = {"_first": Value(p.first, LITERAL), "_last": Value(p.last, LITERAL), "_city": Value(V.city(rng), LITERAL),
             "_biz": Value(V.business(rng), LITERAL), "_phone": Value(V.phone(rng), LITERAL)}
    if "_email" in mentioned:
        slots["_email"] = Value(V.email_for(rng, p), LITERAL)
    if "_event" in mentioned:
        slots["_event"], slots["_event2"] = Value(V.event_title(rng), LITERAL), Value(V.event_title(rng), LITERAL)
    return slots
