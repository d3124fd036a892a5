"""The OdysseyAgent (tiny random Qwen2-VL + history resampler) and the training recipe, on CPU."""
import csv
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from mobile_actions.navigator.model import build_tokenizer, fresh_agent, load_agent  # noqa: E402
from mobile_actions.navigator.processing import IM_END, AgentGeometry, ScreenProcessor, build_features, collate  # noqa: E402
from mobile_actions.navigator.prompt import build_prompt  # noqa: E402

ODY = Path(__file__).parent / "fixtures" / "odyssey"


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(["CLICK: (500, 300)", "SCROLL: UP", "TYPE: hello", "I'm looking for guidance on how to"], 300)


@pytest.fixture(scope="module")
def agent(tok):
    return fresh_agent(tok, "tiny", seed=0)


def _images(n):
    g = torch.Generator().manual_seed(0)
    return [Image.fromarray((torch.rand(64, 36, 3, generator=g) * 255).to(torch.uint8).numpy()) for _ in range(n)]


def _batch(agent, tok, history=2, answer="COMPLETE"):
    geo = AgentGeometry.from_config(agent.config)
    sp = ScreenProcessor(geo.image_size)
    ims = _images(history + 1)
    acts = ["CLICK: (1, 2)", "SCROLL: UP", "PRESS_BACK", "TYPE: hi"][:history]
    f = build_features(tok, sp, geo, build_prompt("open the clock", acts), ims[0], ims[1:], answer)
    return collate([f], tok.pad_token_id, agent.config.image_token_id)


def test_forward_backward_trains_adapter_not_vit(agent, tok):
    agent.train()
    agent.freeze_vision_tower()
    b0 = _batch(agent, tok, history=0)
    b2 = _batch(agent, tok, history=2)
    assert "history_index" not in b0 and b2["history_index"].tolist() == [[0, 0], [0, 1]]
    agent.zero_grad()
    loss = agent(**b2).loss + agent(**b0).loss
    assert torch.isfinite(loss)
    loss.backward()
    assert all(p.grad is None for n, p in agent.model.visual.named_parameters() if n.startswith("blocks."))
    assert agent.model.visual.merger.mlp[0].weight.grad is not None
    assert agent.history_resampler.proj.weight.grad.abs().sum() > 0
    assert agent.history_resampler.frame_embed.grad.abs().sum() > 0


def test_frame_order_is_encoded(agent):
    r = agent.history_resampler
    with torch.no_grad():
        r.frame_embed.normal_(0, 1.0)
        frames = torch.randn(1, 2, 4, r.proj.in_features)
        mask = torch.ones(1, 2, dtype=torch.bool)
        a = r(frames, mask)
        b = r(frames.flip(1), mask)
        assert not torch.allclose(a, b, atol=1e-5)  # swapping frames changes the summary
        r.frame_embed.zero_()
        assert torch.allclose(r(frames, mask), r(frames.flip(1), mask), atol=1e-5)  # the original: order-blind


def test_greedy_cache_matches_full_forward(agent, tok):
    agent.eval()
    with torch.no_grad():
        for p in agent.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    b = _batch(agent, tok, history=2, answer=None)
    b.pop("labels")
    b.pop("attention_mask")
    ids = agent.greedy(b, [tok.convert_tokens_to_ids(IM_END)], max_new_tokens=6)
    assert 1 <= len(ids) <= 6
    full = dict(b)
    full["input_ids"] = torch.cat([b["input_ids"], torch.tensor([ids[:-1]])], 1)
    full["mm_token_type_ids"] = (full["input_ids"] == agent.config.image_token_id).int()
    with torch.no_grad():
        logits = agent(**full).logits[0]
    L = b["input_ids"].shape[1]
    assert logits[L - 1:].argmax(-1).tolist() == ids


def test_save_load_round_trip(agent, tok, tmp_path):
    agent.eval()
    b = _batch(agent, tok, history=1)
    agent.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    again, tok2 = load_agent(tmp_path)
    again.eval()
    with torch.no_grad():
        assert torch.allclose(agent(**b).loss, again(**b).loss, atol=1e-5)
    assert tok2.convert_tokens_to_ids("<|history_pad|>") == agent.config.odyssey["history_token_id"]


def test_recipe_trains_resumes_and_serves_predictions(tmp_path):
    from mobile_actions.navigator.infer import Navigator
    from mobile_actions.recipes.train_navigator import NavigatorTrainConfig, main

    out = tmp_path / "run"
    cfg = dict(episodes=str(ODY), out=str(out), split="app", part="test", on_missing="skip-step", global_batch_size=2,
               per_device_batch_size=2, dataloader_workers=0, learning_rate=1e-3, progress=False, save_steps=2)
    r = main(NavigatorTrainConfig(max_steps=2, **cfg))
    assert r.steps == 2 and r.examples == 10 and r.screenshots_missing == 1
    assert (out / "loss.png").stat().st_size > 0 and (out / "checkpoint-2").is_dir()
    r = main(NavigatorTrainConfig(max_steps=3, **cfg))  # resumes from checkpoint-2
    assert r.steps == 3
    rows = list(csv.DictReader(open(out / "loss.csv")))
    assert [int(x["step"]) for x in rows] == [1, 2, 3]
    assert all(0 < int(x["rss_mib"]) <= int(x["peak_rss_mib"]) for x in rows)   # memory at every log
    nav = Navigator(str(out))
    p = nav.predict("set an alarm", _images(1)[0], ["CLICK: (1, 2)"], _images(1))
    assert isinstance(p.text, str) and (p.action is not None or p.error)
