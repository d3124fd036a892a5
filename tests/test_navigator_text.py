"""The text navigator's contract: a uiautomator dump read as labelled elements, GUI actions as calls over a
per-screen catalogue (the grammar admits only on-screen labels, the prompt does not list them twice), calls
to GUI Odyssey commands and back, and recordings turned into Mobile Actions rows."""
from __future__ import annotations

import json

import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.decoding.grammar import CallGrammar, accepts
from mobile_actions.errors import ScreenError
from mobile_actions.navigator.actions import Action
from mobile_actions.navigator.screen import MAX_DUMP_BYTES, parse_hierarchy
from mobile_actions.navigator.text import (describe_call, from_action, recording_examples, screen_catalogue,
                                           to_action)

pytest.importorskip("mobile_actions.android.phone.core")


@pytest.fixture()
def phone():
    from mobile_actions.android.phone.core import VirtualPhone

    return VirtualPhone(serial="vphone-text")


def _screen(phone):
    from mobile_actions.android.phone import render

    return parse_hierarchy(render.ui_xml(phone))


def test_home_screen_elements_have_unique_labels(phone):
    screen = _screen(phone)
    labels = [e.label for e in screen.elements]
    assert len(labels) == len(set(labels))
    assert {"Contacts", "Notes", "Chrome", "Settings"} <= {e.label for e in screen.actionable}
    assert screen.package == "com.android.launcher3" and screen.size == (1080, 2400)
    assert '"Notes" button' in screen.describe()


def test_switch_state_and_symbol_buttons_are_described(phone):
    phone.launch("com.android.contacts")
    screen = _screen(phone)
    assert "Create contact" in [e.label for e in screen.actionable]     # the "+" FAB, by its content-desc
    phone.swipe(540, 40, 540, 900)
    qs = _screen(phone)
    assert '"Bluetooth" switch off' in qs.describe()


@pytest.mark.parametrize("dump, reason", [
    ("<hierarchy><node", "not XML"),
    ('<!DOCTYPE x [<!ENTITY a "b">]><hierarchy/>', "DTD"),
    ('<hierarchy><node bounds="[0,0]" clickable="true" text="x"/></hierarchy>', "bounds"),
])
def test_bad_dumps_are_refused_with_a_reason(dump, reason):
    with pytest.raises(ScreenError, match=reason):
        parse_hierarchy(dump)


def test_oversized_dump_is_refused():
    with pytest.raises(ScreenError, match="limit"):
        parse_hierarchy(b" " * (MAX_DUMP_BYTES + 1))


def test_grammar_admits_only_labels_on_the_screen_and_the_prompt_does_not_list_them(phone):
    screen = _screen(phone)
    cat = screen_catalogue(screen)
    g = CallGrammar(cat)
    assert accepts(g, wire.render_call(ToolCall("tap", {"target": "Notes"})))
    assert not accepts(g, wire.render_call(ToolCall("tap", {"target": "Bluetooth"})))
    assert accepts(g, wire.render_call(ToolCall("press_home", {})))
    prompt = wire.render([{"role": "user", "content": "x"}], cat, add_generation_prompt=True, layout="cache")
    assert "x-enum" not in prompt and "Notes" not in prompt
    # the declarations are the same on every screen: their prompt prefix is shared across steps
    phone.launch("com.mobileactions.notes")
    other = screen_catalogue(_screen(phone))
    assert wire.render([], other, layout="cache") == wire.render([], cat, layout="cache")


def test_typing_is_offered_only_where_a_field_has_the_focus_and_types_the_goals_words(phone):
    """Typed text with no focused field goes nowhere: the grammar refuses `type_text` there, the prompt is
    unchanged (the declaration stays), and a form's focused field makes it callable again."""
    typing = wire.render_call(ToolCall("type_text", {"text": "hi"}))
    home = screen_catalogue(_screen(phone))
    assert not accepts(CallGrammar(home), typing)
    assert accepts(CallGrammar(home), wire.render_call(ToolCall("tap", {"target": "Notes"})))
    phone.launch("com.mobileactions.notes")
    phone.tap(*_screen(phone).element("New note").center)
    form = _screen(phone)
    assert any(e.kind == "field" and e.focused for e in form.elements)
    assert accepts(CallGrammar(screen_catalogue(form)), typing)
    assert not accepts(CallGrammar(screen_catalogue(form)), wire.render_call(ToolCall("finish", {})))  # not saved yet
    assert wire.render([], home, layout="cache") == wire.render([], screen_catalogue(form), layout="cache")
    # with the goal, the typed text is a span of the goal: not words the model read on the screen
    goal = screen_catalogue(form, "write a note saying buy milk")
    assert accepts(CallGrammar(goal), wire.render_call(ToolCall("type_text", {"text": "buy milk"})))
    assert not accepts(CallGrammar(goal), wire.render_call(ToolCall("type_text", {"text": "Save"})))


def test_a_switch_goal_taps_a_switch_in_the_other_state_and_never_one_already_right(phone):
    """The hierarchy says whether a switch the goal names is in the asked state: while it is not, tapping it
    is the only step offered (no `finish`, no second swipe); a switch already right cannot be tapped back;
    other goals keep every action."""
    swipe = wire.render_call(ToolCall("swipe", {"direction": "down"}))
    finish, tap = (wire.render_call(ToolCall(n, a)) for n, a in (("finish", {}), ("tap", {"target": "Airplane mode"})))
    phone.swipe(540, 40, 540, 900)
    shade = _screen(phone)
    for goal in ("Turn on airplane mode", "turn airplane mode on", "enable flight mode please",
                 "turn on Bluetooth and airplane mode"):
        assert not accepts(CallGrammar(screen_catalogue(shade, goal)), finish), goal
        assert accepts(CallGrammar(screen_catalogue(shade, goal)), tap), goal
        assert not accepts(CallGrammar(screen_catalogue(shade, goal)), swipe), goal
    assert accepts(CallGrammar(screen_catalogue(shade, "turn off airplane mode")), finish)
    assert not accepts(CallGrammar(screen_catalogue(shade, "turn off airplane mode")), tap)
    assert accepts(CallGrammar(screen_catalogue(shade, "turn off airplane mode")), swipe)
    assert accepts(CallGrammar(screen_catalogue(shade, "check the weather in Chrome")), finish)
    # "turn on Bluetooth and turn off the torch": each switch gets its own state
    mixed = screen_catalogue(shade, "turn on Bluetooth and turn off the torch")
    assert not accepts(CallGrammar(mixed), finish)
    assert not accepts(CallGrammar(mixed), wire.render_call(ToolCall("tap", {"target": "Flashlight"})))
    assert wire.render([], mixed, layout="cache") == wire.render([], screen_catalogue(shade), layout="cache")


@pytest.mark.parametrize("goal, fields", [
    ("set a timer for 10 minutes pls", {"Minutes": "10"}),
    ("timer half an hour", {"Minutes": "30"}),
    ("quarter of an hour timer for the eggs", {"Minutes": "15"}),
    ("an hour and a half timer for the roast", {"Hours": "1", "Minutes": "30"}),
    ("90 seconds timer", {"Minutes": "1", "Seconds": "30"}),
    ("wake me at 6:30 and start a 5 min timer", {"Minutes": "5"}),   # a time of day is no timer's length
    ("open the timer", {}),
])
def test_a_timers_fields_take_the_length_the_goal_says_in_digits_or_words(phone, goal, fields):
    """The Timer tab's Hours/Minutes/Seconds (`screens.json` duration_fields) take the goal's length of time as
    the caller's grounding reads it ("half an hour": Minutes 30), typed although the goal never writes "30"."""
    from mobile_actions.navigator.goals import form_values

    phone.launch("com.google.android.deskclock")
    phone.tap(*_screen(phone).element("Timer").center)
    form = _screen(phone)
    assert {k: v for k, v in form_values(goal, form).items() if k in ("Hours", "Minutes", "Seconds")} == fields
    if fields:
        first = next(iter(fields))
        phone.tap(*form.element(first).center)
        g = CallGrammar(screen_catalogue(_screen(phone), goal))
        assert accepts(g, wire.render_call(ToolCall("type_text", {"text": fields[first]})))
        assert not accepts(g, wire.render_call(ToolCall("long_press", {"target": first})))


def test_the_recorders_timer_lengths_read_back_as_recorded():
    """Every way the recorder says a timer's length is read back by the guards as the fields it types."""
    from mobile_actions.navigator.goals import duration_values, split_duration
    from mobile_actions.datagen.navigator_demos import TIMER_FIELDS, TIMER_LENGTHS

    for seconds, said in TIMER_LENGTHS.items():
        for words in said:
            assert duration_values(f"set a timer for {words}", TIMER_FIELDS) == split_duration(seconds, TIMER_FIELDS)


def test_a_form_gets_the_values_the_goal_gives_its_fields_then_the_goals_button(phone):
    """"email a@b.co about Invoice saying running late": the focused field takes its value and nothing else
    is offered; while a field lacks its value, tapping such a field is the step (no Send, no finish); once all
    hold theirs, the Send button the goal's verb names is; a field already filled is not tapped again."""
    from mobile_actions.navigator.goals import form_values

    goal = "send an email to a@b.co about Invoice saying running late"
    call = lambda name, **a: wire.render_call(ToolCall(name, a))   # noqa: E731
    phone.launch("com.google.android.gm")
    phone.tap(*_screen(phone).element("Compose").center)
    form = _screen(phone)
    assert form_values(goal, form) == {"To": "a@b.co", "Subject": "Invoice", "Compose email": "running late"}
    g = CallGrammar(screen_catalogue(form, goal))
    assert accepts(g, call("type_text", text="a@b.co"))
    assert not accepts(g, call("type_text", text="a@b.co about Invoice"))
    assert not accepts(g, call("tap", target="Send")) and not accepts(g, call("press_back"))
    phone.type_text("a@b.co")
    g = CallGrammar(screen_catalogue(_screen(phone), goal))
    assert accepts(g, call("tap", target="Subject")) and accepts(g, call("tap", target="Compose email"))
    assert not accepts(g, call("tap", target="Send")) and not accepts(g, call("finish"))
    for label, text in (("Subject", "Invoice"), ("Compose email", "running late")):
        phone.tap(*_screen(phone).element(label).center)
        phone.type_text(text)
    g = CallGrammar(screen_catalogue(_screen(phone), goal, ['tap "Subject"', 'type_text "Invoice"']))
    assert accepts(g, call("tap", target="Send"))
    assert not accepts(g, call("tap", target="Subject")) and not accepts(g, call("finish"))
    assert not accepts(g, call("press_home"))
    # the goal's verb is done once its button has been tapped
    assert accepts(CallGrammar(screen_catalogue(_screen(phone), goal, ['tap "Send"'])), call("tap", target="Cancel"))


def test_once_the_goals_last_verb_is_tapped_finish_is_the_only_step(phone):
    """"copy its name" on a place card: Copy is the step (not Copy address), then nothing but finish; a goal
    whose copy comes before another verb goes on, and so does one that ends on a send."""
    call = lambda name, **a: wire.render_call(ToolCall(name, a))   # noqa: E731
    phone.run("am start -a android.intent.action.VIEW -d 'geo:0,0?q=Eiffel%20Tower'")
    card = _screen(phone)
    g = CallGrammar(screen_catalogue(card, "copy its name"))
    assert accepts(g, call("tap", target="Copy")) and not accepts(g, call("tap", target="Copy address"))
    g = CallGrammar(screen_catalogue(card, "copy its name", ['tap "Copy"']))
    assert accepts(g, call("finish"))
    assert not accepts(g, call("tap", target="Copy address")) and not accepts(g, call("press_home"))
    g = CallGrammar(screen_catalogue(card, "copy the address and paste it in Notes", ['tap "Copy address"']))
    assert accepts(g, call("press_home"))
    # a send changes the screen (an app may ask to confirm it): what comes after it stays the navigator's call
    phone.launch("com.google.android.gm")
    g = CallGrammar(screen_catalogue(_screen(phone), "send it to a@b.co", ['tap "Send"']))
    assert accepts(g, call("press_back")) and accepts(g, call("finish"))


def test_a_back_goal_is_not_a_way_home(phone):
    phone.launch("com.mobileactions.notes")
    home = wire.render_call(ToolCall("press_home", {}))
    assert not accepts(CallGrammar(screen_catalogue(_screen(phone), "back out of this screen")), home)
    assert accepts(CallGrammar(screen_catalogue(_screen(phone), "go back to the home screen")), home)
    assert accepts(CallGrammar(screen_catalogue(_screen(phone), "open Notes, then go back to Chrome")), home)


def test_calls_convert_to_gui_odyssey_commands_and_back(phone):
    screen = _screen(phone)
    notes = screen.element("Notes")
    act = to_action(ToolCall("tap", {"target": "Notes"}), screen)
    x, y = notes.center
    assert act == Action("CLICK", point=(round(1000 * x / 1080), round(1000 * y / 2400)))
    assert from_action(act, screen) == ToolCall("tap", {"target": "Notes"})
    assert to_action(ToolCall("swipe", {"direction": "down"}), screen) == Action("SCROLL", direction="DOWN")
    assert to_action(ToolCall("show_recent_apps", {}), screen) == Action("PRESS_RECENT")
    assert to_action(ToolCall("give_up", {}), screen) == Action("IMPOSSIBLE")
    with pytest.raises(ScreenError, match="Bluetooth"):
        to_action(ToolCall("tap", {"target": "Bluetooth"}), screen)
    assert describe_call(ToolCall("type_text", {"text": "hi"})) == 'type_text "hi"'


def test_recordings_become_rows_that_train(tmp_path):
    from mobile_actions.dataset import load_rows, prompt_completion
    from mobile_actions.datagen.navigator_demos import HELD_OUT_TEMPLATES, TEMPLATES, record_tasks

    assert len(TEMPLATES) >= 30 and len(HELD_OUT_TEMPLATES) >= 5
    record_tasks(tmp_path / "rec", seed=5, repeats=1)
    train = recording_examples(str(tmp_path / "rec"), "task", "train")
    test = recording_examples(str(tmp_path / "rec"), "task", "test")
    assert train and test and not {x.goal for x in train} & {x.goal for x in test}
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(x.row()) + "\n" for x in train[:20]))
    rows, problems = load_rows(path)
    assert not problems and len(rows) == 20
    prompt, completion = prompt_completion(rows[1], layout="cache")
    assert "Goal: " in prompt and "Done so far:" in prompt and completion.startswith(wire.START_CALL)


def test_hierarchy_names_are_bare_file_names(tmp_path):
    from mobile_actions.errors import EpisodeError
    from mobile_actions.datagen.navigator_demos import record_tasks

    record_tasks(tmp_path, seed=1, repeats=1)
    ann = next((tmp_path / "annotations").glob("*.json"))
    data = json.loads(ann.read_text())
    data["steps"][0]["hierarchy"] = "../../etc/passwd"
    ann.write_text(json.dumps(data))
    with pytest.raises(EpisodeError, match="bare|hierarchies"):
        recording_examples(str(tmp_path))


def test_step_wise_prediction_scores_with_the_gui_odyssey_metrics(tmp_path):
    """`navigator predict --model text:…` path: a caller that answers the gold call scores 100 AMS/SR on the
    held-out templates; one that never answers scores 0."""
    from mobile_actions.navigator.episodes import load_episodes
    from mobile_actions.navigator.metrics import evaluate_both
    from mobile_actions.datagen.navigator_demos import record_tasks
    from mobile_actions.navigator.text import GoalSteps, predict_recording, user_turn
    from mobile_actions.runtime import result_from_raw

    record_tasks(tmp_path, seed=2, repeats=1)
    # the gold call of each step, whatever step of its goal (`GoalSteps`) the navigator is asked about
    gold = {user_turn(part, x.screen, x.done): x.call
            for x in recording_examples(str(tmp_path), "task", "test") for part in GoalSteps(x.goal).parts}

    class Oracle:
        def call_messages(self, messages, tools):
            return result_from_raw(wire.render_call(gold[messages[-1]["content"]]), tools, {})

    class Mute:
        def call_messages(self, messages, tools):
            return result_from_raw("I am not sure.", tools, {})

    episodes = load_episodes(tmp_path, "task", "test")
    for caller, ams in ((Oracle(), 100.0), (Mute(), 0.0)):
        preds = {(e, s): p for e, s, p in predict_recording(caller, str(tmp_path), "task", "test")}
        report = evaluate_both(episodes, preds, split="task")
        assert report.corrected.ams == ams and report.official.ams == ams


def test_every_demonstrated_step_is_admitted_by_its_screens_grammar(tmp_path):
    """The per-screen grammar (labels on the screen, typing only into a focused field, no `finish` beside one,
    switch goals, forms, final-verb buttons, Back) never refuses what a demonstration does: one recorded
    episode of every template."""
    from mobile_actions.datagen.navigator_demos import TEMPLATES, record_tasks

    record_tasks(tmp_path, seed=7, repeats=1, scale=0.1)
    examples = recording_examples(str(tmp_path), None, "train")
    assert {ex.goal for ex in examples} and len({ex.goal for ex in examples}) >= len(TEMPLATES) - 2
    refused = [(ex.goal, ex.call) for ex in examples
               if not accepts(CallGrammar(screen_catalogue(ex.screen, ex.goal, ex.done)), wire.render_call(ex.call))]
    assert not refused


def test_a_goal_of_several_steps_moves_on_when_one_is_finished(phone):
    """A 270M navigator says `finish` after the first step of "send ... then go to the home screen": the next
    step becomes the goal on the same screen; a goal whose parts are not all requests stays whole."""
    from mobile_actions.navigator.text import GoalSteps, next_call

    class Caller:   # finishes whatever goal mentions Gmail, presses Home for the rest
        def __init__(self):
            self.goals = []

        def call_messages(self, msgs, tools):
            goal = msgs[-1]["content"].splitlines()[0]
            self.goals.append(goal)
            name = "finish" if "email" in goal else "press_home"
            return type("Out", (), {"calls": [ToolCall(name, {})], "raw": "", "text": ""})()

    goal = GoalSteps("send a@b.co an email titled Hi, then go to the home screen")
    assert goal.parts == ["send a@b.co an email titled Hi", "go to the home screen"]
    caller = Caller()
    assert next_call(caller, goal, _screen(phone), []).result.calls[0].name == "press_home"
    assert caller.goals == ["Goal: send a@b.co an email titled Hi", "Goal: go to the home screen"]
    assert next_call(caller, goal, _screen(phone), []).result.calls[0].name == "press_home"   # the last step stays
    # an object listed after a step shares its verb; a part that is neither stays inside the goal
    assert GoalSteps("Open Notes, then Chrome, then switch back to Notes").parts == [
        "Open Notes", "Open Chrome", "switch back to Notes"]
    assert GoalSteps("turn on the wifi and then bluetooth").parts == ["turn on the wifi", "turn on bluetooth"]
    assert GoalSteps("write a note saying buy milk and eggs").parts == ["write a note saying buy milk and eggs"]
    assert GoalSteps("Open Notes. Then Chrome").parts == ["Open Notes", "Open Chrome"]
    assert GoalSteps("open Notes, then the thing I told you about yesterday").parts == [
        "open Notes, then the thing I told you about yesterday"]
    # the runner's hand-over of an entry a call made is one step: its details are that entry's, whatever verbs
    # they hold (split, the navigator finished "open the event ..." and left the form before the length)
    made = "open the event 'deep work block' and put it in the calendar, duration 150"
    assert GoalSteps(made).parts == [made]


def test_a_goal_that_opens_an_app_taps_its_icon_on_the_home_screen(phone):
    home = _screen(phone)
    assert "launcher" in home.package and home.element("Chrome") and home.element("Notes")
    cat = screen_catalogue(home, "open Notes")
    assert accepts(CallGrammar(cat), wire.render_call(ToolCall("tap", {"target": "Notes"})))
    assert not accepts(CallGrammar(cat), wire.render_call(ToolCall("tap", {"target": "Chrome"})))
    assert not accepts(CallGrammar(cat), wire.render_call(ToolCall("finish", {})))
    # an app not on the screen, or a goal that does more than open it, is left to the navigator
    for goal in ("open Spotify", "open Notes and write buy milk"):
        assert accepts(CallGrammar(screen_catalogue(home, goal)), wire.render_call(ToolCall("tap", {"target": "Chrome"})))


def test_a_goal_with_text_to_type_is_not_finished_before_it_is_typed(phone):
    finish = wire.render_call(ToolCall("finish", {}))
    home = _screen(phone)
    assert not accepts(CallGrammar(screen_catalogue(home, "write a note saying buy milk", ['tap "Bluetooth"'])), finish)
    assert accepts(CallGrammar(screen_catalogue(home, "write a note saying buy milk", ['type_text "buy milk"'])), finish)
    assert accepts(CallGrammar(screen_catalogue(home, "look at the notifications")), finish)
