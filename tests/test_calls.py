from mobile_actions.calls import ToolCall, validate_call
from mobile_actions.catalog import Catalogue, load_catalogue

CAT = load_catalogue()


def problems(name, args, cat=CAT):
    return [str(p) for p in validate_call(ToolCall(name, args), cat)]


def test_valid_calls_have_no_problems():
    assert problems("send_email", {"to": "a@b.c", "subject": "Hi"}) == []
    assert problems("create_calendar_event", {"title": "x", "datetime": "2026-01-10T14:30:00"}) == []
    assert problems("turn_on_flashlight", {}) == []


def test_each_kind_of_problem_is_named():
    assert problems("order_pizza", {})[0].startswith("order_pizza: unknown tool")
    assert problems("send_email", {"to": "a@b.c"}) == ["send_email.subject: missing required argument"]
    assert problems("show_map", {"query": "x", "zoom": 3}) == ["show_map.zoom: unknown argument"]
    assert problems("show_map", {"query": 3}) == ["show_map.query: expected string, got int 3"]
    bad = problems("create_calendar_event", {"title": "x", "datetime": "tomorrow 3pm"})
    assert bad == ["create_calendar_event.datetime: 'tomorrow 3pm' is not in YYYY-MM-DDTHH:MM:SS format"]
    assert "not a real date" in problems("create_calendar_event", {"title": "x", "datetime": "2025-02-30T10:00:00"})[0]


def test_enum_and_nested_types():
    cat = Catalogue.from_json([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"unit": {"type": "string", "enum": ["c", "f"]},
                                         "n": {"type": "number"}, "flag": {"type": "boolean"}}}}}])
    assert problems("f", {"unit": "k"}, cat) == ["f.unit: 'k' is not one of ['c', 'f']"]
    assert problems("f", {"n": 3}, cat) == []  # int accepted for number
    assert problems("f", {"flag": 1}, cat) == ["f.flag: expected boolean, got int 1"]


def test_tool_call_from_json_accepts_both_argument_encodings():
    a = ToolCall.from_json({"function": {"name": "f", "arguments": {"x": 1}}})
    b = ToolCall.from_json({"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}})
    assert a == b == ToolCall("f", {"x": 1})


def test_a_turn_returns_each_call_once():
    """The same email written twice at the end of a turn is sent once; calls that differ in any argument
    all stay, in order."""
    from mobile_actions import wire
    from mobile_actions.calls import turn_calls
    from mobile_actions.runtime import result_from_raw

    mail = ToolCall("send_email", {"to": "a@b.co", "subject": "Hi"})
    other = ToolCall("send_email", {"to": "a@b.co", "subject": "Hi", "body": "x"})
    wifi = ToolCall("open_wifi_settings", {})
    assert turn_calls([mail, wifi, ToolCall("send_email", {"subject": "Hi", "to": "a@b.co"}), other]) == \
        [mail, wifi, other]
    raw = "".join(wire.render_call(c) for c in (mail, wifi, mail))
    res = result_from_raw(raw, load_catalogue(), {})
    assert res.calls == [mail, wifi] and res.raw == raw and not res.problems


def test_a_turn_drops_an_optional_value_that_echoes_another():
    """A body copied from its own subject or holding its own address is dropped; a required value, an address
    holding a name and a body that says more than the subject stay."""
    from mobile_actions.calls import turn_calls

    tools = load_catalogue()
    padded = ToolCall("send_email", {"to": "s@acme.de", "subject": "PO 7731", "body": "7731"})
    assert turn_calls([padded], tools) == [ToolCall("send_email", {"to": "s@acme.de", "subject": "PO 7731"})]
    sofia = ToolCall("create_contact", {"first_name": "sofia", "last_name": "g", "email": "sofia.g@x.com"})
    told = ToolCall("send_email", {"to": "s@acme.de", "subject": "PO", "body": "Leo has a fever"})
    assert turn_calls([sofia, told], tools) == [sofia, told]
    assert turn_calls([padded]) == [padded]          # without the declarations nothing is known to be optional
    spilled = ToolCall("send_email", {"to": "ops@k.io", "subject": "Deploy freeze",
                                      "body": "2 emails: to ops@k.io subject Deploy freeze"})
    assert "body" not in turn_calls([spilled], tools)[0].arguments
    for body in ("2 emails: to ops@k.io", "ops@k.io"):
        spilled = ToolCall("send_email", {"to": "ops@k.io", "subject": "Deploy freeze", "body": body})
        assert "body" not in turn_calls([spilled], tools)[0].arguments
