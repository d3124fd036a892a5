"""The learned model of whether a request asks for anything (`mobile_actions.asking`), and how the gate uses it."""
import json
import math

import pytest

from mobile_actions import acting, asking
from mobile_actions.asking import AskModel, features, read_model, tokens
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from mobile_actions.errors import CatalogueError
from mobile_actions.recipes.train_asks import fit, threshold_for

CAT = load_catalogue("mobile_actions")
TORCH = ToolCall("turn_on_flashlight", {})


def test_values_a_person_writes_are_placeholders_not_cues():
    toks = tokens('Email ana@x.com "don\'t panic" at 5, call +44 7700 900123?')
    assert toks == ["email", "<email>", "<quote>", "at", "<num>", "call", "<phone>", "?"]
    assert {"<s> email", "? </s>", "<quote>"} <= features('Email ana@x.com "don\'t panic" at 5, call +44 7700 900123?')


def test_the_score_is_a_logistic_of_the_ngrams_and_the_threshold_decides():
    model = AskModel({"lol": 3.0, "<s> turn": -2.0}, 0.0, 0.9)
    assert model.p_nothing("lol") == pytest.approx(1 / (1 + math.exp(-3.0)))
    assert model.asks_nothing("lol") is not None and model.asks_nothing("turn it on lol") is None


@pytest.mark.parametrize("body, says", [
    ("{", "not a request model"),
    ('{"weights": {"a": 1}, "bias": 0}', "threshold"),
    ('{"weights": {"a": NaN}, "bias": 0, "threshold": 0.9}', "finite"),
    ('{"weights": {"a": 1}, "bias": 0, "threshold": 1.5}', "threshold"),
])
def test_a_broken_model_file_is_refused_naming_the_file(tmp_path, body, says):
    path = tmp_path / "en.asks.json"
    path.write_text(body)
    with pytest.raises(CatalogueError, match=says) as e:
        read_model(path)
    assert str(path) in str(e.value)


def test_the_bundled_model_loads_and_says_what_it_was_trained_and_calibrated_on():
    model = asking.load()
    assert model is not None and 0.5 < model.threshold < 1.0 and len(model.weights) > 500
    assert model.trained_on["dev"] and not set(model.trained_on["dev"]) & set(model.trained_on["row files"])
    assert read_model(asking.model_path()).to_json() == json.loads(asking.model_path().read_text())


@pytest.fixture
def lol_model(monkeypatch):
    """A bundled model that reads any request with "lol" as asking for nothing."""
    model = AskModel({"lol": 10.0}, -5.0, 0.9)
    monkeypatch.setattr(asking, "load", lambda language=None: model)
    return model


def test_the_gate_refuses_what_the_cues_let_through_when_the_model_reads_no_request(lol_model):
    kept, refused = acting.gate([TORCH], "the torch on this phone is so bright lol", CAT)
    assert kept == [] and "learned request model" in refused[0].why
    assert acting.gate([TORCH], "the torch on this phone is so bright", CAT) == ([TORCH], [])


def test_a_cue_that_asks_is_surer_than_the_model(lol_model):
    assert acting.gate([TORCH], "can you turn on the torch lol", CAT) == ([TORCH], [])


def test_a_cue_that_refuses_still_gives_its_own_reason(lol_model):
    _, refused = acting.gate([TORCH], "don't turn on the torch lol", CAT)
    assert "says not to" in refused[0].why


def test_nothing_is_handed_to_a_navigator_for_a_request_the_model_reads_as_none(lol_model):
    declined = acting.asks_nothing("what a day lol")
    assert declined is not None and declined.score is not None and "learned" in declined.why
    assert acting.asks_nothing("open the camera") is None


def test_training_separates_and_the_threshold_keeps_the_requests_asked():
    rows = [(f"cat{i % 8}", text, lab) for i in range(64)
            for text, lab in ((f"please book slot {i}", 0), (f"i already booked slot {i} lol", 1))]
    model = fit(rows, min_catalogues=3, l2=1e-4, steps=200)
    dev = [("please book the early slot", 0), ("book me one", 0), ("already did it lol", 1)]
    tau, report = threshold_for(model, dev, max_false=0.0)
    assert report["dev requests refused"] == 0 and report["dev non-requests refused"] == 1
    assert model.p_nothing("already did it lol") > 0.8 > 0.2 > model.p_nothing("please book the early slot")
