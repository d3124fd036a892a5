import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from mobile_actions.dataset import load_rows

WEATHER = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Gets the current weather in a given location.",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": 'The city and state, e.g. "San Francisco, CA" or "Tokyo, JP"'},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                 "description": "The unit to return the temperature in."}},
        "required": ["location"]}}}
GOOGLE_MESSAGES = [
    {"role": "developer", "content": "You are a model that can do function calling with the following functions"},
    {"role": "user", "content": "Hey, what's the weather in Tokyo right now?"},
    {"role": "assistant", "tool_calls": [{"type": "function", "function": {
        "name": "get_current_weather", "arguments": {"location": "Tokyo, Japan"}}}]},
    {"role": "tool", "name": "get_current_weather",
     "content": {"name": "get_current_weather", "response": {"temperature": 15, "weather": "sunny"}}},
    {"role": "assistant", "content": "The current weather in Tokyo is sunny with a temperature of 15 degrees Celsius."},
]
# Google's printed example (spec/mobile-actions.md), byte for byte.
GOOGLE_TEXT = (
    "<bos><start_of_turn>developer\n"
    "You are a model that can do function calling with the following functions<start_function_declaration>"
    "declaration:get_current_weather{description:<escape>Gets the current weather in a given location.<escape>,"
    "parameters:{properties:{location:{description:<escape>The city and state, e.g. \"San Francisco, CA\" or "
    "\"Tokyo, JP\"<escape>,type:<escape>STRING<escape>},unit:{description:<escape>The unit to return the "
    "temperature in.<escape>,enum:[<escape>celsius<escape>,<escape>fahrenheit<escape>],type:<escape>STRING<escape>}},"
    "required:[<escape>location<escape>],type:<escape>OBJECT<escape>}}<end_function_declaration><end_of_turn>\n"
    "<start_of_turn>user\n"
    "Hey, what's the weather in Tokyo right now?<end_of_turn>\n"
    "<start_of_turn>model\n"
    "<start_function_call>call:get_current_weather{location:<escape>Tokyo, Japan<escape>}<end_function_call>"
    "<start_function_response>response:get_current_weather{temperature:15,weather:<escape>sunny<escape>}"
    "<end_function_response>The current weather in Tokyo is sunny with a temperature of 15 degrees Celsius."
    "<end_of_turn>\n"
)


def test_google_example_byte_for_byte():
    assert wire.render(GOOGLE_MESSAGES, [WEATHER]).encode() == GOOGLE_TEXT.encode()


def test_tool_without_parameters_and_generation_prompt():
    cat = load_catalogue()
    text = wire.render([{"role": "user", "content": "hi"}], [cat["turn_on_flashlight"]], add_generation_prompt=True)
    assert ("declaration:turn_on_flashlight{description:<escape>Turns the flashlight on.<escape>,"
            "parameters:{type:<escape>OBJECT<escape>}}") in text
    assert text.endswith("<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n")


def test_cache_layout_puts_the_datetime_after_the_declarations(examples_path):
    rows, _ = load_rows(examples_path)
    row = rows[0]
    official = wire.render(row.prompt_messages, row.tools, add_generation_prompt=True)
    cache = wire.render(row.prompt_messages, row.tools, add_generation_prompt=True, layout="cache")
    dev = row.messages[0]["content"]
    assert official.startswith("<bos><start_of_turn>developer\nCurrent date and time")
    prefix = wire.stable_prefix(dev, row.tools)
    # the prefix ends with the datetime line's fixed words, before the datetime itself
    assert cache.startswith(prefix) and prefix.endswith("<end_function_declaration>\n" + wire.NOW_PREFIX.rstrip())
    assert cache[len(prefix):].startswith(" 2025-03-14T09:05:12\nDay of week is Friday\n")
    assert wire.stable_prefix("You are a model", row.tools).endswith("<end_function_declaration>")   # no datetime line
    # Same request, another datetime: the stable prefix is shared.
    other = [{"role": "developer", "content": dev.replace("2025-03-14T09:05:12", "2026-01-01T00:00:00")
              .replace("Friday", "Thursday")}, *row.prompt_messages[1:]]
    assert wire.render(other, row.tools, add_generation_prompt=True, layout="cache").startswith(prefix)


def _dev(now: str) -> str:
    return f"{wire.NOW_PREFIX}{now}\nDay of week is X\nYou are a model that can do function calling"


def test_calendar_layout_adds_the_next_14_dates_after_the_datetime(examples_path):
    rows, _ = load_rows(examples_path)
    row = rows[0]
    text = wire.render(row.prompt_messages, row.tools, add_generation_prompt=True, layout="calendar")
    cache = wire.render(row.prompt_messages, row.tools, add_generation_prompt=True, layout="cache")
    assert text.startswith(wire.stable_prefix(row.messages[0]["content"], row.tools))   # still one reusable prefix
    assert "Day of week is Friday\nDays ahead: 1 Saturday 2025-03-15; 2 Sunday 2025-03-16;" in text
    assert "; 14 Friday 2025-03-28\n<end_of_turn>" in text
    assert text.replace(wire.days_ahead(row.messages[0]["content"]) + "\n", "") == cache
    # Leap day, month and year ends come from the calendar, not from the model.
    assert "2 Thursday 2024-02-29; 3 Friday 2024-03-01" in wire.days_ahead(_dev("2024-02-27T23:59:59"))
    assert "7 Thursday 2026-01-01" in wire.days_ahead(_dev("2025-12-25T08:00:00"))
    for bad in ("2025-02-29T10:00:00", "2025-13-01T10:00:00", "0000-01-01T00:00:00", "2025-1-01T10:00:00", "soon"):
        assert wire.days_ahead(_dev(bad)) is None   # nothing to compute from: the row renders as in the cache layout
    assert wire.days_ahead("You are a model") is None


_ODD_NOWS = ["2025-02-29T10:00:00", "2024-02-29T10:00:00", "2025-13-01T10:00:00", "2025-00-10T10:00:00",
             "2025-01-00T10:00:00", "2025-01-32T10:00:00", "0000-01-01T00:00:00", "0001-01-01T00:00:00",
             "9998-12-31T00:00:00", "9999-01-01T00:00:00", "2O25-01-01T10:00:00", "２０２５-01-01T10:00:00",
             "2025-01-01 10:00:00", "2025-01-01", "2025-01-01T10:00:00\r", "2025-01-01T10:00:00\n" + wire.NOW_PREFIX
             + "2026-06-01T10:00:00"]


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"), st.sampled_from(_ODD_NOWS)),
       st.sampled_from(["T10:00:00", "T1", ""]))
def test_chat_template_computes_the_same_days_ahead(tokenizer, now, tail):
    msgs = [{"role": "developer", "content": _dev(now + tail)}, {"role": "user", "content": "hi"}]
    ours = wire.render(msgs, [WEATHER], add_generation_prompt=True, layout="calendar")
    theirs = tokenizer.apply_chat_template(msgs, tools=[WEATHER], tokenize=False, add_generation_prompt=True,
                                           layout="calendar")
    assert theirs == ours


# ---------------------------------------------------------------------------------------------- parse
def test_parse_parallel_calls_and_tricky_values():
    out = ('<start_function_call>call:send_email{to:<escape>a@b.c<escape>,subject:<escape>Re: {x}, "y"\nz<escape>,'
           'n:-1.5e3,k:7,ok:true,no:false,nil:null,nest:{a:[1,<escape>,<escape>],b:{}},empty:[]}<end_function_call>'
           '<start_function_call>call:show_map{query:<escape>Café Müller, Köln<escape>}<end_function_call><end_of_turn>')
    p = wire.parse(out)
    assert p.text == ""
    assert p.calls == [
        ToolCall("send_email", {"to": "a@b.c", "subject": 'Re: {x}, "y"\nz', "n": -1500.0, "k": 7, "ok": True,
                                "no": False, "nil": None, "nest": {"a": [1, ","], "b": {}}, "empty": []}),
        ToolCall("show_map", {"query": "Café Müller, Köln"}),
    ]
    assert isinstance(p.calls[0].arguments["k"], int)


def test_parse_plain_text_reply():
    p = wire.parse("Sorry, I can't order food.<end_of_turn>")
    assert p.calls == [] and p.text == "Sorry, I can't order food."


@pytest.mark.parametrize("bad, position, expected", [
    ("<start_function_call>call:f{a:<escape>x}<end_function_call>", 30, "closing <escape>"),
    ("<start_function_call>call:f{a:1", 31, "',' or '}'"),
    ("<start_function_call>call:f{a:1}", 32, "'<end_function_call>'"),
    ("<start_function_call>cal:f{}<end_function_call>", 21, "'call:'"),
    ("<start_function_call>call:f{a:maybe}<end_function_call>", 30, "a value"),
    ("<start_function_call>call:f{a:1,a:2}<end_function_call>", 32, "a key not already given"),
    ("hello <end_function_call>", 6, "stray <end_function_call>"),
])
def test_parse_errors_say_where_and_what(bad, position, expected):
    with pytest.raises(wire.WireParseError) as e:
        wire.parse(bad)
    assert e.value.position == position
    assert expected in e.value.expected


def test_render_refuses_unquotable_values():
    with pytest.raises(wire.WireError):
        wire.render_call(ToolCall("f", {"a": "x<escape>y"}))
    with pytest.raises(wire.WireError):
        wire.render_call(ToolCall("f", {"bad key": 1}))


# JSON-Schema-shaped argument values: what a call over any declared tool may carry.
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40).filter(
    lambda s: wire.ESCAPE not in s)
_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
_scalar = st.one_of(_text, st.integers(-10**12, 10**12), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False))
_json = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(_key, inner, max_size=4)), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(name=_key, args=st.dictionaries(_key, _json, max_size=6), n=st.integers(1, 3))
def test_render_parse_round_trip(name, args, n):
    calls = [ToolCall(f"{name}{i}", args) for i in range(n)]
    text = "".join(wire.render_call(c) for c in calls) + "<end_of_turn>"
    parsed = wire.parse(text)
    assert parsed.calls == calls
    assert json.dumps([c.arguments for c in parsed.calls]) == json.dumps([c.arguments for c in calls])


# ---------------------------------------------------------------------------------------------- template
@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    t = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                unk_token="<unk>")
    t.chat_template = wire.CHAT_TEMPLATE
    return t


def _conversations(examples_path):
    rows, _ = load_rows(examples_path, strict=False)
    convs = [(GOOGLE_MESSAGES, [WEATHER]), (GOOGLE_MESSAGES[:2], [WEATHER])]
    for line in examples_path.read_text().splitlines():
        data = json.loads(line)
        if "arguments\": \"" not in line:  # raw rows with Gemini types (stringified arguments: see below)
            convs.append((data["messages"], data["tools"]))
    for row in rows:
        convs.append((row.messages, row.tools.to_openai()))
        convs.append((row.messages[1:], row.tools.to_mobile_actions()))
    return convs


@pytest.mark.parametrize("layout", wire.LAYOUTS)
def test_chat_template_matches_renderer(tokenizer, examples_path, layout):
    for messages, tools in _conversations(examples_path):
        for gen in (False, True):
            msgs = messages if not gen else [m for m in messages if m["role"] != "assistant"][:2]
            ours = wire.render(msgs, tools, add_generation_prompt=gen, layout=layout)
            theirs = tokenizer.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=gen,
                                                   layout=layout)
            assert theirs == ours


def test_chat_template_rejects_stringified_arguments(tokenizer):
    msgs = [{"role": "user", "content": "x"},
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]
    with pytest.raises(Exception, match="arguments is a JSON string"):
        tokenizer.apply_chat_template(msgs, tokenize=False)


def test_chat_template_marks_the_model_turn_for_assistant_only_loss(examples_path):
    from transformers.utils.chat_template_utils import render_jinja_template

    rows, _ = load_rows(examples_path)
    row = rows[2]
    rendered, indices = render_jinja_template([row.messages], tools=row.tools.to_mobile_actions(),
                                              chat_template=wire.CHAT_TEMPLATE, return_assistant_tokens_mask=True,
                                              bos_token="<bos>")
    text = rendered[0]
    trained = "".join(text[s:e] for s, e in indices[0])
    assert trained == "".join(wire.render_call(c) for c in row.calls) + "<end_of_turn>\n"


@pytest.mark.parametrize("layout", ["cache", "calendar"])
def test_prefix_layouts_declare_tools_in_one_order_whatever_the_catalogue_says(layout):
    """The caller answers the same whatever order a catalogue lists its tools in; Jinja agrees."""
    import random

    from mobile_actions.catalog import load_catalogue

    tools = [t.to_mobile_actions() for t in load_catalogue("mobile_actions")]
    tools.append({"function": {"name": "a_user_tool", "description": "Mine.", "parameters": {"type": "OBJECT", "properties": {}}}})
    msgs = [{"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: 2025-06-02T10:00:00\n"
                                              "Day of week is Monday\nYou are a model that can do function calling"},
            {"role": "user", "content": "hi"}]
    from transformers.utils.chat_template_utils import render_jinja_template

    texts = set()
    for seed in range(5):
        shuffled = list(tools)
        random.Random(seed).shuffle(shuffled)
        text = wire.render(msgs, shuffled, add_generation_prompt=True, layout=layout)
        texts.add(text)
        rendered, _ = render_jinja_template([msgs], tools=shuffled, chat_template=wire.CHAT_TEMPLATE,
                                            add_generation_prompt=True, bos_token="<bos>", layout=layout)
        assert rendered[0] == text
    assert len(texts) == 1
    (text,) = texts
    assert text.index("turn_on_flashlight") < text.index("create_contact") < text.index("a_user_tool")
    assert wire.render(msgs, tools[::-1], layout="official") != wire.render(msgs, tools, layout="official")


def test_toolkit_annotations_never_reach_the_prompt():
    """`x-grounding` (and any `x-` key) steers the toolkit, not the model: declarations leave it out, in
    Python and in the Jinja template."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from mobile_actions.catalog import load_catalogue

    tools = [t.to_mobile_actions() for t in load_catalogue("operate_screen")]
    msgs = [{"role": "user", "content": "turn on Bluetooth"}]
    text = wire.render(msgs, tools, add_generation_prompt=True)
    assert "x-grounding" not in text and "goal:{description:" in text
    rendered, _ = render_jinja_template([msgs], tools=tools, chat_template=wire.CHAT_TEMPLATE,
                                        add_generation_prompt=True, bos_token="<bos>")
    assert rendered[0] == text
