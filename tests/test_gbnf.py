"""The call format as GBNF (for llama.cpp): every rule it uses is defined, every tool and argument is in it."""
from __future__ import annotations

import re

from mobile_actions import wire
from mobile_actions.catalog import load_catalogue
from mobile_actions.decoding.gbnf import call_gbnf


def test_gbnf_defines_every_rule_and_names_every_tool_and_argument():
    cat = load_catalogue("mobile_actions")
    text = call_gbnf(cat)
    rules = dict(line.split(" ::= ", 1) for line in text.strip().splitlines())
    bodies = " ".join(re.sub(r'"(?:[^"\\]|\\.)*"|\[[^\]]*\]', " ", b) for b in rules.values())  # no literals/classes
    used = set(re.findall(r"(?<![<\w-])([a-z][a-z0-9-]*)(?![\w-])", bodies))
    assert used <= set(rules), used - set(rules)
    for tool in cat:
        assert f'"{tool.name}{{' in text
        for arg in tool.properties:
            assert f'"{arg}:"' in text
    assert rules["root"] == "call+ | text"      # the end of the turn: an end-of-generation token
    start, end, esc = (wire.CONTROL_TOKEN_IDS[c] for c in (wire.START_CALL, wire.END_CALL, wire.ESCAPE))
    assert rules["call"].startswith(f"<[{start}]>") and rules["call"].endswith(f"<[{end}]>")
    assert rules["string"] == f"<[{esc}]> [^<]* <[{esc}]>"


def test_gbnf_enums_are_their_values():
    from mobile_actions.catalog import Catalogue

    cat = Catalogue.from_json([{"function": {"name": "set_mode", "description": "Sets a mode.", "parameters": {
        "type": "OBJECT", "properties": {"mode": {"type": "STRING", "enum": ["eco", "sport"]}}, "required": ["mode"]}}}])
    assert 'arg-set-mode ::= "mode:" (<[52]> "eco" <[52]> | <[52]> "sport" <[52]>)' in call_gbnf(cat)
