"""Turn a validated tool call into device steps (``plan``) and run them on a phone (``dispatch``).

Why plan and run are separate: ``--dry-run`` must print exactly what would run, and tests can check
the argv lists without a device. Only calls that pass ``validate_call`` against the catalogue are
dispatched; a tool that changes or sends something (`Tool.effect`, or ``"confirm": true`` in the bindings)
runs only after the caller's ``confirm`` callback agrees.

Time zone choice for calendar times: a Mobile Actions datetime (``YYYY-MM-DDTHH:MM:SS``) has no zone
and means wall-clock time on the phone, so ``epoch_ms`` converts it in the *device's* zone
(``getprop persist.sys.timezone``, asked once per dispatch and only when needed); if the device does
not say, UTC. ``tz=`` overrides. Ambiguous or skipped DST wall times resolve with ``fold=0``.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable
from urllib.parse import quote

from mobile_actions.android.bindings import (
    Binding,
    Bindings,
    Optional_,
    ShellSpec,
    TapSpec,
    Template,
)
from mobile_actions.android.device import Device, ShellResult, command_line
from mobile_actions.errors import (
    ArgumentError,
    ConfirmationRequired,
    DeclinedStepError,
    DispatchError,
    InvalidCallError,
    StepFailedError,
    UnboundToolError,
)

UI_DUMP_PATH = "/data/local/tmp/mobile_actions_ui.xml"
DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%S"


# ------------------------------------------------------------------------------------------ plans
@dataclass(frozen=True)
class ShellStep:
    argv: tuple[str, ...]

    def describe(self) -> str:
        """The exact command line the device shell receives."""
        return command_line(self.argv)


@dataclass(frozen=True)
class TapStep:
    selector: tuple[tuple[str, str], ...]
    unless: tuple[tuple[str, str], ...] = ()
    timeout_s: float = 5.0
    done_when_gone: bool = False

    def describe(self) -> str:
        sel = " ".join(f"{k}={v!r}" for k, v in self.selector)
        skip = (" unless " + " ".join(f"{k}={v!r}" for k, v in self.unless)) if self.unless else ""
        return (f"uiautomator dump {UI_DUMP_PATH}; cat {UI_DUMP_PATH}; "
                f"input tap <centre of node {sel}>{skip}")


Step = ShellStep | TapStep


@dataclass(frozen=True)
class Plan:
    tool: str
    route: str
    confirm: bool
    steps: tuple[Step, ...]

    @property
    def commands(self) -> list[list[str]]:
        """The shell steps as argument lists (GUI steps excluded)."""
        return [list(s.argv) for s in self.steps if isinstance(s, ShellStep)]

    def describe(self) -> list[str]:
        return [s.describe() for s in self.steps]


def needs_timezone(binding: Binding) -> bool:
    for step in binding.steps:
        if isinstance(step, ShellSpec) and any(_uses_epoch(el) for el in step.argv):
            return True
    return False


def _uses_epoch(el) -> bool:
    if isinstance(el, Template):
        return any(isinstance(p, tuple) and p[1] in ("epoch_ms", "epoch_ms_end") for p in el.pieces)
    return any(_uses_epoch(sub) for sub in el.then)


def plan(call, bindings: Bindings, *, tz: str = "UTC") -> Plan:
    """The device steps for one call. Raises UnboundToolError / ArgumentError."""
    if call.name not in bindings:
        raise UnboundToolError(f"{call.name}: no Android binding (in {bindings.source})")
    b = bindings[call.name]
    steps: list[Step] = []
    for spec in b.steps:
        if isinstance(spec, TapSpec):
            steps.append(TapStep(spec.selector, spec.unless, spec.timeout_s, spec.done_when_gone))
            continue
        argv: list[str] = []
        for el in spec.argv:
            argv.extend(_expand(el, call, tz))
        for a in argv:
            if "\0" in a:
                raise ArgumentError(f"{call.name}: an argument contains a NUL byte, which cannot reach the device")
        steps.append(ShellStep(tuple(argv)))
    return Plan(call.name, b.route, b.confirm, tuple(steps))


def _expand(el, call, tz: str) -> list[str]:
    if isinstance(el, Optional_):
        if _present(call.arguments.get(el.argument)):
            return [x for sub in el.then for x in _expand(sub, call, tz)]
        return []
    out = []
    for piece in el.pieces:
        if isinstance(piece, str):
            out.append(piece)
        else:
            name, flt = piece
            out.append(_apply(call, name, flt, tz))
    return ["".join(out)]


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    import json
    return json.dumps(value, ensure_ascii=False)


def _apply(call, name: str, flt: str | None, tz: str) -> str:
    value = _text(call.arguments.get(name))
    # Checked on the value itself, before any filter: a percent-encoded NUL would still reach the device.
    if "\0" in value:
        raise ArgumentError(f"{call.name}.{name}: contains a NUL byte, which cannot reach the device")
    if any("\ud800" <= c <= "\udfff" for c in value):
        raise ArgumentError(f"{call.name}.{name}: contains a lone surrogate, which is not text")
    if flt is None:
        return value
    if flt == "uri":
        return quote(value, safe="@")
    if flt == "calendar_days":
        return calendar_days(call.arguments.get(name), where=f"{call.name}.{name}")
    ms = epoch_ms(value, tz, where=f"{call.name}.{name}")
    return str(ms + 3_600_000 if flt == "epoch_ms_end" else ms)


WEEKDAY_NUMBERS = {"sunday": 1, "monday": 2, "tuesday": 3, "wednesday": 4, "thursday": 5, "friday": 6, "saturday": 7}


def calendar_days(value: Any, where: str = "days") -> str:
    """Day names (a list, or one comma-separated string; ``Monday`` or ``Mon``, any case) -> java.util.Calendar's
    day numbers (SUNDAY=1 .. SATURDAY=7) joined by commas, as ``am``'s ``--eia`` and AlarmClock's DAYS take them."""
    names = value if isinstance(value, list) else str(value or "").split(",")
    out = []
    for name in names:
        key = str(name).strip().lower()
        number = next((n for day, n in WEEKDAY_NUMBERS.items() if key and (key == day or key == day[:3])), None)
        if number is None:
            raise ArgumentError(f"{where}: {name!r} is not a day of the week")
        if number not in out:
            out.append(number)
    return ",".join(str(n) for n in out)


def epoch_ms(value: str, tz: str, where: str = "datetime") -> int:
    """``YYYY-MM-DDTHH:MM:SS`` wall time in zone ``tz`` -> milliseconds since the epoch."""
    try:
        naive = datetime.strptime(value, DATETIME_FORMAT)
    except ValueError:
        raise ArgumentError(f"{where}: {value!r} is not a YYYY-MM-DDTHH:MM:SS datetime") from None
    return int(naive.replace(tzinfo=zone(tz)).timestamp() * 1000)


def zone(tz: str):
    from datetime import timezone
    if tz.upper() in ("UTC", "GMT", "ETC/UTC", ""):
        return timezone.utc
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(tz)
    except Exception:
        raise ArgumentError(f"unknown time zone {tz!r} (install the 'tzdata' package or pass tz='UTC')") from None


# ------------------------------------------------------------------------------------------ running
@dataclass
class StepOutcome:
    step: Step
    result: ShellResult | None = None
    note: str = ""


@dataclass
class DispatchResult:
    plan: Plan
    outcomes: list[StepOutcome] = field(default_factory=list)
    dry_run: bool = False


def validate(call, catalogue) -> None:
    from mobile_actions.calls import validate_call
    problems = validate_call(call, catalogue)
    if problems:
        raise InvalidCallError(f"{call.name}: invalid call, not dispatched: " + "; ".join(map(str, problems)),
                               problems)


def device_timezone(device: Device) -> str:
    result = device.shell(["getprop", "persist.sys.timezone"])
    return result.stdout.strip() or "UTC"


def dispatch(call, device: Device | None, *, bindings: Bindings, catalogue,
             confirm: Callable[[Plan], bool] | None = None, tz: str | None = None,
             dry_run: bool = False, on_start: Callable[[Plan], None] | None = None,
             declines: Callable[[str], str | None] | None = None) -> DispatchResult:
    """Validate, plan, confirm if the tool needs it, then run each step (or only plan, with dry_run).

    ``device`` may be None only for a dry run (the time zone then defaults to UTC unless ``tz``).
    ``on_start`` is called once everything is decided, just before the first step acts on the phone: where
    a caller records its intent, so a run that dies mid-call knows the call may have happened.
    ``declines`` reads a tap step's button label ("Save") and says why the request declines it, or None: such
    a tap is not made (`DeclinedStepError`), confirmed or not.
    """
    validate(call, catalogue)
    if call.name not in bindings:
        raise UnboundToolError(f"{call.name}: no Android binding (in {bindings.source})")
    if tz is None:
        tz = device_timezone(device) if (device is not None and needs_timezone(bindings[call.name])) else "UTC"
    p = plan(call, bindings, tz=tz)
    effect = catalogue[call.name].effect if call.name in catalogue else "changes"
    if effect != "none" and not p.confirm:   # every state change is confirmed, not only the bindings' own list
        p = replace(p, confirm=True)
    if dry_run:
        return DispatchResult(p, [StepOutcome(s) for s in p.steps], dry_run=True)
    if device is None:
        raise DispatchError(f"{call.name}: no device to dispatch to")
    if p.confirm and (confirm is None or not confirm(p)):
        what = "sends something on the user's behalf" if effect == "sends" else "changes the phone"
        raise ConfirmationRequired(f"{call.name} {what}: not run without confirmation (use --yes to skip the "
                                   "question)")
    if on_start is not None:
        on_start(p)
    out = DispatchResult(p)
    for step in p.steps:
        if isinstance(step, ShellStep):
            out.outcomes.append(StepOutcome(step, run_shell_step(device, step, call.name)))
        else:
            out.outcomes.append(run_tap_step(device, step, call.name, declines))
    return out


def was_done(call, device: Device, binding: Binding) -> bool | None:
    """After a dropped connection: did this call already happen on the phone? True / False when the
    binding's ``was_done`` check can tell, None when it cannot (no check, or the check itself failed)."""
    import json

    spec = binding.was_done
    if spec is None:
        return None
    result = device.shell(list(spec.argv))
    if result.exit_code != 0:
        return None
    out = result.stdout
    values = [_text(call.arguments.get(name)) for name in spec.contains if _present(call.arguments.get(name))]
    return bool(values) and all(v in out or json.dumps(v)[1:-1] in out or json.dumps(v, ensure_ascii=False)[1:-1] in out
                                for v in values)


def run_shell_step(device: Device, step: ShellStep, tool: str) -> ShellResult:
    result = device.shell(step.argv)
    # `am start` on some Android versions prints "Error: ..." yet exits 0
    if result.exit_code != 0 or result.stderr.lstrip().startswith("Error") or result.stdout.lstrip().startswith("Error"):
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise StepFailedError(f"{tool}: {step.argv[0]} failed (exit {result.exit_code}): "
                              f"{detail[-1] if detail else 'no output'}", result)
    return result


# ------------------------------------------------------------------------------------------ GUI steps
def dump_ui(device: Device) -> str:
    r = device.shell(["uiautomator", "dump", UI_DUMP_PATH])
    if r.exit_code != 0 or "ERROR" in r.stdout + r.stderr:
        raise StepFailedError(f"uiautomator dump failed: {(r.stderr or r.stdout).strip()}", r)
    return device.shell(["cat", UI_DUMP_PATH]).stdout


def find_node(xml_text: str, selector: tuple[tuple[str, str], ...]) -> dict[str, str] | None:
    """The first node (document order) whose attributes equal every selector value."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return None
    for node in root.iter("node"):
        if all(node.get(k) == v for k, v in selector):
            return dict(node.attrib)
    return None


def node_centre(node: dict[str, str]) -> tuple[int, int]:
    import re
    x1, y1, x2, y2 = (int(v) for v in re.findall(r"-?\d+", node.get("bounds", ""))[:4])
    return (x1 + x2) // 2, (y1 + y2) // 2


def run_tap_step(device: Device, step: TapStep, tool: str,
                 declines: Callable[[str], str | None] | None = None) -> StepOutcome:
    deadline = time.monotonic() + step.timeout_s
    while True:
        node = find_node(dump_ui(device), step.selector)
        if node is not None:
            break
        if time.monotonic() > deadline:
            sel = ", ".join(f"{k}={v!r}" for k, v in step.selector)
            raise StepFailedError(f"{tool}: no on-screen element with {sel} after {step.timeout_s:g}s")
        time.sleep(0.1)
    if step.unless and all(node.get(k) == v for k, v in step.unless):
        return StepOutcome(step, None, "already in the wanted state: not tapped")
    label = node.get("text") or node.get("content-desc") or ""
    why = declines(label) if declines is not None and label else None
    if why is not None:
        raise DeclinedStepError(f"{tool}: tap on {label!r} not made: {why}")
    x, y = node_centre(node)
    argv = ("input", "tap", str(x), str(y))
    result = run_shell_step(device, ShellStep(argv), tool)
    if step.done_when_gone:
        check_gone(device, step, tool)
    return StepOutcome(step, result, f"tapped ({x}, {y})")


GONE_WAIT_S = 3.0


def check_gone(device: Device, step: TapStep, tool: str) -> None:
    """A Send/Save tap is only done once its screen has closed: an app that refuses (no recipient, an empty
    contact) stays where it was and says why in a toast. Why check at all: "done" on a refused send would
    tell the user an email went out that never did."""
    deadline = time.monotonic() + GONE_WAIT_S
    while True:
        xml_text = dump_ui(device)
        if find_node(xml_text, step.selector) is None:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    toast = find_node(xml_text, (("class", "android.widget.Toast"),))
    said = f"; the phone says {toast.get('text')!r}" if toast and toast.get("text") else ""
    raise StepFailedError(f"{tool}: not done: the screen did not accept the tap ({step.describe()} is still "
                          f"there){said}")
