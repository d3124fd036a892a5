"""adbd services of the virtual phone: ``shell:``/``exec:``/``shell,v2``, ``sync:``, ``framebuffer:``.

Why each is a small state machine: the transport delivers bytes in arbitrary WRTE chunks and every
service runs in the connection's thread, so a service reacts to ``start``/``on_data``/``on_close``
and never blocks waiting for the host.
"""

from __future__ import annotations

import stat
import struct
import time
from typing import TYPE_CHECKING

from mobile_actions.android.phone import render
from mobile_actions.android.phone.protocol import ProtocolError, Stream
from mobile_actions.android.phone.state import HEIGHT, WIDTH

if TYPE_CHECKING:  # pragma: no cover
    from mobile_actions.android.phone.core import VirtualPhone

SYNC_DATA_MAX = 64 * 1024
SYNC_PATH_MAX = 1024
SYNC_FILE_MAX = 64 * 1024 * 1024     # one pushed file: the virtual filesystem keeps it in memory
SHELL_LINE_MAX = 64 * 1024           # an interactive shell line not yet ended by a newline
SHELL_PACKET_MAX = 1024 * 1024       # one shell_v2 stdin packet (what adbd accepts as a payload)
PROMPT = b"vphone:/ $ "


class DropConnection(ProtocolError):
    """Raised by the test hook that simulates a device vanishing mid-call."""


def open_service(phone: "VirtualPhone", name: str, stream: Stream):
    """Service name -> service object, or None to refuse it (the host then sees 'closed')."""
    if name.startswith(("shell:", "shell,")) or name.startswith("exec:") or name == "shell":
        head, _, command = name.partition(":")
        opts = head.split(",")[1:]
        return ShellService(phone, stream, command, v2="v2" in opts, exec_=head == "exec")
    if name == "sync:":
        return SyncService(phone, stream)
    if name == "framebuffer:":
        return OneShot(stream, lambda: _framebuffer(phone))
    if name == "root:":
        return OneShot(stream, lambda: b"adbd cannot run as root in production builds\n")
    if name == "unroot:":
        return OneShot(stream, lambda: b"adbd not running as root\n")
    if name.startswith("tcpip:"):
        return OneShot(stream, lambda: b"restarting in TCP mode port: " + name[6:].encode()[:8] + b"\n")
    if name.startswith("reboot:"):
        return OneShot(stream, lambda: b"")
    return None


class OneShot:
    def __init__(self, stream: Stream, make) -> None:
        self.stream, self.make = stream, make

    def start(self) -> None:
        self.stream.write(self.make())
        self.stream.close()

    def on_data(self, data: bytes) -> None:
        pass

    def on_close(self) -> None:
        pass


def _framebuffer(phone: "VirtualPhone") -> bytes:
    pixels = render.rgba(phone)
    # version 1 header: bpp, size, width, height, then offset/length for red, blue, green, alpha
    return struct.pack("<13I", 1, 32, len(pixels), WIDTH, HEIGHT, 0, 8, 16, 8, 8, 8, 24, 8) + pixels


class ShellService:
    """One shell stream: run the command, send output (v1 raw; v2 as id/length packets), close.

    With an empty command it is an interactive shell: each line that arrives is run in turn.
    """

    def __init__(self, phone: "VirtualPhone", stream: Stream, command: str, v2: bool, exec_: bool = False) -> None:
        self.phone, self.stream, self.command, self.v2, self.exec_ = phone, stream, command, v2, exec_
        self.pending = bytearray()
        self.line = bytearray()

    def start(self) -> None:
        if self.phone.fail_next == "disconnect":
            self.phone.fail_next = None
            raise DropConnection("test hook: device vanished")
        if not self.command:
            self._emit(1, PROMPT)
            return
        result = self.phone.run(self.command)
        if self.phone.drop_after and self.command.startswith(self.phone.drop_after):
            self.phone.drop_after = None      # it happened on the phone, but its result never comes back
            raise DropConnection("test hook: device vanished after running the command")
        if self.v2:
            self._emit(1, result.stdout)
            self._emit(2, result.stderr)
            self._emit(3, bytes([result.exit_code]))
        else:
            self.stream.write(result.output)
        self.stream.close()

    def _emit(self, kind: int, data: bytes) -> None:
        if not self.v2:
            self.stream.write(data)
            return
        if data or kind == 3:
            self.stream.write(struct.pack("<BI", kind, len(data)) + data)

    def on_data(self, data: bytes) -> None:
        if self.command:
            return   # stdin of a non-interactive command is ignored
        if not self.v2:
            self._feed(data)
            return
        self.pending += data
        while len(self.pending) >= 5:
            kind, n = struct.unpack_from("<BI", self.pending)
            if n > SHELL_PACKET_MAX:   # a header declaring GiBs would otherwise be buffered until it arrives
                self._refuse(f"shell_v2 packet of {n} bytes exceeds {SHELL_PACKET_MAX}")
                return
            if len(self.pending) < 5 + n:
                break
            payload = bytes(self.pending[5:5 + n])
            del self.pending[:5 + n]
            if kind == 0:
                self._feed(payload)
            elif kind == 4:
                self._finish(0)

    def _feed(self, data: bytes) -> None:
        for byte in data:
            if byte in (10, 13):
                line = self.line.decode("utf-8", "replace")
                self.line.clear()
                self._emit(1, b"\r\n")
                if line.strip() == "exit":
                    self._finish(0)
                    return
                result = self.phone.run(line)
                out = result.output.replace(b"\n", b"\r\n")
                self._emit(1, out + PROMPT)
            elif byte in (8, 127):
                if self.line:
                    self.line.pop()
                    self._emit(1, b"\b \b")
            elif byte == 4:
                self._finish(0)
                return
            else:
                if len(self.line) >= SHELL_LINE_MAX:
                    self._refuse(f"a shell line longer than {SHELL_LINE_MAX} bytes")
                    return
                self.line.append(byte)
                self._emit(1, bytes([byte]))   # a pty echoes what was typed

    def _refuse(self, why: str) -> None:
        """Input no real shell would buffer: say so on stderr and end the stream (nothing is kept)."""
        self.pending.clear()
        self.line.clear()
        self._emit(2, f"\r\n{why}: closing\r\n".encode())
        self._finish(1)

    def _finish(self, code: int) -> None:
        if self.v2:
            self._emit(3, bytes([code]))
        self.stream.close()

    def on_close(self) -> None:
        pass


class SyncService:
    """The file-sync protocol (v1: STAT, LIST, RECV, SEND, QUIT) over the virtual filesystem."""

    def __init__(self, phone: "VirtualPhone", stream: Stream) -> None:
        self.phone, self.stream = phone, stream
        self.buf = bytearray()
        self.send_path: str | None = None
        self.send_data = bytearray()

    def start(self) -> None:
        pass

    def on_close(self) -> None:
        pass

    def on_data(self, data: bytes) -> None:
        self.buf += data
        while len(self.buf) >= 8 and not self.stream.closing:
            ident = bytes(self.buf[:4])
            (n,) = struct.unpack_from("<I", self.buf, 4)
            if self.send_path is not None:
                if ident == b"DATA":
                    if n > SYNC_DATA_MAX:
                        return self._fail("data chunk too large")
                    if len(self.buf) < 8 + n:
                        return
                    if len(self.send_data) + n > SYNC_FILE_MAX:
                        return self._fail(f"file larger than {SYNC_FILE_MAX} bytes")
                    self.send_data += self.buf[8:8 + n]
                    del self.buf[:8 + n]
                elif ident == b"DONE":
                    del self.buf[:8]
                    ok = self.phone.fs.write(self.send_path, bytes(self.send_data))
                    self.send_path, self.send_data = None, bytearray()
                    self.stream.write(b"OKAY\0\0\0\0" if ok else _fail_packet("couldn't create file: Read-only file system"))
                else:
                    return self._fail("expected DATA or DONE")
                continue
            if ident == b"QUIT":
                self.stream.close()
                return
            if ident not in (b"STAT", b"LIST", b"RECV", b"SEND"):
                return self._fail("unknown sync command")
            if n > SYNC_PATH_MAX:
                return self._fail("path too long")
            if len(self.buf) < 8 + n:
                return
            path = self.buf[8:8 + n].decode("utf-8", "replace")
            del self.buf[:8 + n]
            with self.phone.lock:
                getattr(self, "_" + ident.decode().lower())(path)

    def _stat(self, path: str) -> None:
        mode, size = _mode(self.phone, path)
        self.stream.write(b"STAT" + struct.pack("<3I", mode, size, int(time.time()) if mode else 0))

    def _list(self, path: str) -> None:
        names = self.phone.fs.listdir(path) or []
        out = bytearray()
        for name in names:
            mode, size = _mode(self.phone, path.rstrip("/") + "/" + name)
            raw = name.encode()
            out += b"DENT" + struct.pack("<4I", mode, size, int(time.time()), len(raw)) + raw
        self.stream.write(bytes(out) + b"DONE" + bytes(16))

    def _recv(self, path: str) -> None:
        data = self.phone.fs.read(path)
        if data is None:
            self.stream.write(_fail_packet("No such file or directory"))
            return
        out = bytearray()
        for i in range(0, len(data), SYNC_DATA_MAX):
            chunk = data[i:i + SYNC_DATA_MAX]
            out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
        self.stream.write(bytes(out) + b"DONE\0\0\0\0")

    def _send(self, spec: str) -> None:
        path, _, _mode_text = spec.rpartition(",")
        self.send_path = path or spec
        self.send_data = bytearray()

    def _fail(self, message: str) -> None:
        self.stream.write(_fail_packet(message))
        self.stream.close()


def _fail_packet(message: str) -> bytes:
    raw = message.encode()
    return b"FAIL" + struct.pack("<I", len(raw)) + raw


def _mode(phone: "VirtualPhone", path: str) -> tuple[int, int]:
    if phone.fs.is_dir(path):
        return stat.S_IFDIR | 0o755, 4096
    data = phone.fs.read(path)
    if data is None:
        return 0, 0
    return stat.S_IFREG | 0o644, len(data)


__all__ = ["open_service", "DropConnection"]
