"""Every error mobile-actions raises, in one place, under one root.

Catch `MobileActionsError` to handle anything the toolkit refuses; each class also keeps the built-in
base its callers expect (a malformed catalogue is a `ValueError`, a missing screenshot a
`FileNotFoundError`). Messages name the place: the file and line, the tool and argument, the device.
"""
from __future__ import annotations

from typing import Any, Sequence


class MobileActionsError(Exception):
    """The root of every error the toolkit raises on purpose."""


# ============================================================================================ data
class CatalogueError(MobileActionsError, ValueError):
    """A catalogue that cannot be used; the message names the source, the tool and the field."""


class JSONTextError(MobileActionsError, ValueError):
    """Text that is not acceptable JSON. `line` is 1-based within the text given, or None when the
    problem (nesting, a lone surrogate) belongs to the decoded value rather than to one line."""

    def __init__(self, reason: str, line: int | None = None):
        self.reason, self.line = reason, line
        super().__init__(reason)


class DatasetError(MobileActionsError, ValueError):
    """A bad row in strict mode; `problem` (a `dataset.LineProblem`) says where."""

    def __init__(self, problem: Any):
        self.problem = problem
        super().__init__(str(problem))


class WireError(MobileActionsError, ValueError):
    """A value that cannot be written in the wire format (e.g. a string holding `<escape>`)."""


class WireParseError(MobileActionsError, ValueError):
    """Model output that is not a well-formed call; names the position and what was expected."""

    def __init__(self, text: str, position: int, expected: str):
        self.text, self.position, self.expected = text, position, expected
        snippet = text[max(0, position - 20):position + 20].replace("\n", "\\n")
        super().__init__(f"at position {position}: expected {expected}, near {snippet!r}")


class TemplateError(MobileActionsError, ValueError):
    """A phrasing template that does not parse; names the template and the position."""


class GrammarDeadEnd(MobileActionsError, RuntimeError):
    """The call grammar allows no next token (a bug in a constraint). Decoders stop there: the partial output
    is then reported as a call that does not parse, never dispatched."""


# ============================================================================================ models
class ModelError(MobileActionsError, RuntimeError):
    """A model spec that cannot be resolved or a tokenizer that is not FunctionGemma-compatible."""


class NotPreparedError(MobileActionsError, RuntimeError):
    """The default caller's export is missing or stale; the message says what to run."""


class PromptTooLongError(MobileActionsError, ValueError):
    """A prompt longer than the model can take (its context, or the runtime's cap); refused before a KV cache
    is allocated for it."""


class ExportFormatError(MobileActionsError, ValueError):
    """An exported folder this runtime cannot read (an older export format)."""


class AdapterError(MobileActionsError, ValueError):
    """Adapters that cannot be merged; the message names the adapter and the field."""


# ============================================================================================ android
class BindingError(MobileActionsError, ValueError):
    """A bindings file that cannot be used (message names file, tool and place)."""


class PhoneSetupError(MobileActionsError, ValueError):
    """A virtual phone's starting state that cannot be applied (message names the file, key and item)."""


class DeviceError(MobileActionsError):
    """Something about reaching the device went wrong (message says what and which)."""


class AdbServerUnavailableError(DeviceError):
    pass


class AdbServerError(MobileActionsError, RuntimeError):
    """The private adb server could not be started or reached."""


class NoDeviceError(DeviceError):
    pass


class MultipleDevicesError(DeviceError):
    def __init__(self, message: str, serials: Sequence[str]) -> None:
        super().__init__(message)
        self.serials = list(serials)


class DeviceNotFoundError(DeviceError):
    pass


class DeviceOfflineError(DeviceError):
    pass


class DeviceUnauthorizedError(DeviceError):
    pass


class DeviceDisconnectedError(DeviceError):
    """The device went away while a command was running (its result is unknown)."""


class CommandTooLongError(DeviceError):
    pass


class DispatchError(MobileActionsError):
    """A call that could not be (fully) carried out; the message says which tool and why."""


class InvalidCallError(DispatchError):
    def __init__(self, message: str, problems: list) -> None:
        super().__init__(message)
        self.problems = problems


class UnboundToolError(DispatchError):
    pass


class ArgumentError(DispatchError):
    """An argument value that cannot be sent as given (a NUL byte, a datetime that is not one)."""


class ConfirmationRequired(DispatchError):
    """A send-type or destructive tool was not confirmed (pass confirm=..., or --yes on the CLI)."""


class DeclinedStepError(DispatchError):
    """A binding's tap that the request declines ("fill in a contact for derek but dont hit save"): not made,
    whatever was confirmed; the steps before it stand (the form is filled, not saved)."""


class StepFailedError(DispatchError):
    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class PhoneServerError(MobileActionsError):
    """The phone cannot listen where asked (port taken, unsafe address without auth)."""


class AuthKeyError(MobileActionsError, ValueError):
    """An allowed-keys file that cannot be read as adb public keys."""


class ProtocolError(MobileActionsError):
    """The peer broke the protocol; the connection is dropped, the phone lives on."""


# ============================================================================================ navigator
class NavigatorError(MobileActionsError):
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

    Carries the full `navigator.episodes.ScreenshotReport` so callers can show how many steps and episodes
    are affected.
    """

    def __init__(self, report: Any):
        self.report = report
        super().__init__(report.describe())


class PredictionFileError(NavigatorError, ValueError):
    """A prediction file line is malformed, duplicated, or names an unknown episode/step (``file:line``)."""


class ServiceError(NavigatorError):
    """The navigator HTTP service refused or failed a request (carries the HTTP status when there is one)."""

    def __init__(self, message: str, status: int | None = None):
        self.status = status
        super().__init__(message)


class ScreenError(NavigatorError, ValueError):
    """A ``uiautomator dump`` that cannot be read (too big, malformed, a DTD), or a label not on the screen."""


class RecordError(NavigatorError):
    """A script could not act on the screen it found, or its end state is not what the task asked for."""


# ============================================================================================ hybrid runs
class HybridError(MobileActionsError, RuntimeError):
    """A run that cannot start (no caller, no device, a run folder that cannot be resumed)."""


class TraceError(MobileActionsError, ValueError):
    """A run folder that cannot be read (missing, no header); the message names the path."""
