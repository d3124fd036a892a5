"""`mobile-actions rules`: the toolkit's rules around the model, counted, and what each changes on a set of rows.

Without `--data` it prints the inventory: the named rules (`decoding.turn.RULES`), the lexicon's word lists with
their sizes, and the word lists and patterns still written in Python under `decoding/` and `navigator/` (the
count that should shrink as words move to the lexicon). With `--data`, it decodes every row with all rules on and
once more with each rule off (on-device export, grounded), and prints per rule the rows it changes, the rows it
makes right (exact, after the gate) and the rows it makes wrong, and the unrequested calls it adds or removes. A
rule that helps on no set written after it is a candidate for deletion.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from mobile_actions.recipes.bench_act import read_data, unrequested   # (the CLI imports bench_act already)
from mobile_actions.recipes.machine import cpu_name

PACKAGE = Path(__file__).resolve().parent.parent
CODE_WITH_WORDS = ("decoding", "navigator")


@dataclass(frozen=True)
class WordsInCode:
    """A module-level word list or pattern in Python: where it is and how many entries it holds."""
    where: str
    name: str
    entries: int


def words_in_code(package: Path = PACKAGE, folders: Sequence[str] = CODE_WITH_WORDS) -> list[WordsInCode]:
    """Module-level constants under `folders` that hold words: collections of strings, strings split into
    words, and compiled patterns, counted by the distinct words (two letters or more) they hold."""
    found = []
    for folder in folders:
        for path in sorted((package / folder).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                        and node.targets[0].id != "__all__" and _holds_words(node.value)):
                    n = len(_words(node.value))
                    if n:
                        found.append(WordsInCode(f"{path.relative_to(package.parent)}:{node.lineno}",
                                                 node.targets[0].id, n))
    return found


_BUILDERS = {"frozenset", "set", "tuple", "list", "dict", "sorted", "compile", "split", "join", "escape"}


def _holds_words(value: ast.AST) -> bool:
    """A literal collection, or one built from literals with collection, split and pattern calls (not an object
    such as a `Rule`)."""
    if isinstance(value, (ast.Set, ast.List, ast.Tuple, ast.Dict)):
        return True
    if isinstance(value, ast.BinOp):
        return _holds_words(value.left) or _holds_words(value.right)
    if isinstance(value, ast.Call):
        f = value.func
        return (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "") in _BUILDERS
    return False


def _words(value: ast.AST) -> set[str]:
    strings = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return {w.lower() for s in strings for w in re.findall(r"(?<![\\?])\b[A-Za-z][a-z']+\b", s)}


def lexicon_sizes(language: str = "en") -> dict[str, int]:
    """Entries per word list of the lexicon file (`section.list`)."""
    from mobile_actions.lexicon import LEXICON_DIR

    data = json.loads((LEXICON_DIR / f"{language}.json").read_text(encoding="utf-8"))
    return {f"{section}.{name}": len(words) for section, body in data.items() if isinstance(body, dict)
            for name, words in body.items() if isinstance(words, list)}


@dataclass
class Effect:
    """What switching one rule off does to a set of rows, compared with all rules on."""
    rule: str
    changed: int = 0     # rows whose calls differ
    helps: int = 0       # right with the rule, wrong without it
    hurts: int = 0       # wrong with the rule, right without it
    unrequested: int = 0   # unrequested calls with the rule minus without it (negative: the rule removes them)
    examples: list[dict] = field(default_factory=list)


def _decode(caller: Any, rows: Sequence[Any], gated: bool, say, label: str) -> list[list[Any]]:
    from mobile_actions.acting import gate_messages

    out, t0 = [], time.perf_counter()
    for k, row in enumerate(rows, 1):
        calls = list(caller.call_messages(row.prompt_messages, row.tools).calls)
        if gated:
            calls, _ = gate_messages(calls, row.prompt_messages, row.tools)
        out.append(calls)
        if k % 25 == 0 or k == len(rows):
            say(f"[{label}] {k}/{len(rows)} rows, {time.perf_counter() - t0:.0f} s")
    return out


def measure(rows: Sequence[Any], make_caller, rules: Sequence[str], say=print) -> list[Effect]:
    """`make_caller(off)` gives a caller with the rules named in `off` switched off; `rows` are `dataset.Row`s."""
    from mobile_actions.decoding.turn import GATE
    from mobile_actions.scoring import exact_match

    base = _decode(make_caller(frozenset()), rows, True, say, "all rules")
    effects = []
    for name in rules:
        without = _decode(make_caller(frozenset({name}) - {GATE.name}), rows, name != GATE.name, say, f"no {name}")
        e = Effect(name)
        for row, on, off in zip(rows, base, without):
            if [c.to_json() for c in on] == [c.to_json() for c in off]:
                continue
            e.changed += 1
            right_on, right_off = exact_match(row.calls, on), exact_match(row.calls, off)
            e.helps += right_on and not right_off
            e.hurts += right_off and not right_on
            e.unrequested += unrequested(row, on) - unrequested(row, off)
            if len(e.examples) < 5:
                e.examples.append({"where": row.where, "request": row.user_text,
                                   "with": [c.to_json() for c in on], "without": [c.to_json() for c in off]})
        effects.append(e)
    return effects


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", nargs="+", help="rows (Mobile Actions JSONL): measure what each rule changes on them")
    p.add_argument("--rules", help="comma list of rule names to measure (default: all)")
    p.add_argument("--model", default="default", help="the ONNX export (default: prepared)")
    p.add_argument("--limit", type=int, default=None, help="only the first N rows of each file")
    p.add_argument("--out", default=None, help="write report.json here")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from mobile_actions.decoding.turn import RULES

    names = [r.name for r in RULES]
    wanted = [n.strip() for n in args.rules.split(",")] if args.rules else names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"error: --rules: no rule {', '.join(unknown)} (rules: {', '.join(names)})", file=sys.stderr)
        return 2
    in_code = words_in_code()
    lexicon = lexicon_sizes()
    report: dict[str, Any] = {
        "rules": {r.name: r.says for r in RULES},
        "lexicon": lexicon, "lexicon_entries": sum(lexicon.values()),
        "words_in_code": [vars(w) for w in in_code], "words_in_code_entries": sum(w.entries for w in in_code)}
    if args.data:
        rows = read_data(args.data, args.limit)
        if rows is None:
            return 2
        from mobile_actions.errors import MobileActionsError
        from mobile_actions.runtime import Caller

        say = lambda m: print(m, file=sys.stderr, flush=True)   # noqa: E731
        try:
            effects = measure(rows, lambda off: Caller.from_pretrained(args.model, off=off), wanted, say)
        except MobileActionsError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        report.update(cpu=cpu_name(), data=list(args.data), rows=len(rows), effects=[vars(e) for e in effects])
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"{len(RULES)} named rules; lexicon: {report['lexicon_entries']} entries in {len(lexicon)} lists; "
          f"still in Python under {', '.join(CODE_WITH_WORDS)}/: {report['words_in_code_entries']} entries in "
          f"{len(in_code)} word lists and patterns")
    for r in RULES:
        print(f"  {r.name:<14} {r.says}")
    if args.data:
        print(f"\n{report['rows']} rows ({', '.join(args.data)}); on-device, grounded; CPU: {report['cpu']}")
        print("| rule off | rows changed | right only with it | right only without it | unrequested calls it adds |")
        print("|---|---:|---:|---:|---:|")
        for e in effects:
            print(f"| {e.rule} | {e.changed} | {e.helps} | {e.hurts} | {e.unrequested:+d} |")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mobile-actions rules", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
