"""Shell-injection fuzz: no argument value can run anything on the device.

Per tool, >= 10,000 generated values go through the real quoting (``command_line``) into the phone's
shell in-process (fast); a smaller sample goes end to end through the real adb server; the full
10,000-per-tool end-to-end run is ``@pytest.mark.slow``. Each check: the phone recorded exactly the
planned argv lists (no other command ran) and stored every value verbatim.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_actions.android.bindings import load_bindings
from mobile_actions.android.device import CommandTooLongError, command_line
from mobile_actions.android.dispatch import dispatch, epoch_ms, plan
from mobile_actions.android.phone import VirtualPhone
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from tests.adb_fixtures import rig  # noqa: F401

BINDINGS = load_bindings("mobile_actions")
CATALOGUE = load_catalogue("mobile_actions")
NASTY = ["'", '"', ";", "&&", "||", "|", "&", "$(reboot)", "`reboot`", "$(id)", "\n", "\r\n", "$?", "$HOME", "\\",
         "${IFS}", "#", ">", "<", "*", "~", "%s", "-e", "--es", " ", "\t", "é", "日本", "🙂", "\u202e", "'\"'\"'",
         "\\'", "$((1))", "(", ")", "{", "}", "!", "?q=", "&q=", "%00", "%2", "+", "\x01", "\x7f"]
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
FRAGMENT = st.one_of(st.sampled_from(NASTY), st.text(alphabet=CHARS, max_size=8))
SHORT = st.lists(FRAGMENT, max_size=6).map("".join)
LONG = st.tuples(st.lists(FRAGMENT, min_size=1, max_size=4).map("".join).filter(bool),
                 st.integers(1000, 10_240)).map(lambda t: (t[0] * (t[1] // len(t[0]) + 1))[: t[1]])
VALUE = st.one_of(*[SHORT] * 49, LONG)            # 1 in 50 values is 1-10 kB long
DATETIME = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S")).filter(lambda s: len(s) == 19)

ARGUMENTS = {
    "show_map": st.fixed_dictionaries({"query": VALUE}),
    "send_email": st.fixed_dictionaries({"to": VALUE, "subject": VALUE}, optional={"body": VALUE}),
    "create_contact": st.fixed_dictionaries({"first_name": VALUE, "last_name": VALUE},
                                            optional={"phone_number": VALUE, "email": VALUE}),
    "create_calendar_event": st.fixed_dictionaries({"title": VALUE, "datetime": DATETIME}),
}


def expected_form(tool: str, args: dict) -> dict:
    """What the app's form must hold after the intent: every value, verbatim."""
    if tool == "show_map":
        return {"query": args["query"]}
    if tool == "send_email":
        return {"to": args["to"], "subject": args["subject"], "body": args.get("body", "")}
    if tool == "create_contact":
        return {"name": f"{args['first_name']} {args['last_name']}", "phone": args.get("phone_number", ""),
                "email": args.get("email", "")}
    return {"title": args["title"]}


def check_in_process(phone: VirtualPhone, tool: str, args: dict) -> None:
    p = plan(ToolCall(tool, args), BINDINGS, tz="UTC")
    phone.reset()
    for argv in p.commands:
        r = phone.run(command_line(argv))
        assert r.exit_code == 0, (argv, r)
    assert phone.state.commands == p.commands                 # nothing else ran
    fields = phone.state.top.fields
    assert {k: fields.get(k, "") for k in expected_form(tool, args)} == expected_form(tool, args)
    if tool == "create_calendar_event":
        assert phone.state.top.data["begin_ms"] == epoch_ms(args["datetime"], "UTC")


VALUES_PER_TOOL, BATCH = 10_000, 20   # argument values per tool; calls per hypothesis example


def examples_for(tool: str) -> int:
    """Enough examples that even calls with only the required arguments give 10,000 values."""
    required = len(CATALOGUE[tool].parameters.get("required", []))
    return -(-VALUES_PER_TOOL // (BATCH * required))


@pytest.mark.parametrize("tool", sorted(ARGUMENTS))
def test_fuzz_in_process_10k_per_tool(tool):
    phone = VirtualPhone()
    seen = []

    @settings(max_examples=examples_for(tool), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(ARGUMENTS[tool], min_size=BATCH, max_size=BATCH))
    def run(batch):
        for args in batch:
            check_in_process(phone, tool, args)
            seen.append(len(args))

    run()
    assert sum(seen) >= VALUES_PER_TOOL


def check_end_to_end(rig, tool: str, args: dict) -> None:
    rig.phone.reset()
    call = ToolCall(tool, args)
    try:
        result = dispatch(call, rig.device, bindings=BINDINGS, catalogue=CATALOGUE, confirm=lambda p: True)
    except CommandTooLongError:
        assert rig.phone.state.commands in ([], [["getprop", "persist.sys.timezone"]])
        return
    planned = [list(o.result.argv) for o in result.outcomes if o.result is not None]
    extra = [["getprop", "persist.sys.timezone"]] if tool == "create_calendar_event" else []
    gui = [c for c in rig.phone.state.commands if c[0] in ("uiautomator", "cat")]
    assert [c for c in rig.phone.state.commands if c not in gui] == extra + planned
    assert all(c[0] in ("uiautomator", "cat") and len(c) == 3 for c in gui)
    s = rig.phone.state
    form = expected_form(tool, args)
    if tool == "show_map":
        assert s.map_searches == [args["query"]]
    elif tool == "send_email":
        assert {k: s.outbox[0][k] for k in form} == form if args["to"].strip() else s.outbox == []
    elif tool == "create_contact":
        assert s.contacts == [form]
    else:
        assert s.events[0]["title"] == args["title"]
        assert s.events[0]["begin_ms"] == epoch_ms(args["datetime"], "UTC")


def _e2e(rig, tool: str, examples: int, batch: int) -> None:
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(ARGUMENTS[tool], min_size=batch, max_size=batch))
    def run(values):
        for args in values:
            check_end_to_end(rig, tool, args)
    run()


@pytest.mark.parametrize("tool", sorted(ARGUMENTS))
def test_fuzz_end_to_end_sample(rig, tool):
    _e2e(rig, tool, examples=5, batch=5)


@pytest.mark.slow
@pytest.mark.parametrize("tool", sorted(ARGUMENTS))
def test_fuzz_end_to_end_10k_per_tool(rig, tool):
    _e2e(rig, tool, examples=examples_for(tool), batch=BATCH)
