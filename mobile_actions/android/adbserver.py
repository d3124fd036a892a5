"""A private, isolated adb server (the real one from the adbutils wheel) for tests and benchmarks.

Why private: the user's own server on 5037 may hold real phones, and a server started by adbutils'
``start-server`` daemonises and outlives us. ``adb -P PORT nodaemon server`` is a plain child process
with its own HOME/TMPDIR (it writes ``~/.android/adbkey`` and its log there), mDNS and USB off, and
``ADB_EMU=0`` so it does not adopt whatever listens on 5555-5585 as an emulator.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mobile_actions.errors import AdbServerError

RESERVED_PORTS = range(5554, 5586)   # emulator console/adb pairs adb scans


def adb_binary() -> str:
    """``ADBUTILS_ADB_PATH``, else the adb inside the adbutils wheel, else ``adb`` on PATH."""
    env = os.environ.get("ADBUTILS_ADB_PATH")
    if env:
        return env
    try:
        from adbutils._utils import adb_path
        return adb_path()
    except Exception:  # pragma: no cover - adbutils missing or without a bundled binary
        found = shutil.which("adb")
        if found:
            return found
        raise AdbServerError("no adb binary: install adbutils or put adb on PATH") from None


def free_port() -> int:
    """A free loopback port outside the range adb scans for emulators."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in RESERVED_PORTS:
            return port


def isolated_env(home: Path, port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HOME": str(home), "TMPDIR": str(home), "ADB_MDNS": "0", "ADB_MDNS_AUTO_CONNECT": "0",
                "ADB_USB": "0", "ADB_LIBUSB": "0", "ADB_EMU": "0", "ANDROID_ADB_SERVER_PORT": str(port),
                "ANDROID_SDK_HOME": str(home), "ANDROID_USER_HOME": str(home / ".android")})
    env.pop("ANDROID_SERIAL", None)
    return env


@dataclass
class PrivateAdbServer:
    """``with PrivateAdbServer() as srv: srv.client()`` -> an adbutils client bound to this server."""
    port: int = 0
    home: Path | None = None
    proc: subprocess.Popen | None = field(default=None, repr=False)
    _tmp: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    def start(self, timeout: float = 15.0) -> "PrivateAdbServer":
        self.port = self.port or free_port()
        if self.home is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="adb-home-")
            self.home = Path(self._tmp.name)
        self.env = isolated_env(self.home, self.port)
        self.proc = subprocess.Popen([adb_binary(), "-P", str(self.port), "nodaemon", "server"], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.home / "adb-server.log", "wb"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AdbServerError(f"adb server exited with {self.proc.returncode}: {self.log()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise AdbServerError(f"adb server did not listen on {self.port} within {timeout}s")

    def log(self) -> str:
        try:
            return (self.home / "adb-server.log").read_text(errors="replace")
        except OSError:
            return ""

    def client(self):
        import adbutils
        return adbutils.AdbClient(host="127.0.0.1", port=self.port)

    def connect(self, serial: str, timeout: float = 10.0) -> None:
        """``adb connect`` and wait until the device is ``device`` (not offline/connecting)."""
        client = self.client()
        msg = client.connect(serial, timeout=timeout)
        if "connected" not in msg or "unable" in msg or "failed" in msg:
            raise AdbServerError(f"adb connect {serial}: {msg}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = {d.serial: d.state for d in client.list()}
            if states.get(serial) == "device":
                return
            time.sleep(0.02)
        raise AdbServerError(f"{serial} did not come online: {states}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "PrivateAdbServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
