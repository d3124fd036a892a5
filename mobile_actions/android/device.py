"""Which phone to talk to, and a fast, exit-code-preserving shell on it.

Device selection follows adb: an explicit serial, else ``ANDROID_SERIAL``, else the only device. Every
way it can go wrong is a typed error naming the serial(s), because "AdbError: closed" helps nobody.

Why our own shell path next to adbutils: ``AdbDevice.shell`` loses the exit code, ``shell2`` appends
``; echo X4EXIT:$?``, and every adbutils call pays a 10 ms ``time.sleep`` in ``AdbConnection.close()``
(twice when the device is addressed by serial, which also asks ``host:version`` each time). Here one
socket per command: ``host:transport-id:N`` then ``shell,v2,raw:ARGV`` (argv quoted with
``shlex.quote``, exactly as adbutils does), read until the exit packet, close. The peer has already
finished when we close, so no sleep is needed.
"""

from __future__ import annotations

import os
import shlex
import socket
import struct
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from mobile_actions.errors import (
    AdbServerUnavailableError,
    CommandTooLongError,
    DeviceDisconnectedError,
    DeviceError,
    DeviceNotFoundError,
    DeviceOfflineError,
    DeviceUnauthorizedError,
    MultipleDevicesError,
    NoDeviceError,
)

DEFAULT_TIMEOUT = 30.0
MAX_SERVICE_LEN = 0xFFFF          # the host protocol's 4-hex-digit length prefix


@dataclass(frozen=True)
class DeviceInfo:
    serial: str
    state: str
    transport_id: int | None = None
    model: str = ""


@dataclass(frozen=True)
class ShellResult:
    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class ServerAddress:
    host: str = "127.0.0.1"
    port: int = 5037

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "ServerAddress":
        env = os.environ if env is None else env
        return cls(env.get("ANDROID_ADB_SERVER_HOST", "127.0.0.1"), int(env.get("ANDROID_ADB_SERVER_PORT", "5037")))


# ------------------------------------------------------------------------------------ host protocol
class _HostConn:
    """One socket to the adb server speaking the host protocol ("%04x" + request, OKAY/FAIL)."""

    def __init__(self, server: ServerAddress, timeout: float) -> None:
        try:
            self.sock = socket.create_connection((server.host, server.port), timeout=timeout)
        except OSError as e:
            raise AdbServerUnavailableError(
                f"no adb server at {server.host}:{server.port} ({e.strerror or e}); start one with "
                f"'adb start-server' (or set ANDROID_ADB_SERVER_PORT)") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, text: str) -> None:
        raw = text.encode("utf-8")
        if len(raw) > MAX_SERVICE_LEN:
            raise CommandTooLongError(f"request of {len(raw)} bytes exceeds adb's limit of {MAX_SERVICE_LEN}")
        self.sock.sendall(b"%04x" % len(raw) + raw)
        status = self.read(4)
        if status == b"OKAY":
            return
        if status == b"FAIL":
            raise _Fail(self.read(int(self.read(4), 16)).decode("utf-8", "replace"))
        raise DeviceDisconnectedError(f"adb server answered {status!r}")

    def read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return bytes(buf)

    def read_block(self) -> str:
        return self.read(int(self.read(4), 16)).decode("utf-8", "replace")

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "_HostConn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Fail(Exception):
    pass


def list_devices(server: ServerAddress | None = None, timeout: float = 5.0) -> list[DeviceInfo]:
    """``adb devices -l``, including offline and unauthorized devices."""
    server = server or ServerAddress.from_env()
    with _HostConn(server, timeout) as c:
        try:
            c.request("host:devices-l")
            text = c.read_block()
        except (_Fail, EOFError, OSError) as e:
            raise AdbServerUnavailableError(f"adb server at {server.host}:{server.port} failed: {e}") from None
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        tags = dict(p.split(":", 1) for p in parts[2:] if ":" in p)
        tid = tags.get("transport_id")
        # "no permissions (...)" spans several words: the state is everything before the first tag
        state = " ".join(p for p in parts[1:] if ":" not in p) or parts[1]
        out.append(DeviceInfo(parts[0], state, int(tid) if tid and tid.isdigit() else None, tags.get("model", "")))
    return out


def select_device(serial: str | None = None, *, server: ServerAddress | None = None,
                  env: Mapping[str, str] | None = None) -> "Device":
    """An explicit serial, else $ANDROID_SERIAL, else the only device; typed errors otherwise."""
    env = os.environ if env is None else env
    server = server or ServerAddress.from_env(env)
    wanted = serial or env.get("ANDROID_SERIAL") or None
    devices = list_devices(server)
    if wanted:
        match = [d for d in devices if d.serial == wanted]
        if not match:
            known = ", ".join(f"{d.serial} ({d.state})" for d in devices) or "none"
            hint = f"; for a network device run 'adb connect {wanted}' first" if ":" in wanted else ""
            raise DeviceNotFoundError(f"device {wanted!r} not found (devices: {known}){hint}")
        info = match[0]
    else:
        if not devices:
            raise NoDeviceError("no Android device: connect one (USB debugging on) or 'adb connect HOST:PORT' "
                                "(start a virtual one with 'mobile-actions phone')")
        if len(devices) > 1:
            listing = ", ".join(f"{d.serial} ({d.state})" for d in devices)
            raise MultipleDevicesError(f"more than one device ({listing}): pass --serial or set ANDROID_SERIAL",
                                       [d.serial for d in devices])
        info = devices[0]
    check_state(info)
    return Device(info, server)


def check_state(info: DeviceInfo) -> None:
    if info.state == "device":
        return
    if info.state in ("offline", "connecting"):
        raise DeviceOfflineError(f"device {info.serial} is {info.state}: reconnect it (for a network device: "
                                 f"'adb disconnect {info.serial}' then 'adb connect {info.serial}')")
    if info.state in ("unauthorized", "authorizing"):
        raise DeviceUnauthorizedError(f"device {info.serial} is unauthorized: accept the 'Allow USB debugging' "
                                      "prompt on the phone (or add this computer's adbkey.pub to its allowed keys)")
    raise DeviceError(f"device {info.serial} is in state {info.state!r}, not ready for commands")


def command_line(argv: Sequence[str]) -> str:
    """The device shell text for an argument list: each element ``shlex.quote``d (what adbutils sends)."""
    return " ".join(shlex.quote(a) for a in argv)


# ------------------------------------------------------------------------------------ the device
@dataclass
class Device:
    info: DeviceInfo
    server: ServerAddress = field(default_factory=ServerAddress)
    _features: frozenset[str] | None = None

    @property
    def serial(self) -> str:
        return self.info.serial

    def _transport_request(self) -> str:
        if self.info.transport_id is not None:
            return f"host:transport-id:{self.info.transport_id}"
        return f"host:transport:{self.info.serial}"

    def _open(self, service: str, timeout: float) -> _HostConn:
        c = _HostConn(self.server, timeout)
        try:
            c.request(self._transport_request())
            c.request(service)
        except _Fail as e:
            c.close()
            raise self._fail_error(str(e)) from None
        except (EOFError, OSError) as e:
            c.close()
            raise DeviceDisconnectedError(f"device {self.serial} disconnected: {e or 'connection closed'}") from None
        except BaseException:
            c.close()
            raise
        return c

    def _fail_error(self, message: str) -> DeviceError:
        if "offline" in message:
            return DeviceOfflineError(f"device {self.serial} is offline ({message})")
        if "unauthorized" in message:
            return DeviceUnauthorizedError(f"device {self.serial} is unauthorized ({message})")
        if "not found" in message or "no devices" in message:
            return DeviceDisconnectedError(f"device {self.serial} is gone ({message})")
        return DeviceError(f"device {self.serial}: {message}")

    def features(self) -> frozenset[str]:
        if self._features is None:
            with _HostConn(self.server, 5.0) as c:
                try:
                    c.request(f"host-serial:{self.serial}:features")
                    self._features = frozenset(c.read_block().split(","))
                except _Fail as e:
                    raise self._fail_error(str(e)) from None
                except (EOFError, OSError) as e:
                    raise DeviceDisconnectedError(f"device {self.serial} disconnected: {e}") from None
        return self._features

    def shell(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> ShellResult:
        """Run one command given as an argument list; each element reaches the device as one argument."""
        argv = tuple(str(a) for a in argv)
        if any("\0" in a for a in argv):
            raise ValueError("an argument contains a NUL byte, which no Android command line can carry")
        line = command_line(argv)
        v2 = "shell_v2" in self.features()
        c = self._open(("shell,v2,raw:" if v2 else "shell:") + (line if v2 else line + " ; echo X4EXIT:$?"), timeout)
        try:
            return self._read_v2(c, argv) if v2 else self._read_v1(c, argv)
        except (EOFError, OSError) as e:
            raise DeviceDisconnectedError(
                f"device {self.serial} disconnected while running {argv[0]!r}; its effect is unknown") from e
        finally:
            c.close()

    def exec_out(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """Binary stdout of a command (adb's `exec:` service: no pty, no line-ending translation),
        for `screencap -p` and the like. Arguments are quoted exactly as in `shell`."""
        argv = tuple(str(a) for a in argv)
        if any("\0" in a for a in argv):
            raise ValueError("an argument contains a NUL byte, which no Android command line can carry")
        c = self._open("exec:" + command_line(argv), timeout)
        buf = bytearray()
        try:
            while chunk := c.sock.recv(1 << 16):
                buf += chunk
        except OSError as e:
            raise DeviceDisconnectedError(f"device {self.serial} disconnected while running {argv[0]!r}: {e}") from None
        finally:
            c.close()
        return bytes(buf)

    @staticmethod
    def _read_v2(c: _HostConn, argv: tuple[str, ...]) -> ShellResult:
        out, err = bytearray(), bytearray()
        while True:
            kind, n = struct.unpack("<BI", c.read(5))
            data = c.read(n) if n else b""
            if kind == 1:
                out += data
            elif kind == 2:
                err += data
            elif kind == 3:
                return ShellResult(argv, data[0] if data else 255, out.decode("utf-8", "replace"),
                                   err.decode("utf-8", "replace"))

    @staticmethod
    def _read_v1(c: _HostConn, argv: tuple[str, ...]) -> ShellResult:
        buf = bytearray()
        while chunk := c.sock.recv(65536):
            buf += chunk
        text = buf.decode("utf-8", "replace")
        head, sep, code = text.rpartition("X4EXIT:")
        if not sep:
            raise EOFError("no exit status")
        return ShellResult(argv, int(code.strip() or 255), head, "")

    def adbutils(self):
        """The same device as an ``adbutils.AdbDevice`` (by transport id: half the close-sleeps)."""
        import adbutils
        client = adbutils.AdbClient(host=self.server.host, port=self.server.port)
        if self.info.transport_id is not None:
            return client.device(transport_id=self.info.transport_id)
        return client.device(serial=self.serial)
