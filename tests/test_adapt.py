"""`adapt`: a catalogue's rows, a LoRA within a time budget, its export and scores, on a tiny random Gemma 3."""
import json
from pathlib import Path

import pytest

from mobile_actions.recipes.adapt import AdaptConfig, AdaptError, budget_minutes, run
from tests.test_train_fixtures import TOOLS, tiny_ckpt  # noqa: F401  (fixture)


def test_budgets_read_as_people_write_them():
    assert budget_minutes("2h") == 120 and budget_minutes("90m") == 90 and budget_minutes("1h30m") == 90
    assert budget_minutes("45") == 45
    for bad in ("", "soon", "0m", "2x"):
        with pytest.raises(AdaptError, match="--budget"):
            budget_minutes(bad)


def _config(tmp_path, tiny_ckpt, **kw) -> AdaptConfig:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    return AdaptConfig(tools=str(tools), out=str(tmp_path / "out"), base=str(tiny_ckpt), start="none",
                       budget="30m", n_train=12, n_heldout=4, batch_size=2, grad_accum=1, epochs=1,
                       max_length=700, threads=2, before=False, **kw)


@pytest.mark.slow
def test_adapt_generates_trains_exports_and_scores_a_catalogue(tmp_path, tiny_ckpt):
    res = run(_config(tmp_path, tiny_ckpt), say=lambda m: None)
    out = tmp_path / "out"
    assert (out / "data" / "train.jsonl").is_file() and res.train_rows == 12 and res.heldout_rows == 4
    assert res.steps == 6 and (out / "adapter" / "adapter_config.json").is_file()
    assert (out / "onnx" / "manifest.json").is_file()
    [score] = res.scores
    assert score.caller == "adapted" and score.rows == 4
    report = json.loads((out / "adapt.json").read_text())
    assert report["steps"] == 6 and report["scores"][0]["rows"] == 4
    # the same folder again needs --resume; with it, nothing finished is done twice
    with pytest.raises(AdaptError, match="--resume"):
        run(_config(tmp_path, tiny_ckpt), say=lambda m: None)
    said: list[str] = []
    again = run(_config(tmp_path, tiny_ckpt, resume=True), say=said.append)
    assert again.steps == 6 and any("already finished" in m for m in said)
    assert not any("exporting" in m for m in said)


def test_a_budget_too_small_for_training_is_said_before_anything_long(tmp_path, tiny_ckpt):
    cfg = _config(tmp_path, tiny_ckpt)
    cfg.budget = "5m"
    with pytest.raises(AdaptError, match="leaves"):
        run(cfg, say=lambda m: None)


def test_a_time_budget_ends_training_with_a_checkpoint(tmp_path, tiny_ckpt):
    from mobile_actions.training.caller import CallerSFTConfig, train
    from tests.test_train_fixtures import write_rows

    rows = write_rows(tmp_path / "rows.jsonl", 8)
    res = train(CallerSFTConfig(data=str(rows), base=str(tiny_ckpt), out=str(tmp_path / "o"), method="lora",
                                max_minutes=0, batch_size=2, grad_accum=1, max_length=600, lora_r=4,
                                save_steps=100, final_eval=False, threads=2))
    assert res.steps == 1 and (tmp_path / "o" / "checkpoint-1").is_dir()


def test_replayed_requests_take_their_share_of_the_training_rows(tmp_path):
    from mobile_actions.catalog import Catalogue
    from mobile_actions.recipes.adapt import _write_rows

    seeds = Path(__file__).resolve().parents[1] / "datasets" / "seed-catalogues"
    cfg = AdaptConfig(tools="-", n_train=30, n_heldout=5, replay=str(seeds), replay_share=0.25)
    _write_rows(Catalogue.from_json(TOOLS), cfg, [], tmp_path / "train.jsonl", tmp_path / "heldout.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "train.jsonl").read_text().splitlines()]
    replayed = [r for r in rows if r.get("meta", {}).get("domain")]
    assert len(rows) == 40 and len(replayed) == 10
    assert len((tmp_path / "heldout.jsonl").read_text().splitlines()) == 5


def test_flags_parse_to_their_fields_types():
    import argparse

    from mobile_actions.recipes.adapt import add_arguments, config_from_args

    p = argparse.ArgumentParser()
    add_arguments(p)
    cfg = config_from_args(p.parse_args(["--tools", "t.json", "--threads", "2", "--lr", "3e-4", "--no-before"]))
    assert cfg.threads == 2 and cfg.lr == 3e-4 and cfg.before is False and cfg.eval is None
