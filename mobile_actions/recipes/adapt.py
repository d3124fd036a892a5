"""Bring your own tools: adapt a caller to a catalogue in one command, within a time budget.

    mobile-actions adapt --tools my_tools.json --budget 2h --out runs/my-tools

1. **generate** training rows for the catalogue from the phrasing families' train side (one call, several,
   follow-ups, requests that must get no call, declined clauses), and held-out rows from the other side;
   your own rows (`--rows`) are added to training, your hand-written test rows (`--eval`) are only scored;
   `--replay` mixes in requests people wrote for other catalogues, so templates do not teach one way to ask;
2. **train** a LoRA from the caller you start from (`--start`: the bundled general caller, the Mobile Actions
   one, or an adapter of yours) until the budget left for training is spent, with checkpoints (`--resume` goes on);
3. **export** it to an ONNX folder (q8), the on-device caller `call --model`, `run --model` and `serve` take;
4. **evaluate** the start and the result on the same rows, on the on-device path with the gate: exact match,
   and requests that ask for nothing but got a call.

Training gets the budget minus what the other stages are expected to take (`RESERVE_MINUTES` and the rows to
score); each stage prints its progress and `OUT/adapt.json` keeps the numbers.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Sequence

from mobile_actions.recipes.machine import cpu_name

RESERVE_MINUTES = 5.0        # export and self-check (1.7 min on 2 EPYC cores) and loading the callers, with margin
SECONDS_PER_SCORED_ROW = 0.8  # on-device decoding and gating of one row (bench act: 0.42 s on 2 EPYC cores)


@dataclass
class AdaptConfig:
    """Everything `adapt` depends on; every field is a CLI flag (`--n-train 3000`)."""

    tools: str = field(default="", metadata={"help": "your catalogue: a JSON file of tool declarations"})
    out: str = field(default="runs/adapt", metadata={"help": "folder for the rows, the adapter, the export and "
                                                                 "adapt.json"})
    budget: str = field(default="2h", metadata={"help": "wall-clock for the whole journey (2h, 90m, 45m)"})
    start: str = field(default="general", metadata={
        "help": "the caller to adapt: general (the bundled caller for any catalogue), default (the bundled Mobile "
                "Actions caller), an adapter dir, or none (a new LoRA on the base)"})
    start_export: str | None = field(default=None, metadata={
        "help": "the start caller's ONNX export, to score it on-device (default: the prepared export for --start "
                "general or default; another start is scored on PyTorch)"})
    base: str = field(default="default", metadata={"help": "the base model (default: Gemma 3 270M from PyPI)"})
    rows: str | None = field(default=None, metadata={"help": "your own training rows, added to the generated ones"})
    rows_repeat: int = field(default=4, metadata={"help": "how many times each of your own rows is trained on"})
    eval: str | None = field(default=None, metadata={"help": "your hand-written test rows: scored, never trained on"})
    replay: str | None = field(default=None, metadata={
        "help": "a seed folder (DOMAIN.tools.json + DOMAIN.rows.jsonl, e.g. datasets/seed-catalogues) whose "
                "hand-written requests are mixed in, so the caller keeps how people ask while it learns your tools"})
    replay_share: float = field(default=0.25, metadata={"help": "the replayed rows' share of the training rows"})
    n_train: int = field(default=4000, metadata={"help": "generated training rows"})
    n_heldout: int = field(default=150, metadata={"help": "generated held-out rows (other phrasing families)"})
    declined_rate: float = field(default=0.2, metadata={
        "help": "share of generated rows with a clause that names an action without asking for it"})
    refusal_rate: float = field(default=0.15, metadata={"help": "share of generated rows no tool can serve"})
    seed: int = 0
    lr: float = 1e-4
    batch_size: int = 8
    grad_accum: int = 2
    epochs: float = field(default=3.0, metadata={"help": "at most this many passes; the budget usually ends it"})
    max_length: int = field(default=4096, metadata={
        "help": "longest training row in tokens; longer rows are left out (a catalogue of a dozen tools declares "
                "~2,000 tokens before the request)"})
    threads: int | None = None
    allocator: str = field(default="auto", metadata={
        "help": "memory allocator for training, as `train --allocator` (auto: tcmalloc or jemalloc when installed)"})
    quant: str = field(default="q8", metadata={"help": "the export's quantisation (see `export --quant`)"})
    before: bool = field(default=True, metadata={"help": "also score the start caller (--no-before: only the result)"})
    resume: bool = field(default=False, metadata={"help": "go on in an existing --out: keep its rows, resume "
                                                          "training from its last checkpoint, keep a finished export"})


@dataclass
class Score:
    """One caller on one set of rows, after the gate (what `run` would dispatch)."""
    caller: str
    data: str
    rows: int
    exact_pct: float | None
    non_requests_acted: str
    unrequested: int
    seconds: float


@dataclass
class AdaptResult:
    out: Path
    cpu: str
    train_rows: int
    heldout_rows: int
    steps: int
    minutes: dict[str, float]
    scores: list[Score]

    def table(self) -> str:
        lines = ["| caller | rows | n | exact | non-requests acted | unrequested calls |", "|---|---|---:|---:|---:|---:|"]
        lines += [f"| {s.caller} | {s.data} | {s.rows} | {s.exact_pct} % | {s.non_requests_acted} | {s.unrequested} |"
                  for s in self.scores]
        return "\n".join(lines)


class AdaptError(ValueError):
    """A problem with what `adapt` was given (said before anything long starts)."""


def budget_minutes(text: str) -> float:
    """"2h" -> 120, "90m" -> 90, "1h30m" -> 90, "45" -> 45 (minutes)."""
    m = re.fullmatch(r"\s*(?:(\d+(?:\.\d+)?)\s*h)?\s*(?:(\d+(?:\.\d+)?)\s*m?)?\s*", text or "")
    if not m or not (m.group(1) or m.group(2)):
        raise AdaptError(f"--budget {text!r}: expected a time such as 2h, 90m or 1h30m")
    minutes = float(m.group(1) or 0) * 60 + float(m.group(2) or 0)
    if minutes <= 0:
        raise AdaptError(f"--budget {text!r}: must be more than no time")
    return minutes


def run(cfg: AdaptConfig, say: Callable[[str], None] = print) -> AdaptResult:
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.dataset import load_rows

    t_start = time.time()
    budget = budget_minutes(cfg.budget)
    catalogue = load_catalogue(cfg.tools)
    own_rows = _checked_rows(cfg.rows, "--rows") if cfg.rows else []
    eval_rows = _checked_rows(cfg.eval, "--eval") if cfg.eval else []
    out = Path(cfg.out)
    if out.exists() and any(out.iterdir()) and not cfg.resume:
        raise AdaptError(f"{out} is not empty: --resume to go on there, or another --out")
    out.mkdir(parents=True, exist_ok=True)
    minutes: dict[str, float] = {}

    # 1. rows
    t0 = time.time()
    train_file, heldout_file = out / "data" / "train.jsonl", out / "data" / "heldout.jsonl"
    if not (cfg.resume and train_file.is_file() and heldout_file.is_file()):
        _write_rows(catalogue, cfg, own_rows, train_file, heldout_file)
    n_train, n_heldout = len(load_rows(train_file)[0]), len(load_rows(heldout_file)[0])
    minutes["generate"] = (time.time() - t0) / 60
    say(f"[adapt] {n_train} training rows, {n_heldout} held-out rows in {out / 'data'}")

    # 2. train, with what the budget leaves after the other stages
    scored = (n_heldout + len(eval_rows)) * (2 if cfg.before else 1)
    left = budget - (time.time() - t_start) / 60 - RESERVE_MINUTES - scored * SECONDS_PER_SCORED_ROW / 60
    if left < 1:
        raise AdaptError(f"--budget {cfg.budget}: leaves {left:.1f} min for training after generating, exporting "
                         f"and scoring {scored} rows; give more time or fewer rows (--n-heldout)")
    t0 = time.time()
    adapter = out / "adapter"
    steps = _train(cfg, train_file, adapter, left, say)
    minutes["train"] = (time.time() - t0) / 60

    # 3. export
    t0 = time.time()
    onnx = out / "onnx"
    if _stale(onnx / "manifest.json", adapter / "adapter_model.safetensors"):
        _export(cfg, adapter, onnx, heldout_file, say)
    minutes["export"] = (time.time() - t0) / 60

    # 4. scores, on-device with the gate
    t0 = time.time()
    sets = [("held-out (generated)", load_rows(heldout_file)[0])] + ([(f"yours ({Path(cfg.eval).name})", eval_rows)]
                                                                      if eval_rows else [])
    callers = ([("start: " + cfg.start, cfg.start_export or cfg.start)] if cfg.before and cfg.start != "none"
               else []) + [("adapted", str(onnx))]
    scores = [_score(label, spec, name, rows, out / "scores", say) for label, spec in callers for name, rows in sets]
    minutes["evaluate"] = (time.time() - t0) / 60
    minutes["total"] = (time.time() - t_start) / 60
    res = AdaptResult(out, cpu_name(), n_train, n_heldout, steps, {k: round(v, 1) for k, v in minutes.items()},
                      scores)
    (out / "adapt.json").write_text(json.dumps({"config": asdict(cfg), "cpu": res.cpu, "train_rows": n_train,
                                                "heldout_rows": n_heldout, "steps": steps, "minutes": res.minutes,
                                                "scores": [asdict(s) for s in scores]}, indent=2), encoding="utf-8")
    return res


def _stale(made: Path, source: Path) -> bool:
    """Whether `made` is missing or older than the `source` it is made from."""
    return not made.is_file() or (source.is_file() and source.stat().st_mtime > made.stat().st_mtime)


def _checked_rows(path: str, flag: str) -> list:
    from mobile_actions.dataset import load_rows

    try:
        rows, problems = load_rows(path, strict=False)
    except OSError as e:
        raise AdaptError(f"{flag} {path}: {e.strerror or e}") from None
    if problems:
        raise AdaptError(f"{flag}: {len(problems)} unreadable line(s), the first: {problems[0]}")
    if not rows:
        raise AdaptError(f"{flag} {path}: no rows")
    return rows


def _write_rows(catalogue, cfg: AdaptConfig, own_rows: Sequence[Any], train_file: Path, heldout_file: Path) -> None:
    """Generated rows in the catalogue's own order (so training runs their shared declarations once per step),
    and the person's own rows `rows_repeat` times each, shuffled in."""
    from random import Random

    from mobile_actions.datagen.generate import generate_rows

    common = dict(refusal_rate=cfg.refusal_rate, declined_rate=cfg.declined_rate, tool_order="catalogue")
    train = generate_rows(catalogue, cfg.n_train, cfg.seed, families="train", **common)
    train += [row.to_json() for row in own_rows for _ in range(max(cfg.rows_repeat, 0))]
    if cfg.replay:
        from mobile_actions.datagen.seeds import load_seeds, seed_rows

        if not 0 < cfg.replay_share < 1:
            raise AdaptError(f"--replay-share must be between 0 and 1, got {cfg.replay_share}")
        replayed = seed_rows(load_seeds(cfg.replay), part="train", seed=cfg.seed)
        want = round(len(train) * cfg.replay_share / (1 - cfg.replay_share))
        train += Random(cfg.seed).sample(replayed, min(want, len(replayed)))
    Random(cfg.seed).shuffle(train)
    heldout = generate_rows(catalogue, cfg.n_heldout, cfg.seed + 1, families="heldout", **common)
    for path, rows in ((train_file, train), (heldout_file, heldout)):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        tmp.replace(path)


def _train(cfg: AdaptConfig, data: Path, out: Path, minutes: float, say: Callable[[str], None]) -> int:
    """LoRA steps until the time for training is spent; the final adapter is written to `out`."""
    from mobile_actions.caller.model import read_marker
    from mobile_actions.training.caller import CallerSFTConfig, last_checkpoint, train

    if cfg.resume and (out / "adapter_config.json").is_file() and read_marker(out).get("steps"):
        say(f"[adapt] training already finished in {out} ({read_marker(out)['steps']} steps)")
        return int(read_marker(out)["steps"])
    say(f"[adapt] training for up to {minutes:.0f} min from {cfg.start} (progress: {out}/loss.csv)")
    res = train(CallerSFTConfig(
        data=str(data), out=str(out), base=cfg.base, init_adapter=None if cfg.start == "none" else cfg.start,
        layout="cache", max_length=cfg.max_length, epochs=cfg.epochs, max_minutes=minutes, lr=cfg.lr,
        batch_size=cfg.batch_size, grad_accum=cfg.grad_accum, scheduler="constant_with_warmup", warmup=0.03,
        seed=cfg.seed, shared_prefix=True, prompt_gradients="none", save_steps=20, save_total_limit=2,
        final_eval=False, threads=cfg.threads, allocator=cfg.allocator,
        resume="last" if cfg.resume and last_checkpoint(out) else None))
    if res.too_long:
        say(f"[adapt] warning: {res.too_long} of {res.train_rows + res.too_long} training rows are longer than "
            f"--max-length {cfg.max_length} and were left out (listed in {out}/too_long.txt)")
    say(f"[adapt] {res.steps} steps in {res.seconds / 60:.1f} min, final loss {res.final_loss}")
    return res.steps


def _export(cfg: AdaptConfig, adapter: Path, onnx: Path, heldout: Path, say: Callable[[str], None]) -> None:
    from mobile_actions.recipes.export_onnx import ExportConfig, check_problem
    from mobile_actions.recipes.export_onnx import run as export

    say(f"[adapt] exporting {adapter} to {onnx} ({cfg.quant})")
    res = export(ExportConfig(model=str(adapter), out=str(onnx), quant=cfg.quant, eval_data=str(heldout),
                              eval_rows=5), progress=lambda m: say(f"[export] {m}"))
    if (problem := check_problem(res.check)) is not None:
        say(f"[adapt] warning: the export's self-check says: {problem}")


def _score(label: str, spec: str, name: str, rows: Sequence[Any], out: Path, say: Callable[[str], None]) -> Score:
    from mobile_actions.hybrid.models import resolve_caller
    from mobile_actions.recipes.bench_act import run_variant

    caller = resolve_caller(spec, say)
    tag = re.sub(r"\W+", "-", f"{label}-{name}").strip("-")
    v = run_variant(tag, caller, rows, out, say)
    t = v.gated["all"].line()
    return Score(label, name, t["rows"], t["exact %"], t["non-requests acted"], t["unrequested"], round(v.seconds, 1))


def add_arguments(p: argparse.ArgumentParser) -> None:
    for f in fields(AdaptConfig):
        flag = "--" + f.name.replace("_", "-")
        helptext = f.metadata.get("help")
        if f.type in ("bool", bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=helptext)
        else:
            kind = {"int": int, "float": float}.get(str(f.type).split(" |")[0], str)   # "int | None": int
            p.add_argument(flag, type=kind, default=f.default, required=f.name == "tools", help=helptext)


def config_from_args(a: argparse.Namespace) -> AdaptConfig:
    return AdaptConfig(**{f.name: getattr(a, f.name) for f in fields(AdaptConfig)})


def main(args: argparse.Namespace) -> int:
    import logging

    from mobile_actions.errors import MobileActionsError
    from mobile_actions.hybrid.device import HybridError

    from mobile_actions.training.allocator import use_allocator

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    say = lambda m: print(m, file=sys.stderr, flush=True)   # noqa: E731
    try:
        cfg = config_from_args(args)
        if getattr(args, "own_process", False):   # a training process: started again with the allocator preloaded
            use_allocator(cfg.allocator)
        res = run(cfg, say)
    except (MobileActionsError, HybridError, FileNotFoundError, ValueError) as e:   # AdaptError is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"adapted caller: {res.out / 'onnx'} ({res.steps} steps; CPU: {res.cpu})")
    print("minutes: " + ", ".join(f"{k} {v}" for k, v in res.minutes.items()))
    print(res.table())
    print(f"use it: mobile-actions call --model {res.out / 'onnx'} --tools {args.tools} \"...\"")
    return 0
