"""Virtual-phone demonstrations come out as GUI Odyssey episodes the loader and evaluator accept."""
import json
import random
import re

import pytest

pytest.importorskip("mobile_actions.android.phone.core")

from mobile_actions.navigator.data import build_examples  # noqa: E402
from mobile_actions.navigator.episodes import load_episodes, screenshot_report  # noqa: E402
from mobile_actions.navigator.metrics import evaluate_both  # noqa: E402
from mobile_actions.datagen.navigator_demos import RecordError, Recorder, record_episode, tasks_for  # noqa: E402


def test_recorded_episodes_round_trip(tmp_path):
    for sub in ("annotations", "screenshots"):
        (tmp_path / sub).mkdir()
    tasks = {t.template: t for t in tasks_for(random.Random(3))}
    for tpl in ("add_contact", "toggle_tile", "back_to_app"):
        ep = record_episode(tasks[tpl], tmp_path, f"vp-{tpl}")
        (tmp_path / "annotations" / f"vp-{tpl}.json").write_text(json.dumps(ep))
    eps = load_episodes(tmp_path)
    assert screenshot_report(tmp_path, eps).ok
    cmds = {e.episode_id: [s.command.to_command() for s in e.steps] for e in eps}
    assert cmds["vp-toggle_tile"][0] == "SCROLL: DOWN" and cmds["vp-toggle_tile"][-1] == "COMPLETE"
    assert "PRESS_RECENT" in cmds["vp-back_to_app"] and "PRESS_HOME" not in cmds["vp-back_to_app"][:1]
    assert any(c.startswith("TYPE: ") for c in cmds["vp-add_contact"])
    assert all(0 <= v <= 1000 for e in eps for s in e.steps if s.action == "CLICK" and isinstance(s.info, list) for v in s.info[0])
    xs, _ = build_examples(tmp_path, eps)
    assert len(xs) == sum(len(e.steps) for e in eps)
    gold = {(x.episode_id, x.step): x.target for x in xs}
    r = evaluate_both(eps, gold)
    assert r.official.ams == 100.0 and r.corrected.sr == 100.0


def test_script_errors_are_typed(tmp_path):
    from mobile_actions.android.phone.core import VirtualPhone

    (tmp_path / "screenshots").mkdir()
    rec = Recorder(VirtualPhone(), tmp_path, "x")
    with pytest.raises(RecordError, match="no clickable 'Nonexistent'"):
        rec.tap("Nonexistent")


def test_an_episode_can_start_inside_an_app(tmp_path):
    """A navigator also runs after tool calls left an app open: such episodes first leave it."""
    (tmp_path / "screenshots").mkdir()
    tasks = {t.template: t for t in tasks_for(random.Random(5))}
    ep = record_episode(tasks["new_note"], tmp_path, "vp-note", start="com.android.chrome")
    assert ep["steps"][0]["action"] == "CLICK" and ep["steps"][0]["info"] == "KEY_HOME"
    shade = record_episode(tasks["toggle_tile"], tmp_path, "vp-tile", start="com.android.contacts")
    assert shade["steps"][0]["action"] == "SCROLL"            # the shade opens over any app
    home = record_episode(tasks["new_note"], tmp_path, "vp-note-home")
    assert home["steps"][0]["info"] != "KEY_HOME"
    from mobile_actions.android.phone.apps import APPS
    from mobile_actions.datagen.navigator_demos import START_APPS

    assert sorted(START_APPS) == sorted(a.package for a in APPS)     # every app of the phone, none twice


def test_everyday_apps_are_demonstrated_as_a_text_navigator_can_repeat_them(tmp_path):
    """A slider is tapped on the level the goal says, at the centre of the element the text navigator reads
    there ("Display brightness 30%"); after Send the thread keeps its reply field focused, so a texting
    demonstration leaves it before finishing."""
    from mobile_actions.navigator.screen import parse_hierarchy
    from mobile_actions.navigator.text import from_action
    from mobile_actions.navigator.actions import Action

    (tmp_path / "screenshots").mkdir()
    (tmp_path / "hierarchies").mkdir()
    task = {t.template: t for t in tasks_for(random.Random(4))}["brightness_tile"]
    ep = record_episode(task, tmp_path, "vp-bright")
    assert [s["action"] for s in ep["steps"]] == ["SCROLL", "SCROLL", "CLICK", "COMPLETE"]
    said = int(re.search(r"(\d+)|half", task.instruction).group(0).replace("half", "50"))
    screen = parse_hierarchy((tmp_path / "hierarchies" / ep["steps"][2]["hierarchy"]).read_bytes())
    tap = from_action(Action("CLICK", point=tuple(ep["steps"][2]["info"][0])), screen)
    assert tap.arguments["target"] == f"Display brightness {said}%"
    tasks = {t.template: t for t in tasks_for(random.Random(4))}
    text = record_episode(tasks["text_contact"], tmp_path, "vp-text")
    assert [s["info"] for s in text["steps"][-2:]] == ["KEY_BACK", ""]


def _offered(example) -> bool:
    """The demonstrated call is one the text navigator's grammar admits on its screen (guards applied)."""
    from mobile_actions.navigator.text import screen_catalogue

    tools = {t["function"]["name"]: t["function"]
             for t in screen_catalogue(example.screen, example.goal, example.done).to_openai()}
    fn = tools.get(example.call.name)
    if fn is None or fn["parameters"].get("x-callable") is False:
        return False
    props = fn["parameters"].get("properties", {})
    return all(v in props[k].get("x-enum", [v]) for k, v in example.call.arguments.items() if k in props)


@pytest.mark.parametrize("family", ["look-alike", "saved-items", "edits", "entry-details"])
def test_changes_to_saved_items_are_demonstrated_as_the_guards_admit_them(tmp_path, family):
    """Each change among look-alikes or to an item named as people name it ("priya", "the dentist thing", "pls
    ... thx", "my 6:30 alarm", "the note with the old wifi password"), and each give-up where the item is not
    there, reaches its checked state (`record_episode` checks it), and every step is one the grammar offers: a
    value typed over a selection after a long press and Select all, the right contact, note or event of several;
    the details of an event a tool just made, each in the field it fills."""
    from mobile_actions.datagen.navigator_demos import FAMILIES
    from mobile_actions.navigator.text import episode_examples, recording_steps

    (tmp_path / "screenshots").mkdir()
    (tmp_path / "annotations").mkdir()
    for seed in range(3):
        for task in FAMILIES[family](random.Random(seed)):
            ep = record_episode(task, tmp_path, f"vp-{task.template}-{seed}", scale=0.05)
            (tmp_path / "annotations" / f"vp-{task.template}-{seed}.json").write_text(json.dumps(ep))
    moves = set()
    for ep, steps in recording_steps(str(tmp_path)):
        examples = episode_examples(ep.task.instruction, steps)
        assert all(_offered(x) for x in examples), ep.episode_id
        moves |= {x.call.name for x in examples}
    assert {"long_press", "type_text"} <= moves and (family != "look-alike" or "give_up" in moves)
