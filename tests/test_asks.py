"""The asks-now readers: trained from contrastive pairs, saved (exported) and loaded, and used by the gate."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from mobile_actions.acting import gate
from mobile_actions.asks import AsksNow, AsksNowLM, train
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
    reader = AsksNow.load()
    assert reader is not None and 0.5 <= reader.threshold < 1 and reader.trained_on
    framings = load_framings()
    rng = random.Random(1)
    framed = [rng.choice(t).replace("{request}", r) for r in ASKS for t in framings.kinds.values()]
    assert sum(reader.p_not_asking(r) for r in ASKS) / len(ASKS) < 0.2
    assert sum(reader.p_not_asking(f) for f in framed) / len(framed) > 0.6


def test_the_classifier_trains_resumes_exports_and_reads_as_in_training(tmp_path):
    """`training.asks_reader` + `recipes/export_asks` on the tiny model: a killed run resumes from its
    checkpoint, the 8-bit export over the kept vocabulary gives the trained model's probabilities, calibration
    writes the threshold the runtime reads, and the gate refuses with the classifier's cue."""
    import torch

    from mobile_actions.recipes.export_asks import calibrate, prepare
    from mobile_actions.training.asks_reader import AsksReaderConfig, load_trained, read_reader
    from mobile_actions.training.asks_reader import train as train_lm
    from tests.test_export_support import tiny_model

    base = tiny_model()
    texts = [r for r in ASKS] + [f.format(r=r) for r in ASKS for f in FRAMES[:2]]
    labels = [False] * len(ASKS) + [True] * (2 * len(ASKS))
    cfg = AsksReaderConfig(out=str(tmp_path / "run"), base=str(base), layers=1, epochs=1.0, batch_size=9,
                           warmup_steps=1, save_every=1)
    short = AsksReaderConfig(**{**cfg.__dict__, "epochs": 1 / 3})   # "killed" after its first step
    train_lm(short, texts, labels, say=lambda _: None)
    assert torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["step"] == 1
    said: list[str] = []
    train_lm(AsksReaderConfig(**{**cfg.__dict__, "resume": True}), texts, labels, say=said.append)
    assert said[0] == "resumed at step 1/3"
    adapter = tmp_path / "run"
    folder, built = prepare(tmp_path / "onnx", adapter)
    assert built and not prepare(tmp_path / "onnx", adapter)[1]      # built once per adapter
    model = load_trained(adapter, base)
    reader = AsksNowLM.load(folder, threshold=0.5)
    tok = reader.tokenizer
    for text in ("note for later: open the wifi settings", "turn on the torch"):
        ids = torch.tensor([[reader.bos] + tok.encode(text).ids])
        with torch.no_grad():
            expected = torch.sigmoid(model(ids, torch.ones_like(ids))).item()
        assert reader.p_not_asking(text) == pytest.approx(expected, abs=0.03)
    report = calibrate(adapter, folder, texts, labels, max_asks_refused=0.0)
    assert report.startswith("threshold ") and 0.5 <= read_reader(folder)["threshold"] <= 0.999
    assert AsksNowLM.load(folder).threshold == read_reader(adapter)["threshold"]
    call = ToolCall("turn_on_flashlight", {})
    sure = AsksNowLM.load(folder, threshold=0.0)
    refused = gate([call], "note for later: turn on the torch", load_catalogue("mobile_actions"), reader=sure)[1]
    assert refused and refused[0].cue.startswith("asks-now-lm ")


@pytest.mark.slow
def test_the_prepared_classifier_tells_framed_requests_from_the_same_requests_asked():
    """The classifier `model prepare` exports from the bundled adapter (real model; skipped if not prepared)."""
    from mobile_actions.asks import LM_FOLDER
    from mobile_actions.caller.model import cache_dir

    folder = cache_dir(None) / LM_FOLDER
    if not (folder / "model.onnx").is_file():
        pytest.skip("run `mobile-actions model prepare` first")
    reader = AsksNowLM.load(folder)
    assert 0.5 <= reader.threshold < 1
    framings = load_framings()
    rng = random.Random(1)
    framed = [rng.choice(t).replace("{request}", r) for r in ASKS for t in framings.kinds.values()]
    assert all(reader.p_not_asking(r) < reader.threshold for r in ASKS)
    assert sum(reader.p_not_asking(f) >= reader.threshold for f in framed) / len(framed) > 0.6


def test_a_broken_classifier_folder_is_a_clear_error_not_a_traceback(tmp_path):
    from mobile_actions.errors import ModelError

    (tmp_path / "reader.json").write_text('{"bos_id": 2, "max_tokens": 8, "threshold": 0.9}', encoding="utf-8")
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="asks-now classifier cannot be loaded.*model prepare --force"):
        AsksNowLM.load(tmp_path)


def test_the_readers_train_on_the_older_acting_sets_only_and_read_their_labels_from_the_gold():
    """The sets measured on (act-zw and later, act-gh) must never reach training; a set written later neither."""
    from mobile_actions.recipes.train_asks import TRAINED_BENCH, acting_rows

    bench = Path(__file__).resolve().parents[1] / "mobile_actions" / "assets" / "bench"
    assert all((bench / f"{name}.jsonl").is_file() for name in TRAINED_BENCH)
    measured = {"act-zw", "act-zx", "act-zy", "act-ya", "act-yb", "act-gh"}
    assert not measured & set(TRAINED_BENCH)
    texts = dict(acting_rows("train") + acting_rows("heldout"))
    assert texts["don't open the wi-fi settings, I only wanted to see the signal bars"] is True   # act:negated
    assert texts["call Mum"] is False                                   # act:nofit: asks what no tool does
