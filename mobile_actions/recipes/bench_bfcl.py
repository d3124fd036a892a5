"""The caller on BFCL, the Berkeley Function Calling Leaderboard (``mobile-actions bench bfcl``).

A yardstick from outside the toolkit: bfcl-eval's own questions (its loader), its own conversion of their
function docs (the one it uses for OpenAI-style function-calling models) and its own AST and relevance
checker, so the numbers mean what the leaderboard's mean. Only the caller is ours: the on-device ONNX
export, decoded as shipped (grounded and grammar-constrained; ``--no-grounding``: the call grammar only).
Each question's functions become a catalogue (`Catalogue.from_json`); names keep their dots, which the
FunctionGemma wire format writes bare (gorilla's own FunctionGemma handler keeps them too).

bfcl-eval is not installed with the toolkit: a full install pulls every API client and a CUDA torch.
``pip install -e '.[bfcl]'`` brings the few packages its loader and checker import, and
``pip install --no-deps bfcl-eval==VERSION`` bfcl-eval itself (`INSTALL_HINT`).

It is a yardstick: nothing here (or in the caller) is trained on, or written from, its questions.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import types
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue
from mobile_actions.dataset import developer_message
from mobile_actions.errors import MobileActionsError
from mobile_actions.recipes.machine import cpu_name

BFCL_EVAL_VERSION = "2026.3.23"
INSTALL_HINT = f"pip install -e '.[bfcl]' && pip install --no-deps bfcl-eval=={BFCL_EVAL_VERSION}"
DEFAULT_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
                      "irrelevance")
# The single-turn Python categories: the AST ones, and those scored by whether any call is made.
CATEGORIES = (*DEFAULT_CATEGORIES, "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance")
NO_CALL_ASKED = ("irrelevance", "live_irrelevance")   # right when no call is made
RELEVANCE = (*NO_CALL_ASKED, "live_relevance")        # live_relevance: right when any call is made
# FunctionGemma 270M's model card (self-reported, with its own prompt template), per category. Its "simple" is,
# on the leaderboard, the mean of Python, Java and JavaScript; its "irrelevance" the mean of irrelevance and
# live_irrelevance.
FUNCTIONGEMMA_270M = {"simple_python": 61.6, "multiple": 63.5, "parallel": 39.0, "parallel_multiple": 29.5,
                      "live_simple": 36.2, "live_multiple": 25.7, "live_parallel": 22.9,
                      "live_parallel_multiple": 20.8, "live_relevance": 61.1, "irrelevance": 73.7,
                      "live_irrelevance": 73.7}
# The model bfcl-eval's checker is told it scores: it only reads whether that model's function names had their
# dots replaced (`underscore_to_dot`); FunctionGemma's have not, and neither have ours.
CHECKER_MODEL = "google/functiongemma-270m-it-FC"


@dataclass(frozen=True)
class Question:
    """One BFCL question. `functions` are its function docs as bfcl-eval loads them (what its checker reads);
    `answer` its possible answers (``[{name: {argument: [accepted values]}}]``), None where only whether a
    call is made counts."""
    id: str
    category: str
    functions: list[dict]
    messages: list[dict]
    answer: list[dict] | None = None

    @property
    def request(self) -> str:
        return next((m.get("content") or "" for m in reversed(self.messages) if m.get("role") == "user"), "")


@dataclass(frozen=True)
class Verdict:
    valid: bool
    errors: list[str] = field(default_factory=list)


class Suite(Protocol):
    """What the benchmark takes from BFCL: questions, their tools, and the checker's verdict on an output
    (``[{name: arguments}]``, or None for output that is no call list)."""

    def questions(self, category: str) -> list[Question]: ...

    def tools(self, question: Question) -> list[dict]: ...

    def check(self, question: Question, output: list[dict] | None) -> Verdict: ...


class CallerLike(Protocol):
    def call_messages(self, messages: list[dict], tools: Catalogue) -> Any: ...


class BfclUnavailable(MobileActionsError):
    """bfcl-eval, or a package its loader or checker imports, is not installed."""


# ============================================================================================ bfcl-eval
class BfclEval:
    """bfcl-eval's own pieces: `load_dataset_entry` and `load_ground_truth_entry`, `convert_to_tool` (as for
    OpenAI-style models) and the checker (`_evaluate_single_ast_entry`, `_evaluate_single_relevance_entry`).

    Its work folder (`BFCL_PROJECT_ROOT`, where it makes result, score and lock folders on import) is
    `work_dir` unless the environment names one."""

    def __init__(self, work_dir: str | Path):
        if importlib.util.find_spec("bfcl_eval") is None:
            raise BfclUnavailable(f"bfcl-eval is not installed; install it with: {INSTALL_HINT}")
        os.environ.setdefault("BFCL_PROJECT_ROOT", str(Path(work_dir).resolve()))
        try:
            _stand_in_for_model_registry()
            from bfcl_eval.constants.enums import Language, ModelStyle, ReturnFormat
            from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
            from bfcl_eval.eval_checker import eval_runner
            from bfcl_eval.model_handler.utils import convert_to_tool
            from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry
        except ImportError as e:
            raise BfclUnavailable(f"bfcl-eval cannot load: {e} (install what it needs with: {INSTALL_HINT})") from e
        self._load, self._truth = load_dataset_entry, load_ground_truth_entry
        self._convert = lambda functions: convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)
        self._runner, self._python = eval_runner, (Language.PYTHON, ReturnFormat.PYTHON)

    def questions(self, category: str) -> list[Question]:
        entries = self._load(category)
        # bfcl-eval pairs questions and answers by position (some answer ids are spelled differently)
        answers = [a["ground_truth"] for a in self._truth(category)] if category not in RELEVANCE else [None] * len(entries)
        return [Question(e["id"], category, e["function"], [m for turn in e["question"] for m in turn], a)
                for e, a in zip(entries, answers)]

    def tools(self, question: Question) -> list[dict]:
        """The question's functions as bfcl-eval converts them for OpenAI-style models, with the names given
        back: the conversion replaces dots (OpenAI's names may not have them), the wire format does not need to."""
        converted = self._convert(question.functions)   # [{"type": "function", "function": {...}}], copies
        for tool, fn in zip(converted, question.functions):
            tool["function"]["name"] = fn["name"]
        return converted

    def check(self, question: Question, output: list[dict] | None) -> Verdict:
        model = CHECKER_MODEL.replace("/", "_")   # as bfcl-eval names result folders, and its checker reads names
        entry = {"id": question.id, "function": question.functions}
        if question.category in RELEVANCE:
            got = self._runner._evaluate_single_relevance_entry(_Decoded(), question.id, output, entry, model,
                                                                 question.category)
        else:
            language, return_format = self._python
            got = self._runner._evaluate_single_ast_entry(_Decoded(), question.id, output, question.answer, entry,
                                                          model, question.category, language, return_format)
        return Verdict(bool(got["valid"]), [str(e) for e in got.get("error", [])])


class _Decoded:
    """Stands in for a bfcl-eval model handler: our calls come decoded (``[{name: arguments}]``); None is output
    that is no call list, which the checker must see as a failed decode."""

    def decode_ast(self, result: list[dict] | None, language: Any = None, has_tool_call_tag: bool = False) -> list[dict]:
        if result is None:
            raise ValueError("the output is not a list of calls")
        return result


def _stand_in_for_model_registry() -> None:
    """bfcl-eval's checker imports its model registry, which imports every API client it can call (OpenAI,
    Anthropic, Mistral, Cohere, Google, ...), to read one flag of the model it scores (`CHECKER_MODEL`). With
    those clients installed the registry is used; without them a one-entry registry stands in for it."""
    name = "bfcl_eval.constants.model_config"
    if name in sys.modules:
        return
    try:
        importlib.import_module(name)
    except ImportError:
        registry = types.ModuleType(name)
        registry.MODEL_CONFIG_MAPPING = {CHECKER_MODEL: types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
        sys.modules[name] = registry


# ============================================================================================ running
@dataclass(frozen=True)
class Answer:
    """What the caller made of one question, and the checker's verdict."""
    question: Question
    calls: list[ToolCall]
    raw: str
    problem: str | None       # why there is no call list: a catalogue or prompt refused, output that did not parse
    verdict: Verdict
    seconds: float

    def to_json(self) -> dict:
        return {"id": self.question.id, "category": self.question.category, "request": self.question.request,
                "calls": [c.to_json() for c in self.calls], "raw": self.raw, "problem": self.problem,
                "valid": self.verdict.valid, "errors": self.verdict.errors, "seconds": round(self.seconds, 2)}


@dataclass
class CategoryResult:
    category: str
    answers: list[Answer]
    total: int                 # questions in the category (n of them were asked)

    @property
    def n(self) -> int:
        return len(self.answers)

    @property
    def accuracy(self) -> float | None:
        return 100 * sum(a.verdict.valid for a in self.answers) / self.n if self.n else None

    @property
    def called(self) -> tuple[int, int]:
        """(questions with a call, calls): on questions where none was asked, what the caller did anyway."""
        return sum(bool(a.calls) for a in self.answers), sum(len(a.calls) for a in self.answers)

    def to_json(self) -> dict:
        asked, calls = self.called
        return {"n": self.n, "of": self.total, "accuracy": None if self.accuracy is None else round(self.accuracy, 1),
                "functiongemma_270m": FUNCTIONGEMMA_270M.get(self.category),
                "questions_with_calls": asked, "calls": calls,
                "seconds_per_question": round(sum(a.seconds for a in self.answers) / self.n, 2) if self.n else None,
                "problems": sum(a.problem is not None for a in self.answers),
                "ids": [a.question.id for a in self.answers]}


def checker_output(calls: Sequence[ToolCall], problem: str | None) -> list[dict] | None:
    """Calls as bfcl-eval's checker reads a model's: ``[{name: arguments}]``; None when there is no call list."""
    return None if problem is not None else [{c.name: c.arguments} for c in calls]


def spread(items: Sequence[Any], n: int | None) -> list[Any]:
    """`n` items spread evenly over `items` (all of them when n is None or not smaller): the first n of a BFCL
    category are often one topic."""
    if n is None or n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(max(n, 0))]


def prompt_messages(question: Question, now: datetime) -> list[dict]:
    """The conversation the caller sees: its developer turn for `now` (BFCL gives no date) after any system
    text the question has, then the question's own messages."""
    system = "\n".join(m.get("content") or "" for m in question.messages if m.get("role") == "system")
    developer = developer_message(now)
    if system:
        developer = {**developer, "content": f"{system}\n{developer['content']}"}
    return [developer, *(m for m in question.messages if m.get("role") != "system")]


def answer(caller: CallerLike, suite: Suite, question: Question, now: datetime) -> Answer:
    t0 = time.perf_counter()
    calls: list[ToolCall] = []
    raw, problem = "", None
    try:
        tools = Catalogue.from_json(suite.tools(question), source=question.id)
        res = caller.call_messages(prompt_messages(question, now), tools)
        calls, raw = list(res.calls), res.raw
        problem = next((p.message for p in res.problems if p.tool == "<output>"), None)
    except MobileActionsError as e:   # a catalogue refused, a prompt too long for the model
        problem = str(e)
    seconds = time.perf_counter() - t0
    return Answer(question, calls, raw, problem, suite.check(question, checker_output(calls, problem)), seconds)


def run_category(caller: CallerLike, suite: Suite, category: str, n: int | None, now: datetime,
                 progress: Callable[[str], None] = print) -> CategoryResult:
    every = suite.questions(category)
    asked = spread(every, n)
    answers = []
    t0 = time.perf_counter()
    for k, q in enumerate(asked, 1):
        answers.append(answer(caller, suite, q, now))
        if k % 10 == 0 or k == len(asked):
            progress(f"[{category}] {k}/{len(asked)}, {time.perf_counter() - t0:.0f} s")
    return CategoryResult(category, answers, len(every))


def table(results: Sequence[CategoryResult]) -> str:
    lines = ["| category | n | accuracy | FunctionGemma 270M (card) | calls where none was asked | s / question |",
             "|---|---:|---:|---:|---|---:|"]
    for r in results:
        j = r.to_json()
        card = FUNCTIONGEMMA_270M.get(r.category)
        asked, calls = r.called
        nocall = f"{asked}/{r.n} questions ({calls} call{'' if calls == 1 else 's'})" if r.category in NO_CALL_ASKED else "–"
        acc = "–" if r.accuracy is None else f"{r.accuracy:.1f} %"
        lines.append(f"| {r.category} | {r.n} | {acc} | {'–' if card is None else f'{card:.1f} %'} | {nocall} | "
                     f"{j['seconds_per_question'] if j['seconds_per_question'] is not None else '–'} |")
    return "\n".join(lines)


def write_outputs(results: Sequence[CategoryResult], report: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for r in results:
        with open(out / f"{r.category}.jsonl", "w", encoding="utf-8") as f:
            for a in r.answers:
                f.write(json.dumps(a.to_json(), ensure_ascii=False) + "\n")
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")


def bench(caller: CallerLike, suite: Suite, categories: Sequence[str], n: int | None, out: Path, *,
          variant: str, model: str, now: datetime | None = None,
          progress: Callable[[str], None] = print) -> tuple[list[CategoryResult], dict]:
    """Every category in turn; per-question predictions (``<category>.jsonl``) and report.json into `out`."""
    now = (now or datetime.now()).replace(microsecond=0)
    t0 = time.perf_counter()
    results = [run_category(caller, suite, c, n, now, progress) for c in categories]
    report = {"cpu": cpu_name(), "bfcl_eval": _bfcl_version(), "model": model, "variant": variant,
              "now": now.isoformat(), "n": n, "seconds": round(time.perf_counter() - t0, 1),
              "published": "FunctionGemma 270M model card (self-reported, its own prompt template)",
              "categories": {r.category: r.to_json() for r in results}}
    write_outputs(results, report, out)
    return results, report


def _bfcl_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bfcl-eval")
    except PackageNotFoundError:
        return None


# ============================================================================================ command
def _categories(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in names if c not in CATEGORIES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown categor{'y' if len(unknown) == 1 else 'ies'} "
                                          f"{', '.join(unknown) or '(none given)'}; known: {', '.join(CATEGORIES)}")
    return names


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"--n must be a whole number of at least 1, got {text!r}")
    return n


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--categories", type=_categories, default=list(DEFAULT_CATEGORIES),
                   help=f"comma-separated (default: {','.join(DEFAULT_CATEGORIES)}; known: {','.join(CATEGORIES)})")
    p.add_argument("--n", type=_count, default=None, help="questions per category, spread evenly over it (default: all)")
    p.add_argument("--model", default="general", help="general (the bundled caller for any catalogue: BFCL's "
                                                        "are all new to it) | default | an ONNX export folder")
    p.add_argument("--no-grounding", action="store_true",
                   help="decode under the call grammar only, values not narrowed to the request's words")
    p.add_argument("--out", default="bench-bfcl", help="folder for per-question predictions and report.json")
    p.add_argument("--json", action="store_true", help="print report.json instead of the table")


def run(args: argparse.Namespace) -> int:
    from mobile_actions.runtime import Caller

    out = Path(args.out)
    say = lambda m: print(m, file=sys.stderr, flush=True)   # noqa: E731
    try:
        suite = BfclEval(out / "bfcl-work")
        say(f"caller: ONNX {args.model}{' (call grammar only)' if args.no_grounding else ''}")
        caller = Caller.from_pretrained(args.model, grounded=not args.no_grounding)
    except (MobileActionsError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    variant = "grammar only" if args.no_grounding else "grounded"
    results, report = bench(caller, suite, args.categories, args.n, out, variant=variant, model=args.model,
                            progress=say)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(f"BFCL (bfcl-eval {report['bfcl_eval']}), caller {args.model}, {variant}; CPU: {report['cpu']}")
        print(table(results))
        print("FunctionGemma 270M: its model card (self-reported, its own prompt template); its 'simple' is the "
              "leaderboard's mean of Python, Java and JavaScript, its 'irrelevance' the mean of irrelevance and "
              "live_irrelevance.")
        print(f"per-question predictions and report.json: {out}/")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mobile-actions bench bfcl", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
