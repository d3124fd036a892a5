"""`bench act` counts what a caller does where nobody asked, before and after the gate."""
from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from mobile_actions.dataset import developer_message, parse_row
from mobile_actions.recipes.bench_act import DEFAULT_DATA, run_variant
from mobile_actions.runtime import result_from_raw

CAT = load_catalogue("mobile_actions")


class Eager:
    """A caller that always emails ana@example.com and turns the torch on, whatever was asked."""

    def call_messages(self, messages, tools):
        calls = [ToolCall("send_email", {"to": "ana@example.com", "subject": "Hi"}), ToolCall("turn_on_flashlight", {})]
        return result_from_raw("".join(wire.render_call(c) for c in calls), tools, {})


def row(request: str, calls: list[dict], kind: str):
    final = {"role": "assistant", "tool_calls": [{"function": c} for c in calls]} if calls else \
        {"role": "assistant", "content": "OK."}
    return parse_row({"metadata": kind, "tools": CAT.to_mobile_actions(),
                      "messages": [developer_message(), {"role": "user", "content": request}, final]})


def test_unrequested_calls_and_non_requests_acted_on_are_counted_before_and_after_the_gate(tmp_path):
    rows = [row("whatever you do, don't email ana@example.com", [], "act:negation"),
            row("turn on the torch, but no email to ana@example.com", [{"name": "turn_on_flashlight", "arguments": {}}],
                "act:mixed")]
    v = run_variant("eager", Eager(), rows, tmp_path, progress=lambda _m: None)
    d, g = v.decoded["all"], v.gated["all"]
    assert (d.unrequested, d.non_requests_acted, d.non_requests) == (3, 1, 1)
    assert (g.unrequested, g.non_requests_acted, g.exact, g.false_refusals) == (0, 0, 2, 0)
    assert v.gated["act:mixed"].gold_kept == 1 and (tmp_path / "eager.jsonl").is_file()


def test_the_bundled_act_sets_validate():
    from mobile_actions.dataset import load_rows

    for path in DEFAULT_DATA:
        rows, problems = load_rows(path)
        assert rows and not problems
        assert {r.metadata for r in rows} >= {"act:negation", "act:control", "act:mixed"}


def test_auto_gives_each_row_the_caller_run_would_take_for_its_catalogue(monkeypatch):
    """`bench act --model auto`: rows on the seven tools go to the Mobile Actions caller, others to the general
    one, each loaded once."""
    from mobile_actions.catalog import Catalogue
    from mobile_actions.hybrid import models
    from mobile_actions.recipes.bench_act import PerCatalogue

    loaded = []
    monkeypatch.setattr(models, "resolve_caller", lambda name, say: loaded.append(name) or Eager())
    clock = Catalogue.from_json([{"name": "set_alarm", "description": "Sets an alarm.",
                                  "parameters": {"type": "object", "properties": {}}}])
    caller = PerCatalogue(lambda _m: None)
    for tools in (CAT, clock, CAT, clock):
        assert caller.call_messages([], tools).calls
    assert loaded == ["default", "general"]


def test_rows_without_their_tools_are_reported_by_line_not_with_a_traceback(tmp_path, capsys):
    from mobile_actions.recipes.bench_act import MAX_ERRORS, read_data

    path = tmp_path / "rows.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}\n' * 15)
    assert read_data([str(path)]) is None
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {path}:1: missing field 'tools'"
    assert len(err) == MAX_ERRORS + 1 and err[-1] == f"error: {path}: 5 more unreadable lines"
