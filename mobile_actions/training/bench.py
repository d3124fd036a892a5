"""Training throughput of recipes over the same steps, taken in turn (what ``mobile-actions bench train`` runs).

Why in turn: a shared CPU's speed drifts by up to ~30 % over tens of minutes, and a training process's
own speed changes as it ages (glibc's heap fragments), so two runs one after the other compare the
machine's moods as much as the recipes. Here every recipe trains in its own process, loaded once; the
bench hands the turn to one process at a time for CHUNK optimizer steps while the others wait, so
drift falls on all alike. A step's seconds are its own (forward, backward, update: `seconds` in the
run's `loss.csv`), never the waiting. All recipes see the same rows in the same order (same data, seed
and batch shape), which the table checks (tokens per step).

The default pair is this toolkit's recipe (`fast`: the CPU fast path, the step-level prefix, compiled
elementwise chains) against trl + peft as they come at their best (`plain`: same precision and
allocator, no gradient checkpointing). `--recipe NAME=FLAGS` sets others.
"""
from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mobile_actions.training.curves import compare_loss_curves, read_steps, throughput

DEFAULT_RECIPES = {"plain": "--no-cpu-fast-path --no-shared-prefix --no-gradient-checkpointing", "fast": ""}
POLL = 0.2   # seconds between looks at a turn file


def parse_turns(spec: str) -> tuple[Path, int]:
    """`PATH:CHUNK`, as `train --take-turns` gets it from the bench."""
    path, sep, chunk = spec.rpartition(":")
    if not sep or not path or not chunk.isdigit() or int(chunk) < 1:
        raise ValueError(f"--take-turns {spec!r}: expected PATH:CHUNK with CHUNK a positive number of steps")
    return Path(path), int(chunk)


def turn_file(turn: Path, kind: str) -> Path:
    """`<turn>.at` (the step a run waits at) or `<turn>.go` (the step it may go on from)."""
    return turn.with_name(f"{turn.name}.{kind}")


def hold(turn: Path, step: int, parent: int) -> None:
    """Say the run waits at `step` (`<turn>.at`) and wait until the bench hands it the turn from there
    (`<turn>.go`), or stop if the bench (process `parent`) is gone."""
    write_atomic(turn_file(turn, "at"), str(step))
    go = turn_file(turn, "go")
    while not (go.is_file() and go.read_text().strip() == str(step)):
        if os.getppid() != parent:
            raise RuntimeError(f"--take-turns: the bench that started this run is gone (waiting at step {step})")
        time.sleep(POLL)


def take_turns_callback(spec: str):
    """A trainer callback that holds its run before the first step and after every CHUNK steps until the
    bench hands it the turn (transformers is imported here, in the training process only)."""
    from transformers import TrainerCallback

    turn, chunk = parse_turns(spec)
    parent = os.getppid()

    class TakeTurns(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            hold(turn, state.global_step, parent)

        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step % chunk == 0 and state.global_step < state.max_steps:
                hold(turn, state.global_step, parent)

    return TakeTurns()


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@dataclass
class BenchTrainConfig:
    data: str
    out: str = "runs/bench-train"
    steps: int = 20
    chunk: int = 10
    recipes: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_RECIPES))
    train_flags: list[str] = field(default_factory=list)   # given to every recipe (init adapter, batch, lr, ...)
    # the program that trains one recipe in its own process (`train`'s flags, plus --take-turns)
    train_command: list[str] = field(default_factory=lambda: [sys.executable, "-m", "mobile_actions.recipes.train_caller"])


@dataclass
class BenchTrainResult:
    table: str                       # markdown: loss per chunk, tokens/s, ratios
    tokens_per_second: dict[str, float]
    median_chunk_ratio: dict[str, float]   # each recipe against the first, median over chunks
    same_tokens: bool


def run_bench(cfg: BenchTrainConfig, progress=lambda line: print(line, flush=True)) -> BenchTrainResult:
    """Start every recipe, hand the turn around chunk by chunk until each has trained `steps` steps, and
    table their loss and throughput over the same steps."""
    if cfg.steps < 1 or cfg.chunk < 1:
        raise ValueError("--steps and --chunk must be at least 1")
    if len(cfg.recipes) < 2:
        raise ValueError("bench train compares at least two recipes")
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    procs: dict[str, subprocess.Popen] = {}
    logs = []
    try:
        for name, flags in cfg.recipes.items():
            turn = out / f"{name}.turn"
            for kind in ("at", "go"):
                turn_file(turn, kind).unlink(missing_ok=True)
            cmd = [*cfg.train_command, "--data", cfg.data, *cfg.train_flags,
                   *shlex.split(flags),
                   "--out", str(out / name), "--max-steps", str(cfg.steps), "--take-turns", f"{turn}:{cfg.chunk}",
                   "--no-final-eval", "--save-steps", str(10 * cfg.steps)]
            log = open(out / f"{name}.log", "w", encoding="utf-8")
            logs.append(log)
            procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        for name in procs:   # all loaded before anyone is timed
            wait_at(procs[name], out / f"{name}.turn", 0, name)
        for start in range(0, cfg.steps, cfg.chunk):
            end = min(start + cfg.chunk, cfg.steps)
            for name, proc in procs.items():
                t = time.perf_counter()
                write_atomic(turn_file(out / f"{name}.turn", "go"), str(start))
                wait_at(proc, out / f"{name}.turn", end, name, last=end == cfg.steps)
                progress(f"{name}: steps {start + 1}-{end} in {time.perf_counter() - t:.1f} s")
        for name, proc in procs.items():
            if proc.wait() != 0:
                raise RuntimeError(f"bench train: recipe {name!r} failed (exit {proc.returncode}); see {out / name}.log")
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
        for log in logs:
            log.close()
    return summarise(out, list(cfg.recipes), cfg.steps, cfg.chunk)


def wait_at(proc: subprocess.Popen, turn: Path, step: int, name: str, last: bool = False) -> None:
    """Until the run waits at `step` (or, after its last step, has ended)."""
    at = turn_file(turn, "at")
    while True:
        if at.is_file() and at.read_text().strip() == str(step):
            return
        if proc.poll() is not None:
            if last and proc.returncode == 0:
                return
            raise RuntimeError(f"bench train: recipe {name!r} stopped before step {step} "
                               f"(exit {proc.returncode}); see {turn.parent / name}.log")
        time.sleep(POLL)


def summarise(out: Path, names: list[str], steps: int, chunk: int) -> BenchTrainResult:
    """Loss per chunk and tokens/s over the same steps (curves' table), and each recipe's speed-up over
    the first per chunk: its median, and the whole run's ratio."""
    runs = {name: out / name / "loss.csv" for name in names}
    table = compare_loss_curves(runs, out / "loss.png", steps, window=chunk)
    rows = {name: read_steps(path, steps) for name, path in runs.items()}
    tokens = {name: {s: float(r["num_tokens"]) for s, r in by_step.items()} for name, by_step in rows.items()}
    same = all(tokens[n] == tokens[names[0]] for n in names)

    chunks = [(a, min(a + chunk - 1, steps)) for a in range(1, steps + 1, chunk)]
    per_chunk = {n: [throughput(rows[n], b, first=a) for a, b in chunks] for n in names}
    overall = {n: throughput(rows[n], steps) for n in names}
    ratios = {n: statistics.median(x / y for x, y in zip(per_chunk[n], per_chunk[names[0]])) for n in names[1:]}
    lines = [table, "", "| steps | " + " | ".join(f"{n} tokens/s" for n in names) + " | "
             + " | ".join(f"{n} / {names[0]}" for n in names[1:]) + " |",
             "|---|" + "---:|" * (2 * len(names) - 1)]
    for i, (a, b) in enumerate(chunks if len(chunks) > 1 else []):
        cells = [f"{per_chunk[n][i]:,.0f}" for n in names] + [f"{per_chunk[n][i] / per_chunk[names[0]][i]:.2f}x"
                                                                for n in names[1:]]
        lines.append(f"| {a}–{b} | " + " | ".join(cells) + " |")
    lines.append(f"| **1–{steps}** | " + " | ".join(f"**{overall[n]:,.0f}**" for n in names) + " | "
                 + " | ".join(f"**{overall[n] / overall[names[0]]:.2f}x** (median per chunk {ratios[n]:.2f}x)"
                              for n in names[1:]) + " |")
    if not same:
        lines.append("\nwarning: the recipes did not see the same tokens at every step; the ratio compares different work")
    res = BenchTrainResult(table="\n".join(lines), tokens_per_second=overall, median_chunk_ratio=ratios, same_tokens=same)
    (out / "bench-train.md").write_text(res.table + "\n", encoding="utf-8")
    (out / "bench-train.json").write_text(json.dumps(asdict(res), indent=1) + "\n", encoding="utf-8")
    return res
