"""Both servers stay up under slow and greedy clients: whole-handshake deadlines, bounded buffers.
Loopback only, every test bounded in time."""
from __future__ import annotations

import base64
import io
import json
import socket
import struct
import threading
import time
import urllib.error
import urllib.request

import pytest

from mobile_actions.android.phone import PhoneServer, VirtualPhone
from mobile_actions.android.phone.protocol import (
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    Message,
    pack,
    read_message,
)
from mobile_actions.android.phone.services import SHELL_LINE_MAX
from mobile_actions.navigator import service as S


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
        assert b"closing" in _drain_until_closed(s, 30)
        s.close()


def test_a_shell_v2_packet_declaring_gigabytes_is_refused():
    with PhoneServer(VirtualPhone(), port=0) as server:
        s = _online(server)
        local = _open(s, b"shell,v2:")
        s.sendall(pack(Message(A_WRTE, 7, local, struct.pack("<BI", 0, (4 << 30) - 1) + b"abc")))
        assert b"exceeds" in _drain_until_closed(s)
        s.close()


# ------------------------------------------------------------------------------------ the navigator service
class Counting:
    """A predictor that records how many history frames it was given and can be slow."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay, self.frames = delay, []

    def predict(self, instruction, screenshot, history_actions=(), history_screenshots=()):
        from mobile_actions.navigator.actions import parse_command
        from mobile_actions.navigator.infer import Prediction

        self.frames.append(len(history_screenshots))
        time.sleep(self.delay)
        return Prediction("PRESS_BACK", parse_command("PRESS_BACK"))


def _serve(pred):
    srv = S.NavigatorServer(pred, "127.0.0.1", 0, None)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return srv


def _png(size=(20, 40)) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _post(srv, body) -> tuple[int, dict]:
    req = urllib.request.Request(srv.url + "/v1/act", data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_navigator_requests_are_bounded():
    pred = Counting()
    srv = _serve(pred)
    try:
        shot = _png()
        status, _ = _post(srv, {"instruction": "x", "screenshot": shot,
                                "history": [{"action": "PRESS_BACK", "screenshot": shot}] * 10})
        assert status == 200 and pred.frames == [S.HISTORY_FRAMES]          # only the frames used are decoded
        big = _png((9000, 9000))                                              # small file, huge image
        assert len(big) < 400_000
        status, out = _post(srv, {"instruction": "x", "screenshot": big})
        assert status == 413 and "pixels" in out["error"]
        status, out = _post(srv, {"instruction": "x" * 100_000, "screenshot": shot})
        assert status == 413 and "instruction" in out["error"]
        status, out = _post(srv, {"instruction": "x", "screenshot": shot,
                                  "history": [{"action": "PRESS_BACK", "screenshot": None}] * 1000})
        assert status == 413 and "history" in out["error"]
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_busy_model_answers_503_instead_of_queueing_for_ever(monkeypatch):
    monkeypatch.setattr(S, "BUSY_WAIT_S", 0.3)
    srv = _serve(Counting(delay=2.0))
    try:
        shot = _png()
        first = threading.Thread(target=_post, args=(srv, {"instruction": "x", "screenshot": shot}))
        first.start()
        time.sleep(0.3)
        status, out = _post(srv, {"instruction": "x", "screenshot": shot})
        assert status == 503 and "busy" in out["error"]
        first.join(10)
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_trickling_client_is_cut_at_the_request_deadline(monkeypatch):
    monkeypatch.setattr(S, "REQUEST_DEADLINE_S", 1.0)
    srv = _serve(Counting())
    try:
        s = socket.create_connection(srv.server_address[:2], timeout=5)
        t0 = time.monotonic()
        cut = False
        for b in b"POST /v1/act HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789":
            try:
                s.sendall(bytes([b]))
            except OSError:
                cut = True
                break
            time.sleep(0.1)
        try:
            cut = cut or s.recv(100) == b""
        except OSError:
            cut = True
        assert cut and time.monotonic() - t0 < 4.0
        s.close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_connections_beyond_the_cap_are_closed_at_once(monkeypatch):
    monkeypatch.setattr(S, "MAX_CONNECTIONS", 3)
    srv = _serve(Counting())
    held = []
    try:
        for _ in range(3):
            held.append(socket.create_connection(srv.server_address[:2], timeout=5))
        time.sleep(0.2)
        extra = socket.create_connection(srv.server_address[:2], timeout=5)
        extra.settimeout(3)
        assert extra.recv(10) == b""                                          # closed, not queued
        threads = threading.active_count()
        assert threads < 20
        extra.close()
    finally:
        for s in held:
            s.close()
        srv.shutdown()
        srv.server_close()


def test_serve_reads_its_token_from_a_file(tmp_path, monkeypatch, capsys):
    from mobile_actions.cli.main import main

    seen = {}

    def fake_make_server(model, host, port, token, device=None):
        seen["token"] = token
        raise S.ServiceError("stop here")

    monkeypatch.setattr(S, "make_server", fake_make_server)
    (tmp_path / "token").write_text("s3cret\n")
    assert main(["navigator", "serve", "--model", "m", "--token-file", str(tmp_path / "token")]) == 2
    assert seen["token"] == "s3cret"


# ------------------------------------------------------------------------------------ stress (pytest -m slow)
def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _hammer(n_clients: int, seconds: float, one_request) -> dict:
    """`n_clients` threads doing `one_request()` for `seconds`; latencies of the ones that were served."""
    stop = time.monotonic() + seconds
    lat: list[float] = []
    refused = [0]
    lock = threading.Lock()

    def client():
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            ok = one_request()
            with lock:
                if ok:
                    lat.append(time.perf_counter() - t0)
                else:
                    refused[0] += 1

    threads = [threading.Thread(target=client, daemon=True) for _ in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    lat.sort()
    return {"served": len(lat), "refused": refused[0],
            "p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1) if lat else None}


@pytest.mark.slow
def test_stress_both_servers_with_200_loopback_clients():
    """200 concurrent loopback clients for 60 s against each server: every answer is right or a clean
    refusal, the thread count comes back down, memory stays bounded. Prints the numbers (docs/security.md)."""
    seconds = 60.0
    results = {}
    with PhoneServer(VirtualPhone(), port=0) as phone:
        def phone_request() -> bool:
            try:
                s = _online(phone)
                local = _open(s, b"shell:echo ok")
                out = _drain_until_closed(s, 10)
                s.close()
                assert local and out == b"ok\n"
                return True
            except (OSError, EOFError):
                return False
        before = threading.active_count()
        results["phone"] = _hammer(200, seconds, phone_request)
        time.sleep(2)
        results["phone"]["threads_before_after"] = (before, threading.active_count())
    srv = _serve(Counting())
    try:
        shot = _png()

        def nav_request() -> bool:
            try:
                status, out = _post(srv, {"instruction": "go back", "screenshot": shot})
            except OSError:
                return False
            assert status in (200, 503), out
            return status == 200
        before = threading.active_count()
        results["navigator"] = _hammer(200, seconds, nav_request)
        time.sleep(2)
        results["navigator"]["threads_before_after"] = (before, threading.active_count())
    finally:
        srv.shutdown()
        srv.server_close()
    results["peak_rss_mb"] = round(_rss_mb(), 1)
    print(json.dumps(results))
    for name in ("phone", "navigator"):
        assert results[name]["served"] > 0
        b, a = results[name]["threads_before_after"]
        assert a <= b + 2


def test_a_sync_send_without_done_is_bounded(monkeypatch):
    """SEND then DATA chunks and never DONE: the file is not buffered past SYNC_FILE_MAX."""
    from mobile_actions.android.phone import services

    monkeypatch.setattr(services, "SYNC_FILE_MAX", 256 * 1024)
    with PhoneServer(VirtualPhone(), port=0) as server:
        s = _online(server)
        local = _open(s, b"sync:")
        path = b"/sdcard/big.bin,0644"
        s.sendall(pack(Message(A_WRTE, 7, local, b"SEND" + struct.pack("<I", len(path)) + path)))
        chunk = b"DATA" + struct.pack("<I", 64 * 1024) + b"x" * (64 * 1024)
        try:
            for _ in range(8):                                   # 512 KiB, twice the cap
                s.sendall(pack(Message(A_WRTE, 7, local, chunk)))
        except OSError:
            pass
        assert b"FAIL" in _drain_until_closed(s, 30)
        s.close()
