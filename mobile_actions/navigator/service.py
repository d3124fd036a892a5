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
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, Sequence

from .errors import ServiceError

TOKEN_ENV = "MOBILE_ACTIONS_NAVIGATOR_TOKEN"
MAX_BODY = 32 * 1024 * 1024  # 32 MiB: a screenshot plus four history frames fits easily
READ_TIMEOUT_S = 30.0  # a client that stalls mid-request does not pin a thread forever


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
        with Image.open(io.BytesIO(raw)) as im:
            return im.convert("RGB")
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError) as exc:
        raise ServiceError(f"{field}: not a base64 PNG ({exc})", 400) from exc


def parse_request(body: dict[str, Any]) -> tuple[str, Any, list[str], list[Any]]:
    if not isinstance(body, dict):
        raise ServiceError("request body must be a JSON object", 400)
    instruction = body.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ServiceError("instruction: a non-empty string is required", 400)
    screenshot = decode_png(body.get("screenshot"), "screenshot")
    history = body.get("history", [])
    if not isinstance(history, list):
        raise ServiceError("history: expected a list of {action, screenshot}", 400)
    actions, frames = [], []
    for i, h in enumerate(history):
        if not isinstance(h, dict) or not isinstance(h.get("action"), str):
            raise ServiceError(f"history[{i}]: expected {{'action': str, 'screenshot': base64 PNG | null}}", 400)
        actions.append(h["action"])
        if h.get("screenshot") is not None:
            frames.append(decode_png(h["screenshot"], f"history[{i}].screenshot"))
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
        super().__init__((host, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (e.g. its own time-out) is not an error worth a traceback; the library never prints."""

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: NavigatorServer
    timeout = READ_TIMEOUT_S
    protocol_version = "HTTP/1.1"

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
            instruction, screenshot, actions, frames = parse_request(body)
            pred = self.server.predictor.predict(instruction, screenshot, actions, frames)
        except json.JSONDecodeError as exc:
            self._send(HTTPStatus.BAD_REQUEST, {"error": f"invalid JSON: {exc}"})
            return
        except ServiceError as exc:
            self._send(exc.status or HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        except Exception as exc:  # a model failure must come back as an answer, not a dropped connection
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})
            return
        out = pred.to_json()
        out["latency_ms"] = round(1000 * (time.perf_counter() - t0), 1)
        self._send(HTTPStatus.OK, out)


def make_server(model_dir: str, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
                device: str | None = None) -> NavigatorServer:
    """Load the navigator at ``model_dir`` and bind (call ``serve_forever`` to run)."""
    from .infer import Navigator
    from .model import describe

    nav = Navigator(model_dir, device=device)
    info = {"model": model_dir, "device": nav.device, **describe(nav.model)}
    return NavigatorServer(nav, host, port, token, info)
