"""``navigator serve``: a small HTTP JSON service in front of a navigator (stdlib ``ThreadingHTTPServer``).

    POST /v1/act     {"instruction": str, "screenshot": base64 PNG,
                      "history": [{"action": "CLICK: (x, y)", "screenshot": base64 PNG | null}, ...]}  (oldest first)
                  →  {"action": {...} | null, "text": str, "error": str | null, "latency_ms": float}
    GET  /v1/health  →  {"status": "ok", "model": ..., "odyssey": {...}}

Loopback by default. Anything reachable from a network must authenticate: binding another host without a
bearer token is refused; with one, every request needs ``Authorization: Bearer <token>``.
"""
from __future__ import annotations

import base64
import binascii
import hmac
import io
import ipaddress
import json
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, Sequence

from mobile_actions.errors import ServiceError

TOKEN_ENV = "MOBILE_ACTIONS_NAVIGATOR_TOKEN"
# Bounds on what one request may cost (a navigator reachable from a network must not be made to use GBs of
# memory or minutes of CPU by one client): answered 400 / 413 / 503 with a JSON error.
MAX_BODY = 16 * 1024 * 1024      # a 1080x2400 screenshot plus four history frames fits easily
MAX_PIXELS = 4096 * 4096         # per image, checked from the PNG header before anything is decoded
MAX_INSTRUCTION = 2000           # characters
MAX_HISTORY = 64                 # history entries (actions); only the last HISTORY_FRAMES screenshots are decoded
HISTORY_FRAMES = 4               # what the model looks at (GUI Odyssey's delta = 4)
REQUEST_DEADLINE_S = 30.0        # the whole request must have arrived by then (not each read)
BUSY_WAIT_S = 5.0                # a request waits this long for the model, then gets 503
MAX_CONNECTIONS = 32             # further connections are closed at once


class Predictor(Protocol):
    def predict(self, instruction: str, screenshot: Any, history_actions: Sequence[str] = (), history_screenshots: Sequence[Any] = ()) -> Any: ...


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def decode_png(data: Any, field: str) -> Any:
    """base64 → RGB PIL image, or :class:`ServiceError` 400 naming the field."""
    from PIL import Image, UnidentifiedImageError

    if not isinstance(data, str):
        raise ServiceError(f"{field}: expected a base64-encoded PNG string", 400)
    try:
        raw = base64.b64decode(data, validate=True)
        with Image.open(io.BytesIO(raw)) as im:   # reads the header only
            w, h = im.size
            if w * h > MAX_PIXELS:
                raise ServiceError(f"{field}: {w}x{h} pixels is more than {MAX_PIXELS} (a phone screen is far less)", 413)
            return im.convert("RGB")
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise ServiceError(f"{field}: not a base64 PNG ({exc})", 400) from exc


def parse_request(body: dict[str, Any]) -> tuple[str, Any, list[str], list[Any]]:
    if not isinstance(body, dict):
        raise ServiceError("request body must be a JSON object", 400)
    instruction = body.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ServiceError("instruction: a non-empty string is required", 400)
    if len(instruction) > MAX_INSTRUCTION:
        raise ServiceError(f"instruction: {len(instruction)} characters is more than {MAX_INSTRUCTION}", 413)
    history = body.get("history", [])
    if not isinstance(history, list):
        raise ServiceError("history: expected a list of {action, screenshot}", 400)
    if len(history) > MAX_HISTORY:
        raise ServiceError(f"history: {len(history)} entries is more than {MAX_HISTORY}", 413)
    for i, h in enumerate(history):
        if not isinstance(h, dict) or not isinstance(h.get("action"), str) or len(h["action"]) > MAX_INSTRUCTION:
            raise ServiceError(f"history[{i}]: expected {{'action': str, 'screenshot': base64 PNG | null}}", 400)
    screenshot = decode_png(body.get("screenshot"), "screenshot")
    actions = [h["action"] for h in history]
    # Only the frames the model looks at are decoded: the last HISTORY_FRAMES that carry a screenshot.
    shots = [(i, h["screenshot"]) for i, h in enumerate(history) if h.get("screenshot") is not None]
    frames = [decode_png(s, f"history[{i}].screenshot") for i, s in shots[-HISTORY_FRAMES:]]
    return instruction, screenshot, actions, frames


class NavigatorServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, predictor: Predictor, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
                 info: dict[str, Any] | None = None):
        if not is_loopback(host) and not token:
            raise ServiceError(f"refusing to serve on {host} without a bearer token (--token or ${TOKEN_ENV})")
        self.predictor = predictor
        self.token = token
        self.info = info or {}
        self.model_lock = threading.Lock()       # one prediction at a time; others wait BUSY_WAIT_S, then 503
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__((host, port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """At most MAX_CONNECTIONS at once (each is a thread): the rest are closed before any work."""
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (e.g. its own time-out) is not an error worth a traceback; the library never prints."""

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: NavigatorServer
    timeout = REQUEST_DEADLINE_S
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        """A whole-request deadline: a client trickling a byte at a time is cut off at REQUEST_DEADLINE_S,
        however punctual each single read is (the socket's own timeout is per read)."""
        super().setup()
        self._watchdog = threading.Timer(REQUEST_DEADLINE_S, self._cut)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _cut(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def finish(self) -> None:
        self._watchdog.cancel()
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:  # the library never prints
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _authorised(self) -> bool:
        if not self.server.token:
            return True
        got = self.headers.get("Authorization", "")
        ok = hmac.compare_digest(got.encode(), f"Bearer {self.server.token}".encode())
        if not ok:
            self.close_connection = True     # its body is never read: the connection cannot carry another request
            self._send(HTTPStatus.UNAUTHORIZED, {"error": "missing or wrong bearer token"})
        return ok

    def do_GET(self) -> None:
        if not self._authorised():
            return
        if self.path.rstrip("/") == "/v1/health":
            self._send(HTTPStatus.OK, {"status": "ok", **self.server.info})
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"unknown path {self.path}; try POST /v1/act"})

    def do_POST(self) -> None:
        if not self._authorised():
            return
        if self.path.rstrip("/") != "/v1/act":
            self.close_connection = True
            self._send(HTTPStatus.NOT_FOUND, {"error": f"unknown path {self.path}; try POST /v1/act"})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"body must be 0..{MAX_BODY} bytes"})
            self.close_connection = True
            return
        t0 = time.perf_counter()
        try:
            body = json.loads(self.rfile.read(length) or b"null")
            self._watchdog.cancel()               # the request has arrived; the model's time is bounded below
            instruction, screenshot, actions, frames = parse_request(body)
            if not self.server.model_lock.acquire(timeout=BUSY_WAIT_S):
                raise ServiceError(f"busy: the model is answering another request (waited {BUSY_WAIT_S:g} s)", 503)
            try:
                pred = self.server.predictor.predict(instruction, screenshot, actions, frames)
            finally:
                self.server.model_lock.release()
        except (json.JSONDecodeError, RecursionError) as exc:
            self._send(HTTPStatus.BAD_REQUEST, {"error": f"invalid JSON: {getattr(exc, 'msg', 'nested too deep')}"})
            return
        except ServiceError as exc:
            self._send(exc.status or HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        except Exception:  # a model failure comes back as an answer, never with its internals
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "the navigator failed on this request"})
            return
        out = pred.to_json()
        out["latency_ms"] = round(1000 * (time.perf_counter() - t0), 1)
        self._send(HTTPStatus.OK, out)


def make_server(model_dir: str, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
                device: str | None = None) -> NavigatorServer:
    """Load the navigator at ``model_dir`` and bind (call ``serve_forever`` to run)."""
    from mobile_actions.navigator.infer import Navigator
    from mobile_actions.navigator.model import describe

    nav = Navigator(model_dir, device=device)
    info = {"model": model_dir, "device": nav.device, **describe(nav.model)}
    return NavigatorServer(nav, host, port, token, info)
