"""The FunctionGemma wire format: the one place that knows how conversations become text and back.

Rendering follows FunctionGemma's template (Gemma turns, seven control strings, `<escape>`-quoted
strings, alphabetically sorted keys in declarations). `CHAT_TEMPLATE` is the same renderer written
in Jinja for `tokenizer.apply_chat_template`; a test holds the two to identical output.

Three developer-turn layouts exist:
- ``official``: the developer text (which starts with the current datetime in Mobile Actions) and
  then the declarations, as FunctionGemma checkpoints expect;
- ``cache``: the stable instruction and declarations first and the volatile datetime lines last, so
  the KV cache of everything up to the end of the declarations can be reused across requests;
- ``calendar``: the cache layout plus one more volatile line, ``Days ahead: 1 Friday 2025-05-16; ...``,
  the next 14 dates computed from the "Current date and time" line. A 270M caller does not do
  calendar arithmetic reliably ("in 5 days", "next Monday"); the bet is that it can learn to copy a
  date from a table instead (experimental: one short CPU run did not show it). The line is derived,
  never stored in data, so any Mobile Actions row renders in this layout.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from mobile_actions import jsontext
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue, Tool, parse_tool
from mobile_actions.errors import WireError, WireParseError

START_DECL, END_DECL = "<start_function_declaration>", "<end_function_declaration>"
START_CALL, END_CALL = "<start_function_call>", "<end_function_call>"
START_RESP, END_RESP = "<start_function_response>", "<end_function_response>"
ESCAPE = "<escape>"
# In FunctionGemma's id order: 46..52 (`<unused40>`..`<unused46>` in Gemma 3's vocabulary).
CONTROL_TOKENS = (START_DECL, END_DECL, START_CALL, END_CALL, START_RESP, END_RESP, ESCAPE)
CONTROL_TOKEN_IDS = dict(zip(CONTROL_TOKENS, range(46, 53)))
BOS, START_TURN, END_TURN = "<bos>", "<start_of_turn>", "<end_of_turn>"
STOP_STRINGS = (END_TURN, START_RESP)
LAYOUTS = ("official", "cache", "calendar")
PREFIX_LAYOUTS = ("cache", "calendar")       # layouts whose declarations come first (a reusable KV prefix)
# Room for a caller's answer: three calls with an email body run to ~160 tokens (128 cut 1 in 200 held-out
# answers, and a cut answer is no call at all); decoding stops at the turn's end, so a short answer costs no more.
MAX_CALL_TOKENS = 256
# Developer-text lines that change per request; the cache layout moves them after the declarations.
VOLATILE_PREFIXES = ("Current date and time", "Day of week", "Days ahead")
# Covers "in two weeks", every weekday name and "in N days" as the generator says them; the chat
# template's `range(1, 15)` is the same number (the template test fails if they part).
DAYS_AHEAD = 14
NOW_PREFIX = "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class Parsed:
    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""


# ---------------------------------------------------------------------------------------------- values
def format_value(value: Any, *, sort_keys: bool = False, upper_types: bool = False) -> str:
    """A JSON value in FunctionGemma's notation: strings escaped, keys bare, no spaces."""
    if isinstance(value, str):
        if ESCAPE in value:
            raise WireError(f"string {value[:40]!r} contains {ESCAPE}, which the wire format cannot quote")
        return f"{ESCAPE}{value}{ESCAPE}"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
            raise WireError(f"{value} is not a JSON number")
        return repr(value)
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else value.items()
        parts = []
        for k, v in items:
            if upper_types and isinstance(k, str) and k.startswith("x-"):
                continue  # a declaration's toolkit annotations (x-grounding) are not for the model
            _check_key(k)
            if upper_types and k == "type":
                v = [t.upper() for t in v] if isinstance(v, list) else str(v).upper()
            parts.append(f"{k}:{format_value(v, sort_keys=sort_keys, upper_types=upper_types)}")
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(format_value(v, sort_keys=sort_keys, upper_types=upper_types) for v in value) + "]"
    raise WireError(f"cannot write a {type(value).__name__} in the wire format")


_KEY_RE = re.compile(r"[^\s:{}\[\],<>]+")


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        raise WireError(f"key {key!r} cannot be written bare (no spaces, ':', braces, brackets, ',' or '<>')")


# ---------------------------------------------------------------------------------------------- render
def render_declaration(tool: Tool) -> str:
    params = {k: v for k, v in tool.parameters.items() if not (k in ("properties", "required") and not v)}
    body = {"description": tool.description, "parameters": params}
    return f"{START_DECL}declaration:{tool.name}{format_value(body, sort_keys=True, upper_types=True)}{END_DECL}"


def render_call(call: ToolCall) -> str:
    return f"{START_CALL}call:{call.name}{format_value(call.arguments)}{END_CALL}"


def render_response(name: str, response: Any) -> str:
    return f"{START_RESP}response:{name}{format_value(response)}{END_RESP}"


def split_developer_text(content: str) -> tuple[str, str]:
    """(stable, volatile) parts of a developer message, for the cache layout."""
    lines = content.split("\n")
    stable = [line for line in lines if not line.startswith(VOLATILE_PREFIXES)]
    volatile = [line for line in lines if line.startswith(VOLATILE_PREFIXES)]
    return "\n".join(stable), "\n".join(volatile)


def days_ahead(developer_text: str) -> str | None:
    """The calendar layout's lookup line for the date in `developer_text`, or None when it has none.

    The date is read character by character (no regex, no strptime) because the chat template has to
    read it the same way in Jinja; a test holds the two to identical output, invalid dates included.
    """
    line = next((x for x in developer_text.split("\n") if x.startswith(NOW_PREFIX)), None)
    if line is None:
        return None
    s = line[len(NOW_PREFIX):]
    digits = s[:4] + s[5:7] + s[8:10]
    if len(s) < 11 or (s[4], s[7], s[10]) != ("-", "-", "T") or not all(c in "0123456789" for c in digits):
        return None
    y, m, d = int(s[:4]), int(s[5:7]), int(s[8:10])
    if not 1 <= y <= 9998:
        return None
    try:
        today = dt.date(y, m, d)
    except ValueError:
        return None   # an impossible date is left for the model to read as it is, as in the other layouts
    days = (today + dt.timedelta(days=n) for n in range(1, DAYS_AHEAD + 1))
    return "Days ahead: " + "; ".join(f"{n} {_WEEKDAYS[x.weekday()]} {x.isoformat()}" for n, x in enumerate(days, 1))


def _tools(tools: Catalogue | Iterable[Any] | None) -> list[Tool]:
    if tools is None:
        return []
    return [parse_tool(t) for t in tools]


def calls_of(message: dict) -> list[ToolCall]:
    """The calls of an assistant message (Mobile Actions `tool_calls`)."""
    return [ToolCall.from_json(c) for c in message.get("tool_calls") or []]


def _responses_of(message: dict) -> list[tuple[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        try:
            content = jsontext.loads(content)
        except jsontext.JSONTextError:   # text, or JSON no file may hold (a 5,000-digit number, NaN)
            return [(message.get("name", "tool"), content)]
    items = content if isinstance(content, list) else [content]
    out = []
    for item in items:
        if isinstance(item, dict) and "response" in item:
            out.append((item.get("name") or message.get("name", "tool"), item["response"]))
        else:
            out.append((message.get("name", "tool"), item))
    return out


# The order the prefix layouts declare tools in, whatever order a catalogue lists them: the Mobile Actions
# tools first (in the bundled catalogue's order, the one the shipped caller was trained on), then any other
# tool by name. Why: the caller must answer the same whatever order a catalogue (or a dataset row) lists
# its tools in, and one order keeps the cached prompt prefix the same across catalogues of the same tools.
CANONICAL_ORDER = ("turn_on_flashlight", "turn_off_flashlight", "open_wifi_settings", "send_email",
                   "create_calendar_event", "show_map", "create_contact")


def canonical_order(tools: Sequence[Tool]) -> list[Tool]:
    rank = {name: i for i, name in enumerate(CANONICAL_ORDER)}
    return sorted(tools, key=lambda t: (rank.get(t.name, len(rank)), t.name))


def developer_turn(messages: Sequence[dict]) -> str | None:
    """The developer (or system) text a conversation opens with; None when it opens otherwise."""
    if messages and messages[0].get("role") in ("developer", "system"):
        return str(messages[0].get("content") or "")
    return None


def render(messages: Sequence[dict], tools: Catalogue | Iterable[Any] | None = None, *,
           add_generation_prompt: bool = False, layout: str = "official") -> str:
    """A conversation as FunctionGemma text. Roles: developer/system, user, assistant/model, tool.
    The prefix layouts (cache, calendar) declare the tools in `CANONICAL_ORDER`; official keeps the given order."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    declared = _tools(tools)
    if layout in PREFIX_LAYOUTS:
        declared = canonical_order(declared)
    decls = "".join(render_declaration(t) for t in declared)
    out = [BOS]
    dev = developer_turn(messages)
    msgs = list(messages[1:] if dev is not None else messages)
    if dev is not None or decls:
        dev = dev or ""
        if layout in PREFIX_LAYOUTS:
            stable, volatile = split_developer_text(dev)
            extra = days_ahead(dev) if layout == "calendar" else None
            volatile = "\n".join(v for v in (volatile, extra) if v)
            body = stable + decls + ("\n" + volatile + "\n" if volatile else "")
        else:
            body = dev + decls
        out.append(f"{START_TURN}developer\n{body}{END_TURN}\n")
    in_model = False
    for m in msgs:
        role = m.get("role")
        if role == "user":
            if in_model:
                out.append(f"{END_TURN}\n")
                in_model = False
            out.append(f"{START_TURN}user\n{m.get('content') or ''}{END_TURN}\n")
        elif role in ("assistant", "model"):
            if not in_model:
                out.append(f"{START_TURN}model\n")
                in_model = True
            out.extend(render_call(c) for c in calls_of(m))
            if m.get("content"):
                out.append(m["content"])
            if not m.get("tool_calls"):
                out.append(f"{END_TURN}\n")
                in_model = False
        elif role == "tool":
            if not in_model:
                out.append(f"{START_TURN}model\n")
                in_model = True
            out.extend(render_response(n, r) for n, r in _responses_of(m))
        else:
            raise ValueError(f"unknown role {role!r}")
    if in_model:
        # A final assistant message that only calls tools: the turn ends after the calls.
        last = msgs[-1]
        if last.get("role") in ("assistant", "model"):
            out.append(f"{END_TURN}\n")
    elif add_generation_prompt:
        out.append(f"{START_TURN}model\n")
    return "".join(out)


def stable_prefix(developer_text: str, tools: Catalogue | Iterable[Any]) -> str:
    """Text that every request with these tools starts with in the cache layout (the KV cache to reuse): the
    stable instruction, the declarations and, when the datetime line follows them, that line's fixed words
    (`NOW_PREFIX`, 22 tokens every request would otherwise run: a third of a short request's prefill). The
    words stop before the space ahead of the datetime, so the prefix ends on a token boundary of every prompt."""
    stable, volatile = split_developer_text(developer_text)
    text = f"{BOS}{START_TURN}developer\n{stable}" + "".join(render_declaration(t) for t in canonical_order(_tools(tools)))
    return text + "\n" + NOW_PREFIX.rstrip() if volatile.startswith(NOW_PREFIX) else text


# ---------------------------------------------------------------------------------------------- parse
_NUMBER_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


class _Parser:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def fail(self, expected: str):
        raise WireParseError(self.text, self.pos, expected)

    def expect(self, literal: str) -> None:
        if not self.text.startswith(literal, self.pos):
            self.fail(repr(literal))
        self.pos += len(literal)

    def name(self) -> str:
        m = _KEY_RE.match(self.text, self.pos)
        if not m:
            self.fail("a name")
        # A name ends at '{' or ':'; _KEY_RE already stops there.
        self.pos = m.end()
        return m.group()

    def value(self) -> Any:
        t, p = self.text, self.pos
        if t.startswith(ESCAPE, p):
            end = t.find(ESCAPE, p + len(ESCAPE))
            if end < 0:  # point at the string that never closes, not at the end of the text
                self.fail(f"closing {ESCAPE} for the string opened here")
            self.pos = end + len(ESCAPE)
            return t[p + len(ESCAPE):end]
        if t.startswith("{", p):
            return self.obj()
        if t.startswith("[", p):
            self.pos += 1
            items: list = []
            if t.startswith("]", self.pos):
                self.pos += 1
                return items
            while True:
                items.append(self.value())
                if t.startswith(",", self.pos):
                    self.pos += 1
                elif t.startswith("]", self.pos):
                    self.pos += 1
                    return items
                else:
                    self.fail("',' or ']'")
        for word, val in (("true", True), ("false", False), ("null", None)):
            if t.startswith(word, p):
                self.pos += len(word)
                return val
        m = _NUMBER_RE.match(t, p)
        if m:
            s = m.group()   # as jsontext reads numbers: at most MAX_NUMBER_CHARS, and finite
            number = int(s) if re.fullmatch(r"-?\d+", s) and len(s) <= jsontext.MAX_NUMBER_CHARS else float(s)
            if len(s) > jsontext.MAX_NUMBER_CHARS or number in (float("inf"), float("-inf")):
                self.fail(f"a number of at most {jsontext.MAX_NUMBER_CHARS} characters that a double can hold")
            self.pos = m.end()
            return number
        self.fail(f"a value ({ESCAPE}string{ESCAPE}, number, true, false, null, {{...}} or [...])")

    def obj(self) -> dict:
        self.expect("{")
        out: dict = {}
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return out
        while True:
            key = self.name()
            self.expect(":")
            if key in out:
                self.pos -= len(key) + 1
                self.fail(f"a key not already given ({key!r} repeats)")
            out[key] = self.value()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif self.text.startswith("}", self.pos):
                self.pos += 1
                return out
            else:
                self.fail("',' or '}'")

    def call(self) -> ToolCall:
        self.expect(START_CALL)
        self.expect("call:")
        name = self.name()
        args = self.obj()
        self.expect(END_CALL)
        return ToolCall(name, args)


_CALLED_RE = re.compile(r"call:([^\s:{}\[\],<>]+)\{")


def called_names(text: str) -> list[str]:
    """The names of the tools `text` starts calls to, in order, a call cut off before its end included (a turn
    that ran to the token limit): what `parse` cannot read whole."""
    return _CALLED_RE.findall(text)


def parse(text: str) -> Parsed:
    """Model output (what follows `<start_of_turn>model\\n`) -> calls and any plain text.

    Strict on purpose: a malformed call raises WireParseError rather than being guessed at, since
    a guessed call could be dispatched to a phone.
    """
    for stop in STOP_STRINGS:
        cut = text.find(stop)
        if cut >= 0:
            text = text[:cut]
    p = _Parser(text)
    calls: list[ToolCall] = []
    plain: list[str] = []
    while p.pos < len(text):
        nxt = text.find(START_CALL, p.pos)
        if nxt < 0:
            plain.append(text[p.pos:])
            break
        plain.append(text[p.pos:nxt])
        p.pos = nxt
        calls.append(p.call())
    rest = "".join(plain)
    for tok in CONTROL_TOKENS:
        at = rest.find(tok)
        if at >= 0:
            raise WireParseError(text, text.find(tok), f"plain text or {START_CALL}, not a stray {tok}")
    return Parsed(calls, rest.strip())


# ---------------------------------------------------------------------------------------------- template
# The Jinja twin of render(). Differences would silently change what a model is trained on, so a
# test renders the same conversations both ways. `layout` may be passed as a template kwarg.
# Jinja cannot decode JSON, so the template needs call arguments as objects (the dataset card's
# stringified variant is decoded by `mobile_actions.dataset` first) and says so if it gets a string.
CHAT_TEMPLATE = r"""{%- macro fv(v, sort, up) -%}
{%- if v is string -%}<escape>{{ v }}<escape>
{%- elif v is boolean -%}{{ 'true' if v else 'false' }}
{%- elif v is none -%}null
{%- elif v is mapping -%}{{ '{' }}
{%- set all_items = (v | dictsort) if sort else v.items() -%}
{%- set kept = namespace(items=[]) -%}
{%- for k, x in all_items -%}{%- if not (up and k is string and k.startswith('x-')) -%}{%- set kept.items = kept.items + [(k, x)] -%}{%- endif -%}{%- endfor -%}
{%- for k, x in kept.items -%}
{%- if up and k == 'type' -%}{{ k }}:{{ fv(x | upper if x is string else x | map('upper') | list, sort, up) }}
{%- else -%}{{ k }}:{{ fv(x, sort, up) }}{%- endif -%}
{%- if not loop.last -%},{%- endif -%}
{%- endfor -%}{{ '}' }}
{%- elif v is iterable -%}[{%- for x in v -%}{{ fv(x, sort, up) }}{%- if not loop.last -%},{%- endif -%}{%- endfor -%}]
{%- else -%}{{ v }}
{%- endif -%}
{%- endmacro -%}
{%- macro decl(tool) -%}
{%- set fn = tool.function if tool.function is defined else tool -%}
{%- set params = fn.parameters if fn.parameters else {'type': 'object'} -%}
{%- set ns = namespace(first=true) -%}
<start_function_declaration>declaration:{{ fn.name }}{description:{{ fv(fn.description or '', true, true) }},parameters:{
{%- for k, x in params | dictsort -%}
{%- if not (k in ['properties', 'required'] and not x) and not (k is string and k.startswith('x-')) -%}
{%- if not ns.first -%},{%- endif -%}{%- set ns.first = false -%}
{{ fv({k: x}, true, true)[1:-1] }}
{%- endif -%}
{%- endfor -%}
}}<end_function_declaration>
{%- endmacro -%}
{%- macro resp(m) -%}
{%- set c = m.content -%}
{%- set items = c if (c is iterable and c is not string and c is not mapping) else [c] -%}
{%- for it in items -%}
{%- if it is mapping and 'response' in it -%}<start_function_response>response:{{ it.name or m.name or 'tool' }}{{ fv(it.response, false, false) }}<end_function_response>
{%- else -%}<start_function_response>response:{{ m.name or 'tool' }}{{ fv(it, false, false) }}<end_function_response>
{%- endif -%}
{%- endfor -%}
{%- endmacro -%}
{%- macro month_days(y, m) -%}
{{ [31, 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] }}
{%- endmacro -%}
{%- macro days_ahead(dev) -%}
{%- set ns = namespace(s=none, ok=true) -%}
{%- for line in dev.split('\n') -%}
{%- if ns.s is none and line.startswith('Current date and time given in YYYY-MM-DDTHH:MM:SS format: ') -%}{%- set ns.s = line[59:] -%}{%- endif -%}
{%- endfor -%}
{%- if ns.s is not none and ns.s | length >= 11 and ns.s[4] == '-' and ns.s[7] == '-' and ns.s[10] == 'T' -%}
{%- for c in ns.s[:4] ~ ns.s[5:7] ~ ns.s[8:10] -%}{%- if c not in '0123456789' -%}{%- set ns.ok = false -%}{%- endif -%}{%- endfor -%}
{%- if ns.ok -%}
{%- set d = namespace(y=ns.s[:4] | int, m=ns.s[5:7] | int, d=ns.s[8:10] | int, out=[]) -%}
{%- if d.y >= 1 and d.y <= 9998 and d.m >= 1 and d.m <= 12 and d.d >= 1 and d.d <= month_days(d.y, d.m) | int -%}
{%- set yy = d.y - (1 if d.m < 3 else 0) -%}
{%- set wd = (yy + yy // 4 - yy // 100 + yy // 400 + [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4][d.m - 1] + d.d + 6) % 7 -%}
{%- for n in range(1, 15) -%}
{%- set d.d = d.d + 1 -%}
{%- if d.d > month_days(d.y, d.m) | int -%}
{%- set d.d = 1 -%}{%- set d.m = d.m + 1 -%}
{%- if d.m > 12 -%}{%- set d.m = 1 -%}{%- set d.y = d.y + 1 -%}{%- endif -%}
{%- endif -%}
{%- set d.out = d.out + [n ~ ' ' ~ ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'][(wd + n) % 7] ~ ' ' ~ '%04d-%02d-%02d' | format(d.y, d.m, d.d)] -%}
{%- endfor -%}
Days ahead: {{ d.out | join('; ') }}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endmacro -%}
{{- bos_token -}}
{%- set lay = layout if layout is defined else 'official' -%}
{%- set decls = namespace(s='') -%}
{%- if lay in ['cache', 'calendar'] -%}
{%- set canon = ['turn_on_flashlight', 'turn_off_flashlight', 'open_wifi_settings', 'send_email', 'create_calendar_event', 'show_map', 'create_contact'] -%}
{%- for n in canon -%}{%- for t in (tools or []) -%}{%- if (t.function if t.function is defined else t).name == n -%}{%- set decls.s = decls.s + decl(t) -%}{%- endif -%}{%- endfor -%}{%- endfor -%}
{%- set rest = namespace(names=[]) -%}
{%- for t in (tools or []) -%}{%- set nm = (t.function if t.function is defined else t).name -%}{%- if nm not in canon -%}{%- set rest.names = rest.names + [nm] -%}{%- endif -%}{%- endfor -%}
{%- for n in rest.names | unique | sort -%}{%- for t in (tools or []) -%}{%- if (t.function if t.function is defined else t).name == n -%}{%- set decls.s = decls.s + decl(t) -%}{%- endif -%}{%- endfor -%}{%- endfor -%}
{%- else -%}
{%- for t in (tools or []) -%}{%- set decls.s = decls.s + decl(t) -%}{%- endfor -%}
{%- endif -%}
{%- set first = 0 -%}
{%- if messages and messages[0].role in ['developer', 'system'] -%}
{%- set dev = messages[0].content or '' -%}{%- set first = 1 -%}
{%- else -%}{%- set dev = none -%}{%- endif -%}
{%- if dev is not none or decls.s -%}
{%- set dev = dev or '' -%}
{%- if lay in ['cache', 'calendar'] -%}
{%- set sv = namespace(stable=[], vol=[]) -%}
{%- for line in dev.split('\n') -%}
{%- if line.startswith('Current date and time') or line.startswith('Day of week') or line.startswith('Days ahead') -%}{%- set sv.vol = sv.vol + [line] -%}
{%- else -%}{%- set sv.stable = sv.stable + [line] -%}{%- endif -%}
{%- endfor -%}
{%- set ahead = days_ahead(dev) if lay == 'calendar' else '' -%}
{%- if ahead -%}{%- set sv.vol = sv.vol + [ahead] -%}{%- endif -%}
<start_of_turn>developer
{{ sv.stable | join('\n') }}{{ decls.s }}{% if sv.vol %}{{ '\n' }}{{ sv.vol | join('\n') }}{{ '\n' }}{% endif %}<end_of_turn>
{{ '' }}
{%- else -%}
<start_of_turn>developer
{{ dev }}{{ decls.s }}<end_of_turn>
{{ '' }}
{%- endif -%}
{%- endif -%}
{%- set st = namespace(in_model=false, last='') -%}
{%- for m in messages[first:] -%}
{%- set st.last = m.role -%}
{%- if m.role == 'user' -%}
{%- if st.in_model -%}<end_of_turn>
{{ '' }}{%- set st.in_model = false -%}{%- endif -%}
<start_of_turn>user
{{ m.content or '' }}<end_of_turn>
{{ '' }}
{%- elif m.role in ['assistant', 'model'] -%}
{%- if not st.in_model -%}<start_of_turn>model
{{ '' }}{%- set st.in_model = true -%}{%- endif -%}
{%- generation -%}
{%- for c in (m.tool_calls or []) -%}
{%- set f = c.function if c.function is defined else c -%}
{%- if f.arguments is string -%}{{ raise_exception('tool call ' ~ f.name ~ ': arguments is a JSON string; decode it to an object first (mobile_actions.dataset does)') }}{%- endif -%}
<start_function_call>call:{{ f.name }}{{ fv(f.arguments or {}, false, false) }}<end_function_call>
{%- endfor -%}
{{- m.content or '' -}}
{%- if not m.tool_calls -%}<end_of_turn>
{{ '' }}{%- set st.in_model = false -%}{%- elif loop.last -%}<end_of_turn>
{{ '' }}{%- set st.in_model = false -%}{%- endif -%}
{%- endgeneration -%}
{%- elif m.role == 'tool' -%}
{%- if not st.in_model -%}<start_of_turn>model
{{ '' }}{%- set st.in_model = true -%}{%- endif -%}
{{- resp(m) -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt and not st.in_model -%}<start_of_turn>model
{{ '' }}
{%- endif -%}
"""
