"""Both servers stay up under slow and greedy clients: whole-handshake deadlines, bounded buffers.
Loopback only, every test bounded in time."""
from __future__ import annotations

import socket
import struct
import time

from mobile_actions.android.phone import PhoneServer, VirtualPhone
from mobile_actions.android.phone.protocol import A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, Message, pack, read_message
from mobile_actions.android.phone.services import SHELL_LINE_MAX


def _online(server: PhoneServer) -> socket.socket:
    s = socket.create_connection((server.address.host, server.address.port), timeout=5)
    s.sendall(pack(Message(A_CNXN, A_VERSION, 1 << 20, b"host::")))
    assert read_message(s).command == A_CNXN
    return s


def test_a_trickling_handshake_is_cut_at_the_deadline():
    """One byte every 0.2 s never completes a header; the connection must end at the handshake
    deadline (1 s here), not live for ever because every single read arrives in time."""
    with PhoneServer(VirtualPhone(), port=0, handshake_timeout=1.0) as server:
        s = socket.create_connection((server.address.host, server.address.port), timeout=5)
        t0 = time.monotonic()
        closed = False
        for b in pack(Message(A_CNXN, A_VERSION, 4096, b"host::")) * 3:
            try:
                s.sendall(bytes([b]))
            except OSError:
                closed = True
                break
            time.sleep(0.2)
            if server.active_connections == 0:
                closed = True
                break
        assert closed and time.monotonic() - t0 < 3.0
        s.close()


def _open(s: socket.socket, service: bytes) -> int:
    s.sendall(pack(Message(A_OPEN, 7, 0, service + b"\0")))
    while True:
        m = read_message(s)
        if m.command == A_OKAY:
            return m.arg0


def _drain_until_closed(s: socket.socket, limit_s: float = 5.0) -> bytes:
    out = bytearray()
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        m = read_message(s)
        if m.command == A_WRTE:
            out += m.data
            s.sendall(pack(Message(A_OKAY, m.arg1, m.arg0)))
        elif m.command != A_OKAY:
            return bytes(out)     # CLSE: the stream ended
    raise AssertionError("the stream was not closed")


def test_an_endless_interactive_shell_line_is_refused_not_buffered():
    with PhoneServer(VirtualPhone(), port=0) as server:
        s = _online(server)
        local = _open(s, b"shell:")
        chunk = b"x" * 4096
        sent = 0
        try:
            while sent <= SHELL_LINE_MAX + len(chunk):
                s.sendall(pack(Message(A_WRTE, 7, local, chunk)))
                sent += len(chunk)
        except OSError:
            pass
        assert b"closing" in _drain_until_closed(s)
        s.close()


def test_a_shell_v2_packet_declaring_gigabytes_is_refused():
    with PhoneServer(VirtualPhone(), port=0) as server:
        s = _online(server)
        local = _open(s, b"shell,v2:")
        s.sendall(pack(Message(A_WRTE, 7, local, struct.pack("<BI", 0, (4 << 30) - 1) + b"abc")))
        assert b"exceeds" in _drain_until_closed(s)
        s.close()
