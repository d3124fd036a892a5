"""Datasets, predictions, catalogues and calls from outside: every bad line is a `file:line: reason`, the rest
is still checked, nothing is fetched or read because a schema says so, and memory stays bounded."""
from __future__ import annotations

import http.server
import json
import threading

import pytest

from mobile_actions.cli.main import main

TOOLS = [{"function": {"name": "show_map", "description": "Shows a place.", "parameters": {
    "type": "OBJECT", "properties": {"query": {"type": "STRING", "description": "The place."}}, "required": ["query"]}}}]


def row(tools=TOOLS, calls=None, user="show the Louvre") -> dict:
    calls = [{"function": {"name": "show_map", "arguments": {"query": "Louvre"}}}] if calls is None else calls
    return {"metadata": "t", "tools": tools,
            "messages": [{"role": "user", "content": user}, {"role": "assistant", "tool_calls": calls}]}


def write_lines(path, lines) -> str:
    path.write_bytes(b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines) + b"\n")
    return str(path)


def with_param(**extra) -> list:
    return [{"function": {"name": "show_map", "description": "x", "parameters": {
        "type": "OBJECT", "properties": {"query": {"type": "STRING", "description": "q", **extra}},
        "required": ["query"]}}}]


class Counting(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):
        Counting.hits += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"type": "string"}')

    def log_message(self, *a):
        pass


def test_a_ref_never_fetches_a_url_or_reads_a_file(tmp_path, capsys):
    srv = http.server.HTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string", "description": "TOP-SECRET-CONTENT"}')
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/schema.json"
        path = write_lines(tmp_path / "rows.jsonl", [
            json.dumps(row(tools=with_param(**{"$ref": url}))),
            json.dumps(row(tools=with_param(**{"$ref": secret.as_uri()}))),
            json.dumps(row())])
        assert main(["validate", path]) == 1
        out = capsys.readouterr().out
        assert Counting.hits == 0 and "TOP-SECRET-CONTENT" not in out
        assert f"{path}:1:" in out and f"{path}:2:" in out and f"{path}:3:" not in out
        assert "show_map" in out and "$ref" in out
    finally:
        srv.shutdown()
        srv.server_close()


BAD_ROWS = [
    json.dumps({**row(), "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": 5}]}),
    json.dumps(row(calls=[{"function": "x"}])),
    b"\xff\xfe not utf-8",
    "[" * 100_000 + "]" * 100_000,
    json.dumps(row(tools=[{"function": {"name": "show_map", "description": "x",
                                        "parameters": {"type": "OBJECT", "properties": {}, "required": 5}}}])),
    json.dumps(row(tools=with_param(pattern="("))),
    json.dumps(row(tools=with_param(minimum="zero"))),
    json.dumps(row(calls=[{"function": {"name": "show_map", "arguments": {"query": "\ud800"}}}])),
]


def test_validate_reports_every_bad_line_and_checks_the_rest(tmp_path, capsys):
    path = write_lines(tmp_path / "rows.jsonl", [*BAD_ROWS, json.dumps(row())])
    assert main(["validate", path]) == 1
    out = capsys.readouterr().out
    for n in range(1, len(BAD_ROWS) + 1):
        assert f"{path}:{n}:" in out, (n, out)
    assert f"{path}:{len(BAD_ROWS) + 1}:" not in out             # the good last row was still checked, and passed
    assert "Traceback" not in out and "query" in out              # the surrogate names its argument


def test_a_carriage_return_inside_a_line_does_not_split_it(tmp_path, capsys):
    good = json.dumps(row())
    path = write_lines(tmp_path / "rows.jsonl", [good.replace(", ", ",\r ", 1), "{broken", good])
    assert main(["validate", path]) == 1
    out = capsys.readouterr().out
    assert f"{path}:2:" in out and f"{path}:1:" not in out and f"{path}:3:" not in out


@pytest.mark.parametrize("make", ["empty", "directory", "not_utf8"])
def test_an_unusable_tools_file_is_refused_with_exit_2(tmp_path, capsys, make):
    rows = write_lines(tmp_path / "rows.jsonl", [json.dumps(row())])
    tools = tmp_path / "tools.json"
    if make == "empty":
        tools.write_text("[]")
    elif make == "directory":
        tools.mkdir()
    else:
        tools.write_bytes(b"[\xff]")
    assert main(["validate", rows, "--tools", str(tools)]) == 2
    err = capsys.readouterr().err
    assert str(tools) in err and "Traceback" not in err


@pytest.mark.parametrize("pred", ['{"calls": 5}', '{"messages": []}', '{"raw": null}', '{"raw": 5}',
                                  '{"tool_calls": 5}'])
def test_score_reports_bad_prediction_lines(tmp_path, capsys, pred):
    gold = write_lines(tmp_path / "gold.jsonl", [json.dumps(row()), json.dumps(row())])
    preds = write_lines(tmp_path / "pred.jsonl", [pred, json.dumps({"calls": []})])
    assert main(["score", "--gold", gold, "--pred", preds]) == 1
    err = capsys.readouterr().err
    assert f"{preds}:1:" in err and "Traceback" not in err


def test_dispatch_refuses_a_call_that_is_not_one(capsys):
    assert main(["dispatch", "--dry-run", '{"function": "x"}']) != 0
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_the_validator_cache_stays_small_over_many_rows():
    from mobile_actions import calls
    from mobile_actions.calls import ToolCall, validate_call
    from mobile_actions.catalog import Catalogue

    for i in range(3000):
        cat = Catalogue.from_json(TOOLS)                         # a fresh catalogue per row, as a reader makes
        assert validate_call(ToolCall("show_map", {"query": f"place {i}"}), cat) == []
    sizes = [f.cache_info().currsize for f in vars(calls).values() if hasattr(f, "cache_info")]
    assert sizes and max(sizes) <= 256
