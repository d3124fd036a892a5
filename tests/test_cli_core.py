import json

from mobile_actions.cli.main import main


def test_validate_clean_file_exits_0(examples_path, capsys):
    assert main(["validate", str(examples_path)]) == 0
    assert "all valid" in capsys.readouterr().out


def test_validate_names_every_bad_line(tmp_path, examples_path, capsys):
    lines = examples_path.read_text().splitlines()
    row = json.loads(lines[0])
    unknown = json.loads(lines[0])
    unknown["messages"][-1]["tool_calls"] = [{"function": {"name": "order_pizza", "arguments": {}}}]
    missing = json.loads(lines[3])
    del missing["messages"][-1]["tool_calls"][0]["function"]["arguments"]  # stringified variant: no subject/to
    missing["messages"][-1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"to": "a@b.c"})
    bad_dt = json.loads(lines[2])
    bad_dt["messages"][-1]["tool_calls"][0]["function"]["arguments"]["datetime"] = "2026-01-10 14:30"
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join([json.dumps(row), lines[1][:50], json.dumps(unknown), json.dumps(missing),
                            json.dumps(bad_dt)]) + "\n")
    assert main(["validate", str(p)]) == 1
    out = capsys.readouterr().out
    assert f"{p}:2: invalid JSON" in out
    assert f"{p}:3: order_pizza: unknown tool" in out
    assert f"{p}:4: send_email.subject: missing required argument" in out
    assert f"{p}:5: create_calendar_event.datetime: '2026-01-10 14:30' is not in YYYY-MM-DDTHH:MM:SS format" in out


def test_score_json(tmp_path, examples_path, capsys):
    pred = tmp_path / "p.jsonl"
    pred.write_text(examples_path.read_text())  # gold as prediction: perfect
    assert main(["score", "--gold", str(examples_path), "--pred", str(pred), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 4 and out["exact_match"] == 1.0 and out["schema_valid"] == 1.0


def test_render_prints_the_prompt(capsys):
    assert main(["render", "turn on the flashlight", "--layout", "cache"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<bos><start_of_turn>developer\nYou are a model")
    assert out.endswith("<start_of_turn>user\nturn on the flashlight<end_of_turn>\n<start_of_turn>model\n")


def test_each_part_registers_the_commands_the_parser_names_for_it():
    """`build_parser(command)` registers only the part `PART_CLIS` names for `command`: the names must be
    the ones that part's `register` adds, or a command would go missing from its own parser."""
    import argparse
    import importlib

    from mobile_actions.cli.main import OWN_COMMANDS, PART_CLIS, build_parser

    for module, names in PART_CLIS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        assert tuple(sub.choices) == names, module
    every = build_parser()._subparsers._group_actions[0].choices
    assert set(every) == set(OWN_COMMANDS).union(*PART_CLIS.values())
    for command in every:
        assert command in build_parser(command)._subparsers._group_actions[0].choices
    assert build_parser("call").parse_args(["call", "hi", "--json"]).json


def test_validate_with_tools_reads_rows_that_carry_none(tmp_path, examples_path, capsys):
    """Rows kept apart from their catalogue (as the seed catalogues' are) validate against `--tools`."""
    row = json.loads(examples_path.read_text().splitlines()[0])
    (tmp_path / "tools.json").write_text(json.dumps(row.pop("tools")))
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    assert main(["validate", str(tmp_path / "rows.jsonl")]) == 1
    assert "missing field 'tools'" in capsys.readouterr().out
    assert main(["validate", "--tools", str(tmp_path / "tools.json"), str(tmp_path / "rows.jsonl")]) == 0
    assert "all valid" in capsys.readouterr().out
