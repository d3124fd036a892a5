"""``navigator serve`` and its client, on loopback only."""
import base64
import io
import json
import threading
import time
import urllib.request

import pytest
from PIL import Image

from mobile_actions.navigator.actions import parse_command
from mobile_actions.navigator.client import NavigatorClient
from mobile_actions.errors import ActionParseError, ServiceError
from mobile_actions.navigator.infer import Prediction
from mobile_actions.navigator.service import NavigatorServer, is_loopback


class Fake:
    """Records what it was asked; answers a fixed action (or sleeps, or fails)."""

    def __init__(self, answer="CLICK: (10, 20)", delay=0.0, fail=False):
        self.answer, self.delay, self.fail, self.calls = answer, delay, fail, []

    def predict(self, instruction, screenshot, history_actions=(), history_screenshots=()):
        self.calls.append((instruction, screenshot.size, list(history_actions), len(history_screenshots)))
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("model exploded")
        try:
            return Prediction(self.answer, parse_command(self.answer))
        except ActionParseError as e:
            return Prediction(self.answer, None, str(e))


def serve(predictor, token=None):
    srv = NavigatorServer(predictor, "127.0.0.1", 0, token, {"model": "fake"})
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return srv


def png(color=(1, 2, 3), size=(20, 40)):
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def fake_server():
    fake = Fake()
    srv = serve(fake)
    yield srv, fake
    srv.shutdown()
    srv.server_close()


def test_act_round_trip(fake_server):
    srv, fake = fake_server
    c = NavigatorClient(srv.url, timeout=10)
    assert c.health()["status"] == "ok"
    act = c.act("open settings", png(), [("PRESS_HOME", png()), ("SCROLL: UP", None)])
    assert act == parse_command("CLICK: (10, 20)")
    assert fake.calls == [("open settings", (20, 40), ["PRESS_HOME", "SCROLL: UP"], 1)]


def test_bad_requests_get_clear_errors(fake_server):
    srv, _ = fake_server
    c = NavigatorClient(srv.url, timeout=10)
    with pytest.raises(ServiceError, match="screenshot: not a base64 PNG") as e:
        c._request("POST", "/v1/act", {"instruction": "x", "screenshot": "bm90IGEgcG5n"})
    assert e.value.status == 400
    with pytest.raises(ServiceError, match="instruction"):
        c._request("POST", "/v1/act", {"screenshot": base64.b64encode(png()).decode()})
    with pytest.raises(ServiceError, match=r"history\[0\]"):
        c._request("POST", "/v1/act", {"instruction": "x", "screenshot": base64.b64encode(png()).decode(), "history": [1]})
    with pytest.raises(ServiceError, match="HTTP 404"):
        c._request("GET", "/nope")
    req = urllib.request.Request(srv.url + "/v1/act", data=b"{not json", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 400 and "invalid JSON" in json.loads(e.value.read())["error"]


def test_unparseable_answer_and_model_failure():
    srv = serve(Fake(answer="tap the blue thing"))
    try:
        with pytest.raises(ActionParseError):
            NavigatorClient(srv.url, timeout=10).act("x", png())
    finally:
        srv.shutdown()
    srv = serve(Fake(fail=True))
    try:
        with pytest.raises(ServiceError, match="HTTP 500: the navigator failed on this request"):
            NavigatorClient(srv.url, timeout=10).act("x", png())
    finally:
        srv.shutdown()


def test_token_required_off_loopback_and_checked():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("")
    with pytest.raises(ServiceError, match="without a bearer token"):
        NavigatorServer(Fake(), "0.0.0.0", 0, None)
    srv = serve(Fake(), token="s3cret")
    try:
        with pytest.raises(ServiceError, match="HTTP 401") as e:
            NavigatorClient(srv.url, token="", timeout=10).health()
        assert e.value.status == 401
        with pytest.raises(ServiceError, match="HTTP 401"):
            NavigatorClient(srv.url, token="wrong", timeout=10).act("x", png())
        assert NavigatorClient(srv.url, token="s3cret", timeout=10).health()["status"] == "ok"
    finally:
        srv.shutdown()


def test_client_timeout_and_connection_errors():
    srv = serve(Fake(delay=1.5))
    try:
        with pytest.raises(ServiceError, match="no answer within 0.3 s"):
            NavigatorClient(srv.url, timeout=0.3).act("x", png())
    finally:
        srv.shutdown()
        srv.server_close()
    with pytest.raises(ServiceError, match="cannot connect"):
        NavigatorClient(srv.url, timeout=2).health()


def test_serve_real_tiny_model(tmp_path):
    pytest.importorskip("torch")
    from mobile_actions.navigator.model import build_tokenizer, fresh_agent
    from mobile_actions.navigator.service import make_server

    tok = build_tokenizer(["CLICK: (1, 2)", "PRESS_BACK"], 280)
    fresh_agent(tok, "tiny").save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    srv = make_server(str(tmp_path), "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        c = NavigatorClient(srv.url, timeout=60)
        info = c.health()
        assert info["odyssey"]["history_frames"] == 4 and info["parameters"] > 0
        out = c.act_raw("open the clock", png(), [("PRESS_HOME", png((9, 9, 9)))])
        assert set(out) >= {"text", "action", "error", "latency_ms"}
    finally:
        srv.shutdown()
        srv.server_close()
