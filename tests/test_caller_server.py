"""`serve` / `call --server`: a warm caller on a Unix socket only its user can reach, bounded and path-free."""
from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from mobile_actions.calls import ToolCall
from mobile_actions.runtime.onnx import CallResult
from mobile_actions.runtime.server import CallMessage, ServerError, ask, bind_socket, serve

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix domain sockets")


class EchoCaller:
    """Answers every request with one call naming the request and the catalogue's first tool."""

    def __init__(self):
        self.seen: list[tuple[str, list[str], object]] = []

    def call(self, request, tools, now=None):
        self.seen.append((request, tools.names, now))
        return CallResult([ToolCall(tools.names[0], {})], text=request)


@pytest.fixture
def sock_path():
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="ma-", dir="/tmp"))   # short: a socket address holds ~107 bytes
    yield d / "s.sock"
    for p in d.iterdir():
        p.unlink()
    d.rmdir()


def _serving(caller, path: Path, n: int) -> threading.Thread:
    t = threading.Thread(target=serve, args=(caller, path), kwargs={"max_requests": n, "log": lambda m: None},
                         daemon=True)
    t.start()
    for _ in range(200):
        if path.exists():
            break
        threading.Event().wait(0.01)
    return t


def _raw(path: Path, data: bytes) -> dict:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(str(path))
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    s.close()
    return json.loads(out)


def test_a_request_round_trips_with_a_bundled_or_inline_catalogue(sock_path):
    caller = EchoCaller()
    t = _serving(caller, sock_path, 2)
    assert stat.S_IMODE(os.stat(sock_path).st_mode) == 0o600
    r = ask(CallMessage("turn on the torch", "mobile_actions", "2025-06-02T10:00:00"), sock_path)
    assert r["calls"] == [{"name": caller.seen[0][1][0], "arguments": {}}] and r["text"] == "turn on the torch"
    tools = [{"function": {"name": "start_workout", "description": "Start a workout",
                           "parameters": {"type": "OBJECT", "properties": {}}}}]
    r = ask(CallMessage("go", tools), sock_path)
    assert r["calls"][0]["name"] == "start_workout"
    t.join(5)
    assert not t.is_alive() and not sock_path.exists()   # stopped after two answers, socket removed


@pytest.mark.parametrize("data, why", [
    (b'{"request": "x", "tools": "../../etc/passwd"}\n', "not a path"),
    (b'{"request": "x", "tools": "/etc/hosts"}\n', "not a path"),
    (b'{"request": ""}\n', "non-empty"),
    (b'{"request": "x", "extra": 1}\n', "unknown field"),
    (b'{"request": "x", "now": "soon"}\n', "soon"),
    (b'not json\n', "Expecting value"),
    (b'{"request": "x", "tools": [{"function": {"name": 3}}]}\n', "tool #0"),
])
def test_bad_messages_get_an_error_and_the_server_goes_on(sock_path, data, why):
    caller = EchoCaller()
    t = _serving(caller, sock_path, 2)
    reply = _raw(sock_path, data)
    assert reply["ok"] is False and why in reply["error"]
    assert ask(CallMessage("still there?"), sock_path)["text"] == "still there?"
    t.join(5)
    assert [s[0] for s in caller.seen] == ["still there?"]


def test_an_oversized_message_is_refused(sock_path, monkeypatch):
    import mobile_actions.runtime.server as server

    monkeypatch.setattr(server, "MAX_MESSAGE_BYTES", 1000)
    t = _serving(EchoCaller(), sock_path, 1)
    reply = _raw(sock_path, b'{"request": "' + b"a" * 5000 + b'"}\n')
    assert reply["ok"] is False and "over 1,000 bytes" in reply["error"]
    t.join(5)


def test_a_live_server_is_not_replaced_and_a_stale_socket_is(sock_path):
    t = _serving(EchoCaller(), sock_path, 1)
    with pytest.raises(ServerError, match="already listens"):
        bind_socket(sock_path)
    ask(CallMessage("bye"), sock_path)
    t.join(5)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock_path))      # a socket file nobody listens on
    stale.close()
    bind_socket(sock_path).close()
    sock_path.unlink()
    sock_path.write_text("a file")
    with pytest.raises(ServerError, match="not a socket"):
        bind_socket(sock_path)


def test_no_server_is_a_clear_error(sock_path):
    with pytest.raises(ServerError, match="mobile-actions serve"):
        ask(CallMessage("x"), sock_path)


def test_call_server_prints_what_a_local_call_prints(sock_path, capsys):
    from mobile_actions.cli.main import main
    from mobile_actions.runtime import Caller
    from tests.test_export_support import tiny_export

    folder = tiny_export("fp32")
    caller = Caller.from_pretrained(folder, threads=1)
    now = "2025-03-14T09:26:53"
    assert main(["call", "turn on the flashlight", "--model", str(folder), "--json", "--threads", "1",
                 "--now", now]) in (0, 1)
    local = json.loads(capsys.readouterr().out)
    t = _serving(caller, sock_path, 1)
    assert main(["call", "turn on the flashlight", "--server", str(sock_path), "--json", "--now", now]) in (0, 1)
    remote = json.loads(capsys.readouterr().out)
    t.join(5)
    assert remote["raw"] == local["raw"] and remote["calls"] == local["calls"]
