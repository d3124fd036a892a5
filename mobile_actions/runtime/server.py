"""A warm caller on a local socket: `mobile-actions serve` keeps one `Caller` loaded, `call --server` asks it.

Why: a one-shot `call` spends ~2.5 s before its first token on loading (Gemma's 262k-piece tokenizer ~1 s, the
ONNX session ~0.5 s, the token table, imports) and ~0.3 s deciding. An app or a shell loop that asks many
times pays the loading once with a server, as with llama-server or Ollama.

Transport: a Unix domain socket, created 0600 inside a 0700 folder, so only its user can connect (the file
system is the authentication; on Linux the peer's uid is checked too). Nothing listens on a network port.
Protocol: one JSON object per connection, one line each way:

    -> {"request": "turn on the torch", "tools": "mobile_actions" | [<tool declarations>], "now": "2025-06-02T10:00:00"}
    <- {"ok": true, "result": <CallResult.to_json()>}   or   {"ok": false, "error": "..."}

A catalogue is a bundled name or the declarations themselves, never a path: a client's message does not make
the server read files. Bounds: `MAX_MESSAGE_BYTES` per message, `IO_TIMEOUT_S` to send it, connections
served one at a time (a `Caller` decodes one request at a time anyway) with a short backlog.
"""
from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

MAX_MESSAGE_BYTES = 4 << 20     # a 100-tool catalogue is ~100 KB of JSON
IO_TIMEOUT_S = 10.0             # to send a message (the server's own decoding is not bounded by it)
BACKLOG = 8
SOCKET_ENV = "MOBILE_ACTIONS_SOCKET"


def default_socket() -> Path:
    """`$MOBILE_ACTIONS_SOCKET`, else `caller.sock` in `$XDG_RUNTIME_DIR/mobile-actions` (a per-user tmpfs on
    Linux), else in the mobile-actions cache folder."""
    if os.environ.get(SOCKET_ENV):
        return Path(os.environ[SOCKET_ENV]).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "mobile-actions" / "caller.sock"
    from mobile_actions.caller.model import cache_dir  # torch-free

    return cache_dir(None) / "caller.sock"


class ServerError(Exception):
    """The server could not be reached or refused the message (the text says which and why)."""


@dataclass
class CallMessage:
    """What a client asks: a request, its catalogue (a bundled name or declarations) and the clock."""
    request: str
    tools: str | list = "mobile_actions"
    now: str | None = None

    @classmethod
    def from_json(cls, data: Any) -> "CallMessage":
        if not isinstance(data, dict):
            raise ValueError("a message is a JSON object")
        unknown = sorted(set(data) - {"request", "tools", "now"})
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}")
        request, tools, now = data.get("request"), data.get("tools", "mobile_actions"), data.get("now")
        if not isinstance(request, str) or not request.strip():
            raise ValueError("'request' must be a non-empty string")
        if isinstance(tools, str):
            if not tools.replace("_", "").replace("+", "").replace("-", "").isalnum():
                raise ValueError("'tools' is a bundled catalogue's name or a list of declarations, not a path")
        elif not isinstance(tools, list):
            raise ValueError("'tools' is a bundled catalogue's name or a list of declarations")
        if now is not None:
            if not isinstance(now, str):
                raise ValueError("'now' is YYYY-MM-DDTHH:MM:SS")
            datetime.fromisoformat(now)     # ValueError names the bad value
        return cls(request, tools, now)


# --------------------------------------------------------------------------------------------- framing
def _read_line(conn: socket.socket, limit: int | None = None) -> bytes:
    limit = limit or MAX_MESSAGE_BYTES
    buf = bytearray()
    while not buf.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > limit:
            raise ValueError(f"message over {limit:,} bytes")
    return bytes(buf)


def _send(conn: socket.socket, obj: dict) -> None:
    conn.sendall(json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n")


# --------------------------------------------------------------------------------------------- server
def _peer_is_me(conn: socket.socket) -> bool:
    """On Linux, whether the connecting process runs as this user (SO_PEERCRED); elsewhere the socket's
    file mode is the check."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def bind_socket(path: Path) -> socket.socket:
    """A listening Unix socket at `path` that only this user can reach; refuses to replace a live server."""
    if not hasattr(socket, "AF_UNIX"):
        raise ServerError("this platform has no Unix domain sockets; run `mobile-actions call` without --server")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise ServerError(f"{path} exists and is not a socket; choose another --socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
            raise ServerError(f"a server already listens on {path}")
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink()     # a socket left by a server that is gone
        finally:
            probe.close()
    # Bound and listening under a private name first, then linked into place: a client that sees the path can
    # connect at once, and a server that appeared meanwhile is never replaced (link refuses an existing name).
    staging = path.with_name(f".{os.getpid()}.sock")   # short: a socket address holds ~107 bytes
    staging.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(staging))
        os.chmod(staging, stat.S_IRUSR | stat.S_IWUSR)
        sock.listen(BACKLOG)
        os.link(staging, path)
    except FileExistsError:
        sock.close()
        raise ServerError(f"a server already listens on {path}") from None
    except OSError as e:    # e.g. a path over the ~107 bytes a socket address holds
        sock.close()
        raise ServerError(f"cannot listen on {path}: {e}") from None
    finally:
        os.umask(old)
        staging.unlink(missing_ok=True)
    return sock


def serve(caller: Any, path: Path, *, max_requests: int | None = None,
          log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> int:
    """Answer messages on `path` with `caller` until interrupted (or `max_requests` answered); returns the count.
    Each message is answered; a bad one gets {"ok": false, "error": ...}, never a dropped connection."""
    from mobile_actions.catalog import Catalogue, CatalogueError, load_catalogue
    from mobile_actions.errors import MobileActionsError

    sock = bind_socket(path)
    log(f"serving the caller on {path} (Ctrl-C stops)")
    served = 0
    try:
        while max_requests is None or served < max_requests:
            conn, _ = sock.accept()
            with conn:
                conn.settimeout(IO_TIMEOUT_S)
                if not _peer_is_me(conn):
                    continue
                try:
                    raw = _read_line(conn)
                    if not raw.strip():   # connected and left (a liveness probe): nothing to answer
                        continue
                    msg = CallMessage.from_json(json.loads(raw.decode("utf-8")))
                    tools = (load_catalogue(msg.tools) if isinstance(msg.tools, str)
                             else Catalogue.from_json(msg.tools, source="the message's tools"))
                    now = datetime.fromisoformat(msg.now) if msg.now else None
                    reply = {"ok": True, "result": caller.call(msg.request, tools, now=now).to_json()}
                except (ValueError, UnicodeDecodeError, CatalogueError, MobileActionsError) as e:
                    reply = {"ok": False, "error": str(e)}
                except (socket.timeout, OSError) as e:
                    log(f"a client's message did not arrive: {e}")
                    continue
                except Exception as e:   # noqa: BLE001  a failing turn is answered and logged; the server goes on
                    log(f"the caller failed on a request: {type(e).__name__}: {e}")
                    reply = {"ok": False, "error": f"the caller failed: {type(e).__name__}: {e}"}
                try:
                    _send(conn, reply)
                except OSError:
                    pass
                served += 1
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        path.unlink(missing_ok=True)
    return served


# --------------------------------------------------------------------------------------------- client
def ask(message: CallMessage, path: Path | None = None, timeout: float = 120.0) -> dict:
    """Send `message` to the server at `path` (default: `default_socket()`); the result's JSON."""
    path = path or default_socket()
    if not hasattr(socket, "AF_UNIX"):
        raise ServerError("this platform has no Unix domain sockets")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        _send(sock, {"request": message.request, "tools": message.tools, "now": message.now})
        line = _read_line(sock)
    except (FileNotFoundError, ConnectionRefusedError):
        raise ServerError(f"no caller server on {path}: start one with `mobile-actions serve`") from None
    except (socket.timeout, OSError, ValueError) as e:
        raise ServerError(f"the caller server on {path} did not answer: {e}") from None
    finally:
        sock.close()
    try:
        reply = json.loads(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ServerError(f"the caller server on {path} sent no answer (it may have stopped)") from None
    if not reply.get("ok"):
        raise ServerError(f"the caller server refused the request: {reply.get('error')}")
    return reply["result"]
