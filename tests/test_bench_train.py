"""`bench train`: recipes take turns chunk by chunk; the table compares tokens/s over the same steps."""
from __future__ import annotations

import csv
import os
import threading
import time

import pytest

from mobile_actions.training.bench import (
    BenchTrainConfig, hold, parse_turns, run_bench, summarise, turn_file,
)
from tests.test_train_fixtures import rows_file, tiny_ckpt  # noqa: F401  (fixtures)


def test_turns_spec_is_checked(tmp_path):
    assert parse_turns(f"{tmp_path}/a.turn:10") == (tmp_path / "a.turn", 10)
    for bad in ("a.turn", "a.turn:0", "a.turn:x", ":3"):
        with pytest.raises(ValueError, match="--take-turns"):
            parse_turns(bad)


def test_a_run_waits_at_its_step_until_handed_that_step(tmp_path):
    turn = tmp_path / "fast.turn"
    waiter = threading.Thread(target=hold, args=(turn, 20, os.getppid()))
    waiter.start()
    deadline = time.time() + 5
    while not turn_file(turn, "at").is_file() and time.time() < deadline:
        time.sleep(0.05)
    assert turn_file(turn, "at").read_text() == "20"
    turn_file(turn, "go").write_text("10")   # an old turn is not this one
    time.sleep(0.6)
    assert waiter.is_alive()
    turn_file(turn, "go").write_text("20")
    waiter.join(timeout=5)
    assert not waiter.is_alive()


def write_log(path, seconds, tokens):
    path.mkdir(parents=True)
    with open(path / "loss.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "epoch", "loss", "eval_loss", "learning_rate", "grad_norm", "num_tokens", "seconds"])
        total = 0
        for step, (s, n) in enumerate(zip(seconds, tokens), 1):
            total += n
            w.writerow([step, 0, 0.1, "", 1e-4, 1.0, total, s])


def test_summary_compares_tokens_per_second_over_the_same_steps(tmp_path):
    write_log(tmp_path / "plain", [4, 4, 2, 2], [400, 400, 400, 400])
    write_log(tmp_path / "fast", [1, 1, 1, 1], [400, 400, 400, 400])
    res = summarise(tmp_path, ["plain", "fast"], steps=4, chunk=2)
    assert res.same_tokens
    assert res.tokens_per_second == {"plain": 1600 / 12, "fast": 400.0}
    assert res.median_chunk_ratio["fast"] == pytest.approx((4.0 + 2.0) / 2)
    assert "**3.00x**" in res.table and (tmp_path / "bench-train.md").is_file()

    write_log(tmp_path / "other", [1, 1, 1, 1], [400, 300, 400, 400])
    assert not summarise(tmp_path, ["plain", "other"], steps=4, chunk=2).same_tokens


@pytest.mark.slow
def test_bench_trains_each_recipe_in_turn_on_the_same_rows(tiny_ckpt, rows_file, tmp_path):
    said = []
    cfg = BenchTrainConfig(data=str(rows_file), out=str(tmp_path), steps=3, chunk=2,
                           train_flags=["--base", str(tiny_ckpt), "--batch-size", "2",
                                        "--max-length", "600", "--lora-r", "4", "--threads", "1",
                                        "--allocator", "system", "--no-fuse-elementwise"])
    res = run_bench(cfg, progress=said.append)
    assert [s.split(":")[0] for s in said] == ["plain", "fast", "plain", "fast"]
    assert res.same_tokens and set(res.tokens_per_second) == {"plain", "fast"}
    for name in ("plain", "fast"):
        assert len(list(csv.DictReader(open(tmp_path / name / "loss.csv")))) == 3
