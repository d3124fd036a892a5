"""adbd's wire protocol, device side: message framing, the handshake and stream bookkeeping.

Why our own: the virtual phone must look like a real device to Google's adb server (the one in the
adbutils wheel), so it speaks AOSP ``adb/protocol.txt`` exactly: 24-byte little-endian headers,
CNXN/AUTH/OPEN/OKAY/WRTE/CLSE, one unacknowledged WRTE per stream. Services (shell, sync, ...) live in
``services.py``; this module only moves bytes and never interprets a service's payload.

Malformed input (bad magic, oversized lengths, truncated headers, messages before the handshake) ends
the connection: the phone itself keeps running and the connection's thread exits.
"""

from __future__ import annotations

import socket
import struct
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Protocol

from mobile_actions.errors import ProtocolError

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453

A_VERSION = 0x01000001          # the first version that skips checksums
A_VERSION_MIN = 0x01000000
MAX_PAYLOAD = 1024 * 1024       # what we advertise and accept
MAX_OPEN_SERVICE = 64 * 1024    # the server's own limit for a service name (4 hex digits)
MAX_STREAMS = 256               # per connection; more is a misbehaving peer

AUTH_TOKEN = 1
AUTH_SIGNATURE = 2
AUTH_RSAPUBLICKEY = 3

HEADER = struct.Struct("<6I")
COMMAND_NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN", A_OKAY: "OKAY",
                 A_CLSE: "CLSE", A_WRTE: "WRTE", A_STLS: "STLS"}


@dataclass(frozen=True)
class Message:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command, hex(self.command))


def checksum(data: bytes) -> int:
    """adb's "crc32" is really the byte sum; only peers older than A_VERSION check it."""
    return sum(data) & 0xFFFFFFFF


def pack(msg: Message, with_checksum: bool = False) -> bytes:
    crc = checksum(msg.data) if with_checksum else 0
    return HEADER.pack(msg.command, msg.arg0, msg.arg1, len(msg.data), crc,
                       msg.command ^ 0xFFFFFFFF) + msg.data


def _recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """`n` bytes; with a `deadline` (time.monotonic()), all of them by then, however slowly they trickle in."""
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("deadline passed")
            sock.settimeout(left)
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("peer closed" if not buf else f"truncated: {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def read_message(sock: socket.socket, max_payload: int = MAX_PAYLOAD, deadline: float | None = None) -> Message:
    """Read one message; raise ProtocolError on anything a real adb peer would never send."""
    header = _recv_exact(sock, HEADER.size, deadline)
    command, arg0, arg1, length, crc, magic = HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic for command {command:#x}")
    if command not in COMMAND_NAMES:
        raise ProtocolError(f"unknown command {command:#x}")
    if length > max_payload:
        raise ProtocolError(f"payload of {length} bytes exceeds {max_payload}")
    data = _recv_exact(sock, length, deadline) if length else b""
    if crc and crc != checksum(data):
        raise ProtocolError("bad checksum")
    return Message(command, arg0, arg1, data)


class Service(Protocol):
    """What a stream's far end is: it gets the host's bytes and writes replies via its Stream."""

    def start(self) -> None: ...
    def on_data(self, data: bytes) -> None: ...
    def on_close(self) -> None: ...


class Stream:
    """One OPENed stream. Writes are queued and sent one WRTE at a time, each waiting for OKAY."""

    def __init__(self, conn: "Connection", local_id: int, remote_id: int) -> None:
        self.conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self.outq: deque[bytes] = deque()
        self.awaiting_ack = False
        self.closing = False
        self.closed = False
        self.service: Service | None = None

    def write(self, data: bytes) -> None:
        if self.closed or self.closing or not data:
            return
        step = self.conn.peer_max
        for i in range(0, len(data), step):
            self.outq.append(data[i:i + step])
        self.pump()

    def close(self) -> None:
        """Close once everything queued has been acknowledged."""
        if not self.closed:
            self.closing = True
            self.pump()

    def pump(self) -> None:
        if self.closed or self.awaiting_ack:
            return
        if self.outq:
            self.awaiting_ack = True
            self.conn.send(Message(A_WRTE, self.local_id, self.remote_id, self.outq.popleft()))
        elif self.closing:
            self.closed = True
            self.conn.send(Message(A_CLSE, self.local_id, self.remote_id))
            self.conn.forget(self)


ServiceFactory = Callable[[str, Stream], "Service | None"]


class Connection:
    """One transport (one adb server talking to us). Runs entirely in the caller's thread."""

    def __init__(self, sock: socket.socket, banner: bytes, open_service: ServiceFactory,
                 handshake_timeout: float = 10.0, authenticator: "Authenticator | None" = None) -> None:
        self.sock = sock
        self.banner = banner
        self.open_service = open_service
        self.handshake_timeout = handshake_timeout
        self.authenticator = authenticator
        self.peer_version = A_VERSION
        self.peer_max = MAX_PAYLOAD
        self.streams: dict[int, Stream] = {}
        self.next_id = 1
        self.online = False

    # -- sending -------------------------------------------------------------------------------
    def send(self, msg: Message) -> None:
        self.sock.sendall(pack(msg, with_checksum=self.peer_version < A_VERSION))

    def forget(self, stream: Stream) -> None:
        self.streams.pop(stream.local_id, None)

    # -- the loop ------------------------------------------------------------------------------
    def serve(self) -> None:
        """Handle messages until the peer goes away or misbehaves. Never raises."""
        try:
            # The whole handshake (CNXN, AUTH) must be over by this deadline, not each read: a peer sending a
            # byte every few seconds would otherwise hold a connection slot for ever.
            deadline = time.monotonic() + self.handshake_timeout
            while True:
                msg = read_message(self.sock, deadline=None if self.online else deadline)
                self.handle(msg)
        except (EOFError, OSError, ProtocolError, socket.timeout):
            pass
        finally:
            for stream in list(self.streams.values()):
                self._drop(stream)
            try:
                self.sock.close()
            except OSError:
                pass

    def handle(self, msg: Message) -> None:
        if msg.command == A_CNXN:
            self._on_cnxn(msg)
        elif msg.command == A_AUTH:
            self._on_auth(msg)
        elif not self.online:
            raise ProtocolError(f"{msg.name} before the handshake")
        elif msg.command == A_OPEN:
            self._on_open(msg)
        elif msg.command == A_OKAY:
            stream = self.streams.get(msg.arg1)
            if stream is not None and stream.remote_id in (0, msg.arg0):
                stream.awaiting_ack = False
                stream.pump()
        elif msg.command == A_WRTE:
            stream = self.streams.get(msg.arg1)
            if stream is None:
                self.send(Message(A_CLSE, 0, msg.arg0))
                return
            self.send(Message(A_OKAY, stream.local_id, stream.remote_id))
            if stream.service is not None and not stream.closed:
                stream.service.on_data(msg.data)
        elif msg.command == A_CLSE:
            stream = self.streams.get(msg.arg1)
            if stream is not None:
                self._drop(stream)
        else:  # SYNC, STLS: never sent by a server to a device that did not ask for them
            raise ProtocolError(f"unexpected {msg.name}")

    def _on_cnxn(self, msg: Message) -> None:
        if msg.arg0 < A_VERSION_MIN or msg.arg1 < 256:
            raise ProtocolError("CNXN with an impossible version or max payload")
        self.peer_version = min(msg.arg0, A_VERSION)
        self.peer_max = min(msg.arg1, MAX_PAYLOAD)
        for stream in list(self.streams.values()):   # a new CNXN resets the transport
            self._drop(stream)
        if self.authenticator is not None and not self.authenticator.verified:
            self.send(Message(A_AUTH, AUTH_TOKEN, 0, self.authenticator.new_token()))
            return
        self._go_online()

    def _on_auth(self, msg: Message) -> None:
        if self.authenticator is None or self.online:
            raise ProtocolError("unexpected AUTH")
        if msg.arg0 == AUTH_SIGNATURE and self.authenticator.check(msg.data):
            self._go_online()
        elif msg.arg0 == AUTH_SIGNATURE:
            self.send(Message(A_AUTH, AUTH_TOKEN, 0, self.authenticator.new_token()))
        elif msg.arg0 == AUTH_RSAPUBLICKEY:
            pass  # a real phone would ask its user; we never add keys: the host stays "unauthorized"
        else:
            raise ProtocolError("bad AUTH type")

    def _go_online(self) -> None:
        self.online = True
        self.sock.settimeout(None)
        self.send(Message(A_CNXN, A_VERSION, MAX_PAYLOAD, self.banner))

    def _on_open(self, msg: Message) -> None:
        if msg.arg0 == 0 or len(msg.data) > MAX_OPEN_SERVICE or len(self.streams) >= MAX_STREAMS:
            self.send(Message(A_CLSE, 0, msg.arg0))
            return
        name = msg.data.split(b"\0", 1)[0].decode("utf-8", "replace")
        stream = Stream(self, self.next_id, msg.arg0)
        service = self.open_service(name, stream)
        if service is None:          # unknown service: refuse it the way adbd does
            self.send(Message(A_CLSE, 0, msg.arg0))
            return
        self.next_id = self.next_id % 0x7FFFFFFF + 1
        self.streams[stream.local_id] = stream
        stream.service = service
        self.send(Message(A_OKAY, stream.local_id, stream.remote_id))
        service.start()

    def _drop(self, stream: Stream) -> None:
        """Forget a stream the host closed (or whose transport died); adbd sends no CLSE back."""
        self.streams.pop(stream.local_id, None)
        stream.closed = True
        if stream.service is not None:
            try:
                stream.service.on_close()
            except Exception:  # a service bug must not take the transport down
                pass


class Authenticator(Protocol):
    verified: bool

    def new_token(self) -> bytes: ...
    def check(self, signature: bytes) -> bool: ...
