"""Shared fixtures for the Android tests: a private real adb server plus a virtual phone, connected.

Import the fixtures into a test module (``from tests.adb_fixtures import rig, fresh  # noqa: F401``).
Everything listens on 127.0.0.1 only; the adb server is isolated (own HOME/TMPDIR, mDNS/USB/emulator
scan off) and stopped by pid.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from mobile_actions.android.adbserver import PrivateAdbServer
from mobile_actions.android.device import Device, ServerAddress, select_device
from mobile_actions.android.phone import PhoneServer, VirtualPhone


@dataclass
class Rig:
    phone: VirtualPhone
    server: PhoneServer
    adb: PrivateAdbServer
    serial: str
    device: Device

    @property
    def address(self) -> ServerAddress:
        return ServerAddress(port=self.adb.port)

    def client(self):
        return self.adb.client()

    def adbutils_device(self):
        return self.client().device(serial=self.serial)


@pytest.fixture(scope="module")
def rig():
    phone = VirtualPhone()
    server = PhoneServer(phone, "127.0.0.1", 0).start()
    adb = PrivateAdbServer().start()
    try:
        adb.connect(server.address.serial)
        device = select_device(server.address.serial, server=ServerAddress(port=adb.port), env={})
        yield Rig(phone, server, adb, server.address.serial, device)
    finally:
        adb.stop()
        server.close()


@pytest.fixture
def fresh(rig):
    """The module's rig with the phone reset to a fresh home screen."""
    rig.phone.reset()
    return rig
