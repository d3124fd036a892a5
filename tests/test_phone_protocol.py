"""The phone's adbd side survives hostile input, and guards non-loopback use with AUTH."""

import base64
import random
import socket
import struct
import threading
import time

import pytest

from mobile_actions.android.device import ServerAddress, select_device
from mobile_actions.android.phone import PhoneServer, PhoneServerError, VirtualPhone
from mobile_actions.android.phone.protocol import A_CNXN, A_OPEN, A_VERSION, A_WRTE, HEADER, Message, pack
from tests.adb_fixtures import rig  # noqa: F401


def write_foreign_key(tmp_path):
    """An adbkey.pub-format key that no adb server holds."""
    n = random.Random(7).getrandbits(2048) | (1 << 2047) | 1
    blob = struct.pack("<II", 64, 0) + n.to_bytes(256, "little") + bytes(256) + struct.pack("<I", 65537)
    path = tmp_path / "foreign.pub"
    path.write_text(base64.b64encode(blob).decode() + " nobody@nowhere\n")
    return path


def _cnxn() -> bytes:
    return pack(Message(A_CNXN, A_VERSION, 4096, b"host::features=shell_v2"))


def _garbage(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randbytes(rng.randrange(1, 300))
    if kind == 1:
        return _cnxn()[: rng.randrange(1, 24)]                                 # truncated header
    if kind == 2:                                                              # oversized length
        return HEADER.pack(A_CNXN, A_VERSION, 4096, 0xFFFFFFF0, 0, A_CNXN ^ 0xFFFFFFFF)
    if kind == 3:                                                              # valid handshake, then noise
        return _cnxn() + rng.randbytes(rng.randrange(1, 200))
    if kind == 4:                                                              # stream ops on nothing
        return _cnxn() + pack(Message(A_WRTE, 5, 99, b"x")) + pack(Message(A_OPEN, 0, 0, b"shell:id\0"))
    return _cnxn() + pack(Message(A_OPEN, 1, 0, b"shell:" + rng.randbytes(50) + b"\0"))


def test_malformed_input_does_not_crash_or_leak(rig):
    baseline_threads = threading.active_count()
    baseline_conns = rig.server.active_connections
    rng = random.Random(1234)
    host, port = rig.server.address.host, rig.server.address.port
    for _ in range(150):
        with socket.create_connection((host, port), timeout=2) as s:
            try:
                s.sendall(_garbage(rng))
                s.shutdown(socket.SHUT_WR)
                s.settimeout(0.5)
                while s.recv(65536):
                    pass
            except OSError:
                pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and rig.server.active_connections > baseline_conns:
        time.sleep(0.02)
    assert rig.server.active_connections == baseline_conns
    assert threading.active_count() <= baseline_threads
    assert rig.device.shell(["echo", "alive"]).stdout == "alive\n"            # the real transport still works


def test_stalled_handshake_times_out(rig):
    s = socket.create_connection((rig.server.address.host, rig.server.address.port))
    s.sendall(b"CNX")
    time.sleep(0.1)
    s.close()
    assert rig.device.shell(["true"]).exit_code == 0


def test_non_loopback_requires_auth_or_explicit_insecure():
    with pytest.raises(PhoneServerError, match="without authentication"):
        PhoneServer(VirtualPhone(), "0.0.0.0", 0)


def test_auth_accepts_the_servers_key(rig):
    key = rig.adb.home / ".android" / "adbkey.pub"
    deadline = time.monotonic() + 5
    while not key.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    server = PhoneServer(VirtualPhone(serial="authed"), "127.0.0.1", 0, adb_keys=key).start()
    try:
        rig.adb.connect(server.address.serial)
        dev = select_device(server.address.serial, server=ServerAddress(port=rig.adb.port), env={})
        assert dev.shell(["getprop", "ro.serialno"]).stdout == "authed\n"
    finally:
        rig.client().disconnect(server.address.serial)
        server.close()

