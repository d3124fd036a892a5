"""What a user installs: the layout rule (the library never imports a recipe or a CLI module), the core
install without torch, and a built wheel that works outside the source tree."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "mobile_actions"
PROGRAMS = ("mobile_actions.recipes", "mobile_actions.cli")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_the_library_never_imports_a_recipe_or_a_cli_module():
    bad = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        if rel.startswith(PROGRAMS):
            continue
        bad += [f"{rel} imports {n}" for n in _imports(path) if n.startswith(PROGRAMS)]
    assert not bad, bad


TORCH_BLOCKER = """
import importlib.abc, sys
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'transformers', 'peft', 'trl', 'datasets'):
            raise ImportError(f'{name} is not part of the core install')
sys.meta_path.insert(0, _Block())
"""


def test_core_commands_run_with_torch_unimportable(tmp_path):
    """validate, score, render, generate, call --help and dispatch --help with torch made unimportable."""
    examples = ROOT.parent / "shared" / "data" / "mobile_actions_examples.jsonl"
    if not examples.is_file():
        pytest.skip("shared/data is not beside the checkout")
    script = TORCH_BLOCKER + (
        "from mobile_actions.cli.main import main\n"
        f"assert main(['validate', {str(examples)!r}]) == 0\n"
        f"assert main(['generate', '--n', '5', '--out', {str(tmp_path / 'g.jsonl')!r}]) == 0\n"
        "assert main(['render', 'turn on the flashlight']) == 0\n"
        "for cmd in (['call', '--help'], ['dispatch', '--help']):\n"
        "    try:\n        main(cmd)\n    except SystemExit as e:\n        assert e.code == 0\n"
        "import mobile_actions.runtime, mobile_actions.android.phone, mobile_actions.hybrid.runner\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a clean copy of the sources: a build in the checkout itself would leave `build/` there, and
    setuptools packs whatever an earlier build left in it (modules since moved or removed included)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(PKG, source / "mobile_actions", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "-w", str(dist), str(source)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (whl,) = dist.glob("mobile_actions-*.whl")
    return whl


def test_the_wheel_ships_the_package_and_its_data_but_no_plots_or_curves(wheel):
    """Loss curves and plots live in docs/ of the repository; the wheel holds code, catalogues, the adapters and
    their model cards."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert not [n for n in names if n.lower().endswith((".png", ".csv"))]
    for needed in ("mobile_actions/training/cpu_step.py", "mobile_actions/catalogs/mobile_actions.json",
                   "mobile_actions/assets/caller-lora/adapter_model.safetensors",
                   "mobile_actions/assets/caller-lora/README.md"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith("mobile_actions/recipes/cpu_step")]   # nothing stale from a build/


def test_the_wheel_installs_and_runs_outside_the_source_tree(wheel, tmp_path):
    """A non-editable install in a fresh venv (dependencies borrowed from this one, torch unimportable):
    the bundled catalogue loads from package data, `validate` and `call --help` run."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    out = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    # the dependencies come from this venv, after the fresh site-packages; torch is blocked at start-up
    (site / "zz_borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "sitecustomize.py").write_text(TORCH_BLOCKER)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"metadata": "x", "tools": [], "messages": [{"role": "user", "content": "hi"}]}\n'
                    '{"broken\n')
    script = ("import mobile_actions, sys; from mobile_actions.catalog import load_catalogue\n"
              f"assert mobile_actions.__file__.startswith({str(site)!r}), mobile_actions.__file__\n"
              "assert len(load_catalogue('mobile_actions')) == 7\n"
              "from mobile_actions.cli.main import main\n"
              f"assert main(['validate', {str(rows)!r}]) == 1\n"
              "try:\n    main(['call', '--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([str(py), "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout[-1000:] + out.stderr[-2000:]
    assert "rows.jsonl:2" in out.stdout


def test_the_public_surface_and_one_error_root(tmp_path):
    import inspect

    import mobile_actions
    from mobile_actions import errors

    for name in mobile_actions.__all__:
        assert getattr(mobile_actions, name) is not None, name
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__]
    assert len(classes) > 30
    assert all(issubclass(c, errors.MobileActionsError) for c in classes)
    bad = tmp_path / "tools.json"
    bad.write_text('[{"function": {"name": "f", "parameters": {"type": "OBJECT", "properties": {"x": {"type": "STRNG"}}}}}]')
    with pytest.raises(mobile_actions.MobileActionsError) as e:
        mobile_actions.load_catalogue(str(bad))
    assert isinstance(e.value, ValueError) and "STRNG" in str(e.value)
    with pytest.raises(mobile_actions.WireParseError):
        mobile_actions.parse("<start_function_call>call:f{")
