"""Shell-injection fuzz: no argument value can run anything on the device.

Per tool, >= 10,000 generated argument values go through the real quoting (``command_line``) into the
phone's shell in-process (fast); a sample goes end to end through the real adb server; the full
10,000-per-tool end-to-end run is ``@pytest.mark.slow``. Each check: the phone recorded exactly the
planned argv lists (no other command ran) and stored every value verbatim.

Hypothesis draws a base string per example (metacharacter-heavy text, nasty tokens spliced in) and
each base yields ``VARIANTS`` derived values: hypothesis' own draws cost ~0.5 ms each here, too much
for 10,000 values per tool in the default suite.
"""

from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_actions.android.bindings import load_bindings
from mobile_actions.android.device import CommandTooLongError, command_line
from mobile_actions.android.dispatch import UI_DUMP_PATH, dispatch, epoch_ms, plan
from mobile_actions.android.phone import VirtualPhone
from mobile_actions.android.phone.core import invalid_recipient
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from mobile_actions.errors import StepFailedError
from tests.adb_fixtures import rig  # noqa: F401

BINDINGS = load_bindings("mobile_actions")
CATALOGUE = load_catalogue("mobile_actions")
TOOLS = ["create_calendar_event", "create_contact", "send_email", "show_map"]
NASTY = ["'", '"', ";", "&&", "||", "|", "&", "$(reboot)", "`reboot`", "$(id)", "\n", "\r\n", "$?", "$HOME", "\\",
         "${IFS}", "#", ">", "<", "*", "~", "%s", "-e", "--es", " ", "\t", "é", "日本", "🙂", "\u202e", "'\"'\"'",
         "\\'", "$((1))", "(", ")", "{", "}", "!", "?q=", "&q=", "%00", "%2", "+", "\x01", "\x7f", "; reboot #"]
META = list("'\"\\;&|$`()<>{}#*?~!%-= \t\n\r")
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
TEXT = st.text(alphabet=st.one_of(st.sampled_from(META), CHARS), max_size=24)
BASE = st.one_of(TEXT, st.tuples(TEXT, st.sampled_from(NASTY), TEXT).map("".join))
WHEN = st.integers(0, 250_000_000_000).map(lambda s: datetime(1971, 1, 1) + timedelta(seconds=s))
VARIANTS = 25
VALUES_PER_TOOL = 10_000


def variants(base: str, n: int = VARIANTS) -> list[str]:
    """``base``, then ``base`` with a nasty token spliced in at shifting places; every 8th base also
    yields one 1-10 kB value (base and token repeated)."""
    out = [base]
    for i in range(1, n):
        tok = NASTY[(i * 7 + len(base)) % len(NASTY)]
        cut = i % (len(base) + 1)
        out.append(base[:cut] + tok + base[cut:])
    if sum(map(ord, base)) % 8 == 0:
        unit = base + NASTY[len(base) % len(NASTY)]
        size = 1024 + (len(base) * 977) % 9217
        out[-1] = (unit * (size // len(unit) + 1))[:size]
    return out


def calls_for(tool: str, base: str, when: datetime) -> list[dict]:
    """Argument dicts for one base: string parameters take successive variants (optional ones on every
    other call); a datetime parameter takes ``when`` shifted by whole hours."""
    params = CATALOGUE[tool].parameters
    required = set(params.get("required", []))
    pool = iter(variants(base) * len(params["properties"]))
    out = []
    for i in range(VARIANTS):
        args = {}
        for name in params["properties"]:
            if name == "datetime":
                args[name] = (when + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%S")
            elif name in required or i % 2 == 0:
                args[name] = next(pool)
        out.append(args)
    return out


def examples_for(tool: str) -> int:
    """Enough bases that even calls with only the required arguments give 10,000 values."""
    required = len(CATALOGUE[tool].parameters.get("required", []))
    return -(-VALUES_PER_TOOL // (VARIANTS * required))


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


@pytest.mark.parametrize("tool", TOOLS)
def test_fuzz_in_process_10k_per_tool(tool):
    phone = VirtualPhone()
    seen = []

    @settings(max_examples=examples_for(tool), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(BASE, WHEN)
    def run(base, when):
        for args in calls_for(tool, base, when):
            check_in_process(phone, tool, args)
            seen.append(len(args))

    run()
    assert sum(seen) >= VALUES_PER_TOOL


def check_end_to_end(rig, tool: str, args: dict) -> None:
    rig.phone.reset()
    try:
        result = dispatch(ToolCall(tool, args), rig.device, bindings=BINDINGS, catalogue=CATALOGUE,
                          confirm=lambda p: True)
    except CommandTooLongError:     # over adb's 64 kB request limit: refused before anything ran
        assert rig.phone.state.commands in ([], [["getprop", "persist.sys.timezone"]])
        return
    except StepFailedError as e:    # the app refused it (no recipient, an empty contact): reported not done
        assert "not done" in str(e)
        assert not (tool == "send_email" and args["to"].strip() and invalid_recipient(args["to"]) is None)
        assert rig.phone.state.outbox == [] and rig.phone.state.contacts == []
        return
    planned = [list(o.result.argv) for o in result.outcomes if o.result is not None]
    extra = [["getprop", "persist.sys.timezone"]] if tool == "create_calendar_event" else []
    ui = [c for c in rig.phone.state.commands if c[0] in ("uiautomator", "cat")]
    assert [c for c in rig.phone.state.commands if c not in ui] == extra + planned
    assert all(c in (["uiautomator", "dump", UI_DUMP_PATH], ["cat", UI_DUMP_PATH]) for c in ui)
    s = rig.phone.state
    form = expected_form(tool, args)
    if tool == "show_map":
        assert s.map_searches == [args["query"]]
    elif tool == "send_email":
        if args["to"].strip() and invalid_recipient(args["to"]) is None:
            assert {k: s.outbox[0][k] for k in form} == form
        else:                                   # like Gmail: no recipient, or one that is no address: nothing sent
            assert s.outbox == []
    elif tool == "create_contact":
        assert s.contacts == [form]
    else:
        assert s.events[0]["title"] == args["title"]
        assert s.events[0]["begin_ms"] == epoch_ms(args["datetime"], "UTC")


def _e2e(rig, tool: str, examples: int, per_example: int) -> None:
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(BASE, WHEN)
    def run(base, when):
        for args in calls_for(tool, base, when)[:per_example]:
            check_end_to_end(rig, tool, args)
    run()


@pytest.mark.parametrize("tool", TOOLS)
def test_fuzz_end_to_end_sample(rig, tool):
    _e2e(rig, tool, examples=6, per_example=4)


@pytest.mark.slow
@pytest.mark.parametrize("tool", TOOLS)
def test_fuzz_end_to_end_10k_per_tool(rig, tool):
    _e2e(rig, tool, examples=examples_for(tool), per_example=VARIANTS)
