import json

import pytest

from mobile_actions.dataset import (DatasetError, Reader, developer_message, from_dataset, load_rows,
                                    prompt_completion, split, to_dataset, write_rows)

GOOD = {"metadata": "eval", "tools": [{"function": {"name": "show_map", "description": "d", "parameters": {
    "type": "OBJECT", "properties": {"query": {"type": "STRING"}}, "required": ["query"]}}}],
        "messages": [{"role": "developer", "content": "x"}, {"role": "user", "content": "map of Lyon"},
                     {"role": "assistant", "tool_calls": [{"function": {"name": "show_map", "arguments": {"query": "Lyon"}}}]}]}


def _bad_file(tmp_path):
    lines = [
        json.dumps(GOOD),
        "{not json",
        json.dumps({k: v for k, v in GOOD.items() if k != "tools"}),
        json.dumps({**GOOD, "messages": [GOOD["messages"][2], GOOD["messages"][1]]}),
        json.dumps({**GOOD, "messages": [*GOOD["messages"][:2], {"role": "assistant", "tool_calls": [
            {"function": {"name": "show_map", "arguments": "{query: Lyon}"}}]}]}),
        "",
        json.dumps(GOOD),
    ]
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_reads_the_spec_examples_in_both_argument_encodings(examples_path):
    rows, problems = load_rows(examples_path)
    assert problems == [] and len(rows) == 4
    assert rows[3].calls[0].arguments == {"to": "ops@example.org", "subject": "Outage", "body": "The VPN is down again."}


def test_lenient_reports_every_bad_line_and_strict_fails_on_the_first(tmp_path):
    p = _bad_file(tmp_path)
    reader = Reader(p, strict=False)
    rows = list(reader)
    assert [r.line for r in rows] == [1, 7]
    reasons = [str(x) for x in reader.problems]
    assert [x.line for x in reader.problems] == [2, 3, 4, 5]
    assert reasons[0].startswith(f"{p}:2: invalid JSON")
    assert "missing field 'tools'" in reasons[1]
    assert "wrong role order" in reasons[2]
    assert "arguments string is not JSON" in reasons[3]
    with pytest.raises(DatasetError, match=r"bad.jsonl:2: invalid JSON"):
        list(Reader(p, strict=True))


def test_write_read_round_trip_both_encodings(tmp_path, examples_path):
    rows, _ = load_rows(examples_path)
    for stringify in (False, True):
        out = tmp_path / f"out{stringify}.jsonl"
        write_rows(rows, out, stringify_arguments=stringify)
        again, _ = load_rows(out)
        assert [r.calls for r in again] == [r.calls for r in rows]
        assert [r.messages[:-1] for r in again] == [r.messages[:-1] for r in rows]


def test_split_and_datasets_interop(examples_path):
    rows, _ = load_rows(examples_path)
    parts = split(rows)
    assert sum(len(v) for v in parts.values()) == 4
    ds = to_dataset(rows)
    assert ds.column_names == ["metadata", "tools", "messages", "prompt", "completion"]
    back = from_dataset(ds)
    assert [r.calls for r in back] == [r.calls for r in rows]
    assert [r.tools for r in back] == [r.tools for r in rows]


def test_prompt_completion_is_the_model_turn(examples_path):
    rows, _ = load_rows(examples_path)
    prompt, completion = prompt_completion(rows[0])
    assert prompt.endswith("<start_of_turn>model\n")
    assert completion == "<start_function_call>call:turn_on_flashlight{}<end_function_call><end_of_turn>\n"


def test_developer_message_has_the_right_weekday():
    from datetime import datetime

    msg = developer_message(datetime(2024, 10, 20, 14, 27, 48, 999))
    assert msg["content"] == ("Current date and time given in YYYY-MM-DDTHH:MM:SS format: 2024-10-20T14:27:48\n"
                              "Day of week is Sunday\nYou are a model that can do function calling with the following functions\n")


@pytest.mark.parametrize("name", ["people-a.jsonl", "people-b.jsonl", "people-c.jsonl", "people-d.jsonl",
                                  "people-e.jsonl"])
def test_the_bundled_people_style_requests_validate(name):
    """The requests written apart from the generator (`docs/caller.md`) are valid Mobile Actions rows."""
    from pathlib import Path

    from mobile_actions.calls import validate_call

    rows, problems = load_rows(Path(__file__).resolve().parents[1] / "mobile_actions" / "assets" / "bench" / name)
    assert not problems
    assert len(rows) >= 100 and sum(not r.calls for r in rows) >= 15
    assert all(not validate_call(c, r.tools) for r in rows for c in r.calls)
