"""`mobile-actions rules`: the inventory of rules and word lists, and what switching each rule off changes."""
from __future__ import annotations

from types import SimpleNamespace

from mobile_actions.calls import ToolCall
from mobile_actions.dataset import parse_row
from mobile_actions.recipes import rules


def test_word_lists_in_code_are_found_and_objects_are_not(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "decoding").mkdir(parents=True)
    (pkg / "decoding" / "m.py").write_text(
        'import re\nX = frozenset("a bb cc".split())\nR = re.compile(r"\\b(?:turn|switch)\\s+on\\b")\n'
        'RULE = Rule("name", "says something long")\n__all__ = ["X", "R"]\nN = 3\n')
    found = {w.name: w.entries for w in rules.words_in_code(pkg, ("decoding",))}
    assert found == {"X": 2, "R": 3}


def test_lexicon_sizes_count_each_list():
    sizes = rules.lexicon_sizes()
    assert sizes["values.no_start"] >= 3 and sizes["polarity.negated"] > 0
    assert all(n >= 0 for n in sizes.values())


def _row(request: str, gold: list[dict]) -> object:
    tools = [{"function": {"name": "save_place", "description": "Shows a place.", "parameters": {
        "type": "OBJECT", "properties": {"query": {"type": "STRING", "description": "The place."}},
        "required": ["query"]}}}]
    msgs = [{"role": "developer", "content": "You are a model that can do function calling"},
            {"role": "user", "content": request}]
    msgs.append({"role": "assistant", "tool_calls": [{"function": g} for g in gold]} if gold
                else {"role": "assistant", "content": "ok"})
    return parse_row({"metadata": "eval", "tools": tools, "messages": msgs})


def test_measure_counts_rows_a_rule_makes_right_and_wrong():
    rows = [_row("show me Kyoto on the map", [{"name": "save_place", "arguments": {"query": "Kyoto"}}]),
            _row("show me Oslo on the map", [{"name": "save_place", "arguments": {"query": "Oslo"}}]),
            _row("hello there", [])]

    def make_caller(off):
        def call_messages(messages, tools):
            text = messages[-1]["content"]
            if "Kyoto" in text:   # the rule makes this row right
                calls = [] if "first-item" in off else [ToolCall("save_place", {"query": "Kyoto"})]
            elif "Oslo" in text:  # the rule makes this one wrong
                calls = [ToolCall("save_place", {"query": "Oslo" if "first-item" in off else "Osl"})]
            else:                 # and calls where nothing was asked
                calls = [] if "first-item" in off else [ToolCall("save_place", {"query": "there"})]
            return SimpleNamespace(calls=calls)
        return SimpleNamespace(call_messages=call_messages)

    (effect,) = rules.measure(rows, make_caller, ["first-item"], say=lambda m: None)
    assert (effect.changed, effect.helps, effect.hurts, effect.unrequested) == (3, 1, 2, 1)   # "hello" acted on
    assert len(effect.examples) == 3


def test_the_command_prints_the_inventory_and_refuses_unknown_rules(capsys):
    from mobile_actions.cli.main import main

    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "9 named rules" in out and "owed-call" in out and "still in Python" in out
    assert main(["rules", "--rules", "owed-call,nope", "--data", "x.jsonl"]) == 2
    assert "no rule nope" in capsys.readouterr().err
