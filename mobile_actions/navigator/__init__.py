"""GUI navigator: GUI Odyssey episodes and action codec, AMS/SR metrics (official and corrected), the
OdysseyAgent model (Qwen2-VL + history resampler), its HTTP service and client, and virtual-phone recordings.

Importing this package is cheap: torch and transformers load only in ``model``, ``processing``'s tensor
functions, ``infer`` and ``service.make_server``.
"""
from pathlib import Path

from .actions import Action, from_raw, parse_command, to_raw
from .episodes import Episode, Step, load_episode, load_episodes, load_split, screenshot_report
from mobile_actions.errors import (
    ActionParseError, EpisodeError, MissingScreenshotError, NavigatorError, PredictionFileError, RawActionError, ServiceError,
)
from .metrics import EvalReport, Score, evaluate, evaluate_both, read_predictions
from .prompt import build_prompt

# the text navigator: a LoRA adapter on the caller's Gemma 3 270M base (GUI actions as function calls)
TEXT_NAVIGATOR_DIR = Path(__file__).resolve().parent.parent / "assets" / "navigator-lora"

__all__ = [
    "Action", "ActionParseError", "TEXT_NAVIGATOR_DIR", "Episode", "EpisodeError", "EvalReport", "MissingScreenshotError",
    "NavigatorError", "PredictionFileError", "RawActionError", "Score", "ServiceError", "Step", "build_prompt", "evaluate",
    "evaluate_both", "from_raw", "load_episode", "load_episodes", "load_split", "parse_command", "read_predictions",
    "screenshot_report", "to_raw",
]
