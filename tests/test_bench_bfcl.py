"""`bench bfcl`: BFCL questions to the caller and back to BFCL's checker, on a small BFCL-shaped fixture (questions
written for these tests) with a fake caller. bfcl-eval's own pieces are tested where it is installed."""
import importlib.util
import json
from datetime import datetime
from pathlib import Path

import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue
from mobile_actions.errors import PromptTooLongError
from mobile_actions.recipes import bench_bfcl
from mobile_actions.recipes.bench_bfcl import (NO_CALL_ASKED, RELEVANCE, Question, Verdict, bench, prompt_messages,
                                               spread, table)
from mobile_actions.runtime import result_from_raw

FIXTURE = Path(__file__).parent / "fixtures" / "bfcl" / "questions.json"
NOW = datetime(2025, 5, 15, 9, 30)
HAS_BFCL = importlib.util.find_spec("bfcl_eval") is not None


def calls(*items: ToolCall) -> str:
    return "".join(wire.render_call(c) for c in items)


# What the fake caller answers, by request: right, wrong tool, parallel in another order, a call nobody asked for.
ANSWERS = {
    "What is the area of a circle with a radius of 4.5 cm?": calls(ToolCall("geometry.circle_area", {"radius": 4.5})),
    "Sort the pair (3, 1).": calls(ToolCall("sort_pair", {"pair": [3, 1]})),
    "How is the weather in Oslo today?": calls(ToolCall("weather.forecast", {"city": "Oslo", "days": 1})),
    "Convert 5 km and 10 km to miles.": calls(ToolCall("units.km_to_miles", {"km": 10}),
                                              ToolCall("units.km_to_miles", {"km": 5})),
    "Tell me a joke about cats.": "Sorry, I can't help with that.",
    "What is the capital of Peru?": calls(ToolCall("geometry.circle_area", {"radius": 1})),
}
EXPECTED = {"simple_python": (2, 100.0), "multiple": (1, 0.0), "parallel": (2, 50.0), "irrelevance": (2, 50.0)}


class FakeCaller:
    """Answers each request with ANSWERS' text, parsed and validated against the catalogue it is given."""

    def __init__(self):
        self.seen: list[tuple[list[dict], Catalogue]] = []

    def call_messages(self, messages, tools):
        self.seen.append((messages, tools))
        request = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        return result_from_raw(ANSWERS[request], tools, {})


def fixture_entries() -> list[dict]:
    return json.loads(FIXTURE.read_text())


class FakeSuite:
    """The fixture's questions; functions loaded as they are; a small checker in BFCL's terms (names match,
    every value among the accepted ones, "" marks an optional argument, parallel calls in any order)."""

    def questions(self, category):
        return [Question(e["id"], e["category"], e["function"], [m for t in e["question"] for m in t],
                         e.get("ground_truth")) for e in fixture_entries() if e["category"] == category]

    def tools(self, question):
        return question.functions

    def check(self, question, output):
        if question.category in RELEVANCE:
            called = bool(output)
            return Verdict(not called if question.category in NO_CALL_ASKED else called)
        if output is None or len(output) != len(question.answer):
            return Verdict(False, ["wrong count"])
        left = list(question.answer)
        for call in output:
            match = next((a for a in left if _matches(call, a)), None)
            if match is None:
                return Verdict(False, [f"no match for {call}"])
            left.remove(match)
        return Verdict(True)


def _matches(call: dict, answer: dict) -> bool:
    (name, args), (want, accepted) = next(iter(call.items())), next(iter(answer.items()))
    return name == want and set(args) <= set(accepted) and all(
        _accepts(accepted[k], args[k]) if k in args else "" in accepted[k] for k in accepted)


def _accepts(values: list, value) -> bool:
    return any(v == value or isinstance(v, dict) and isinstance(value, dict)
               and all(_accepts(v[k], value.get(k)) for k in v) for v in values)


def run_fixture(tmp_path, suite) -> tuple[list, dict, FakeCaller]:
    caller = FakeCaller()
    results, report = bench(caller, suite, list(EXPECTED), None, tmp_path, variant="grounded", model="fake",
                            now=NOW, progress=lambda _m: None)
    return results, report, caller


def test_questions_reach_the_caller_as_catalogues_and_come_back_scored(tmp_path):
    results, report, caller = run_fixture(tmp_path, FakeSuite())
    assert {r.category: (r.n, r.accuracy) for r in results} == EXPECTED
    cats = [tools for _messages, tools in caller.seen]
    assert cats[0].names == ["geometry.circle_area"]            # dotted names as BFCL gives them
    assert cats[0]["geometry.circle_area"].properties["radius"]["type"] == "number"
    assert cats[1]["sort_pair"].properties["pair"]["type"] == "array"
    assert cats[1]["sort_pair"].properties["key"]["type"] == "string"
    irrelevance = results[-1]
    assert irrelevance.called == (1, 1)
    assert report["categories"]["irrelevance"]["questions_with_calls"] == 1
    assert report["categories"]["simple_python"]["functiongemma_270m"] == 61.6
    assert report["cpu"] and report["now"] == NOW.isoformat()
    lines = [json.loads(x) for x in (tmp_path / "simple_python.jsonl").read_text().splitlines()]
    assert lines[0]["calls"] == [{"name": "geometry.circle_area", "arguments": {"radius": 4.5}}] and lines[0]["valid"]
    assert json.loads((tmp_path / "report.json").read_text())["categories"]["parallel"]["ids"] == ["parallel_0", "parallel_1"]


def test_a_catalogue_the_toolkit_refuses_is_a_miss_that_says_why(tmp_path):
    results, _report, caller = run_fixture(tmp_path, FakeSuite())
    refused = next(a for r in results for a in r.answers if a.question.id == "parallel_1")
    assert not refused.verdict.valid and not refused.calls
    assert "field 'required': 'c' is not in properties" in refused.problem
    assert len(caller.seen) == 6   # it never reached the caller


def test_a_prompt_too_long_is_a_miss_that_says_why(tmp_path):
    class TooLong:
        def call_messages(self, messages, tools):
            raise PromptTooLongError("the prompt is 9,000 tokens")

    results, _ = bench(TooLong(), FakeSuite(), ["simple_python", "irrelevance"], 1, tmp_path, variant="grounded",
                       model="fake", now=NOW, progress=lambda _m: None)
    assert [a.problem for r in results for a in r.answers] == ["the prompt is 9,000 tokens"] * 2
    assert [r.accuracy for r in results] == [0.0, 100.0]   # no call on a question that asks for none is right


def test_system_text_goes_before_the_developer_turn_and_the_rest_follows():
    q = Question("q", "live_simple", [], [{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "hi"}])
    messages = prompt_messages(q, NOW)
    assert messages[0]["role"] == "developer"
    assert messages[0]["content"].startswith("Be brief.\nCurrent date and time given in YYYY-MM-DDTHH:MM:SS format: "
                                             "2025-05-15T09:30:00\n")
    assert messages[1:] == [{"role": "user", "content": "hi"}]


def test_spread_takes_n_evenly():
    assert spread(list(range(10)), 3) == [0, 3, 6]
    assert spread(list(range(4)), None) == spread(list(range(4)), 9) == [0, 1, 2, 3]


def test_the_table_puts_the_published_numbers_beside_ours(tmp_path):
    results, _report, _caller = run_fixture(tmp_path, FakeSuite())
    text = table(results)
    assert "| simple_python | 2 | 100.0 % | 61.6 % | – |" in text
    assert "| irrelevance | 2 | 50.0 % | 73.7 % | 1/2 questions (1 call) |" in text


def test_unknown_categories_and_counts_are_refused_by_the_command(capsys):
    from mobile_actions.cli.main import main

    with pytest.raises(SystemExit):
        main(["bench", "bfcl", "--categories", "simple_java"])
    assert "unknown category simple_java; known: simple_python" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "bfcl", "--n", "0"])
    assert "--n must be a whole number of at least 1" in capsys.readouterr().err


def test_without_bfcl_eval_the_command_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    from mobile_actions.cli.main import main

    real = importlib.util.find_spec
    monkeypatch.setattr(bench_bfcl.importlib.util, "find_spec", lambda name, *a: None if name == "bfcl_eval" else real(name, *a))
    assert main(["bench", "bfcl", "--n", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "bfcl-eval is not installed" in err and f"pip install --no-deps bfcl-eval=={bench_bfcl.BFCL_EVAL_VERSION}" in err


# ---------------------------------------------------------------------------------- bfcl-eval's own pieces
@pytest.fixture(scope="module")
def real_suite(tmp_path_factory):
    if not HAS_BFCL:
        pytest.skip("bfcl-eval is not installed (pip install -e '.[bfcl]' && pip install --no-deps bfcl-eval==...)")
    return bench_bfcl.BfclEval(tmp_path_factory.mktemp("bfcl-work"))


class FixtureOnRealSuite(FakeSuite):
    """The fixture's questions, converted and checked by bfcl-eval itself."""

    def __init__(self, real):
        self.real = real

    def tools(self, question):
        return self.real.tools(question)

    def check(self, question, output):
        return self.real.check(question, output)


def test_bfcl_evals_checker_agrees_on_the_fixture(tmp_path, real_suite):
    results, _report, caller = run_fixture(tmp_path, FixtureOnRealSuite(real_suite))
    assert {r.category: (r.n, r.accuracy) for r in results} == EXPECTED
    assert caller.seen[0][1].names == ["geometry.circle_area"]   # the caller sees BFCL's names
    wrong = next(a for r in results for a in r.answers if a.question.id == "multiple_0")
    assert wrong.verdict.errors   # bfcl-eval says why


def _types(schema: dict) -> dict:
    """A schema's types and required names, all the way down (bfcl-eval's conversion also notes "float")."""
    return {"type": schema.get("type"), "required": schema.get("required"),
            "properties": {k: _types(v) for k, v in (schema.get("properties") or {}).items()},
            "items": _types(schema["items"]) if "items" in schema else None}


def test_bfcl_evals_conversion_and_ours_give_the_same_names_and_types(real_suite):
    for q in (q for c in EXPECTED for q in FakeSuite().questions(c) if q.id != "parallel_1"):
        theirs, ours = Catalogue.from_json(real_suite.tools(q)), Catalogue.from_json(q.functions)
        assert theirs.names == ours.names == [f["name"] for f in q.functions]   # dots kept
        assert [_types(t.parameters) for t in theirs] == [_types(t.parameters) for t in ours], q.id


def test_bfcl_evals_loader_gives_questions_with_answers(real_suite):
    simple = real_suite.questions("simple_python")
    assert len(simple) == 400 and all(q.answer and q.functions and q.request for q in simple)
    assert all(q.answer is None for q in real_suite.questions("irrelevance"))
