"""The asks-now reader: trained from contrastive pairs, saved and loaded, and used by the gate."""
from __future__ import annotations

import random

import pytest

from mobile_actions.acting import gate
from mobile_actions.asks import AsksNow, shipped, train
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.datagen.seeds import load_framings

ASKS = ["turn on the torch", "email ana@example.com the slides", "add Omar 555 0199 to my contacts",
        "put dentist on friday at 3pm in my calendar", "show me the Louvre on the map", "open the wifi settings",
        "save Lena Fischer as a contact", "switch the flashlight off", "email the agenda to li@example.org"]
FRAMES = ["note for later: {r}", "tell my brother: {r}", "my boss keeps saying {r} lol", "todo list - {r}",
          "could you, hypothetically, {r}?", "forwarding to the team: {r}"]


@pytest.fixture(scope="module")
def reader() -> AsksNow:
    """A reader trained on every request asked and framed, but the last framing (held out)."""
    texts, labels = [], []
    for r in ASKS:
        texts.append(r)
        labels.append(False)
        for f in FRAMES[:-1]:
            texts.append(f.format(r=r))
            labels.append(True)
    pairs = list(zip(texts, labels))
    random.Random(0).shuffle(pairs)
    return train([t for t, _ in pairs], [lab for _, lab in pairs], bits=14, epochs=30, threshold=0.6)


def test_the_reader_learns_the_framing_not_the_request(reader, tmp_path):
    new = "pls turn off the flashlight"
    assert reader.p_not_asking(new) < 0.5
    assert reader.p_not_asking(f"note for later: {new}") > 0.6
    path = tmp_path / "asks.npz"
    reader.save(path)
    again = AsksNow.load(path)
    assert again.threshold == pytest.approx(0.6)
    assert again.p_not_asking(f"tell my brother: {new}") == pytest.approx(reader.p_not_asking(f"tell my brother: {new}"),
                                                                           abs=1e-2)


def test_the_gate_refuses_every_call_of_a_message_the_reader_is_sure_asks_nothing(reader):
    cat = load_catalogue("mobile_actions")
    call = ToolCall("turn_on_flashlight", {})
    framed = "note for later: turn on the torch"
    kept, refused = gate([call], framed, cat, reader=reader)
    assert kept == [] and refused[0].reason.startswith("the message reads as one that asks for nothing now")
    assert refused[0].cue.startswith("asks-now 0.")
    kept, refused = gate([call], "turn on the torch", cat, reader=reader)
    assert kept == [call] and not refused
    assert gate([call], framed, cat, reader=None)[0] == [call]   # no reader: the lexicon alone
    sms = Catalogue.from_json([{"name": "send_sms", "description": "Sends a text message.", "parameters": {
        "type": "object", "properties": {"to": {"type": "string"}, "text": {"type": "string"}}, "required": ["to"]}}])
    text = ToolCall("send_sms", {"to": "Raul", "text": "the keys are under the mat"})   # it sends what is dictated
    assert gate([text], "sms to Raul: the keys are under the mat", sms, reader=reader.with_threshold(0.0))[0] == [text]


def test_the_bundled_reader_tells_framed_requests_from_the_same_requests_asked():
    reader = shipped()
    assert reader is not None and 0.5 <= reader.threshold < 1 and reader.trained_on
    framings = load_framings()
    rng = random.Random(1)
    framed = [rng.choice(t).replace("{request}", r) for r in ASKS for t in framings.kinds.values()]
    assert sum(reader.p_not_asking(r) for r in ASKS) / len(ASKS) < 0.2
    assert sum(reader.p_not_asking(f) for f in framed) / len(framed) > 0.6


def test_the_probe_recipe_fits_a_threshold_that_refuses_at_most_its_share_of_asks(tmp_path):
    """`recipes/probe_asks`: the probe's threshold is read off held-out asks, as the reader's is; the act sets'
    labels come from their kinds (a request no tool serves still asks)."""
    import json

    import numpy as np

    from mobile_actions.recipes import probe_asks

    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.5
    x = rng.normal(size=(400, 8)) + np.where(y, 1.5, -1.5)[:, None] * np.eye(8)[0]
    p = probe_asks.fit(x, y)(x)
    assert ((p >= 0.5) == y).mean() > 0.9
    t = probe_asks.threshold(probe_asks.log_odds(p), y, asks_refused=0.01)
    assert (probe_asks.log_odds(p)[~y] >= t).sum() <= int(0.01 * (~y).sum())
    rows = tmp_path / "act.jsonl"
    rows.write_text("\n".join(json.dumps({"metadata": kind, "messages": [{"role": "user", "content": kind}]})
                              for kind in ("act:request", "act:nofit", "act:passon")), encoding="utf-8")
    assert probe_asks.act_messages([str(rows)])[1].tolist() == [False, False, True]
