import json

from mobile_actions.calls import ToolCall
from mobile_actions.dataset import load_rows
from mobile_actions.scoring import Prediction, error_kind, exact_match, lenient_match, read_predictions, score

A = ToolCall("show_map", {"query": "Maison Marulaz, Besançon, France"})
B = ToolCall("turn_on_flashlight", {})


def test_exact_is_ordered_and_verbatim():
    assert exact_match([A, B], [A, B])
    assert not exact_match([A, B], [B, A])
    assert not exact_match([A], [ToolCall("show_map", {"query": "Maison Marulaz in Besançon, France"})])
    assert exact_match([ToolCall("f", {"a": 1, "b": 2})], [ToolCall("f", {"b": 2, "a": 1})])


def test_lenient_is_order_free_and_normalises_strings():
    assert lenient_match([A, B], [B, A])
    assert lenient_match([A], [ToolCall("show_map", {"query": "maison marulaz besançon france"})])
    assert lenient_match([ToolCall("f", {"x": 1.0})], [ToolCall("f", {"x": 1})])
    assert not lenient_match([A], [A, B])
    assert not lenient_match([A], [ToolCall("show_map", {"query": "Paris"})])


def test_report_by_hand(examples_path):
    rows, _ = load_rows(examples_path)  # gold: [flashlight], [contact], [calendar, map], [email]
    rows = rows + [rows[0].__class__(metadata="eval", tools=rows[0].tools, messages=rows[0].messages[:-1] +
                   [{"role": "assistant", "content": "No."}], calls=[], reply="No.")]
    preds = [
        Prediction(rows[0].calls),                                            # exact
        Prediction([ToolCall("create_contact", {"first_name": "priya", "last_name": "raman",
                                                "phone_number": "0412-555-019"})]),  # lenient only
        Prediction(list(reversed(rows[2].calls))),                           # lenient only (order)
        Prediction([ToolCall("send_email", {"to": "ops@example.org"})]),     # invalid: subject missing
        Prediction([], "Sorry, I can't."),                                   # refusal right
    ]
    r = score(rows, preds)
    assert r.n == 5
    assert r.exact_match == 2 / 5
    assert r.lenient_match == 4 / 5
    assert r.schema_valid == 4 / 5
    assert r.refusal_accuracy == 1.0 and r.n_refusal_rows == 1
    assert r.per_tool["send_email"].to_json()["recall"] == 1.0
    assert r.confusion["create_calendar_event"]["show_map"] == 1
    assert r.confusion["<none>"]["<none>"] == 1
    assert r.errors == {"wrong order": 1, "wrong argument": 2}
    assert [x["error"] for x in r.row_results] == [None, "wrong argument", "wrong order", "wrong argument", None]
    assert r.argument_errors == {"create_contact.first_name": 1, "create_contact.last_name": 1,
                                 "create_contact.phone_number": 1, "send_email.body": 1, "send_email.subject": 1}
    j = r.to_json()
    assert set(j) >= {"n", "exact_match", "lenient_match", "schema_valid", "refusal_accuracy", "per_tool", "errors",
                      "argument_errors"}


def test_error_counts_add_up_to_the_rows_that_are_not_exact(examples_path):
    rows, _ = load_rows(examples_path)
    refusal = rows[0].__class__(metadata="eval", tools=rows[0].tools, messages=rows[0].messages[:-1] +
                                [{"role": "assistant", "content": "No."}], calls=[], reply="No.")
    rows = [rows[0], rows[1], refusal]
    preds = [Prediction([], "", "<start_function_call>call:", "at position 26"),   # unparseable
             Prediction([]),                                                        # no call
             Prediction([], "", "<start_function_call>", "at position 21")]         # unparseable, but no calls: exact
    r = score(rows, preds)
    assert r.exact_match == 1 / 3 and r.errors == {"unparseable": 1, "no call": 1}
    assert sum(r.errors.values()) == r.n - round(r.exact_match * r.n)


def test_error_kind_names_the_first_reason():
    C = ToolCall("send_email", {"to": "a@b.c", "subject": "hi"})
    assert error_kind([A, B], Prediction([A, B])) is None
    assert error_kind([A], Prediction([], "", "<start_function_call>call:", "at position 5")) == "unparseable"
    assert error_kind([], Prediction([B])) == "call on a refusal row"
    assert error_kind([A, B], Prediction([], "Sorry.")) == "no call"
    assert error_kind([A, B], Prediction([A])) == "missing call"
    assert error_kind([A], Prediction([A, B])) == "extra call"
    assert error_kind([A, B], Prediction([B, A])) == "wrong order"
    assert error_kind([A, B], Prediction([A, C])) == "wrong tool"
    assert error_kind([C], Prediction([ToolCall("send_email", {"to": "a@b.c"})])) == "wrong argument"


def test_predictions_file_accepts_raw_model_text(tmp_path):
    p = tmp_path / "pred.jsonl"
    p.write_text("\n".join([
        json.dumps({"raw": "<start_function_call>call:turn_on_flashlight{}<end_function_call>"}),
        json.dumps({"raw": "<start_function_call>call:turn_on"}),
        "not json",
    ]) + "\n")
    preds, problems = read_predictions(p)
    assert preds[0].calls == [B]
    assert preds[1].error and not preds[1].calls
    assert [str(x).split(": ")[0] for x in problems] == [f"{p}:3"]


def test_invented_values_are_counted():
    from mobile_actions.dataset import parse_row
    from mobile_actions.scoring import Prediction, score

    tools = [{"function": {"name": "create_contact", "description": "Creates a contact.", "parameters": {
        "type": "OBJECT", "properties": {"first_name": {"type": "STRING", "description": "First."},
                                         "email": {"type": "STRING", "description": "Email."}},
        "required": ["first_name"]}}}]
    row = parse_row({"metadata": "t", "tools": tools, "messages": [
        {"role": "user", "content": "add Ana as a contact"},
        {"role": "assistant", "tool_calls": [{"function": {"name": "create_contact", "arguments": {"first_name": "Ana"}}}]}]})
    ok = Prediction([ToolCall("create_contact", {"first_name": "Ana"})])
    made_up = Prediction([ToolCall("create_contact", {"first_name": "Ana", "email": "ana@gmail.com"})])
    assert score([row], [ok]).invented == 0
    report = score([row, row], [made_up, ok])
    assert report.invented == 1 and report.row_results[0]["invented"] == 1 and report.to_json()["invented"] == 1


def test_array_arguments_score_without_crashing(tmp_path, capsys):
    """Arrays of strings, numbers (a 400-digit one has no float), booleans and objects, compared leniently
    element by element."""
    from mobile_actions.calls import ToolCall as T
    from mobile_actions.cli.main import main

    big = 10 ** 400
    assert lenient_match([T("f", {"a": ["New York", 2, big]})], [T("f", {"a": ["new york", 2.0, big]})])
    assert not lenient_match([T("f", {"a": [big]})], [T("f", {"a": [1.5]})])
    assert not lenient_match([T("f", {"a": [True, 1]})], [T("f", {"a": [1, True]})])      # True is not 1
    assert not lenient_match([T("f", {"a": ["x", "y"]})], [T("f", {"a": ["y", "x"]})])    # an array is ordered
    tool = {"function": {"name": "f", "description": "d", "parameters": {"type": "OBJECT", "properties": {
        "a": {"type": "ARRAY", "items": {"type": "INTEGER"}}, "o": {"type": "ARRAY", "items": {"type": "OBJECT"}}}}}}
    rows = [{"metadata": "eval", "tools": [tool], "messages": [
        {"role": "user", "content": "f"}, {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": a}}]}]}
        for a in ({"a": [big, 2]}, {"o": [{"k": [1]}]})]
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pred.write_text(json.dumps({"calls": [{"name": "f", "arguments": {"a": [big, 2.0]}}]}) + "\n" +
                    json.dumps({"calls": [{"name": "f", "arguments": {"o": [{"k": [2]}]}}]}) + "\n")
    assert main(["score", "--gold", str(gold), "--pred", str(pred), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["exact_match"], report["lenient_match"], report["argument_errors"]) == (0.0, 0.5, {"f.a": 1, "f.o": 1})
