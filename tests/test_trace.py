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


# ------------------------------------------------------------------------------------------ signed folders
def _signed(tmp_path):
    w = TraceWriter(tmp_path / "run")
    w.append({"type": "run", "request": "email ana", "config": {}})
    w.append({"type": "intent", "key": "call:0.0", "call": {"name": "send_email"}})
    return tmp_path / "run"


def test_the_run_key_is_made_once_private_and_a_shared_one_is_refused(tmp_path, monkeypatch):
    import os
    import stat

    from mobile_actions.hybrid.trace import RUN_KEY_ENV, run_key

    monkeypatch.setenv(RUN_KEY_ENV, str(tmp_path / "cfg" / "run-key"))
    with pytest.raises(TraceError, match="no run key"):
        run_key(create=False)
    key = run_key()
    assert len(key) == 32 and run_key() == key
    assert stat.S_IMODE(os.stat(tmp_path / "cfg" / "run-key").st_mode) == 0o600
    os.chmod(tmp_path / "cfg" / "run-key", 0o644)
    with pytest.raises(TraceError, match="must be yours and private"):
        run_key()


def test_own_folders_read_back_and_show_what_is_in_doubt(tmp_path):
    run = _signed(tmp_path)
    with open(run / "trace.jsonl", "a") as f:
        f.write('{"type": "nav", "ste')                       # a torn tail is no reason to refuse
    t = Trace.read_own(run)
    assert [r["type"] for r in t.records] == ["run", "intent"] and "mac" not in t.records[0]
    assert t.in_doubt("call:0.0")["call"] == {"name": "send_email"}
    w = TraceWriter(run)                                        # resume continues the chain
    w.append({"type": "dispatch", "key": "call:0.0", "status": "done"})
    t = Trace.read_own(run)
    assert t.in_doubt("call:0.0") is None and t.finished("call:0.0")["status"] == "done"


@pytest.mark.parametrize("edit", ["change", "drop_mac", "insert", "reorder"])
def test_an_edited_record_is_refused_with_its_line(tmp_path, edit):
    run = _signed(tmp_path)
    path = run / "trace.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    if edit == "change":
        lines[1] = lines[1].replace("send_email", "show_map")
    elif edit == "drop_mac":
        rec = json.loads(lines[1])
        del rec["mac"]
        lines[1] = json.dumps(rec) + "\n"
    elif edit == "insert":
        lines.insert(1, json.dumps({"type": "dispatch", "key": "call:0.0", "status": "done"}) + "\n")
    else:
        lines.reverse()
    path.write_text("".join(lines))
    with pytest.raises(TraceError, match=r"trace\.jsonl:[12]: not signed by your run key"):
        Trace.read_own(run)
    if edit != "reorder":
        assert Trace.read(run).request == "email ana"                       # replay still shows it


def test_a_folder_signed_with_another_key_or_open_to_others_is_refused(tmp_path, monkeypatch):
    import os

    from mobile_actions.hybrid.trace import RUN_KEY_ENV

    monkeypatch.setenv(RUN_KEY_ENV, str(tmp_path / "someone-else"))
    run = _signed(tmp_path)
    monkeypatch.setenv(RUN_KEY_ENV, str(tmp_path / "mine"))
    TraceWriter(tmp_path / "other")                             # makes my key
    with pytest.raises(TraceError, match="not signed by your run key"):
        Trace.read_own(run)
    mine = _signed(tmp_path / "x")
    os.chmod(mine, 0o777)
    with pytest.raises(TraceError, match="others can write it"):
        Trace.read_own(mine)
    os.chmod(mine, 0o700)
    os.chmod(mine / "trace.jsonl", 0o666)
    with pytest.raises(TraceError, match="others can write it"):
        Trace.read_own(mine)


def test_a_run_key_that_cannot_be_made_is_a_clear_error(tmp_path, monkeypatch):
    from mobile_actions.hybrid.trace import RUN_KEY_ENV

    (tmp_path / "file").write_text("")
    monkeypatch.setenv(RUN_KEY_ENV, str(tmp_path / "file" / "run-key"))     # under a file: no folder there
    with pytest.raises(TraceError, match="cannot make or read the run key"):
        TraceWriter(tmp_path / "run")
