"""The TCP listener that makes a VirtualPhone reachable by ``adb connect HOST:PORT``.

Why it refuses non-loopback addresses by default: the phone runs whatever shell text it receives
(as a real phone's adbd would). On 127.0.0.1 only local users reach it; on any other address it
requires adb's RSA AUTH against an allowed-keys file (``auth.py``), or an explicit ``insecure=True``.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from mobile_actions.android.phone.core import VirtualPhone
from mobile_actions.android.phone.protocol import Connection
from mobile_actions.android.phone.services import open_service
from mobile_actions.errors import PhoneServerError

DEFAULT_PORT = 15555      # outside 5555-5585, which adb scans for emulators
MAX_CONNECTIONS = 32
HANDSHAKE_TIMEOUT_S = 10.0   # the whole CNXN/AUTH exchange, not each read


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    @property
    def serial(self) -> str:
        """What ``adb devices`` lists for a TCP device."""
        return f"{self.host}:{self.port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class PhoneServer:
    """Accepts adb-server connections in a thread; one thread per connection; ``close()`` joins all."""

    def __init__(self, phone: VirtualPhone | None = None, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 *, adb_keys: str | Path | None = None, insecure: bool = False,
                 handshake_timeout: float = HANDSHAKE_TIMEOUT_S) -> None:
        self.phone = phone or VirtualPhone()
        self.handshake_timeout = handshake_timeout
        self.keys = None
        if adb_keys is not None:
            from mobile_actions.android.phone.auth import load_keys
            self.keys = load_keys(adb_keys)
        if not is_loopback(host) and self.keys is None and not insecure:
            raise PhoneServerError(
                f"refusing to listen on non-loopback address {host!r} without authentication: anyone who can "
                "reach it could run commands on the phone. Pass an allowed-keys file (adb_keys / --adb-keys, "
                "e.g. ~/.android/adbkey.pub) or, on a network you trust, insecure=True / --insecure.")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError as e:
            self.sock.close()
            raise PhoneServerError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        self.sock.listen(16)
        self.address = Address(host, self.sock.getsockname()[1])
        self._threads: set[threading.Thread] = set()
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept_loop, name="vphone-accept", daemon=True)

    def banner(self) -> bytes:
        st = self.phone.state
        model = st.model.replace(" ", "_").replace(";", "_")
        return (f"device::ro.product.name=vphone;ro.product.model={model};ro.product.device=vphone;"
                "features=shell_v2,cmd,fixed_push_mkdir").encode()

    def start(self) -> "PhoneServer":
        self._acceptor.start()
        return self

    def __enter__(self) -> "PhoneServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def active_connections(self) -> int:
        with self._lock:
            return sum(t.is_alive() for t in self._threads)

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self._threads = {t for t in self._threads if t.is_alive()}
                if self._closed or len(self._threads) >= MAX_CONNECTIONS:
                    conn.close()
                    continue
                self._conns.add(conn)
                t = threading.Thread(target=self._serve, args=(conn,), name="vphone-conn", daemon=True)
                self._threads.add(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        auth = None
        if self.keys is not None:
            from mobile_actions.android.phone.auth import KeyAuthenticator
            auth = KeyAuthenticator(self.keys)
        try:
            Connection(conn, self.banner(), lambda name, s: open_service(self.phone, name, s),
                       handshake_timeout=self.handshake_timeout, authenticator=auth).serve()
        finally:
            with self._lock:
                self._conns.discard(conn)

    def drop_connections(self) -> None:
        """Cut every transport (the adb server then sees the device go offline)."""
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self, timeout: float = 5.0) -> None:
        self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.drop_connections()
        if self._acceptor.is_alive():
            self._acceptor.join(timeout)
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)
