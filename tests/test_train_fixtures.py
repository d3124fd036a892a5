"""Shared fixtures for the caller's model/train/eval tests: a tiny random Gemma 3 and short rows.

The tiny model (2 layers, hidden 64, a character-level Gemma-shaped vocabulary of 512) runs the
real recipe in seconds. Rows use a two-tool catalogue so they stay a few hundred tokens long.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

TOOLS = [
    {"function": {"name": "turn_on_flashlight", "description": "Turns the flashlight on.",
                  "parameters": {"type": "OBJECT", "properties": {}}}},
    {"function": {"name": "show_map", "description": "Shows a place on the map.",
                  "parameters": {"type": "OBJECT", "properties": {
                      "query": {"type": "STRING", "description": "The place."}}, "required": ["query"]}}},
]
DEV = "Current date and time given in YYYY-MM-DDTHH:MM:SS format: 2025-03-03T10:00:00\nDay of week is Monday\n" \
      "You are a model that can do function calling with the following functions\n"


def make_row(i: int) -> dict:
    if i % 2:
        user, call = "Light please", {"function": {"name": "turn_on_flashlight", "arguments": {}}}
    else:
        user, call = f"Map of place {i}", {"function": {"name": "show_map", "arguments": {"query": f"place {i}"}}}
    return {"metadata": "train", "tools": TOOLS,
            "messages": [{"role": "developer", "content": DEV}, {"role": "user", "content": user},
                         {"role": "assistant", "tool_calls": [call]}]}


def write_rows(path: Path, n: int, *, long_rows: int = 0) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps(make_row(i)) + "\n")
        for i in range(long_rows):  # far over any test max_length
            row = make_row(0)
            row["messages"][1]["content"] = "Map of " + "very " * 200 + "far place"
            f.write(json.dumps(row) + "\n")
    return path


# Session fixtures imported into several test modules get one definition per module; this cache
# makes them build once per session all the same (the tiny run is the expensive part).
_CACHE: dict = {}


def _once(key, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory) -> Path:
    from tests.tiny import make_tiny_model

    return _once(("tiny", id(tmp_path_factory)), lambda: make_tiny_model(tmp_path_factory.mktemp("tiny") / "ckpt", sliding_window=64))


@pytest.fixture(scope="session")
def rows_file(tmp_path_factory) -> Path:
    return _once(("rows", id(tmp_path_factory)),
                 lambda: write_rows(tmp_path_factory.mktemp("rows") / "rows.jsonl", 6, long_rows=1))


@pytest.fixture(scope="session")
def tiny_run(tiny_ckpt, rows_file, tmp_path_factory):
    """A LoRA run of 2 steps (a checkpoint each step), shared by the train and eval tests."""
    from mobile_actions.training.caller import CallerSFTConfig, train

    out = tmp_path_factory.getbasetemp() / "tiny-run" / "lora"
    cfg = CallerSFTConfig(data=str(rows_file), eval=str(rows_file), base=str(tiny_ckpt), out=str(out),
                          method="lora", max_steps=2, batch_size=2, grad_accum=1, save_steps=1,
                          max_length=600, eval_limit=2, eval_batch_size=2, lr=1e-2, lora_r=4,
                          eval_max_new_tokens=8, gradient_checkpointing=True, threads=2)
    return _once(("run", id(tmp_path_factory)), lambda: (cfg, train(cfg)))
