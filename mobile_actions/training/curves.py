"""Loss curves and run files of training runs: one writer for every Trainer run.

`loss.csv` is rewritten at every log and `loss.png` at every save and at the end, from the
Trainer's log history (complete across resumes), on the main process only.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable

CSV_COLUMNS = ("step", "epoch", "loss", "eval_loss", "learning_rate", "grad_norm", "num_tokens", "seconds",
               "rss_mib", "peak_rss_mib")
# `seconds`: wall time of the optimizer steps since the previous log (forward, backward, update; not saving or
# evaluating), so that throughput per step is d(num_tokens) / seconds, resumed runs included. `rss_mib` and
# `peak_rss_mib`: the training process's resident memory at the log and its peak so far, so a run that the
# kernel kills out of memory leaves in its curve how it got there (blank where /proc is not).


def resident_mib() -> tuple[int, int] | None:
    """This process's resident memory and its peak so far, in MiB (`/proc/self/status`); None without /proc."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith(("VmRSS:", "VmHWM:")))
        return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None


def write_loss_curve(history: list[dict], out: Path, plot: bool = True, title: str | None = None) -> tuple[Path, Path]:
    """`out/loss.csv` (train and eval loss per logged step) and, with `plot`, `out/loss.png`."""
    rows = [h for h in history if "loss" in h or "eval_loss" in h]
    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = out / "loss.csv", out / "loss.png"
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for h in rows:
            # The Trainer's own count of tokens seen survives a resume; trl's `num_tokens` starts again from 0.
            h = {**h, "num_tokens": h.get("num_input_tokens_seen", h.get("num_tokens", ""))}
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
    import time

    from transformers import TrainerCallback

    class RunFiles(TrainerCallback):
        started: float | None = None
        seconds = 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            if self.started is not None:
                self.seconds += time.perf_counter() - self.started
                self.started = None

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs and state.log_history:   # a training log: the entry just appended
                state.log_history[-1]["seconds"] = round(self.seconds, 3)
                self.seconds = 0.0
                memory = resident_mib()
                if memory is not None:
                    state.log_history[-1]["rss_mib"], state.log_history[-1]["peak_rss_mib"] = memory
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


def read_steps(csv_path: Path, steps: int | None = None) -> dict[int, dict]:
    """step -> its row of a run's `loss.csv`, training steps only (the first `steps` of them)."""
    with open(csv_path, newline="", encoding="utf-8") as f:
        out = {int(r["step"]): r for r in csv.DictReader(f) if r.get("loss")}
    return {s: r for s, r in out.items() if steps is None or s <= steps}


def throughput(rows: dict[int, dict], steps: int, first: int = 1) -> float | None:
    """Training tokens per second over steps `first`..`steps` of `read_steps`'s rows (None without timings)."""
    timed = [rows[s] for s in sorted(rows) if first <= s <= steps]
    if not timed or not all(r.get("seconds") and r.get("num_tokens") for r in timed):
        return None
    seconds = sum(float(r["seconds"]) for r in timed)
    before = float(rows[first - 1]["num_tokens"]) if first > 1 else 0.0
    return (float(timed[-1]["num_tokens"]) - before) / seconds if seconds else None


def compare_loss_curves(runs: dict[str, Path], out: Path, steps: int, window: int = 25) -> str:
    """Two or more runs' loss per step on one plot (`out`, with a `window`-step running mean), and a
    table of their mean loss per window over the first `steps` steps, and their training tokens/s over
    those steps (runs that logged `seconds`): how to say two recipes train alike, and how fast."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    logs = {name: read_steps(path, steps) for name, path in runs.items()}
    losses = {name: {s: float(r["loss"]) for s, r in rows.items()} for name, rows in logs.items()}
    fig, ax = plt.subplots(figsize=(8, 4))
    for name, by_step in losses.items():
        xs = sorted(by_step)
        ys = [by_step[s] for s in xs]
        line, = ax.plot(xs, ys, alpha=0.3)
        mean = [sum(ys[max(0, i - window + 1):i + 1]) / len(ys[max(0, i - window + 1):i + 1]) for i in range(len(ys))]
        ax.plot(xs, mean, color=line.get_color(), label=f"{name} ({window}-step mean)")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("loss (model turn)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    names = list(losses)
    lines = ["| steps | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for start in range(1, steps + 1, window):
        cells = []
        for name in names:
            vals = [v for s, v in losses[name].items() if start <= s < start + window]
            cells.append(f"{sum(vals) / len(vals):.4f}" if vals else "–")
        lines.append(f"| {start}–{min(start + window - 1, steps)} | " + " | ".join(cells) + " |")
    timed = min((max(by_step) for by_step in losses.values() if by_step), default=0)   # steps every run has
    speeds = [throughput(rows, timed) for rows in logs.values()]
    if any(v is not None for v in speeds):
        lines.append(f"| training tokens/s, steps 1–{timed} | " + " | ".join(f"{v:,.0f}" if v else "–" for v in speeds)
                     + " |")
    return "\n".join(lines)
