"""Every file path and `python -m` module the README, docs/ and the model cards name exists in the tree."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "mobile_actions"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((PKG / "assets").glob("*/README.md"))]
# the top folders of the tree and of the package: a path that opens with one of them is ours
TOP = sorted({p.name for p in (*ROOT.iterdir(), *PKG.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))
              and not p.name.endswith(".egg-info")} - {"build", "dist", "runs", "out", "data", "eval-out"})
PATH = re.compile(r"(?<![\w./$-])((?:%s)/(?:[\w./*-]|\{[\w.,]+\})*[\w*}])" % "|".join(map(re.escape, TOP)))
MODULE = re.compile(r"python3? -m (mobile_actions(?:\.\w+)+)")


def mentioned(pattern: re.Pattern) -> list[tuple[str, str]]:
    return [(f"{doc.relative_to(ROOT)}:{n}", m.group(1)) for doc in DOCS
            for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1) for m in pattern.finditer(line)]


def expand(ref: str) -> list[str]:
    """`people-{a..e}.jsonl` and `{x,y}.md` as the paths they stand for."""
    brace = re.search(r"\{([^{}]+)\}", ref)
    if not brace:
        return [ref]
    first, dots, last = brace.group(1).partition("..")
    options = [chr(c) for c in range(ord(first), ord(last) + 1)] if dots else brace.group(1).split(",")
    return [path for option in options for path in expand(ref[:brace.start()] + option + ref[brace.end():])]


def exists(ref: str) -> bool:
    """`ref` from the top of the tree, or of the package (`recipes/export_onnx.py`); `NAME.*` and `*.png` as globs;
    `recipes/export_onnx.add_sparse_head` names a function in a module."""
    if "{" in ref:
        return all(exists(path) for path in expand(ref))
    for base in (ROOT, PKG):
        if list(base.glob(ref)) if "*" in ref else (base / ref).exists():
            return True
        head, dot, _ = ref.rpartition(".")
        if dot and (base / f"{head}.py").is_file():
            return True
    return False


def test_the_docs_name_only_files_that_exist():
    refs = mentioned(PATH)
    assert any(ref.startswith("mobile_actions/") and ref.endswith(".py") for _, ref in refs)   # the pattern finds them
    missing = [f"{where}: {ref}" for where, ref in refs if not exists(ref)]
    assert not missing, "\n".join(missing)


def test_the_docs_run_only_modules_that_exist():
    refs = mentioned(MODULE)
    assert refs
    missing = [f"{where}: python -m {ref}" for where, ref in refs
               if not (ROOT / (ref.replace(".", "/") + ".py")).is_file()
               and not (ROOT / ref.replace(".", "/") / "__main__.py").is_file()]
    assert not missing, "\n".join(missing)
