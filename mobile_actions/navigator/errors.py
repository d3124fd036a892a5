"""Typed errors of the navigator package.

The library never prints: every failure a user can cause (a bad episode file, a missing screenshot,
an unparseable prediction file, an unreachable service) is one of these, with the place named.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .episodes import ScreenshotReport


class NavigatorError(Exception):
    """Base class: catch this to handle every navigator failure."""


class ActionParseError(NavigatorError, ValueError):
    """A command-style action string (``CLICK: (x, y)``, ``TYPE: text`` …) could not be parsed."""

    def __init__(self, text: str, reason: str):
        self.text = text
        self.reason = reason
        super().__init__(f"cannot parse action {text!r}: {reason}")


class RawActionError(NavigatorError, ValueError):
    """A raw GUI Odyssey label (``action``/``info``) is not one the codec knows."""


class EpisodeError(NavigatorError, ValueError):
    """An episode or split file is malformed; the message names the file and the field."""


class MissingScreenshotError(NavigatorError, FileNotFoundError):
    """Screenshots referenced by episodes are absent (the public release lacks ~20 % of them).

    Carries the full :class:`ScreenshotReport` so callers can show how many steps and episodes are affected.
    """

    def __init__(self, report: "ScreenshotReport"):
        self.report = report
        super().__init__(report.describe())


class PredictionFileError(NavigatorError, ValueError):
    """A prediction file line is malformed, duplicated, or names an unknown episode/step (``file:line``)."""


class ServiceError(NavigatorError):
    """The navigator HTTP service refused or failed a request (carries the HTTP status when there is one)."""

    def __init__(self, message: str, status: int | None = None):
        self.status = status
        super().__init__(message)
