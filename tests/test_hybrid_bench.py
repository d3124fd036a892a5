"""The online hybrid benchmark: the task table, the state-check language, and a harness run (oracle calls)."""
import argparse
import json
import csv
from collections import Counter

import pytest

from mobile_actions.android.phone import VirtualPhone
from mobile_actions.recipes.bench_hybrid import (TASKS, BenchConfig, apply_setup, check_state, markdown, run_bench,
                                         select_tasks, validate_tasks, write_outputs)


def test_task_table():
    assert len(TASKS) >= 40
    counts = Counter(t["category"] for t in TASKS)
    assert set(counts) == {"tool", "gui", "mixed"} and min(counts.values()) >= 10
    validate_tasks(TASKS)            # well formed, and no check passes before its run


def test_check_language():
    phone = VirtualPhone()
    st = phone.snapshot()
    assert check_state({"torch": False, "screen": "launcher", "current_app": "com.android.launcher3"}, st) == []
    assert check_state({"torch": True}, st) == ["torch is False, expected True"]
    phone.state.outbox.append({"to": "Ana@Example.com ", "subject": "Re: Lunch", "body": "at the Louvre"})
    phone.state.events.append({"title": "Team sync", "begin_ms": 1748962800000, "end_ms": 0})  # 2025-06-03 15:00 UTC
    phone.state.notes.append("Buy milk and eggs")
    st = phone.snapshot()
    assert check_state({"outbox": {"to": "ana@example.com", "subject~": "lunch", "text~": "LOUVRE"}}, st) == []
    assert check_state({"outbox": {"to": "bob@example.com"}}, st)
    assert check_state({"events": {"title~": "sync", "begin": "2025-06-03T15:00"}}, st) == []
    assert check_state({"events": {"begin": "2025-06-03T16:00"}}, st)
    assert check_state({"notes~": "buy milk", "recents#": 0}, st) == []
    with pytest.raises(KeyError):
        check_state({"torchlight": True}, st)
    # a field no entry has would never match (and its "must not" would always hold): an error, named
    with pytest.raises(KeyError, match="no field 'numbr'"):
        check_state({"!messages": {"numbr~": "0142"}}, st)


def test_a_setup_sets_the_phones_clock_and_it_runs_on_from_there():
    from datetime import datetime, timedelta

    phone = VirtualPhone()
    apply_setup(phone, {"clock": "2025-06-02T10:00"})
    now = phone.now()
    assert timedelta(0) <= now.replace(tzinfo=None) - datetime(2025, 6, 2, 10, 0) < timedelta(seconds=5)
    bar = next(w for w in phone.screen().base if w.package == "com.android.systemui")
    assert bar.text == "10:00"
    phone.reset()   # a fresh phone keeps the host's clock
    assert abs(phone.now().replace(tzinfo=None) - datetime.now(phone.tz()).replace(tzinfo=None)) < timedelta(seconds=5)


def test_setup():
    phone = VirtualPhone()
    apply_setup(phone, {"torch": True, "recents": ["com.mobileactions.notes", "com.android.chrome"],
                        "open": ["com.mobileactions.notes"]})
    st = phone.snapshot()
    assert st["torch"] and st["current"].startswith("com.mobileactions.notes") and len(st["recents"]) == 1


def test_oracle_run_checks_state(tmp_path):
    """Gold calls through the real dispatch path reach every tool task's state (the harness is sound),
    and the GUI tasks fail honestly without a navigator."""
    seen = []
    results = run_bench(BenchConfig(model="oracle", navigator=None, only="tool,g01,m01", out=str(tmp_path)),
                        on_result=lambda n, total, r: seen.append((n, total, r.id)))
    by_id = {r.id: r for r in results}
    assert all(by_id[t["id"]].success for t in TASKS if t["category"] == "tool")
    assert by_id["m01"].success                    # flashlight + show_map + the email that names the place
    assert not by_id["g01"].success and by_id["g01"].failures == ["bluetooth is False, expected True"]
    assert seen[-1][:2] == (len(results), len(results))
    csv_path, md_path, json_path = write_outputs(results, tmp_path, "oracle")
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    assert json_path.is_file()
    assert len(rows) == len(results) and {"id", "success", "steps", "seconds"} <= set(rows[0])
    md = md_path.read_text()
    assert "| all |" in md and "| g01 | gui | ✗ |" in md and "no navigator" in md
    assert (tmp_path / "runs" / "m01" / "trace.jsonl").is_file()


def test_a_false_done_is_a_failure_of_its_own_kind(tmp_path, capsys):
    """A task whose check asks more than its request (the torch on, and Bluetooth too, which nobody asked): the
    run reports every item done and the check fails, a false done; g01 reports its GUI work not done, an honest
    failure."""
    import json

    from mobile_actions.cli.main import main

    more = {"id": "x01", "category": "mixed", "request": "Turn on the flashlight",
            "check": {"torch": True, "bluetooth": True}, "gold": [{"name": "turn_on_flashlight", "arguments": {}}]}
    held = {"id": "x02", "category": "gui", "request": "dont turn on the flashlight", "check": {"torch": False},
            "expect": "not_done"}
    tasks = [more, next(t for t in TASKS if t["id"] == "g01"), held]
    results = run_bench(BenchConfig(model="oracle", navigator=None, out=str(tmp_path)), tasks=tasks)
    by_id = {r.id: r for r in results}
    assert by_id["x01"].false_done and not by_id["x01"].success and by_id["x01"].kind == "✗!"
    assert not by_id["g01"].false_done and by_id["g01"].kind == "✗"
    md = markdown(results)
    assert "| all | 3 | 1 | 33% | 1 | 1 of 1 |" in md and "| x01 | mixed | ✗! |" in md and "| mixed | 1 | 0 | 0% | 1 | – |" in md
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    assert main(["bench", "hybrid", "--model", "oracle", "--navigator", "none", "--tasks", str(path),
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "false done: 1 of 3 tasks" in out.out and "(reported done)" in out.err


def test_select_and_markdown():
    assert [t["id"] for t in select_tasks(TASKS, "gui", 2)] == ["g01", "g02"]
    assert select_tasks(TASKS, "t01,m13")[1]["id"] == "m13"
    assert "| tasks | n |" in markdown([])


def test_bench_cli(tmp_path, capsys):
    from mobile_actions.cli.hybrid import add_bench_subcommand
    from mobile_actions.cli.main import main as cli_main

    def main(argv):
        return cli_main(["bench", "hybrid", *argv])

    assert main(["--list", "--only", "mixed"]) == 0
    assert capsys.readouterr().out.count("\n") == sum(t["category"] == "mixed" for t in TASKS)
    assert main(["--model", "oracle", "--navigator", "none", "--limit", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "| tool | 2 | 2 | 100% |" in out.out and "[2/2] t02" in out.err
    # how runtime_cli's `bench` can take it as a sub-command
    parser = argparse.ArgumentParser()
    bench = parser.add_subparsers(dest="cmd").add_parser("bench")
    bench.add_argument("--out", default="caller-bench")
    add_bench_subcommand(bench.add_subparsers(dest="bench_kind"))
    args = parser.parse_args(["bench", "hybrid", "--limit", "3", "--out", "x"])
    assert args.bench_kind == "hybrid" and args.hybrid_limit == 3 and args.hybrid_out == "x"
    assert args.out == "caller-bench"


def test_oracle_gui_scripts_reach_their_checks(tmp_path):
    """The GUI half through the real navigator loop (screencap → action → `input`) with scripted actions:
    the checks of GUI-reachable tasks pass. (Quick Settings and Enter-to-submit tasks need the virtual phone
    to support those gestures; see docs/hybrid.md.)"""
    from mobile_actions.recipes.bench_hybrid import GUI_SCRIPTS

    assert set(GUI_SCRIPTS) <= {t["id"] for t in TASKS}
    reachable = "g04,g09,g10,m02,m04,m13"
    results = run_bench(BenchConfig(model="oracle", navigator="oracle", navigate="always", only=reachable,
                                    out=str(tmp_path)))
    assert [r.id for r in results if not r.success] == [] and len(results) == 6


def test_user_tasks_are_validated_line_by_line(tmp_path, capsys):
    from mobile_actions.cli.main import main
    from mobile_actions.recipes.bench_hybrid import load_tasks

    good = {"request": "Turn on the flashlight", "category": "tool", "check": {"torch": True},
            "gold": [{"name": "turn_on_flashlight", "arguments": {}}]}
    lines = [json.dumps(good),
             json.dumps({**good, "category": "other"}),
             '{"request": ',
             json.dumps({**good, "check": {"nonsense": 1}}),
             json.dumps({**good, "setup": {"torch": "yes"}}),
             json.dumps({**good, "gold": [{"name": "send_email", "arguments": {}}]}),
             json.dumps({**good, "setup": {"torch": True}}),      # already done before the run
             "",
             json.dumps({**good, "id": "mine", "request": "Show the Louvre", "check": {"map_searches~": "louvre"},
                         "gold": [{"name": "show_map", "arguments": {"query": "Louvre"}}]})]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    tasks, problems = load_tasks(path)
    assert [t["id"] for t in tasks] == ["line 1", "mine"]
    assert [p.split(":")[1] for p in problems] == ["2", "3", "4", "5", "6", "7"]
    assert "category" in problems[0] and "invalid JSON" in problems[1] and "nonsense" in problems[2]
    assert "setup.torch" in problems[3] and "send_email" in problems[4] and "already passes" in problems[5]
    assert main(["bench", "hybrid", "--tasks", str(path), "--list"]) == 2
    assert "nothing was run" in capsys.readouterr().err
    path.write_text(lines[0] + "\n" + lines[-1] + "\n")
    assert main(["bench", "hybrid", "--tasks", str(path), "--model", "oracle", "--navigator", "none",
                 "--out", str(tmp_path / "out")]) == 0
    assert "| all | 2 | 2 | 100% |" in capsys.readouterr().out


def test_check_language_negation_counts_and_lists_of_items():
    phone = VirtualPhone()
    apply_setup(phone, {"dnd": True, "brightness": 20, "clipboard": "code 1234",
                        "notes": ["groceries", {"title": "Trip", "text": "pack the tent"}],
                        "contacts": [{"name": "Ana Lima", "phone": "555-0100"}],
                        "events": [{"title": "Dentist", "begin": "2025-06-10T09:00", "duration_min": 45,
                                    "location": "Main St"}],
                        "alarms": [{"time": "07:00", "days": "Fri,Mon", "label": "Work"}],
                        "messages": [{"number": "555-0100", "text": "call me"}]})
    st = phone.snapshot()
    assert check_state({"dnd": True, "brightness": 20, "media_volume": 40, "ring_volume": 60,
                        "stopwatch_running": False, "clipboard~": "1234"}, st) == []
    assert check_state({"notes~": "tent", "notes#": 2, "notes": {"title": "trip", "text~": "TENT"}}, st) == []
    assert check_state({"notes~": "groceries", "notes": {"title": "", "text": "groceries"}}, st) == []
    assert check_state({"events": {"title": "Dentist", "begin": "2025-06-10T09:00", "duration_min": 45,
                                   "location~": "main"}}, st) == []
    assert check_state({"events": {"duration_min": 60}}, st) == ["events: no entry matches {\"duration_min\": 60}"]
    assert check_state({"alarms": {"time": "07:00", "days": "Mon,Fri", "enabled": True}, "alarms#": 1}, st) == []
    assert check_state({"alarms": {"enabled": False}}, st)
    assert check_state({"messages": {"to": "Ana Lima", "direction": "received", "text~": "call"},
                        "messages~": "555-0100"}, st) == []
    assert check_state({"!contacts": {"name": "Tom Baker"}, "!outbox": {"to": "ana@example.com"},
                        "!dnd": False, "!notes~": "milk", "!alarms#": 0}, st) == []
    assert check_state({"!contacts": {"name": "ana lima"}}, st) == [
        'contacts: {"name": "ana lima"} holds, and must not']
    assert check_state({"!brightness": 20}, st)
    with pytest.raises(KeyError):
        check_state({"!alarm": {"time": "07:00"}}, st)
    both = {"notes": [{"title": "Trip"}, {"text": "groceries"}]}     # a list: every object matches some entry
    assert check_state(both, st) == [] and check_state({"notes": [{"title": "Trip"}, {"title": "Gone"}]}, st) == [
        'notes: no entry matches {"title": "Gone"}']
    with pytest.raises(TypeError, match="takes one object"):
        check_state({"!notes": [{"title": "Trip"}]}, st)
    with pytest.raises(TypeError, match="list of objects"):
        check_state({"notes": ["Trip"]}, st)


@pytest.mark.parametrize("setup, message", [
    ({"volume": 3}, "unknown key 'volume'"),
    ({"dnd": "on"}, "setup.dnd: expected true or false"),
    ({"brightness": 101}, "setup.brightness: expected a whole number from 0 to 100"),
    ({"media_volume": True}, "setup.media_volume"),
    ({"open": ["com.example.nothing"]}, "setup.open: no app 'com.example.nothing'"),
    ({"clipboard": 3}, "setup.clipboard: expected a string"),
    ({"clock": "tomorrow 9am"}, "setup.clock: expected the phone's time as YYYY-MM-DDTHH:MM"),
    ({"clock": "2025-06-02T10:00+02:00"}, "setup.clock: expected the phone's time"),
    ({"notes": [3]}, "setup.notes[0]: expected an object or a string"),
    ({"notes": [{"body": "x"}]}, "setup.notes[0]: unknown field 'body'"),
    ({"contacts": [{"phone": "1"}]}, "setup.contacts[0]: needs 'name'"),
    ({"events": [{"title": "x", "begin": "tomorrow"}]}, "setup.events[0]: begin: expected YYYY-MM-DDTHH:MM"),
    ({"events": [{"title": "x", "begin": "2025-06-03T10:00", "duration_min": "1h"}]},
     "setup.events[0]: duration_min: expected a whole number"),
    ({"alarms": [{"time": "7am"}]}, "setup.alarms[0]: time: expected HH:MM"),
    ({"alarms": [{"time": "07:00", "days": "Monday"}]}, "setup.alarms[0]: days:"),
    ({"alarms": [{"time": "07:00", "enabled": "yes"}]}, "setup.alarms[0]: enabled: expected true or false"),
    ({"messages": [{"number": "1", "text": "x", "direction": "out"}]}, "setup.messages[0]: direction"),
])
def test_setup_errors_name_the_key(setup, message):
    from mobile_actions.android.phone.setup import setup_problem

    assert message in setup_problem(setup)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        apply_setup(VirtualPhone(), setup)


def test_not_done_tasks_pass_only_when_the_run_does_not_report_done(tmp_path):
    """g01 (Bluetooth) reported not done by a run without a navigator, expected not done: it passes, its
    check (nothing changed) holding; t01 (flashlight) reported done by the oracle, expected not done: a
    false done, though its check holds."""
    from mobile_actions.recipes.bench_hybrid import load_tasks

    tasks = [{"id": "n1", "category": "gui", "request": "Turn on Bluetooth", "expect": "not_done",
              "note": "the person forbade it", "check": {"bluetooth": False}},
             {"id": "n2", "category": "tool", "request": "Turn on the flashlight", "expect": "not_done",
              "check": {"!contacts": {"name": "x"}}, "gold": [{"name": "turn_on_flashlight", "arguments": {}}]}]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in tasks + [{**tasks[0], "id": "bad", "expect": "maybe"}]) + "\n")
    loaded, problems = load_tasks(path)
    assert [t["id"] for t in loaded] == ["n1", "n2"] and loaded[0]["expect"] == "not_done"
    assert len(problems) == 1 and "'expect'" in problems[0]
    results = run_bench(BenchConfig(model="oracle", navigator=None, out=str(tmp_path / "out")), tasks=loaded)
    by_id = {r.id: r for r in results}
    assert by_id["n1"].success and not by_id["n1"].false_done and by_id["n1"].expect == "not_done"
    assert not by_id["n2"].success and by_id["n2"].false_done and by_id["n2"].kind == "✗!"
    assert by_id["n2"].failures == ["the run reported done; the right outcome is not done"]


def test_a_navigator_the_benchmark_cannot_load_is_an_error_not_a_traceback(tmp_path, capsys):
    from mobile_actions.cli.main import main

    assert main(["bench", "hybrid", "--model", "oracle", "--navigator", str(tmp_path / "nowhere"), "--limit", "1",
                 "--out", str(tmp_path / "out")]) == 2
    assert "not a model folder" in capsys.readouterr().err
