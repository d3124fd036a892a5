"""AMS/SR, official and corrected, against hand-computed values.

Fixture (tests/fixtures/odyssey, predictions.jsonl), step by step — gold → prediction:
  e1 General_Tool   CLICK (500,500) → (560,580): d = √(.06²+.08²) = .100 ≤ .14 ✓ | SCROLL UP → "up" ✓ | COMPLETE ✓
  e2 General_Tool   CLICK (100,100) → (200,200): d = .1414 > .14 ✗ | PRESS_BACK ✓ | TYPE "hello world" → "hello" ✓ (containment)
  e3 Web_Shopping   TYPE "time: 10:30" → "time: tomorrow evening at 9": official compares "time" with "time" ✓;
                    corrected: no containment, ANLS = 1 − lev/26 < .5 ✗
                    TYPE "abc" → "": official ✓ ("" in "abc"), corrected ✗
  e4 Web_Shopping   SCROLL LEFT ✓ | LONG_PRESS (300,300) → no prediction | IMPOSSIBLE ✓
  e5 Social_Sharing SCROLL DOWN (tie) → RIGHT ✗ | CLICK (100,900) → (300,900): d = .2 but inside sam2 box ✓ |
                    LONG_PRESS → CLICK ✗ (action type)
  e6 Social_Sharing PRESS_HOME → "CLICK: (1, 2" unparseable ✗ | PRESS_RECENT ✓

Random split (mean over categories):
  official : GT 5/6 = 83.33, SR e1✓ e2✗ = 50 | WS 4/4 = 100, SR e3✓ (e4 skipped: 2 of 3 steps) = 100 |
             SS 2/5 = 40, SR 0 → AMS (83.33+100+40)/3 = 74.44, SR (50+100+0)/3 = 50.00
  corrected: GT 83.33, 50 | WS 2/5 = 40, SR 0/2 = 0 | SS 40, 0 → AMS 163.33/3 = 54.44, SR 50/3 = 16.67
App split (test = e1..e4, plain step accuracy):
  official : 9/10 = 90.00, SR e1✓ e2✗ e3✓ (e4 skipped) = 2/3 = 66.67
  corrected: 7/11 = 63.64, SR 1/4 = 25.00
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mobile_actions.navigator.actions import parse_command
from mobile_actions.navigator.episodes import load_episodes
from mobile_actions.errors import PredictionFileError
from mobile_actions.navigator.metrics import (
    evaluate, evaluate_both, levenshtein, match_corrected, match_official, read_predictions, text_match,
)

ODY = Path(__file__).parent / "fixtures" / "odyssey"
PRED = ODY / "predictions.jsonl"


@pytest.fixture(scope="module")
def preds():
    return read_predictions(PRED)


def test_random_split_both_modes(preds):
    r = evaluate_both(load_episodes(ODY, "random"), preds, split="random")
    o, c = r.official, r.corrected
    assert (o.ams, o.sr) == (74.44, 50.0)
    assert {x.category: (x.ams, x.sr) for x in o.per_category} == {
        "General_Tool": (83.33, 50.0), "Web_Shopping": (100.0, 100.0), "Social_Sharing": (40.0, 0.0)}
    assert (o.steps, o.correct, o.episodes_counted, o.episodes_skipped, o.missing_predictions) == (15, 11, 5, 1, 1)
    assert round(c.ams, 2) == 54.44 and round(c.sr, 2) == 16.67
    assert (c.steps, c.correct, c.episodes_counted, c.episodes_skipped) == (16, 9, 6, 0)
    assert [(d[1].episode_id, d[1].step) for d in r.differences] == [("e3", 0), ("e3", 1), ("e4", 1)]
    assert o.text_accuracy == 100.0 and round(c.text_accuracy, 2) == 33.33
    assert any("asserts exactly 6" in n for n in o.notes)


def test_app_split_step_averaging(preds):
    eps = load_episodes(ODY, "app", "test")
    o = evaluate(eps, preds, split="app", mode="official")
    c = evaluate(eps, preds, split="app", mode="corrected")
    assert (o.ams, o.sr, o.steps) == (90.0, 66.67, 10)
    assert (round(c.ams, 2), c.sr, c.steps) == (63.64, 25.0, 11)
    assert any("outside this split" in n for n in o.notes)


@pytest.mark.parametrize(
    "gt, pred, bbox, official, corrected",
    [
        ("CLICK: (500, 500)", "CLICK: (598, 598)", None, True, True),  # d = .1386
        ("CLICK: (500, 500)", "CLICK: (600, 600)", None, False, False),  # d = .1414
        ("CLICK: (0, 0)", "CLICK: (140, 0)", None, True, True),  # d = .14 exactly: ≤
        ("CLICK: (100, 900)", "CLICK: (300, 900)", (250, 850, 400, 950), True, True),  # sam2 box hit
        ("LONG_PRESS: (1, 1)", "CLICK: (1, 1)", None, False, False),  # action type differs
        ("SCROLL: DOWN", "SCROLL: down", None, True, True),
        ("SCROLL: DOWN", "SCROLL: UP", None, False, False),
        ("TYPE: hello world", "TYPE: hello wrld", None, True, True),  # ANLS 1 − 1/11
        ("TYPE: hello world", "TYPE: goodbye moon", None, False, False),
        ("TYPE: abc", "TYPE: ", None, True, False),  # empty TYPE
        ("TYPE: abc", "TYPE", None, True, False),  # no text at all
        ("TYPE: a:b", "TYPE: a:zzzz", None, True, False),  # truncation at ':'
        ("PRESS_BACK", "PRESS_BACK", None, True, True),
        ("PRESS_BACK", "PRESS_HOME", None, False, False),
        ("COMPLETE", "IMPOSSIBLE", None, False, False),
        ("CLICK: (1, 2)", "CLICK: (1, 2", None, False, False),  # unparseable
        ("CLICK: (1, 2)", "I would click the button", None, False, False),
    ],
)
def test_step_rules(gt, pred, bbox, official, corrected):
    assert match_official(pred, gt, bbox)[0] is official
    assert match_corrected(pred, parse_command(gt), bbox)[0] is corrected


def test_text_rules():
    assert levenshtein("kitten", "sitting") == 3
    assert text_match(" Hello ", "Hello")
    assert text_match("abcd", "abxy")  # 1 − 2/4 = .5 ≥ .5
    assert not text_match("abcd", "axyz")
    assert match_corrected(None, parse_command("PRESS_BACK")) == (False, "missing")
    assert match_corrected("TYPE: ", parse_command("TYPE: "))[0]  # empty gold, empty prediction


def test_prediction_file_errors(tmp_path, preds):
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"episode_id": "e1", "step": 0, "pred": "COMPLETE"}\n{"episode_id": "e1", "step": 0, "pred": "X"}\n')
    with pytest.raises(PredictionFileError, match=r"p.jsonl:2: duplicate"):
        read_predictions(bad)
    bad.write_text('{"episode_id": "e1"}\n')
    with pytest.raises(PredictionFileError, match=r"p.jsonl:1"):
        read_predictions(bad)
    bad.write_text('{"image": "/data/screenshots/e1_2.png", "pred": "COMPLETE"}\n')
    assert read_predictions(bad) == {("e1", 2): "COMPLETE"}
    eps = load_episodes(ODY, "random")
    with pytest.raises(PredictionFileError, match="does not have"):
        evaluate(eps, {("e1", 9): "COMPLETE"})
    with pytest.raises(PredictionFileError, match="no prediction"):
        evaluate(eps, {("zz", 0): "COMPLETE"})


def test_cli_eval_json_is_fast_and_torch_free():
    code = (
        "import sys, argparse, json; from mobile_actions.cli import navigator as cli\n"
        "p = argparse.ArgumentParser(); cli.register(p.add_subparsers())\n"
        f"a = p.parse_args(['navigator', 'eval', '--episodes', r'{ODY}', '--pred', r'{PRED}', '--json'])\n"
        "rc = a.func(a); assert 'torch' not in sys.modules and 'transformers' not in sys.modules; sys.exit(rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["official"]["ams"] == 74.44 and round(data["corrected"]["sr"], 2) == 16.67
    assert len(data["differences"]) == 3
