"""Loss curves and run files for the recipes: one writer for every Trainer run.

`loss.csv` is rewritten at every log and `loss.png` at every save and at the end, from the
Trainer's log history (complete across resumes), on the main process only.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable

CSV_COLUMNS = ("step", "epoch", "loss", "eval_loss", "learning_rate", "grad_norm", "num_tokens")


def write_loss_curve(history: list[dict], out: Path, plot: bool = True, title: str | None = None) -> tuple[Path, Path]:
    """`out/loss.csv` (train and eval loss per logged step) and, with `plot`, `out/loss.png`."""
    rows = [h for h in history if "loss" in h or "eval_loss" in h]
    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = out / "loss.csv", out / "loss.png"
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for h in rows:
            w.writerow([h.get(k, "") for k in CSV_COLUMNS])
    if plot and rows:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        tr = [(h["step"], h["loss"]) for h in rows if "loss" in h]
        ev = [(h["step"], h["eval_loss"]) for h in rows if "eval_loss" in h]
        if tr:
            ax.plot(*zip(*tr), label="train loss", marker="." if len(tr) < 50 else None)
        if ev:
            ax.plot(*zip(*ev), "o-", label="eval loss")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("loss")
        if title:
            ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(png_path, dpi=100)
        plt.close(fig)
    return csv_path, png_path


def run_files_callback(out: Path, title: str | None = None, on_save: Callable[[int], None] | None = None):
    """A TrainerCallback keeping `out/loss.csv` and `out/loss.png` current; `on_save(step)` runs after each
    checkpoint is written (the caller recipe puts its marker there). Built in a function: transformers is
    imported only when training."""
    from transformers import TrainerCallback

    class RunFiles(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero:
                write_loss_curve(state.log_history, out, plot=False)

        def on_save(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                write_loss_curve(state.log_history, out, title=title)
                if on_save is not None:
                    on_save(state.global_step)

        def on_train_end(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                write_loss_curve(state.log_history, out, title=title)

    return RunFiles()
