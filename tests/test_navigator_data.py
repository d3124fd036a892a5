"""Episodes, splits, missing screenshots, the official prompt and training examples."""
import json
from pathlib import Path

import pytest

from mobile_actions.navigator.data import build_examples
from mobile_actions.navigator.episodes import (
    OdysseyDir, load_episode, load_episodes, load_split, parse_episode, require_screenshots, screenshot_report,
)
from mobile_actions.errors import EpisodeError, MissingScreenshotError
from mobile_actions.navigator.prompt import HISTORY, SCREEN, build_prompt, chatml, official_text

ODY = Path(__file__).parent / "fixtures" / "odyssey"


def test_load_v1_and_v2_fields():
    e1 = load_episode(ODY / "annotations" / "e1.json")
    assert e1.category == "General_Tool" and e1.step_length == 3 and e1.device.w == 1440
    assert [s.command.to_command() for s in e1.steps] == ["CLICK: (500, 500)", "SCROLL: UP", "COMPLETE"]
    e5 = load_episode(ODY / "annotations" / "e5.json")
    assert e5.steps[1].sam2_bbox == (250, 850, 400, 950)
    assert e5.steps[0].extra["low_level_instruction"] == "Scroll down the feed"
    assert parse_episode(e5.to_json(), "e5.json") == e5  # round trip


def test_splits_and_layout():
    assert load_split(ODY, "app")["train"] == ["e5.json", "e6.json"]
    assert [e.episode_id for e in load_episodes(ODY, "app", "test")] == ["e1", "e2", "e3", "e4"]
    assert len(load_episodes(ODY)) == 6
    d = OdysseyDir.at(ODY)
    assert d.annotations.name == "annotations" and d.screenshots.name == "screenshots"
    with pytest.raises(EpisodeError, match="task_split.json"):
        load_split(ODY, "task")


def test_malformed_episode_names_place(tmp_path):
    data = json.loads((ODY / "annotations" / "e1.json").read_text())
    data["steps"][1]["action"] = "DRAG"
    with pytest.raises(EpisodeError, match=r"bad.json: steps\[1\]"):
        parse_episode(data, "bad.json")
    del data["task_info"]
    with pytest.raises(EpisodeError, match="task_info"):
        parse_episode(data, "bad.json")


def test_missing_screenshot_report_and_policies():
    eps = load_episodes(ODY)
    rep = screenshot_report(ODY, eps)
    assert (rep.steps_total, rep.steps_missing, rep.episodes_total, rep.episodes_affected) == (16, 3, 6, 2)
    with pytest.raises(MissingScreenshotError) as exc:
        require_screenshots(ODY, eps, "error")
    assert exc.value.report.steps_missing == 3
    assert "3 of 16 steps (18.8 %) in 2 of 6 episodes" in str(exc.value)
    kept, _ = require_screenshots(ODY, eps, "skip-episode")
    assert [e.episode_id for e in kept] == ["e1", "e2", "e3", "e5"]
    kept, _ = require_screenshots(ODY, eps, "skip-step")
    assert len(kept) == 6


def test_prompt_is_the_official_text():
    p = build_prompt("set an alarm", [])
    assert official_text(p, "a.png") == (
        "Picture 1: <img>a.png</img>\nI'm looking for guidance on how to set an alarm\n"
        "Previous screenshots: None\nPrevious Actions: None\nProvide the command-style action directly."
    )
    p = build_prompt("x", ["A", "B", "C", "D", "E"])
    assert p.history_frames == 4
    assert official_text(p, "s.png") == (
        "Picture 1: <img>s.png</img>\nI'm looking for guidance on how to x\n"
        "Previous screenshots: <img>image-history: s.png</img>\n"
        "Previous Actions: 1. B\n2. C\n3. D\n4. E\n\nProvide the command-style action directly."
    )
    assert SCREEN in p.text and HISTORY in p.text
    assert chatml("hi").endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def test_examples_use_gold_history_most_recent_first(tmp_path):
    eps = load_episodes(ODY)
    with pytest.raises(MissingScreenshotError):
        build_examples(ODY, eps)
    xs, rep = build_examples(ODY, eps, on_missing="skip-step", his_len=4)
    assert len(xs) == 13 and rep.steps_missing == 3
    x = next(x for x in xs if (x.episode_id, x.step) == ("e1", 2))
    assert x.history_actions == ("CLICK: (500, 500)", "SCROLL: UP") and x.target == "COMPLETE"
    assert [p.name for p in x.history_screenshots] == ["e1_1.png", "e1_0.png"]
    x = next(x for x in xs if (x.episode_id, x.step) == ("e4", 2))  # e4_1.png is missing
    assert [p.name for p in x.history_screenshots] == ["e4_0.png"] and x.prompt.history_frames == 1
