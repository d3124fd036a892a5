"""The run folder: append-only JSONL, screenshots, torn tails, and what counts as a finished step."""
import json

import pytest

from mobile_actions.hybrid.trace import Trace, TraceError, TraceWriter, new_run_dir, read_records


def test_writer_appends_and_reader_reads(tmp_path):
    w = TraceWriter(tmp_path / "run")
    w.append({"type": "run", "request": "turn on the flashlight"})
    w.append({"type": "dispatch", "key": "call:0.0", "status": "interrupted"})
    rel = w.screen(b"\x89PNG fake")
    w.append({"type": "dispatch", "key": "call:0.0", "status": "done"})
    assert rel == "screens/001.png" and (tmp_path / "run" / rel).read_bytes() == b"\x89PNG fake"
    t = Trace.read(tmp_path / "run")
    assert t.request == "turn on the flashlight"
    assert [r["seq"] for r in t.records] == [1, 2, 3]
    assert t.finished("call:0.0")["status"] == "done"          # the latest record wins
    assert t.finished("call:0.1") is None
    assert t.interrupted                                        # no report yet


def test_interrupted_step_is_not_finished(tmp_path):
    w = TraceWriter(tmp_path)
    w.append({"type": "run", "request": "x"})
    w.append({"type": "dispatch", "key": "call:0.0", "status": "interrupted"})
    assert Trace.read(tmp_path).finished("call:0.0") is None


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    w = TraceWriter(tmp_path)
    w.append({"type": "run", "request": "x"})
    with open(tmp_path / "trace.jsonl", "a") as f:
        f.write('{"type": "nav", "ste')                       # the process died mid-write
    assert len(read_records(tmp_path / "trace.jsonl")) == 1
    w2 = TraceWriter(tmp_path)                                  # a resumed run reopens the folder
    w2.append({"type": "resume"})
    recs = read_records(tmp_path / "trace.jsonl")
    assert [r["type"] for r in recs] == ["run", "resume"] and recs[-1]["seq"] == 2


def test_reopen_continues_numbering(tmp_path):
    w = TraceWriter(tmp_path)
    w.append({"type": "run", "request": "x"})
    w.screen(b"a")
    w2 = TraceWriter(tmp_path)
    assert w2.screen(b"b") == "screens/002.png"
    assert w2.append({"type": "report", "status": "finished", "report": {}})["seq"] == 2
    assert not Trace.read(tmp_path).interrupted


def test_not_a_run_folder(tmp_path):
    with pytest.raises(TraceError, match="no trace.jsonl"):
        Trace.read(tmp_path)
    (tmp_path / "trace.jsonl").write_text(json.dumps({"type": "nav"}) + "\n")
    with pytest.raises(TraceError, match="no run header"):
        Trace.read(tmp_path)


def test_new_run_dir_is_unique(tmp_path):
    a = new_run_dir(tmp_path, "Turn on the flashlight!")
    b = new_run_dir(tmp_path, "Turn on the flashlight!")
    assert a != b and a.name.endswith("turn-on-the-flashlight") and b.is_dir()


def test_nav_steps_latest_per_step(tmp_path):
    w = TraceWriter(tmp_path)
    w.append({"type": "run", "request": "x"})
    w.append({"type": "nav", "task": "request", "step": 0, "status": "done", "v": 1})
    w.append({"type": "nav", "task": "request", "step": 1, "status": "done"})
    w.append({"type": "nav", "task": "other", "step": 0, "status": "done"})
    t = Trace.read(tmp_path)
    assert [r["step"] for r in t.nav_steps("request")] == [0, 1]
