"""The call format as a GBNF grammar, for llama.cpp (`--grammar`, or `"grammar"` in llama-server's requests).

What llama.cpp users can constrain a FunctionGemma-format caller with: a reply is either text, or one or more calls of the catalogue's tools, each with its own argument names and value types,
then the end of the turn. FunctionGemma's control strings are single tokens (ids 46-52, `<unused40..46>`
in Gemma 3's vocabulary), so they are matched by id (`<[48]>`, llama.cpp's token syntax), not as text.

It is the schema-level grammar only: argument order is free and required arguments are not enforced, and
nothing is grounded in the request (the toolkit's own `grammar.CallGrammar` does both, and forces the tokens
it can). `bench caller` uses it for llama.cpp at its best.
"""
from __future__ import annotations

import re
from typing import Any

from mobile_actions import wire
from mobile_actions.catalog import Catalogue


def _tok(control: str) -> str:
    return f"<[{wire.CONTROL_TOKEN_IDS[control]}]>"


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _rule_names(catalogue: Catalogue) -> dict[str, str]:
    """A GBNF rule name per tool: its name with every character GBNF does not take as `-`, numbered
    where two would meet (`math.factorial` and `math_factorial`)."""
    out: dict[str, str] = {}
    for tool in catalogue:
        base = name = re.sub(r"[^a-zA-Z0-9-]", "-", tool.name)
        n = 1
        while name in out.values():
            n += 1
            name = f"{base}-{n}"
        out[tool.name] = name
    return out


def _value_rule(schema: Any) -> str:
    """A GBNF expression for one argument's value (its JSON type; enums as their literal values)."""
    if not isinstance(schema, dict):
        return "value"
    if isinstance(schema.get("enum"), list) and all(isinstance(v, str) for v in schema["enum"]):
        return "(" + " | ".join(f"{_tok(wire.ESCAPE)} {_literal(v)} {_tok(wire.ESCAPE)}" for v in schema["enum"]) + ")"
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
            "array": "array", "object": "object"}.get(kind, "value")


def call_gbnf(catalogue: Catalogue) -> str:
    """The GBNF grammar of one turn of calls to `catalogue`'s tools (or a text reply). The turn ends on an
    end-of-generation token, which llama.cpp allows once the grammar is complete (after any whole call, or
    text): `<end_of_turn>`, and `<start_function_response>` (FunctionGemma's end of a turn of calls) where the
    GGUF marks it as one (`--special-token-by-id eom 50`, docs/runtime.md)."""
    rule = _rule_names(catalogue)
    lines = [
        "root ::= call+ | text",
        f"call ::= {_tok(wire.START_CALL)} \"call:\" (" + " | ".join(f"tool-{rule[t.name]}" for t in catalogue)
        + f") {_tok(wire.END_CALL)}",
    ]
    for tool in catalogue:
        name = rule[tool.name]
        props = tool.properties
        if props:
            pairs = " | ".join(f"{_literal(k + ':')} {_value_rule(v)}" for k, v in props.items())
            lines.append(f"tool-{name} ::= {_literal(tool.name + '{')} (arg-{name} (\",\" arg-{name})*)? \"}}\"")
            lines.append(f"arg-{name} ::= {pairs}")
        else:
            lines.append(f"tool-{name} ::= {_literal(tool.name + '{}')}")
    esc = _tok(wire.ESCAPE)
    lines += [
        f"string ::= {esc} [^<]* {esc}",
        'integer ::= "-"? [0-9]+',
        'number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
        'boolean ::= "true" | "false"',
        'value ::= string | number | boolean | "null" | array | object',
        'array ::= "[" (value ("," value)*)? "]"',
        'object ::= "{" ([a-zA-Z0-9_]+ ":" value ("," [a-zA-Z0-9_]+ ":" value)*)? "}"',
        "text ::= [^<] [^<]*",
    ]
    return "\n".join(lines) + "\n"
