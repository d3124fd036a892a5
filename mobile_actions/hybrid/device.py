"""The device side of a hybrid run: the session (real phone or the virtual one), screens, and actions as argv.

Why a module of its own: the runner (runner.py) decides *what* to do; this is *how* it reaches a phone,
through the same adb path for a real device and for the in-process virtual phone.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, fields
from typing import Any, Sequence

from mobile_actions.errors import HybridError


def action_argv(action: Any, width: int, height: int) -> list[str] | None:
    """A navigator action as the device command that performs it; None for COMPLETE / IMPOSSIBLE.

    Coordinates are GUI Odyssey's [0, 1000] per axis, scaled to the screen's pixels. SCROLL names the
    finger's direction (as in GUI Odyssey), swiped along the codec's canonical path. `input text` needs
    spaces as ``%s``.
    """
    from mobile_actions.navigator.actions import to_raw

    def px(p: Sequence[float]) -> tuple[str, str]:
        x = min(max(round(float(p[0]) * width / 1000), 0), width - 1)
        y = min(max(round(float(p[1]) * height / 1000), 0), height - 1)
        return str(x), str(y)

    k = action.kind
    if k == "CLICK":
        return ["input", "tap", *px(action.point)]
    if k == "LONG_PRESS":
        x, y = px(action.point)
        return ["input", "swipe", x, y, x, y, "800"]
    if k == "SCROLL":
        _, (start, end) = to_raw(action)
        return ["input", "swipe", *px(start), *px(end), "300"]
    if k == "TYPE":
        return ["input", "text", (action.text or "").replace(" ", "%s")]
    keys = {"PRESS_BACK": "KEYCODE_BACK", "PRESS_HOME": "KEYCODE_HOME", "PRESS_RECENT": "KEYCODE_APP_SWITCH"}
    if k in keys:
        return ["input", "keyevent", keys[k]]
    return None


def screencap(device: Any, timeout: float = 30.0) -> bytes:
    """The screen as PNG bytes; a device that answers something else is an error, not a black image."""
    buf = device.exec_out(["screencap", "-p"], timeout)
    if not buf.startswith(b"\x89PNG"):
        raise HybridError(f"screencap on {device.serial} did not return a PNG: {buf[:80]!r}")
    return buf


def png_size(png: bytes) -> tuple[int, int]:
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return w, h


def nodes(xml_text: str) -> list[dict[str, str]]:
    """Every node of a ``uiautomator dump`` (its attributes), in document order; none when it is not XML."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return []
    return [dict(node.attrib) for node in root.iter("node")]


def bounds(node: dict[str, str]) -> tuple[int, int, int, int] | None:
    """A node's ``[x1,y1][x2,y2]`` bounds, or None when they do not read so."""
    nums = [int(v) for v in re.findall(r"-?\d+", node.get("bounds", ""))[:4]]
    return (nums[0], nums[1], nums[2], nums[3]) if len(nums) == 4 else None


def node_at(xml_text: str, x: int, y: int) -> dict[str, str] | None:
    """The smallest clickable node whose bounds contain (x, y) (what a tap there would hit)."""
    best, best_area = None, None
    for node in nodes(xml_text):
        box = bounds(node) if node.get("clickable") == "true" else None
        if box is None:
            continue
        x1, y1, x2, y2 = box
        if x1 <= x < x2 and y1 <= y < y2:
            area = (x2 - x1) * (y2 - y1)
            if best_area is None or area < best_area:
                best, best_area = node, area
    return best


@dataclass
class DeviceSession:
    """The device a run talks to; for the virtual phone also the phone, its server and a private adb server."""

    device: Any
    serial: str
    virtual: bool = False
    phone: Any = None
    _server: Any = None
    _adb: Any = None

    def reconnect(self, timeout: float = 15.0) -> Any:
        """Re-establish the device after a disconnect (``adb connect`` again for a network device)."""
        from mobile_actions.android.device import (
            DeviceError,
            ServerAddress,
            select_device,
        )

        if self._adb is not None:
            self._adb.connect(self.serial, timeout=timeout)
            self.device = select_device(self.serial, server=ServerAddress(port=self._adb.port), env={})
            return self.device
        deadline = time.monotonic() + timeout
        server = self.device.server if self.device is not None else ServerAddress.from_env()
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if ":" in self.serial:
                    import adbutils

                    adbutils.AdbClient(host=server.host, port=server.port).connect(self.serial, timeout=5)
                self.device = select_device(self.serial, server=server)
                return self.device
            except (DeviceError, OSError, Exception) as e:   # adbutils raises its own AdbError
                last = e
                time.sleep(0.5)
        raise HybridError(f"device {self.serial} did not come back within {timeout:g} s: {last}")

    def state(self) -> dict[str, Any] | None:
        """The virtual phone's state (in process, or ``dumpsys mobile-actions`` on an external one); None
        for a real phone."""
        if self.phone is not None:
            return self.phone.snapshot()
        try:
            r = self.device.shell(["dumpsys", "mobile-actions"])
            data = json.loads(r.stdout) if r.ok else None
            return data if isinstance(data, dict) and "stack" in data else None
        except Exception:
            return None

    def close(self) -> None:
        if self._adb is not None:
            self._adb.stop()
            self._adb = None
        if self._server is not None:
            self._server.close()
            self._server = None


def start_virtual_phone(state: dict[str, Any] | None = None, phone: Any = None,
                        setup: dict[str, Any] | None = None) -> DeviceSession:
    """A virtual phone on loopback, reached through a private adb server: the same path as a real phone.
    ``state`` restores a saved snapshot; ``setup`` (`android.phone.setup`) gives a fresh one its contents."""
    from mobile_actions.android.adbserver import PrivateAdbServer
    from mobile_actions.android.device import ServerAddress, select_device
    from mobile_actions.android.phone import PhoneServer, VirtualPhone
    from mobile_actions.android.phone.setup import apply_setup

    phone = phone or VirtualPhone()
    if state is not None:
        restore_phone_state(phone, state)
    if setup:
        apply_setup(phone, setup)
    server = PhoneServer(phone, "127.0.0.1", 0).start()
    adb = None
    try:
        adb = PrivateAdbServer().start()
        serial = server.address.serial
        adb.connect(serial)
        device = select_device(serial, server=ServerAddress(port=adb.port), env={})
    except BaseException:
        if adb is not None:
            adb.stop()
        server.close()
        raise
    return DeviceSession(device, serial, True, phone, server, adb)


def open_session(serial: str | None = None, *, virtual: bool | None = None,
                 state: dict[str, Any] | None = None, setup: dict[str, Any] | None = None) -> DeviceSession:
    """The run's device: ``serial`` (or $ANDROID_SERIAL, or the only device); with none attached (or
    ``virtual=True``) an in-process virtual phone. ``state`` restores a virtual phone's saved state;
    ``setup`` fills a new virtual phone, and is refused for a real one (it would be silently ignored)."""
    from mobile_actions.android.device import (
        AdbServerUnavailableError,
        NoDeviceError,
        select_device,
    )

    if virtual:
        return start_virtual_phone(state, setup=setup)
    try:
        device = select_device(serial)
    except (NoDeviceError, AdbServerUnavailableError):
        if serial is not None or virtual is False:
            raise
        return start_virtual_phone(state, setup=setup)
    if setup:
        raise HybridError(f"a starting state (--phone) is for the virtual phone; {device.serial} is a real device")
    return DeviceSession(device, device.serial)


def restore_phone_state(phone: Any, snapshot: dict[str, Any]) -> None:
    """Put a `VirtualPhone.snapshot()` back into a phone (files come back empty: the snapshot has sizes only).

    Why: an in-process virtual phone dies with its process; a resumed run continues on the phone as the
    interrupted run left it, as it would on a real phone.
    """
    from mobile_actions.android.phone.state import Activity, PhoneState

    names = {f.name for f in fields(PhoneState)}
    data = {k: v for k, v in snapshot.items() if k in names and k != "files"}
    for k in ("stack", "recents"):
        data[k] = [Activity(**a) for a in snapshot.get(k, [])]
    with phone.lock:
        phone.state = PhoneState(**data)
        phone.changed()
