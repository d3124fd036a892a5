"""AMS and SR: the official GUI Odyssey computation, and a corrected one.

``official`` reproduces ``src/eval_mm/GUIOdyssey_action_matching.py`` + ``evaluate_GUIOdyssey.py`` rule for rule
(so numbers compare with the paper), including its quirks:

* both strings are split on *every* ``:`` — a TYPE text containing ``:`` is truncated to its first piece;
* an empty TYPE prediction is always correct (``"" in gt`` is true);
* steps whose prediction is absent (the official inference loop drops a whole batch on any exception) are
  simply not evaluated: AMS is taken over the remaining steps, and SR *skips* every episode whose evaluated
  step count differs from ``step_length``;
* ``invalid`` (unparseable) predictions count as action-type correct in the type-accuracy line.

``corrected`` keeps every defining rule (14 % click radius on [0, 1000] coordinates without aspect correction,
sam2 box hit for v2, scroll direction, containment/ANLS ≥ 0.5, per-category averaging for the random split)
and fixes only those quirks: the text after the *first* ``:`` is compared, an empty TYPE is correct only for
an empty gold text, and a missing prediction is a wrong step whose episode fails.

Naming in the official code is inverted: the random split uses "micro", which there means the *mean over
task categories* of per-category AMS and SR; app/task/device use "macro", plain accuracy over all steps.
"""
from __future__ import annotations

import ast
import json
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from .actions import POINT_KINDS, Action, parse_command
from .episodes import Episode
from mobile_actions.errors import ActionParseError, PredictionFileError

TEXT_ANLS_THRESHOLD = 0.5
CLICK_COORD_THRESHOLD = 0.14
Mode = Literal["official", "corrected"]
StepKey = tuple[str, int]


def averaging_for(split: str | None) -> Literal["category", "step"]:
    """The random split averages over task categories ("micro" in the official code); the others over steps."""
    return "category" if split in (None, "random") else "step"


# --------------------------------------------------------------------------------------------- matching
def levenshtein(a: str, b: str) -> int:
    if len(a) > len(b):
        a, b = b, a
    prev = list(range(len(a) + 1))
    for i2, c2 in enumerate(b):
        cur = [i2 + 1]
        for i1, c1 in enumerate(a):
            cur.append(prev[i1] if c1 == c2 else 1 + min(prev[i1], prev[i1 + 1], cur[-1]))
        prev = cur
    return prev[-1]


def text_match(gt: str, pred: str) -> bool:
    """Containment either way, else ANLS (1 - normalised Levenshtein) ≥ 0.5 — the official ``text_matching``."""
    gt, pred = gt.strip(), pred.strip()
    if gt in pred or pred in gt:
        return True
    length = max(len(gt), len(pred))
    value = 0.0 if length == 0 else levenshtein(gt, pred) / length
    return 1 - value >= TEXT_ANLS_THRESHOLD


def _official_decode(s: str) -> tuple[str, Any]:
    """``simple_decode``: split on every ``:``; point arguments are evaluated (literal_eval here, not eval)."""
    parts = s.split(":")
    action = parts[0].strip()
    if len(parts) > 1:
        info: Any = parts[1].strip()
        if action in POINT_KINDS:
            info = ast.literal_eval(info)
        return action, info
    return action, ""


def _official_click(gt_info: Any, pred_info: Any, bbox: Any) -> bool:
    import numpy as np

    if isinstance(pred_info, str):
        pred_info = ast.literal_eval(pred_info)
    if isinstance(gt_info, str):
        gt_info = ast.literal_eval(gt_info)
    if bbox is not None:
        x1, y1, x2, y2 = bbox
        if x1 <= pred_info[0] <= x2 and y1 <= pred_info[1] <= y2:
            return True
    pred = np.asarray(pred_info) / 1000
    gt = np.asarray(gt_info) / 1000
    return bool(np.linalg.norm(pred - gt) <= CLICK_COORD_THRESHOLD)


def match_official(pred: str, gt: str, sam2_bbox: Any = None) -> tuple[bool, str]:
    """One step, as the official script judges it: ``(correct, reason)``; reasons are the script's ``info``."""
    g_action, g_info = _official_decode(gt)
    try:
        p_action, p_info = _official_decode(str(pred))
    except Exception:  # the script's bare except around simple_decode
        return False, "invalid"
    try:
        p_action = p_action.strip()
        p_info = p_info.strip() if isinstance(p_info, str) else p_info
        if p_action != g_action:
            return False, "action_fail"
        if g_action not in ("SCROLL", "CLICK", "TYPE", "LONG_PRESS"):
            return True, "action_correct"
        if g_action == "TYPE":
            ok = text_match(g_info, p_info)
            return ok, "type_correct" if ok else "type_fail"
        if g_action == "SCROLL":
            ok = g_info.lower() == p_info.lower()
            return ok, "scroll_correct" if ok else "scroll_fail"
        ok = _official_click(g_info, p_info, sam2_bbox)
        return ok, "click_correct" if ok else "click_fail"
    except Exception:  # the script's except around action_matching
        return False, "invalid"


def match_corrected(pred: str | None, gt: Action, sam2_bbox: Any = None) -> tuple[bool, str]:
    """One step, corrected: strict parse (first ``:`` only), empty TYPE is not a wildcard, missing is wrong."""
    if pred is None:
        return False, "missing"
    try:
        p = parse_command(pred)
    except ActionParseError:
        return False, "invalid"
    if p.kind != gt.kind:
        return False, "action_fail"
    if gt.kind == "TYPE":
        g_text, p_text = (gt.text or "").strip(), (p.text or "").strip()
        ok = (g_text == "") if p_text == "" else text_match(g_text, p_text)
        return ok, "type_correct" if ok else "type_fail"
    if gt.kind == "SCROLL":
        ok = p.direction == gt.direction
        return ok, "scroll_correct" if ok else "scroll_fail"
    if gt.kind in POINT_KINDS:
        assert p.point is not None and gt.point is not None
        if sam2_bbox is not None:
            x1, y1, x2, y2 = sam2_bbox
            if x1 <= p.point[0] <= x2 and y1 <= p.point[1] <= y2:
                return True, "click_correct"
        dx = (float(p.point[0]) - float(gt.point[0])) / 1000
        dy = (float(p.point[1]) - float(gt.point[1])) / 1000
        ok = (dx * dx + dy * dy) ** 0.5 <= CLICK_COORD_THRESHOLD
        return ok, "click_correct" if ok else "click_fail"
    return True, "action_correct"


# --------------------------------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class StepVerdict:
    episode_id: str
    step: int
    category: str
    gt: str
    pred: str | None
    correct: bool
    reason: str


@dataclass(frozen=True)
class CategoryScore:
    category: str
    ams: float
    sr: float
    steps: int
    episodes_counted: int
    episodes_succeeded: int


@dataclass(frozen=True)
class Score:
    """AMS/SR in percent, with what went into them."""

    mode: str
    averaging: str  # "category" (random split) or "step"
    ams: float
    sr: float
    steps: int
    correct: int
    episodes_counted: int
    episodes_succeeded: int
    episodes_skipped: int  # official only: evaluated steps != step_length
    missing_predictions: int
    action_type_accuracy: float
    text_accuracy: float | None
    per_category: tuple[CategoryScore, ...]
    verdicts: tuple[StepVerdict, ...] = field(repr=False)
    notes: tuple[str, ...] = ()

    def to_json(self, with_steps: bool = False) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if k not in ("verdicts", "per_category")}
        out["per_category"] = [vars(c) for c in self.per_category]
        out["notes"] = list(self.notes)
        if with_steps:
            out["steps_detail"] = [vars(v) for v in self.verdicts]
        return out


def _episode_sr(verdicts: list[StepVerdict], lengths: Mapping[str, int]) -> tuple[int, int, int]:
    """(succeeded, counted, skipped): an episode counts only when its verdict count equals its length."""
    by_ep: dict[str, list[bool]] = defaultdict(list)
    for v in verdicts:
        by_ep[v.episode_id].append(v.correct)
    ok = tot = skipped = 0
    for eid, flags in by_ep.items():
        if len(flags) != lengths[eid]:
            skipped += 1
            continue
        tot += 1
        ok += all(flags)
    return ok, tot, skipped


def _pct(num: int, den: int) -> float:
    return 100.0 * num / den if den else 0.0


def score(verdicts: list[StepVerdict], lengths: Mapping[str, int], mode: Mode, averaging: str, missing: int) -> Score:
    """Aggregate verdicts into AMS/SR; ``official`` rounds where the script rounds (2 decimals, then mean)."""
    import numpy as np

    r = (lambda x: round(x, 2)) if mode == "official" else (lambda x: x)
    n = len(verdicts)
    correct = sum(v.correct for v in verdicts)
    by_cat: dict[str, list[StepVerdict]] = defaultdict(list)
    for v in verdicts:
        by_cat[v.category].append(v)
    cats = []
    for cat, vs in by_cat.items():
        ok, tot, _ = _episode_sr(vs, lengths)
        cats.append(CategoryScore(cat, r(_pct(sum(v.correct for v in vs), len(vs))), r(_pct(ok, tot)), len(vs), tot, ok))
    ok, tot, skipped = _episode_sr(verdicts, lengths)
    notes: list[str] = []
    if averaging == "category":
        ams = float(np.mean([c.ams for c in cats])) if cats else 0.0
        sr = float(np.mean([c.sr for c in cats])) if cats else 0.0
        if mode == "official":
            ams, sr = float(np.round(ams, 2)), float(np.round(sr, 2))
        if len(cats) != 6:
            notes.append(f"{len(cats)} task categories present; the official script asserts exactly 6 and would stop")
    else:
        ams, sr = r(_pct(correct, n)), r(_pct(ok, tot))
    type_fail = ("action_fail",) if mode == "official" else ("action_fail", "invalid", "missing")
    text = [v for v in verdicts if v.reason.startswith("type_")]
    if skipped:
        notes.append(f"{skipped} episode(s) skipped in SR: evaluated steps != step_length")
    return Score(
        mode=mode,
        averaging=averaging,
        ams=ams,
        sr=sr,
        steps=n,
        correct=correct,
        episodes_counted=tot,
        episodes_succeeded=ok,
        episodes_skipped=skipped,
        missing_predictions=missing,
        action_type_accuracy=_pct(sum(v.reason not in type_fail for v in verdicts), n),
        text_accuracy=_pct(sum(v.reason == "type_correct" for v in text), len(text)) if text else None,
        per_category=tuple(sorted(cats, key=lambda c: c.category)),
        verdicts=tuple(verdicts),
        notes=tuple(notes),
    )


def evaluate(
    episodes: Iterable[Episode],
    predictions: Mapping[StepKey, str],
    *,
    split: str | None = "random",
    mode: Mode = "official",
) -> Score:
    """Score ``predictions`` (``(episode_id, step) -> command``) against the gold actions of ``episodes``."""
    episodes = list(episodes)
    known = {(e.episode_id, s.index) for e in episodes for s in e.steps}
    ids = {e.episode_id for e in episodes}
    bad_steps = [k for k in predictions if k[0] in ids and k not in known]
    if bad_steps:
        raise PredictionFileError(f"prediction for a step the episode does not have: {bad_steps[0]}")
    if predictions and not any(k in known for k in predictions):
        raise PredictionFileError("no prediction names an evaluated episode (wrong split or wrong file?)")
    ignored = sum(k[0] not in ids for k in predictions)  # other splits' episodes: not ours to score
    verdicts: list[StepVerdict] = []
    missing = 0
    for e in episodes:
        for s in e.steps:
            pred = predictions.get((e.episode_id, s.index))
            gt = s.command
            if pred is None:
                missing += 1
                if mode == "official":
                    continue  # dropped silently, as the official inference loop does
            if mode == "official":
                ok, why = match_official(pred, gt.to_command(), s.sam2_bbox)  # type: ignore[arg-type]
            else:
                ok, why = match_corrected(pred, gt, s.sam2_bbox)
            verdicts.append(StepVerdict(e.episode_id, s.index, e.category, gt.to_command(), pred, ok, why))
    lengths = {e.episode_id: (e.step_length if mode == "official" else len(e.steps)) for e in episodes}
    result = score(verdicts, lengths, mode, averaging_for(split), missing)
    if ignored:
        result = replace(result, notes=result.notes + (f"{ignored} prediction(s) for episodes outside this split ignored",))
    return result


@dataclass(frozen=True)
class EvalReport:
    """Both modes side by side, and the steps they judge differently (the quirks at work)."""

    split: str | None
    official: Score
    corrected: Score
    differences: tuple[tuple[StepVerdict | None, StepVerdict], ...]

    def to_json(self, with_steps: bool = False) -> dict[str, Any]:
        return {
            "split": self.split,
            "official": self.official.to_json(with_steps),
            "corrected": self.corrected.to_json(with_steps),
            "differences": [
                {
                    "episode_id": c.episode_id,
                    "step": c.step,
                    "gt": c.gt,
                    "pred": c.pred,
                    "official": None if o is None else f"{o.reason} ({'correct' if o.correct else 'wrong'})",
                    "corrected": f"{c.reason} ({'correct' if c.correct else 'wrong'})",
                }
                for o, c in self.differences
            ],
        }


def evaluate_both(episodes: Iterable[Episode], predictions: Mapping[StepKey, str], *, split: str | None = "random") -> EvalReport:
    episodes = list(episodes)
    off = evaluate(episodes, predictions, split=split, mode="official")
    cor = evaluate(episodes, predictions, split=split, mode="corrected")
    off_by = {(v.episode_id, v.step): v for v in off.verdicts}
    diffs = []
    for c in cor.verdicts:
        o = off_by.get((c.episode_id, c.step))
        if o is None or o.correct != c.correct:
            diffs.append((o, c))
    return EvalReport(split, off, cor, tuple(diffs))


# --------------------------------------------------------------------------------------------- files
def _key_from_image(name: str) -> StepKey:
    base = Path(name).name
    stem = base[:-4] if base.endswith(".png") else base
    eid, _, step = stem.rpartition("_")
    return eid, int(step)


def read_predictions(path: str | Path) -> dict[StepKey, str]:
    """PRED.jsonl: one ``{"episode_id", "step", "pred"}`` per line (or ``"image": "<episode_id>_<step>.png"``
    instead of the two keys, as the official outputs name steps). Duplicates and malformed lines are errors."""
    path = Path(path)
    out: dict[StepKey, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise PredictionFileError(f"{path}: {exc}") from exc
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        try:
            row = json.loads(line)
            if "episode_id" in row:
                key = (str(row["episode_id"]), int(row["step"]))
            else:
                key = _key_from_image(str(row.get("image") or row["screenshot"]))
            pred = row["pred"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise PredictionFileError(f"{where}: expected {{'episode_id', 'step', 'pred'}} ({exc})") from exc
        if not isinstance(pred, str):
            raise PredictionFileError(f"{where}: 'pred' must be a string")
        if key in out:
            raise PredictionFileError(f"{where}: duplicate prediction for episode {key[0]!r} step {key[1]}")
        out[key] = pred
    return out


def write_predictions(path: str | Path, predictions: Mapping[StepKey, str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for (eid, step), pred in predictions.items():
            f.write(json.dumps({"episode_id": eid, "step": step, "pred": pred}, ensure_ascii=False) + "\n")
