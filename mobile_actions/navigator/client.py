"""Client for ``navigator serve`` — what the hybrid runner calls each GUI step (stdlib only, no torch)."""
from __future__ import annotations

import base64
import io
import json
import os
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Sequence

from .actions import Action, parse_command
from mobile_actions.errors import ActionParseError, ServiceError
from .service import TOKEN_ENV

ImageLike = bytes | str | Path | Any  # PNG bytes, a file path, or a PIL image


def png_b64(image: ImageLike) -> str:
    if isinstance(image, (str, Path)):
        data = Path(image).read_bytes()
    elif isinstance(image, (bytes, bytearray)):
        data = bytes(image)
    else:  # PIL image
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        data = buf.getvalue()
    return base64.b64encode(data).decode("ascii")


class NavigatorClient:
    """``act(instruction, screenshot, history)`` → the next :class:`Action` (with the raw text and any error)."""

    def __init__(self, url: str = "http://127.0.0.1:8765", token: str | None = None, timeout: float = 60.0):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.timeout = timeout

    def _request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                msg = json.loads(exc.read()).get("error", exc.reason)
            except (ValueError, AttributeError):
                msg = exc.reason
            raise ServiceError(f"{self.url}{path}: HTTP {exc.code}: {msg}", exc.code) from exc
        except (socket.timeout, TimeoutError) as exc:
            raise ServiceError(f"{self.url}{path}: no answer within {self.timeout:g} s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise ServiceError(f"{self.url}{path}: no answer within {self.timeout:g} s") from exc
            raise ServiceError(f"{self.url}{path}: cannot connect ({exc.reason}); is `navigator serve` running?") from exc

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/v1/health")

    def act_raw(self, instruction: str, screenshot: ImageLike,
                history: Sequence[tuple[str, ImageLike | None]] = ()) -> dict[str, Any]:
        payload = {
            "instruction": instruction,
            "screenshot": png_b64(screenshot),
            "history": [{"action": a, "screenshot": None if s is None else png_b64(s)} for a, s in history],
        }
        return self._request("POST", "/v1/act", payload)

    def act(self, instruction: str, screenshot: ImageLike, history: Sequence[tuple[str, ImageLike | None]] = ()) -> Action:
        """The parsed next action; :class:`ActionParseError` when the model wrote something unparseable."""
        out = self.act_raw(instruction, screenshot, history)
        if out.get("action") is None:
            raise ActionParseError(out.get("text", ""), out.get("error") or "no action")
        return parse_command(out["action"]["command"])
