"""GUI Odyssey episodes and splits from a local directory (v1 and v2 fields).

The official layout is ``data/{annotations/*.json, screenshots/*.png, splits/*_split.json}``; a flat
directory (episode JSON and PNGs side by side) also works, which is what small test sets and the virtual
phone recorder use. Screenshots are referenced by file name; the public release lacks ~20 % of them, so
:func:`screenshot_report` says exactly which steps and episodes are affected before anything trains on them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

from .actions import Action, from_raw
from mobile_actions.errors import EpisodeError, MissingScreenshotError, NavigatorError

SPLITS = ("random", "task", "device", "app")
CATEGORIES = (
    "General_Tool",
    "Information_Management",
    "Web_Shopping",
    "Media_Entertainment",
    "Social_Sharing",
    "Multi_Apps",
)
V2_STEP_FIELDS = ("description", "intention", "context", "low_level_instruction", "sam2_bbox")
EXTRA_STEP_FIELDS = V2_STEP_FIELDS + ("hierarchy",)   # hierarchy: this toolkit's recordings (text navigator)
MissingPolicy = Literal["error", "skip-step", "skip-episode"]


@dataclass(frozen=True)
class DeviceInfo:
    product: str = ""
    release_version: str = ""
    sdk_version: str = ""
    h: int = 0
    w: int = 0
    device_name: str = ""


@dataclass(frozen=True)
class TaskInfo:
    category: str
    app: tuple[str, ...]
    meta_task: str
    task: str
    instruction: str


@dataclass(frozen=True)
class Step:
    """One annotated step. ``action``/``info`` are the raw labels; :attr:`command` is what the model sees."""

    index: int
    screenshot: str
    action: str
    info: Any
    ps: Any = None
    sam2_bbox: tuple[float, float, float, float] | None = None  # v2, clicks only
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # other v2 fields, kept verbatim

    @property
    def command(self) -> Action:
        return from_raw(self.action, self.info)


@dataclass(frozen=True)
class Episode:
    episode_id: str
    device: DeviceInfo
    task: TaskInfo
    step_length: int
    steps: tuple[Step, ...]
    source: str = ""  # annotation file name, as split files list it

    @property
    def instruction(self) -> str:
        return self.task.instruction

    @property
    def category(self) -> str:
        return self.task.category

    def to_json(self) -> dict[str, Any]:
        """The GUI Odyssey annotation JSON (round-trips through :func:`parse_episode`)."""
        steps = []
        for s in self.steps:
            d: dict[str, Any] = {"step": s.index, "screenshot": s.screenshot, "action": s.action, "info": s.info}
            d["ps"] = s.ps if s.ps is not None else ""
            d.update(s.extra)
            if s.sam2_bbox is not None:
                d["sam2_bbox"] = list(s.sam2_bbox)
            steps.append(d)
        return {
            "episode_id": self.episode_id,
            "device_info": vars(self.device).copy(),
            "task_info": {
                "category": self.task.category,
                "app": list(self.task.app),
                "meta_task": self.task.meta_task,
                "task": self.task.task,
                "instruction": self.task.instruction,
            },
            "step_length": self.step_length,
            "steps": steps,
        }


def _need(d: dict, key: str, where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise EpisodeError(f"{where}: missing field {key!r}")
    return d[key]


def parse_episode(data: dict[str, Any], source: str = "<data>") -> Episode:
    """Build an :class:`Episode` from annotation JSON, checking the fields the pipeline relies on."""
    eid = str(_need(data, "episode_id", source))
    dev = data.get("device_info") or {}
    device = DeviceInfo(
        product=str(dev.get("product", "")),
        release_version=str(dev.get("release_version", "")),
        sdk_version=str(dev.get("sdk_version", "")),
        h=int(dev.get("h", 0) or 0),
        w=int(dev.get("w", 0) or 0),
        device_name=str(dev.get("device_name", "")),
    )
    ti = _need(data, "task_info", source)
    app = ti.get("app", [])
    task = TaskInfo(
        category=str(_need(ti, "category", f"{source}: task_info")),
        app=tuple(app) if isinstance(app, list) else (str(app),),
        meta_task=str(ti.get("meta_task", "")),
        task=str(ti.get("task", "")),
        instruction=str(_need(ti, "instruction", f"{source}: task_info")),
    )
    raw_steps = _need(data, "steps", source)
    if not isinstance(raw_steps, list):
        raise EpisodeError(f"{source}: 'steps' must be a list")
    steps = []
    for i, s in enumerate(raw_steps):
        where = f"{source}: steps[{i}]"
        extra = {k: s[k] for k in EXTRA_STEP_FIELDS if k in s and k != "sam2_bbox"}
        bbox = s.get("sam2_bbox")
        step = Step(
            index=int(s.get("step", i)),
            screenshot=str(_need(s, "screenshot", where)),
            action=str(_need(s, "action", where)),
            info=_need(s, "info", where),
            ps=s.get("ps"),
            sam2_bbox=tuple(float(v) for v in bbox) if isinstance(bbox, list) and len(bbox) == 4 else None,
            extra=extra,
        )
        try:
            step.command  # validate the label now, with the place named
        except NavigatorError as exc:
            raise EpisodeError(f"{where}: {exc}") from exc
        steps.append(step)
    step_length = int(data.get("step_length", len(steps)))
    return Episode(eid, device, task, step_length, tuple(steps), source)


@dataclass(frozen=True)
class OdysseyDir:
    """Where annotations, screenshots and splits live under a GUI Odyssey root (official or flat layout)."""

    root: Path
    annotations: Path
    screenshots: Path
    splits: Path

    @classmethod
    def at(cls, root: str | Path) -> "OdysseyDir":
        root = Path(root)
        if not root.is_dir():
            raise EpisodeError(f"{root}: not a directory")

        def sub(name: str) -> Path:
            return root / name if (root / name).is_dir() else root

        return cls(root, sub("annotations"), sub("screenshots"), root / "splits")

    def screenshot_path(self, step: Step) -> Path:
        return self.screenshots / step.screenshot

    def hierarchy_path(self, step: Step) -> Path:
        """The step's ``uiautomator dump`` (recordings of this toolkit keep one per step under
        ``hierarchies/``). The name comes from the annotation, untrusted: a bare file name only."""
        name = step.extra.get("hierarchy")
        if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
            raise EpisodeError(f"step {step.index}: 'hierarchy' must name a file in hierarchies/, got {name!r}")
        return self.root / "hierarchies" / name


def load_episode(path: str | Path) -> Episode:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EpisodeError(f"{path}: {exc}") from exc
    return parse_episode(data, source=path.name)


def load_split(root: str | Path, split: str) -> dict[str, list[str]]:
    """``splits/{split}_split.json`` → ``{"train": [...], "test": [...]}`` (annotation file names)."""
    d = OdysseyDir.at(root)
    path = d.splits / f"{split}_split.json"
    if not path.is_file():
        raise EpisodeError(f"{path}: split file not found (splits: {', '.join(SPLITS)})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EpisodeError(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(data.get(k, []), list) for k in ("train", "test")):
        raise EpisodeError(f"{path}: expected an object with 'train' and 'test' lists")
    return {"train": list(data.get("train", [])), "test": list(data.get("test", []))}


def load_episodes(
    root: str | Path, split: str | None = None, part: Literal["train", "test"] = "test"
) -> list[Episode]:
    """Episodes under ``root``: all of them, or the ``part`` of ``split`` (in the split file's order)."""
    d = OdysseyDir.at(root)
    if split is None:
        files = sorted(p.name for p in d.annotations.glob("*.json"))
    else:
        files = load_split(root, split)[part]
    episodes = []
    for name in files:
        path = d.annotations / name
        if not path.is_file():
            raise EpisodeError(f"{path}: listed in {split}_split.json ({part}) but not found")
        episodes.append(load_episode(path))
    return episodes


@dataclass(frozen=True)
class ScreenshotReport:
    """How many screenshots are missing, and where."""

    root: str
    steps_total: int
    episodes_total: int
    missing: tuple[tuple[str, int], ...]  # (episode_id, step index)

    @property
    def steps_missing(self) -> int:
        return len(self.missing)

    @property
    def episodes_affected(self) -> int:
        return len({e for e, _ in self.missing})

    @property
    def ok(self) -> bool:
        return not self.missing

    def describe(self) -> str:
        if self.ok:
            return f"{self.root}: all {self.steps_total} screenshots present"
        pct = 100.0 * self.steps_missing / max(self.steps_total, 1)
        examples = ", ".join(f"{e}_{s}.png" for e, s in self.missing[:3])
        return (
            f"{self.root}: {self.steps_missing} of {self.steps_total} steps ({pct:.1f} %) in "
            f"{self.episodes_affected} of {self.episodes_total} episodes lack screenshots (e.g. {examples}); "
            "the public GUI Odyssey release misses ~20 % — add them, or choose on_missing='skip-step' / "
            "'skip-episode' (CLI: --missing)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "steps_total": self.steps_total,
            "steps_missing": self.steps_missing,
            "episodes_total": self.episodes_total,
            "episodes_affected": self.episodes_affected,
        }


def screenshot_report(root: str | Path, episodes: Iterable[Episode]) -> ScreenshotReport:
    d = OdysseyDir.at(root)
    episodes = list(episodes)
    missing = tuple(
        (e.episode_id, s.index) for e in episodes for s in e.steps if not d.screenshot_path(s).is_file()
    )
    total = sum(len(e.steps) for e in episodes)
    return ScreenshotReport(str(root), total, len(episodes), missing)


def require_screenshots(
    root: str | Path, episodes: list[Episode], on_missing: MissingPolicy = "error"
) -> tuple[list[Episode], ScreenshotReport]:
    """Apply the missing-screenshot policy.

    ``error`` raises :class:`MissingScreenshotError` with the report; ``skip-episode`` drops affected episodes;
    ``skip-step`` keeps all episodes (the dataset then skips steps whose *current* screenshot is missing and
    leaves missing frames out of the history).
    """
    report = screenshot_report(root, episodes)
    if report.ok or on_missing == "skip-step":
        return episodes, report
    if on_missing == "error":
        raise MissingScreenshotError(report)
    if on_missing == "skip-episode":
        bad = {e for e, _ in report.missing}
        return [e for e in episodes if e.episode_id not in bad], report
    raise ValueError(f"unknown on_missing policy {on_missing!r}")
