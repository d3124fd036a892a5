"""Input made to hurt: a schema regex that backtracks without end, numbers too long to convert, NaN, repeated keys,
catalogues too big to prompt with, tool names that look like others, values of every JSON type. Each is refused
or handled with `file:line` (or the tool and argument), never a traceback, a hang or a huge allocation."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mobile_actions.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def tool(name="f", description="Does f.", **properties) -> dict:
    props = properties or {"x": {"type": "STRING"}}
    return {"function": {"name": name, "description": description,
                         "parameters": {"type": "OBJECT", "properties": props}}}


def row(tools, calls, messages=()) -> dict:
    return {"metadata": "t", "tools": tools,
            "messages": [{"role": "user", "content": "do it"}, *messages,
                         {"role": "assistant", "tool_calls": [{"function": c} for c in calls]}]}


def write(path: Path, lines) -> str:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
                            for line in lines), encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------------------------------ schema regexes
def test_a_backtracking_pattern_is_stopped_and_reported(tmp_path):
    """`^(a+)+$` on 41 characters kept stdlib `re` busy for hours; `^(a|aa)+$` defeats the `regex` engine's
    shortcuts too, so only its time limit ends it. A subprocess, so that the old code fails instead of hanging."""
    rows = write(tmp_path / "rows.jsonl", [
        row([tool(x={"type": "STRING", "pattern": "^(a+)+$"})], [{"name": "f", "arguments": {"x": "a" * 41 + "!"}}]),
        row([tool(x={"type": "STRING", "pattern": "^(a|aa)+$"})], [{"name": "f", "arguments": {"x": "a" * 60 + "!"}}]),
        row([tool(x={"type": "STRING", "pattern": "^(a|aa)+$"})], [{"name": "f", "arguments": {"x": "aaa"}}]),
    ])
    out = subprocess.run([sys.executable, "-m", "mobile_actions.cli.main", "validate", rows], cwd=ROOT,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1, out.stderr[-2000:]
    assert f"{rows}:1: f.x: 'aaaa" in out.stdout and "does not match '^(a+)+$'" in out.stdout
    assert f"{rows}:2: f.x: pattern check took too long" in out.stdout
    assert f"{rows}:3:" not in out.stdout and "Traceback" not in out.stderr


def test_pattern_properties_are_refused_and_a_nested_pattern_is_no_traceback(tmp_path, capsys):
    obj = {"type": "OBJECT", "patternProperties": {"^(a|aa)+$": {"type": "string"}}}
    rows = write(tmp_path / "rows.jsonl", [
        row([tool(x=obj)], [{"name": "f", "arguments": {"x": {"aa": "v"}}}]),
        row([tool(x={"type": "STRING", "pattern": "(" * 2000 + ")" * 2000})], [{"name": "f", "arguments": {"x": "a"}}]),
        row([tool(x={"type": "STRING", "format": "regex"})], [{"name": "f", "arguments": {"x": "(" * 2000}}]),
    ])
    assert main(["validate", rows]) == 1
    out = capsys.readouterr().out
    assert f"{rows}:1: tools: tool 'f': parameters: field 'patternProperties'" in out
    assert f"{rows}:2: tools: tool 'f': parameters: field 'properties.x.pattern': '((((" in out
    assert "is not a regular expression: nested too deeply" in out
    assert f"{rows}:3: f.x:" in out and "not a regular expression" in out


# ------------------------------------------------------------------------------------------ JSON text
BIG = "9" * 100_000


def test_a_huge_integer_is_refused_with_its_line_by_validate_and_score(tmp_path, capsys):
    good = row([tool(x={"type": "INTEGER"})], [{"name": "f", "arguments": {"x": 7}}])
    bad = json.dumps(good).replace('"x": 7', f'"x": {BIG}')
    rows = write(tmp_path / "rows.jsonl", [good, bad])
    assert main(["validate", rows]) == 1
    out = capsys.readouterr().out
    assert f"{rows}:2: invalid JSON: a number longer than 1,000 characters" in out and f"{rows}:1:" not in out
    preds = write(tmp_path / "pred.jsonl", [{"calls": [{"name": "f", "arguments": {"x": 7}}]},
                                            f'{{"calls": [{{"name": "f", "arguments": {{"x": {BIG}}}}}]}}'])
    assert main(["score", "--gold", rows, "--pred", preds]) == 1
    err = capsys.readouterr().err
    assert f"{rows}:2: invalid JSON: a number" in err and f"{preds}:2: bad prediction: invalid JSON: a number" in err


def test_a_huge_number_in_a_tool_result_or_model_text_is_scored_not_a_traceback(tmp_path, capsys):
    result = {"role": "tool", "name": "f", "content": BIG[:5000]}   # a tool result string that reads as JSON
    gold = write(tmp_path / "gold.jsonl", [row([tool()], [{"name": "f", "arguments": {"x": "a"}}], [result])] * 2)
    raw = f"<start_function_call>call:f{{x:{BIG[:5000]}}}<end_function_call>"
    preds = write(tmp_path / "pred.jsonl", [{"calls": [{"name": "f", "arguments": {"x": "a"}}]}, {"raw": raw}])
    assert main(["score", "--gold", gold, "--pred", preds, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["exact_match"] == 0.5 and report["errors"] == {"unparseable": 1}


def test_call_refuses_a_tools_file_with_a_huge_integer(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([tool(x={"type": "INTEGER", "maximum": 7})], indent=1).replace(": 7", f": {BIG}"))
    assert main(["call", "turn on the flashlight", "--tools", str(tools)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(tools.read_text().splitlines(), 1) if BIG in text)
    assert f"{tools}:{line}: invalid JSON: a number longer than" in err and "Traceback" not in err


@pytest.mark.parametrize("text, reason", [
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('{"a": [1, Infinity]}', "Infinity is not a JSON number"),
    ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ('{"a": 1e400}', "1e400 is too large for a number"),
    ('{"a": {"name": "x",\n "name": "y"}}', "the key 'name' appears twice in one object"),
])
def test_json_that_python_would_take_is_refused_with_its_line(text, reason):
    from mobile_actions.jsontext import JSONTextError, loads

    with pytest.raises(JSONTextError) as e:
        loads('{"x": 1,\n "y": ' + text + "}")
    assert e.value.line == text.count("\n") + 2 and e.value.reason == f"invalid JSON: {reason}"


def test_a_repeated_tool_name_key_is_refused_in_a_catalogue_file(tmp_path):
    from mobile_actions.catalog import CatalogueError, load_catalogue

    path = tmp_path / "tools.json"
    path.write_text('[{"function": {\n  "name": "send_email",\n  "description": "Sends.",\n  "name": "delete_all"}}]')
    with pytest.raises(CatalogueError, match=rf"{path}:4: invalid JSON: the key 'name' appears twice"):
        load_catalogue(str(path))


def test_a_too_long_line_or_string_is_refused_and_the_rest_still_read(tmp_path, monkeypatch, capsys):
    from mobile_actions import jsontext

    good = row([tool()], [{"name": "f", "arguments": {"x": "a"}}])
    rows = write(tmp_path / "rows.jsonl", [good, "[" + "1," * 1000 + "1]",
                                           row([tool()], [{"name": "f", "arguments": {"x": "b" * 300}}]), good])
    monkeypatch.setattr(jsontext, "MAX_TEXT_BYTES", 1000)
    monkeypatch.setattr(jsontext, "MAX_STRING_CHARS", 200)
    assert main(["validate", rows]) == 1
    out = capsys.readouterr().out
    assert f"{rows}:2: invalid JSON: the line is longer than 1,000 bytes" in out
    assert f"{rows}:3: invalid JSON: a string longer than 200 characters" in out
    assert f"{rows}:1:" not in out and f"{rows}:4:" not in out and "2 rows, 2 calls; 2 unreadable lines" in out


# ------------------------------------------------------------------------------------------ catalogue size
def test_a_catalogue_too_big_to_prompt_with_is_refused_when_loaded(tmp_path, capsys):
    from mobile_actions.catalog import MAX_DECLARATION_CHARS, MAX_TOOLS, CatalogueError, load_catalogue

    many = tmp_path / "many.json"
    many.write_text(json.dumps([tool(f"tool_{i}") for i in range(5000)]))
    with pytest.raises(CatalogueError, match=rf"{many}: 5,000 tools; a catalogue holds at most {MAX_TOOLS}"):
        load_catalogue(str(many))
    wordy = tmp_path / "wordy.json"
    wordy.write_text(json.dumps([tool(f"tool_{i}", "x" * (MAX_DECLARATION_CHARS // 10)) for i in range(12)]))
    with pytest.raises(CatalogueError, match=rf"{wordy}: the tool declarations are [\d,]+ characters"):
        load_catalogue(str(wordy))
    half = tmp_path / "half.json"   # each half is within the limits, both together are not
    half.write_text(json.dumps([tool(f"tool_{i}", "x" * (MAX_DECLARATION_CHARS // 10)) for i in range(6)]))
    other = tmp_path / "other.json"
    other.write_text(json.dumps([tool(f"other_{i}", "x" * (MAX_DECLARATION_CHARS // 10)) for i in range(6)]))
    load_catalogue(str(half))
    with pytest.raises(CatalogueError, match="the tool declarations are"):
        load_catalogue(f"{half}+{other}")
    assert main(["call", "turn on the flashlight", "--tools", str(many)]) == 2   # before any model is looked for
    assert f"{many}: 5,000 tools" in capsys.readouterr().err


def test_the_runtime_refuses_a_prompt_longer_than_the_model_before_allocating(monkeypatch):
    from mobile_actions.catalog import Catalogue
    from mobile_actions.errors import PromptTooLongError
    from mobile_actions.runtime import Caller
    from tests.test_export_support import tiny_export

    caller = Caller.from_pretrained(tiny_export("fp32", layout="cache"), threads=1)
    tools = Catalogue.from_json([tool(f"tool_{i}", "Does a thing. " * 30) for i in range(60)])   # ~25k characters
    monkeypatch.setattr(caller.decoder, "new_cache", lambda n: pytest.fail(f"a {n}-position cache was allocated"))
    with pytest.raises(PromptTooLongError, match=r"the prompt is [\d,]+ tokens; this model takes at most [\d,]+"):
        caller.call("turn on the flashlight", tools)
    with pytest.raises(PromptTooLongError):
        caller.warm(tools)
    assert caller.max_positions <= 2048   # the tiny model's context


# ------------------------------------------------------------------------------------------ tool names
def test_a_look_alike_tool_name_is_refused_naming_the_file_and_tool(tmp_path, capsys):
    from mobile_actions.catalog import CatalogueError, load_catalogue

    tools = [tool("send_email"), tool("\u0455end_email")]          # the second starts with a Cyrillic ѕ
    rows = write(tmp_path / "rows.jsonl", [row(tools, [{"name": "\u0455end_email", "arguments": {"x": "a"}}])])
    assert main(["validate", rows]) == 1
    out = capsys.readouterr().out
    assert f"{rows}:1: tools: tool #1: field 'name': '\u0455end_email' is not a tool name" in out
    assert "U+0455" in out
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools))
    with pytest.raises(CatalogueError, match=rf"{path}: tool #1: field 'name': '\u0455end_email'"):
        load_catalogue(str(path))


def test_dotted_and_dashed_tool_names_still_load_validate_and_get_distinct_grammar_rules(tmp_path, capsys):
    from mobile_actions.calls import ToolCall, validate_call
    from mobile_actions.catalog import Catalogue
    from mobile_actions.decoding.gbnf import call_gbnf

    cat = Catalogue.from_json([tool("math.factorial", n={"type": "INTEGER"}), tool("math_factorial"),
                               tool("math-factorial")])
    assert validate_call(ToolCall("math.factorial", {"n": 5}), cat) == []
    rules = [line.split(" ::= ")[0] for line in call_gbnf(cat).splitlines()]
    assert len(rules) == len(set(rules))
    rows = write(tmp_path / "rows.jsonl", [row([tool("math.factorial", n={"type": "INTEGER"})],
                                               [{"name": "math.factorial", "arguments": {"n": 5}}])])
    assert main(["validate", rows]) == 0, capsys.readouterr().out


# ------------------------------------------------------------------------------------------ scoring
def test_score_takes_every_json_type_in_gold_and_predictions(tmp_path, capsys):
    props = {"a": {"type": "ARRAY", "items": {"type": "STRING"}}, "o": {"type": "OBJECT"}, "b": {"type": "BOOLEAN"},
             "n": {"type": "NUMBER"}, "z": {"type": "STRING", "nullable": True}}
    values = [{"a": ["x", "y"], "o": {"k": [1, {"q": None}]}, "b": True, "n": 1.5, "z": None},
              {"a": [], "o": {}, "b": False, "n": 0, "z": "hi"}]
    gold = write(tmp_path / "gold.jsonl", [row([tool(**props)], [{"name": "f", "arguments": v}]) for v in values])
    wrong = {**values[0], "a": ["x", "z"], "o": {"k": [1]}}
    preds = write(tmp_path / "pred.jsonl", [{"calls": [{"name": "f", "arguments": wrong}]},
                                            {"calls": [{"name": "f", "arguments": values[1]}]}])
    assert main(["score", "--gold", gold, "--pred", preds, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["exact_match"] == 0.5 and report["argument_errors"] == {"f.a": 1, "f.o": 1}
    assert report["invented"] == 0
